//! TFRC (RFC 3448) in the simulator against TCP (issue 20, acceptance 3): one TFRC flow and
//! one NewReno flow share a RED bottleneck with the parameters 003-tse-fairness.md §5.0
//! chooses for Tse's chapter 4 runs.

mod common;

use common::run;

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
