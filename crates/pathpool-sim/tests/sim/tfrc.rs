//! TFRC (RFC 3448) in the simulator against TCP (issue 20, acceptance 3): one TFRC flow and
//! one NewReno flow share a RED bottleneck with the parameters 003-tse-fairness.md §5.0
//! chooses for Tse's chapter 4 runs.

use crate::common::run;

/// One TFRC and one NewReno flow (1000-byte packets on the wire, unlimited rwnd) through a
/// 5 Mb/s, 25 ms RED bottleneck (50 packets, min_th 5, max_th 15, w_q 0.002, max_p 0.1),
/// 100 Mb/s 1 ms access links, 200 s measured from 50 s. Returns TFRC's share of the
/// packets the two delivered.
fn tfrc_share_on_red() -> f64 {
    let r = run(r#"
        duration = "200s"
        [measure]
        start = "50s"
        interval = "1s"
        [tcp]
        mss = "960B"
        rwnd = "unlimited"
        [nodes]
        hosts = ["s1", "s2", "d1", "d2"]
        routers = ["a", "b"]
        [[links]]
        between = ["s1", "a"]
        rate = "100Mbps"
        delay = "1ms"
        [[links]]
        between = ["s2", "a"]
        rate = "100Mbps"
        delay = "1ms"
        [[links]]
        between = ["a", "b"]
        rate = "5Mbps"
        delay = "25ms"
        queue = { type = "red", size = "50pkts", min_th = "5pkts", max_th = "15pkts", max_p = 0.1, weight = 0.002, mean_packet = "1000B" }
        [[links]]
        between = ["b", "d1"]
        rate = "100Mbps"
        delay = "1ms"
        [[links]]
        between = ["b", "d2"]
        rate = "100Mbps"
        delay = "1ms"
        [[flows]]
        id = "tfrc"
        kind = "tfrc"
        from = "s1"
        to = "d1"
        [[flows]]
        id = "tcp"
        from = "s2"
        to = "d2"
        "#);
    let bps = |id: &str| r.flow(id).unwrap().throughput_bps.unwrap();
    // TFRC's delivered bytes are its 1000-byte packets; TCP's are 960-byte payloads.
    let tfrc_pkts = bps("tfrc") / 8000.0;
    let tcp_pkts = bps("tcp") / (8.0 * 960.0);
    eprintln!("tfrc {tfrc_pkts:.1} pkt/s, newreno {tcp_pkts:.1} pkt/s");
    tfrc_pkts / (tfrc_pkts + tcp_pkts)
}

/// Issue 20, acceptance 3: TFRC against NewReno on RED takes 35–65%. Measured with the
/// release binary before this test was written (the same scenario, seeds 1–5): 0.461, 0.460,
/// 0.458, 0.466, 0.466 of the packets (0.469–0.476 of the bytes).
#[test]
fn tfrc_against_newreno_on_red_takes_a_fair_share() {
    let share = tfrc_share_on_red();
    eprintln!("TFRC share {share:.3}");
    assert!((0.35..=0.65).contains(&share), "TFRC share {share:.3}");
}

/// Two disjoint paths s–r1–d and s–r2–d, each with a 5 Mb/s, 25 ms RED bottleneck (Tse's
/// parameters above) after a 100 Mb/s, 1 ms access link, and `flow` from s to d; 200 s,
/// measured from 50 s.
fn two_paths(flow: &str) -> pathpool_sim::Results {
    let red = r#"queue = { type = "red", size = "50pkts", min_th = "5pkts", max_th = "15pkts", max_p = 0.1, weight = 0.002, mean_packet = "1000B" }"#;
    run(&format!(
        r#"
        duration = "200s"
        [measure]
        start = "50s"
        interval = "1s"
        [nodes]
        hosts = ["s", "d"]
        routers = ["r1", "r2"]
        [[links]]
        between = ["s", "r1"]
        rate = "100Mbps"
        delay = "1ms"
        [[links]]
        between = ["s", "r2"]
        rate = "100Mbps"
        delay = "1ms"
        [[links]]
        id = "p1"
        between = ["r1", "d"]
        rate = "5Mbps"
        delay = "25ms"
        {red}
        [[links]]
        id = "p2"
        between = ["r2", "d"]
        rate = "5Mbps"
        delay = "25ms"
        {red}
        [[flows]]
        id = "f"
        kind = "tfrc"
        from = "s"
        to = "d"
        {flow}
        "#
    ))
}

/// Bilevel TFRC alone on two disjoint equal paths.
///
/// Expected before the first run: the master runs the equation at f^M, the subflows'
/// rate-weighted loss; each subflow carries half of R_M, so each path is driven to the loss
/// rate at which the equation gives twice one path's rate, and the total should be 1.6–2.0
/// times what a single TFRC flow gets alone on one path, split evenly. The first run gave
/// 2.13 (single 4.660 Mb/s, Bilevel 9.938): the upper bound was wrong, not the flow. The
/// single flow leaves 7% of its path idle (130 RED drops, p ≈ 0.0015, mean queue 2.9 KB),
/// while Bilevel holds each path at about a quarter of that loss rate (30 and 29 drops), as
/// the equation needs for twice the rate, with busier queues (3.4 and 3.8 KB). The bound
/// that follows from the argument is the capacity: the total lies between Tse's 80% (E2, 16
/// paths) and 100% of the two paths, and above 1.6 times the single flow. 1/N TFRC
/// (`"fractional"`) is held to the same bounds, set after its first run (9.782 Mb/s).
#[test]
fn bilevel_tfrc_alone_uses_both_of_two_equal_paths() {
    let single = two_paths(r#"route = ["s", "r1", "d"]"#);
    let one = single.flow("f").unwrap().throughput_bps.unwrap();
    for mode in ["bilevel", "fractional"] {
        let r = two_paths(&format!(
            r#"paths = [["s", "r1", "d"], ["s", "r2", "d"]]
            tfrc = {{ multipath = "{mode}" }}"#
        ));
        let both = r.flow("f").unwrap().throughput_bps.unwrap();
        let on = |id: &str| r.link(id).unwrap();
        let (p1, p2) = (on("p1:r1->d"), on("p2:r2->d"));
        eprintln!(
            "single path {:.3} Mb/s; {mode} {:.3} Mb/s (paths {:.3} and {:.3} Mb/s on the wire, {} and {} drops)",
            one / 1e6,
            both / 1e6,
            p1.throughput_bps / 1e6,
            p2.throughput_bps / 1e6,
            p1.drops,
            p2.drops,
        );
        let share = p1.throughput_bps / (p1.throughput_bps + p2.throughput_bps);
        assert!(both / one >= 1.6, "{mode} / single {:.3}", both / one);
        assert!((0.8..=1.0).contains(&(both / 10e6)), "{mode} {both}");
        assert!(
            (0.35..=0.65).contains(&share),
            "{mode}: path 1 carries {share:.3}"
        );
    }
}

/// `n` disjoint paths s–r_i–d, each a 100 Mb/s, 1 ms access link and a 5 Mb/s, 25 ms RED
/// bottleneck `p<i>` (Tse's parameters above), and a Bilevel TFRC flow over all of them with
/// the `tfrc` table `tfrc`; `duration`, measured from `start`.
fn bilevel_on_disjoint_paths(
    n: usize,
    tfrc: &str,
    duration: &str,
    start: &str,
) -> pathpool_sim::Results {
    let red = r#"queue = { type = "red", size = "50pkts", min_th = "5pkts", max_th = "15pkts", max_p = 0.1, weight = 0.002, mean_packet = "1000B" }"#;
    let routers: Vec<String> = (1..=n).map(|i| format!("\"r{i}\"")).collect();
    let mut links = String::new();
    for i in 1..=n {
        links += &format!(
            "[[links]]\nbetween = [\"s\", \"r{i}\"]\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\
             [[links]]\nid = \"p{i}\"\nbetween = [\"r{i}\", \"d\"]\nrate = \"5Mbps\"\ndelay = \"25ms\"\n{red}\n"
        );
    }
    let paths: Vec<String> = (1..=n)
        .map(|i| format!("[\"s\", \"r{i}\", \"d\"]"))
        .collect();
    run(&format!(
        r#"
        duration = "{duration}"
        [measure]
        start = "{start}"
        interval = "1s"
        [nodes]
        hosts = ["s", "d"]
        routers = [{}]
        {links}
        [[flows]]
        id = "f"
        kind = "tfrc"
        from = "s"
        to = "d"
        paths = [{}]
        tfrc = {{ {tfrc} }}
        "#,
        routers.join(", "),
        paths.join(", "),
    ))
}

/// Issue 20 (Tse E2): Bilevel TFRC scales to 16 empty paths (decisions D262–D264).
///
/// Bound stated before this test was first run, from the mechanisms D264 measures: the
/// start-up overshoot leaves short intervals in the loss history, and the rate then climbs as
/// the open interval grows, at s/(8·RTT²) ≈ 1 Mb/s per 50 s over one path's packets
/// (X ∝ √I_0, I_0 growing at the packet rate counted). A per-subflow history counts 1/16 of
/// the packets and climbs 16 times slower; the connection-wide history (the default) climbs
/// at about 17 Mb/s per 50 s, so by 400 s it has reached the paths' capacity, where each path
/// is held at the loss rate at which the equation gives 16 paths' rate (as D254's two paths).
/// With the connection's receive rate capping the nominal rates, every subflow that sees no
/// loss has the same weight, so no path is left nearly idle. Asserted over [400 s, 600 s]:
/// 80% (Tse's figure) to 100% of the 80 Mb/s, every path at least half full; the previous
/// behaviour (`rate-weighted`, `subflow` cap and first interval) below 40%.
#[test]
fn bilevel_tfrc_scales_to_sixteen_empty_paths() {
    let n = 16;
    let capacity_bps = 5e6 * n as f64;
    let now = bilevel_on_disjoint_paths(n, "", "600s", "400s");
    let total = now.flow("f").unwrap().throughput_bps.unwrap();
    let paths: Vec<f64> = (1..=n)
        .map(|i| now.link(&format!("p{i}:r{i}->d")).unwrap().throughput_bps)
        .collect();
    let before = bilevel_on_disjoint_paths(
        n,
        r#"loss_combination = "rate-weighted", nominal_cap = "subflow", first_interval = "subflow""#,
        "600s",
        "400s",
    );
    let old = before.flow("f").unwrap().throughput_bps.unwrap();
    eprintln!(
        "16 paths: {:.2} Mb/s (paths {:.2}..{:.2} Mb/s); previous options {:.2} Mb/s",
        total / 1e6,
        paths.iter().copied().fold(f64::INFINITY, f64::min) / 1e6,
        paths.iter().copied().fold(0.0, f64::max) / 1e6,
        old / 1e6
    );
    assert!((0.8..=1.0).contains(&(total / capacity_bps)), "{total}");
    assert!(paths.iter().all(|&p| p >= 2.5e6), "{paths:?}");
    assert!(old < 0.4 * capacity_bps, "{old}");
}
