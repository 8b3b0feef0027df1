//! Tse's multipath TCP-fairness metrics on his symmetric two-path setting (003-tse-fairness.md
//! §1 and E4 at 5/5 Mb/s): the analytic bounds are 1/4 (stringent) and 1/2 (lenient) of the
//! total, and the reference runs measure T_p near half a path and S_p near nothing.

use crate::common::error;
use pathpool_sim::{LoadedScenario, Results};

/// Two disjoint 5 Mb/s, 25 ms RED paths with one NewReno each and a `cc` connection with one
/// subflow per path; 960-byte segments with 40-byte headers.
fn e4(cc: &str, mode: &str) -> String {
    let path = |a: &str, b: &str| {
        format!(
            r#"
            [[links]]
            between = ["s", "{a}"]
            rate = "100Mbps"
            delay = "1ms"
            [[links]]
            between = ["{a}", "{b}"]
            rate = "5Mbps"
            delay = "25ms"
            queue = {{ type = "red", size = "50pkts", min_th = "5pkts", max_th = "15pkts", max_p = 0.1, weight = 0.002 }}
            [[links]]
            between = ["{b}", "d"]
            rate = "100Mbps"
            delay = "1ms"
            "#
        )
    };
    format!(
        r#"
        duration = "100s"
        [measure]
        start = "30s"
        interval = "1s"
        mp_fairness = "{mode}"
        [tcp]
        mss = "960B"
        [nodes]
        hosts = ["s", "d"]
        routers = ["a1", "b1", "a2", "b2"]
        {}{}
        [[flows]]
        id = "tcp1"
        from = "s"
        to = "d"
        route = ["s", "a1", "b1", "d"]
        [[flows]]
        id = "mp"
        from = "s"
        to = "d"
        cc = "{cc}"
        paths = [["s", "a1", "b1", "d"], ["s", "a2", "b2", "d"]]
        [[flows]]
        id = "tcp2"
        from = "s"
        to = "d"
        route = ["s", "a2", "b2", "d"]
        "#,
        path("a1", "b1"),
        path("a2", "b2"),
    )
}

fn run(toml: &str) -> Results {
    let loaded = LoadedScenario::from_toml(toml, "e4.toml", &[]).unwrap();
    let mut sim = loaded.compile(Some(1)).unwrap();
    sim.run();
    let mut r = sim.results();
    sim.mp_fairness_reference_runs(&loaded, 1, &mut r, |_| {})
        .unwrap();
    r
}

/// What one flow alone could get from a 5 Mb/s link: 960 of every 1000 bytes.
const PATH_GOODPUT_BPS: f64 = 5e6 * 0.96;

#[test]
fn analytic_bounds_are_a_quarter_and_a_half_of_the_total() {
    let r = run(&e4("uncoupled", "analytic"));
    let f = &r.mp_fairness.as_ref().unwrap()[0];
    let total = 2.0 * PATH_GOODPUT_BPS;
    assert_eq!(f.flow, "mp");
    assert_eq!(f.paths.len(), 2);
    for p in &f.paths {
        assert_eq!(p.competitors, Some(1), "{p:?}");
        assert_eq!(p.s_p_bps, Some(0.0));
        assert!(p.bottleneck.as_deref().unwrap().contains("->b"), "{p:?}");
    }
    let stringent = f.stringent_bound_bps.unwrap() / total;
    let lenient = f.lenient_bound_bps.unwrap() / total;
    assert!((stringent - 0.25).abs() < 1e-12, "{stringent}");
    assert!((lenient - 0.5).abs() < 1e-12, "{lenient}");
    // Uncoupled takes about a TCP's share of each path: leniently fair, not stringently.
    eprintln!("{f:#?}");
    assert_eq!(f.lenient_fair, Some(true));
    assert_eq!(f.stringent_fair, Some(false));
    let summary = serde_json::to_value(r.summary(0.0)).unwrap();
    assert_eq!(summary["mp_fairness"][0]["flow"], "mp");
    let table = r.mp_fairness_table().unwrap();
    assert_eq!(table.rows(), 2);
}

#[test]
fn reference_runs_measure_half_a_path_and_no_spare_capacity() {
    let r = run(&e4("uncoupled", "reference-runs"));
    let f = &r.mp_fairness.as_ref().unwrap()[0];
    eprintln!("{f:#?}");
    for p in &f.paths {
        // One NewReno against one NewReno on a RED path: about half of it (±15%).
        let t = p.t_p_bps.unwrap() / PATH_GOODPUT_BPS;
        assert!((0.35..=0.6).contains(&t), "T_p {t:.3} of the path: {p:?}");
        // The path's own TCP is bottlenecked on it (its queue drops): nothing spare, although
        // one NewReno under this RED leaves about 28% of the link unused.
        assert_eq!(p.s_p_bps, Some(0.0), "{p:?}");
    }
    assert_eq!(f.mode, "reference-runs");
    // Uncoupled's subflows are NewReno flows on disjoint paths: about one T_p on each, so
    // twice the stringent bound.
    let ratio = f.stringent_ratio.unwrap();
    assert!((1.8..=2.2).contains(&ratio), "{ratio}");
}

#[test]
fn an_empty_path_is_all_spare() {
    // Without tcp2, path 2 carries nothing but the multipath flow: S_2 is the whole path in
    // the run without it, and the stringent bound T_1 + S_2.
    let toml = e4("uncoupled", "reference-runs");
    let cut = toml.rfind("[[flows]]").unwrap();
    let r = run(&toml[..cut]);
    let f = &r.mp_fairness.as_ref().unwrap()[0];
    let s2 = f.paths[1].s_p_bps.unwrap() / PATH_GOODPUT_BPS;
    assert!((s2 - 1.0).abs() < 1e-9, "{s2}");
    let t1 = f.paths[0].t_p_bps.unwrap();
    let t2 = f.paths[1].t_p_bps.unwrap() / PATH_GOODPUT_BPS;
    assert!(t2 > 0.65, "one NewReno alone on a RED path: {t2}");
    let want = (t1 + PATH_GOODPUT_BPS).max(f.paths[1].t_p_bps.unwrap());
    assert!((f.stringent_bound_bps.unwrap() - want).abs() < 1.0);
}

#[test]
fn bad_fairness_settings_are_refused_at_their_field() {
    let e = error(&e4("uncoupled", "analytic").replace(
        "mp_fairness = \"analytic\"",
        "mp_fairness = \"analytic\"\nmp_fairness_tolerance = -1",
    ));
    assert!(e.contains("measure.mp_fairness_tolerance"), "{e}");
    let e = error(&e4("uncoupled", "reference-runs").replace(
        "paths = [[\"s\", \"a1\", \"b1\", \"d\"], [\"s\", \"a2\", \"b2\", \"d\"]]",
        "paths = [[\"s\", \"a1\", \"b1\", \"d\"], [\"s\", \"a2\", \"b2\", \"d\"]]\ncount = 2",
    ));
    assert!(
        e.contains("flows[1].count") && e.contains("one copy"),
        "{e}"
    );
    let e = error(&e4("uncoupled", "exact"));
    assert!(
        e.contains("measure.mp_fairness") && e.contains("analytic"),
        "{e}"
    );
}

#[test]
fn a_multipath_tfrc_flow_has_subflow_rows_and_fairness_figures() {
    let toml = e4("uncoupled", "analytic").replace(
        "cc = \"uncoupled\"",
        "kind = \"tfrc\"\n        tfrc = { multipath = \"bilevel\" }",
    );
    let r = run(&toml);
    let subs: Vec<_> = r.subflows.iter().filter(|s| s.flow == "mp").collect();
    assert_eq!(subs.len(), 2);
    let flow = r.flow("mp").unwrap();
    let sum: f64 = subs.iter().map(|s| s.throughput_bps.unwrap()).sum();
    let delivered = flow.throughput_bps.unwrap();
    // Subflow figures count arrivals, the flow's in-order delivery: within 2% of each other.
    assert!((sum / delivered - 1.0).abs() < 0.02, "{sum} vs {delivered}");
    assert!(flow.packets_sent > 0);
    let f = &r.mp_fairness.as_ref().unwrap()[0];
    assert_eq!(f.paths.len(), 2);
    assert!(f.stringent_ratio.is_some_and(|x| x > 0.0));
}
