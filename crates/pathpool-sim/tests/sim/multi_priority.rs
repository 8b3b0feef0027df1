//! Tse's Multi-Priority TCP in the simulator (003-tse-fairness.md §4.2, E0): one NewReno
//! subflow and three TCP-LP subflows on one bottleneck beside one NewReno flow.

use crate::common;

use crate::common::{flow_s_to_d, run_bottleneck, BOTTLENECK_ROUTE, RED_100};
use pathpool_sim::Results;

/// A 10 Mb/s, 25 ms RED bottleneck (spec §5.0's choice for chapter 4) shared by one NewReno
/// flow `tcp` and a multi-priority connection `mp` of four subflows on the same path, with
/// `options` in its `tcp.multi_priority`; 120 s measured from 30 s.
fn run(options: &str, seed: u64) -> Results {
    let route = BOTTLENECK_ROUTE;
    let mp = format!(
        "tcp = {{ multi_priority = {{ {options} }} }}\npaths = [{route}, {route}, {route}, {route}]\n"
    );
    let flows = flow_s_to_d("tcp", "newreno", &format!("route = {route}\n"))
        + &flow_s_to_d("mp", "multi-priority", &mp);
    run_bottleneck(RED_100, &flows, seed)
}

/// The multi-priority connection's share of the bottleneck.
fn share(options: &str, seed: u64) -> f64 {
    let r = run(options, seed);
    let bps = |id: &str| r.flow(id).unwrap().throughput_bps.unwrap();
    let (mp, tcp) = (bps("mp"), bps("tcp"));
    let subs: Vec<String> = r
        .subflows
        .iter()
        .map(|s| format!("{:.2}", s.throughput_bps.unwrap() / 1e6))
        .collect();
    eprintln!(
        "{options}, seed {seed}: tcp {:.2} Mb/s, subflows {subs:?} Mb/s, share {:.3}",
        tcp / 1e6,
        mp / (mp + tcp)
    );
    mp / (mp + tcp)
}

#[test]
fn borrowing_and_returning_hold_the_connection_to_half_of_a_shared_bottleneck() {
    // Spec §5 E0 (Figs 3-1, 3-2): with Packet Borrowing and Returning the connection takes
    // 50% beside one NewReno whatever its number of TCP-LP subflows; naive aggregation takes
    // more. Tolerance ±5 points (issue 20), set before the run. Measured when written
    // (seeds 1, 2, 3): borrow-return 0.516, 0.492, 0.518; naive 0.600, 0.589, 0.594;
    // borrow 0.496, 0.513, 0.482; borrow-return with borrow_unit = "decrement" 0.346, 0.376,
    // 0.312 (the literal cwnd_B −= 1 is never given back, D246).
    for seed in 1..=3 {
        let fair = share(r#"accounting = "borrow-return""#, seed);
        assert!(
            (fair - 0.5).abs() <= 0.05,
            "borrow-return, seed {seed}: {fair:.3}"
        );
        let naive = share(r#"accounting = "naive""#, seed);
        assert!(
            naive > fair + 0.04,
            "seed {seed}: naive {naive:.3}, borrow-return {fair:.3}"
        );
    }
}

#[test]
fn a_base_beyond_the_subflows_is_refused_at_its_field() {
    let flow = |tcp: &str| {
        format!(
            r#"
            duration = "10s"
            {tcp}
            [nodes]
            hosts = ["s", "d"]
            [[links]]
            between = ["s", "d"]
            rate = "10Mbps"
            delay = "10ms"
            [[flows]]
            from = "s"
            to = "d"
            cc = "multi-priority"
            paths = [["s", "d"], ["s", "d"]]
            "#
        )
    };
    let e = common::error(&flow("[tcp.multi_priority]\nbase = 2"));
    assert!(
        e.contains("tcp.multi_priority.base: subflow 2 does not exist: flows[0] has 2 subflow(s)"),
        "{e}"
    );
    let e = common::error(&flow("[tcp.multi_priority]\naccounting = \"lazy\""));
    assert!(
        e.contains("accounting") && e.contains("borrow-return"),
        "{e}"
    );
    let e = common::error(&flow("").replace(
        "paths = [[\"s\", \"d\"], [\"s\", \"d\"]]",
        "tcp = { multi_priority = { base = 5 } }\npaths = [[\"s\", \"d\"]]",
    ));
    assert!(
        e.contains("flows[0].tcp.multi_priority.base: subflow 5"),
        "{e}"
    );
}

#[test]
fn a_finite_transfer_completes_with_sack_a_receive_buffer_and_loss() {
    // The send gate must not stall a connection: at the end of a transfer the background
    // subflows have nothing to send and must not hold the base's slot, and a TCP-LP
    // subflow's retransmission at one segment must get its turn (D247). Two disjoint paths,
    // 1% loss on the second, a 2 MB transfer.
    for (sack, buffer) in [(false, "unlimited"), (true, "unlimited"), (true, "200KB")] {
        let r = common::run(&format!(
            r#"
            duration = "60s"
            [tcp]
            sack = {sack}
            [nodes]
            hosts = ["s", "d"]
            routers = ["r1", "r2"]
            [[links]]
            between = ["s", "r1"]
            rate = "10Mbps"
            delay = "10ms"
            [[links]]
            between = ["r1", "d"]
            rate = "10Mbps"
            delay = "10ms"
            [[links]]
            between = ["s", "r2"]
            rate = "5Mbps"
            delay = "20ms"
            loss = 0.01
            [[links]]
            between = ["r2", "d"]
            rate = "5Mbps"
            delay = "20ms"
            [[flows]]
            id = "mp"
            from = "s"
            to = "d"
            size = "2MB"
            cc = "multi-priority"
            receive_buffer = "{buffer}"
            paths = [["s", "r1", "d"], ["s", "r2", "d"]]
            "#
        ));
        let fct = r.flow("mp").unwrap().fct_s;
        eprintln!("sack {sack}, receive_buffer {buffer}: fct {fct:?}");
        assert!(
            fct.is_some_and(|t| t < 30.0),
            "sack {sack}, {buffer}: {fct:?}"
        );
    }
}
