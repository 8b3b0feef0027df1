//! Tse's Bilevel TCP in the simulator (003-tse-fairness.md §3.3): the master window makes the
//! connection as aggressive as one TCP on a shared bottleneck, and on two disjoint paths it
//! takes the "ensemble as one link" share NC/(Nk + 1) the thesis derives (1/3 of the pair for
//! N = 2, k = 1), not the stringently fair 1/4.

use crate::common::run_seeded;

/// Links of the chapter-4 setting (spec §5.0): 5 Mb/s, 25 ms RED bottlenecks of 50 packets,
/// 100 Mb/s 1 ms access links.
fn bottleneck(a: &str, b: &str, loss: f64) -> String {
    format!(
        r#"
        [[links]]
        between = ["{a}", "{b}"]
        rate = "5Mbps"
        delay = "25ms"
        loss = {loss}
        queue = {{ type = "red", size = "50pkts", min_th = "5pkts", max_th = "15pkts", max_p = 0.1, weight = 0.002 }}
        "#
    )
}

fn access(a: &str, b: &str) -> String {
    format!(
        r#"
        [[links]]
        between = ["{a}", "{b}"]
        rate = "100Mbps"
        delay = "1ms"
        "#
    )
}

const HEAD: &str = r#"
    duration = "200s"
    [measure]
    start = "50s"
    interval = "1s"
    [tcp]
    mss = "960B"
"#;

/// One NewReno flow and a `cc` connection of `n` subflows on one bottleneck: the
/// connection's share.
fn shared_share(cc: &str, n: usize, seed: u64) -> f64 {
    let route = r#"["s", "a", "b", "d"]"#;
    let paths = vec![route; n].join(", ");
    let r = run_seeded(
        &format!(
            r#"
        {HEAD}
        [nodes]
        hosts = ["s", "d"]
        routers = ["a", "b"]
        {}{}{}
        [[flows]]
        id = "tcp"
        from = "s"
        to = "d"
        route = {route}
        [[flows]]
        id = "mp"
        from = "s"
        to = "d"
        cc = "{cc}"
        paths = [{paths}]
        "#,
            access("s", "a"),
            bottleneck("a", "b", 0.0),
            access("b", "d"),
        ),
        seed,
    );
    let bps = |id: &str| r.flow(id).unwrap().throughput_bps.unwrap();
    let (mp, tcp) = (bps("mp"), bps("tcp"));
    eprintln!(
        "{cc} x{n}, seed {seed}: mp {:.2}, tcp {:.2} Mb/s",
        mp / 1e6,
        tcp / 1e6
    );
    mp / (mp + tcp)
}

/// Two disjoint bottlenecks, one NewReno flow on each, a `cc` connection with one subflow per
/// path, path 2 losing `loss` of its packets at random: the connection's share of the total
/// and the throughput of its two subflows.
fn two_path_share(cc: &str, loss: f64, seed: u64) -> (f64, f64, f64) {
    let (top, bottom) = (r#"["s", "a1", "b1", "d"]"#, r#"["s", "a2", "b2", "d"]"#);
    let r = run_seeded(
        &format!(
            r#"
        {HEAD}
        [nodes]
        hosts = ["s", "d"]
        routers = ["a1", "b1", "a2", "b2"]
        {}{}{}{}{}{}
        [[flows]]
        id = "tcp1"
        from = "s"
        to = "d"
        route = {top}
        [[flows]]
        id = "tcp2"
        from = "s"
        to = "d"
        route = {bottom}
        [[flows]]
        id = "mp"
        from = "s"
        to = "d"
        cc = "{cc}"
        paths = [{top}, {bottom}]
        "#,
            access("s", "a1"),
            bottleneck("a1", "b1", 0.0),
            access("b1", "d"),
            access("s", "a2"),
            bottleneck("a2", "b2", loss),
            access("b2", "d"),
        ),
        seed,
    );
    let bps = |id: &str| r.flow(id).unwrap().throughput_bps.unwrap();
    let (mp, t1, t2) = (bps("mp"), bps("tcp1"), bps("tcp2"));
    let sub = |i: usize| r.subflows[i].throughput_bps.unwrap();
    eprintln!(
        "{cc}, loss {loss}, seed {seed}: mp {:.2} ({:.2} + {:.2}), tcp {:.2} + {:.2} Mb/s",
        mp / 1e6,
        sub(0) / 1e6,
        sub(1) / 1e6,
        t1 / 1e6,
        t2 / 1e6
    );
    (mp / (mp + t1 + t2), sub(0), sub(1))
}

const SEEDS: [u64; 3] = [1, 2, 3];

#[test]
fn four_subflows_on_one_bottleneck_take_about_one_tcp_share() {
    // The master halves on a loss of any subflow and grows by one segment per round trip, as
    // one TCP: a share near 1/2, a little less since the subflows' losses in one round trip
    // are separate halvings (the thesis: "somewhat less than its fair share"). Tolerance
    // ±7 points, set from the spread of seeds 1-4 when written (0.452-0.470; 0.453-0.467 on
    // seeds 1-3 once a path regains its share at slow-start speed).
    for seed in SEEDS {
        let share = shared_share("bilevel-tcp", 4, seed);
        assert!((0.43..=0.57).contains(&share), "seed {seed}: {share:.3}");
    }
}

#[test]
fn two_symmetric_paths_give_the_ensemble_share_of_a_third() {
    // Thesis §2.3: treating the two links as one of capacity 2C with k = 1 flow on each
    // gives NC/(Nk + 1) = 2C/3 of the 2C, where stringent fairness allows 1/4. Measured when
    // written: 0.312-0.320 over seeds 1-4 (0.302-0.304 on seeds 1-3 once a path regains its
    // share at slow-start speed); tolerance ±4 points.
    for seed in SEEDS {
        let (share, _, _) = two_path_share("bilevel-tcp", 0.0, seed);
        assert!((0.293..=0.373).contains(&share), "seed {seed}: {share:.3}");
    }
}

#[test]
fn a_lossy_path_loses_its_share_of_the_master() {
    // 3% random loss on path 2 halves its child window far more often than path 1's, so the
    // master's window moves to path 1 ("shifts traffic away from the lossy link"). Measured
    // when written: the lossy subflow carried 0.31-0.33 of the clean one's throughput.
    for seed in SEEDS {
        let (_, clean, lossy) = two_path_share("bilevel-tcp", 0.03, seed);
        assert!(
            lossy < 0.5 * clean,
            "seed {seed}: {lossy:.0} vs {clean:.0} b/s"
        );
    }
}
