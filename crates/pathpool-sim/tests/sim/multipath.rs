//! Multipath connections in the simulator: completion, equivalence with single-path TCP,
//! subflows opening and closing, coupling groups, and errors.

use crate::common::{error, run};

/// Two disjoint 10 Mb/s paths from s to d (via b: 20 ms RTT; via c: 40 ms), plus a
/// second pair of hosts sharing the path via b. `{flows}` is appended.
fn two_paths(extra: &str, flows: &str) -> String {
    format!(
        r#"
        duration = "40s"
        {extra}
        [measure]
        start = "10s"
        interval = "1s"
        trace_cwnd = true
        [nodes]
        hosts = ["s", "d", "s2", "d2"]
        routers = ["a", "b", "c", "e"]
        [[links]]
        between = ["s", "a"]
        rate = "1Gbps"
        delay = "0ms"
        [[links]]
        between = ["s2", "a"]
        rate = "1Gbps"
        delay = "0ms"
        [[links]]
        id = "via-b"
        between = ["a", "b"]
        rate = "10Mbps"
        delay = "5ms"
        queue = {{ type = "droptail", size = "25KB" }}
        [[links]]
        id = "via-c"
        between = ["a", "c"]
        rate = "10Mbps"
        delay = "15ms"
        queue = {{ type = "droptail", size = "50KB" }}
        [[links]]
        between = ["b", "e"]
        rate = "1Gbps"
        delay = "5ms"
        [[links]]
        between = ["c", "e"]
        rate = "1Gbps"
        delay = "5ms"
        [[links]]
        between = ["e", "d"]
        rate = "1Gbps"
        delay = "0ms"
        [[links]]
        between = ["e", "d2"]
        rate = "1Gbps"
        delay = "0ms"
        {flows}
        "#
    )
}

const VIA_B: &str = r#"["s", "a", "b", "e", "d"]"#;
const VIA_C: &str = r#"["s", "a", "c", "e", "d"]"#;

/// The multipath machinery with one subflow is exactly single-path TCP: a one-subflow
/// connection under NewReno, Uncoupled or NMCC (m = 1 on one path) delivers, retransmits and
/// times out as a NewReno flow on the same route. LIA, OLIA, BALIA, EWTCP and fully coupled
/// reduce to one and the same increase with n = 1 (RFC 6356 §3 for LIA), computed per ACK
/// from the window rather than by Reno's byte counting, so they agree with each other exactly
/// and with Reno within 0.1%. (A single-path flow itself refuses a multipath controller:
/// issue 16.)
#[test]
fn a_one_subflow_connection_is_exactly_a_tcp_flow() {
    let single = run(&two_paths(
        "",
        &format!(
            r#"[[flows]]
            id = "f"
            from = "s"
            to = "d"
            route = {VIA_C}"#
        ),
    ));
    let reno = single.flow("f").unwrap();
    let one_subflow = |cc: &str| {
        run(&two_paths(
            "",
            &format!(
                r#"[[flows]]
                id = "f"
                from = "s"
                to = "d"
                cc = "{cc}"
                paths = [{VIA_C}]"#
            ),
        ))
    };
    for cc in ["newreno", "uncoupled", "nmcc"] {
        let multi = one_subflow(cc);
        let b = multi.flow("f").unwrap();
        assert_eq!(reno.bytes_delivered, b.bytes_delivered, "{cc}");
        assert_eq!(reno.retransmissions, b.retransmissions, "{cc}");
        assert_eq!(reno.timeouts, b.timeouts, "{cc}");
        assert_eq!(multi.subflows.len(), 1);
        let acked = multi.subflows[0].bytes_acked;
        assert!(acked <= b.bytes_delivered && acked > 0, "{cc}");
    }
    let lia = one_subflow("lia");
    let lia = lia.flow("f").unwrap().clone();
    let off = (lia.bytes_delivered as f64 / reno.bytes_delivered as f64 - 1.0).abs();
    assert!(off < 1e-3, "LIA on one path vs Reno: {off}");
    for cc in ["olia", "balia", "ewtcp", "coupled"] {
        let multi = one_subflow(cc);
        let b = multi.flow("f").unwrap();
        assert_eq!(
            (lia.bytes_delivered, lia.retransmissions, lia.timeouts),
            (b.bytes_delivered, b.retransmissions, b.timeouts),
            "{cc}"
        );
    }
}

#[test]
fn a_finite_transfer_over_two_lossy_paths_delivers_every_byte() {
    for cc in ["uncoupled", "lia", "olia", "balia", "nmcc"] {
        let r = run(&two_paths(
            "",
            &format!(
                r#"[[flows]]
                id = "f"
                from = "s"
                to = "d"
                cc = "{cc}"
                size = "5MB"
                paths = [{VIA_B}, {VIA_C}]"#
            ),
        )
        .replace(
            "delay = \"5ms\"\n",
            "delay = \"5ms\"\n        loss = 0.01\n",
        ));
        let f = r.flow("f").unwrap();
        assert_eq!(f.completed, Some(true), "{cc}: {f:?} {:?}", r.subflows);
        assert_eq!(f.bytes_delivered, 5_000_000, "{cc}");
        assert!(f.retransmissions > 0, "{cc}: the 1% loss was applied");
        assert!(
            r.subflows.iter().all(|s| s.bytes_acked > 200_000),
            "{cc}: both subflows carried data: {:?}",
            r.subflows
        );
    }
}

#[test]
fn uncoupled_subflows_on_disjoint_paths_fill_both() {
    let r = run(&two_paths(
        "",
        &format!(
            r#"[[flows]]
            id = "f"
            from = "s"
            to = "d"
            cc = "uncoupled"
            paths = [{VIA_B}, {VIA_C}]"#
        ),
    ));
    let f = r.flow("f").unwrap();
    let mbps = f.throughput_bps.unwrap() / 1e6;
    assert!(mbps > 17.0, "two 10 Mb/s paths: {mbps:.2} Mb/s");
    for s in &r.subflows {
        let sub = s.throughput_bps.unwrap() / 1e6;
        assert!(sub > 8.5, "{}: {sub:.2} Mb/s", s.path);
    }
}

#[test]
fn coupling_groups_decide_whether_subflows_compete_with_a_tcp_flow_as_one() {
    // One TCP flow on the path via b, a two-subflow connection with both subflows on that
    // same path. In one group, LIA takes about one TCP's share; in separate groups each
    // subflow is a Reno flow and the pair takes about two thirds.
    let run_groups = |g1: u32| {
        let r = run(&two_paths(
            "",
            &format!(
                r#"[[flows]]
                id = "mp"
                from = "s"
                to = "d"
                cc = "lia"
                [[flows.subflows]]
                route = {VIA_B}
                group = 0
                [[flows.subflows]]
                route = {VIA_B}
                group = {g1}
                [[flows]]
                id = "tcp"
                from = "s2"
                to = "d2""#
            ),
        ));
        r.flow("mp").unwrap().share.unwrap()
    };
    let coupled = run_groups(0);
    let separate = run_groups(1);
    assert!(
        coupled < 0.6 && separate > 0.6,
        "share in one group {coupled:.3}, in two groups {separate:.3}"
    );
}

#[test]
fn subflows_open_and_close_on_schedule_and_data_keeps_flowing() {
    let r = run(&two_paths(
        "",
        &format!(
            r#"[[flows]]
            id = "f"
            from = "s"
            to = "d"
            cc = "lia"
            [[flows.subflows]]
            route = {VIA_B}
            stop = "20s"
            [[flows.subflows]]
            route = {VIA_C}
            start = "5s""#
        ),
    ));
    let s = &r.subflows;
    assert_eq!(s[0].stop_s, Some(20.0));
    assert_eq!(s[1].start_s, 5.0);
    // The subflow via b carried data until 20 s and nothing after.
    let ts = &r.subflow_timeseries;
    let (Some(pathpool_sim::Column::F64(t)), Some(pathpool_sim::Column::U64(sub))) =
        (ts.column("time_s"), ts.column("subflow"))
    else {
        panic!("subflow_timeseries columns")
    };
    let Some(pathpool_sim::Column::U64(acked)) = ts.column("acked_bytes") else {
        panic!()
    };
    let at = |sf: u64, time: f64| {
        t.iter()
            .zip(sub)
            .zip(acked)
            .find(|((&tt, &s), _)| s == sf && (tt - time).abs() < 1e-9)
            .map(|(_, &a)| a)
    };
    assert_eq!(at(1, 4.0), None, "subflow 1 is not open before 5 s");
    assert!(at(1, 6.0).unwrap() > 0);
    assert_eq!(at(0, 25.0), at(0, 40.0), "subflow 0 is closed after 20 s");
    let f = r.flow("f").unwrap();
    assert!(
        f.throughput_bps.unwrap() > 8e6,
        "the other subflow keeps going"
    );
}

#[test]
fn k_paths_opens_one_subflow_per_shortest_loopless_path() {
    let r = run(&two_paths(
        "",
        r#"[[flows]]
            id = "f"
            from = "s"
            to = "d"
            cc = "uncoupled"
            k_paths = 2"#,
    ));
    let mut paths: Vec<&str> = r.subflows.iter().map(|s| s.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["s>a>b>e>d", "s>a>c>e>d"]);
    assert!(r.flow("f").unwrap().throughput_bps.unwrap() > 17e6);
    let e = error(&two_paths(
        "",
        r#"[[flows]]
            from = "s"
            to = "d"
            k_paths = 3"#,
    ));
    assert!(
        e.contains("flows[0].k_paths") && e.contains("has 2 loopless"),
        "{e}"
    );
}

#[test]
fn errors_name_the_field() {
    let e = error(&two_paths(
        "",
        &format!(
            r#"[[flows]]
            from = "s"
            to = "d"
            paths = [{VIA_B}, ["s", "a", "x", "d"]]"#
        ),
    ));
    assert!(
        e.contains("flows[0].paths[1][2]") && e.contains("unknown node \"x\""),
        "{e}"
    );
    let e = error(&two_paths(
        "",
        &format!(
            r#"[[flows]]
            from = "s"
            to = "d"
            route = {VIA_B}
            paths = [{VIA_B}]"#
        ),
    ));
    assert!(
        e.contains("flows[0].route") && e.contains("not route"),
        "{e}"
    );
    let e = error(&two_paths(
        "",
        &format!(
            r#"[[flows]]
            kind = "udp-cbr"
            rate = "1Mbps"
            from = "s"
            to = "d"
            paths = [{VIA_B}]"#
        ),
    ));
    assert!(e.contains("flows[0].paths") && e.contains("TCP"), "{e}");
    let e = error(&two_paths(
        "",
        r#"[[flows]]
            from = "s"
            to = "d"
            scheduler = "fastest"
            paths = [["s", "a", "b", "e", "d"]]"#,
    ));
    assert!(e.contains("lowest-rtt, round-robin"), "{e}");
    let e = error(&two_paths(
        "",
        r#"[[flows]]
            from = "s"
            to = "d"
            [[flows.subflows]]
            start = "50s""#,
    ));
    assert!(e.contains("flows[0].subflows[0].start"), "{e}");
    let e = error(&two_paths(
        "",
        r#"[[flows]]
            from = "s"
            to = "d"
            scheduler = "round-robin""#,
    ));
    assert!(e.contains("flows[0].scheduler"), "{e}");
}

#[test]
fn the_topology_manager_chooses_subflows_and_their_groups() {
    let groups_and_paths = |tm: &str| -> Vec<(u32, String)> {
        let r = run(&two_paths(
            "",
            &format!(
                r#"[[flows]]
                id = "mp"
                from = "s"
                to = "d"
                cc = "nmcc"
                tm = {tm}
                "#
            ),
        ));
        r.subflows
            .iter()
            .map(|s| (s.group, s.path.clone()))
            .collect()
    };
    // Both paths cross the 1 Gb/s access links s-a and e-d: one group under the thesis's
    // shared-link rule, two under the friendliness-bottleneck rule (a link a hundred times
    // faster than the 10 Mb/s ones limits nobody), one without assistance.
    let shared = groups_and_paths("{ k = 2 }");
    assert_eq!(shared.len(), 2);
    assert!(
        shared[0].1.contains("b") && shared[1].1.contains("c"),
        "{shared:?}"
    );
    assert_eq!((shared[0].0, shared[1].0), (0, 0));
    let fb = groups_and_paths(r#"{ k = 2, assistance = "bottleneck" }"#);
    assert_eq!((fb[0].0, fb[1].0), (0, 1));
    assert_eq!(
        (fb[0].1.as_str(), fb[1].1.as_str()),
        (shared[0].1.as_str(), shared[1].1.as_str())
    );
    let none = groups_and_paths(r#"{ k = 2, assistance = "none", metric = "delay" }"#);
    assert_eq!((none[0].0, none[1].0), (0, 0));
}

#[test]
fn topology_manager_errors_name_the_field() {
    let flow = |tm: &str| {
        two_paths(
            "",
            &format!("[[flows]]\nfrom = \"s\"\nto = \"d\"\ncc = \"nmcc\"\ntm = {tm}\n"),
        )
    };
    // The access link s-a is on every path: no two are link-disjoint.
    let e = error(&flow(r#"{ k = 2, policy = "k-disjoint" }"#));
    assert!(e.contains("flows[0].tm.k") && e.contains("finds 1"), "{e}");
    let e = error(&flow(r#"{ k = 2, factor = 2.0 }"#));
    assert!(
        e.contains("flows[0].tm.factor") && e.contains("bottleneck"),
        "{e}"
    );
    let e = error(&flow(
        r#"{ k = 2, assistance = "bottleneck", factor = "most" }"#,
    ));
    assert!(e.contains("paths-on-link"), "{e}");
    let e = error(&flow(r#"{ k = 2, candidates = 4 }"#));
    assert!(e.contains("disjoint-only"), "{e}");
    let e = error(&flow(r#"{ k = 2, policy = "widest" }"#));
    assert!(e.contains("k-shortest"), "{e}");
    let e = error(&two_paths(
        "",
        "[[flows]]\nfrom = \"s\"\nto = \"d\"\nk_paths = 2\ntm = { k = 2 }\n",
    ));
    assert!(e.contains("either k_paths or tm"), "{e}");
}

#[test]
fn lia_recomputes_alpha_on_window_changes_when_asked_and_rejects_unknown_modes() {
    let flows = format!(
        r#"[[flows]]
        id = "mp"
        from = "s"
        to = "d"
        cc = "lia"
        paths = [{VIA_B}, {VIA_C}]
        [[flows]]
        id = "tcp"
        from = "s2"
        to = "d2""#
    );
    let share = |extra: &str| {
        run(&two_paths(extra, &flows))
            .flow("mp")
            .unwrap()
            .share
            .unwrap()
    };
    let per_ack = share("");
    assert_eq!(per_ack, share("[tcp.lia]\nalpha_update = \"per-ack\""));
    let on_window_change = share("[tcp.lia]\nalpha_update = \"on-window-change\"");
    // The option reaches the controller (the runs differ), and LIA stays LIA: the connection
    // takes more than the TCP flow on via-b without taking the whole of it.
    assert_ne!(per_ack, on_window_change);
    for s in [per_ack, on_window_change] {
        assert!((0.5..0.8).contains(&s), "share {s:.3}");
    }
    let e = error(&two_paths(
        "[tcp.lia]\nalpha_update = \"sometimes\"",
        &flows,
    ));
    assert!(
        e.contains("alpha_update") && e.contains("per-ack") && e.contains("on-window-change"),
        "{e}"
    );
}
