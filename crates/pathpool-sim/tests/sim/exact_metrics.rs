//! Outcomes that can be computed by hand, checked exactly (or to one packet).

use crate::common::run;

#[test]
fn finite_flow_within_the_initial_window_completes_in_one_trip() {
    // 10 segments of 1460 B fit the initial window: all leave at t = 0 back to back. On a
    // 12 Mb/s link a 1500-byte packet takes 1 ms, so the last one arrives after 10 ms of
    // serialisation plus 25 ms of propagation.
    let r = run(r#"
        duration = "1s"
        [nodes]
        hosts = ["a", "b"]
        [[links]]
        between = ["a", "b"]
        rate = "12Mbps"
        delay = "25ms"
        [[flows]]
        id = "f"
        from = "a"
        to = "b"
        size = "10pkts"
        "#);
    let f = r.flow("f").unwrap();
    assert_eq!(f.size_bytes, Some(14_600));
    assert_eq!(f.bytes_delivered, 14_600);
    assert_eq!(f.fct_s, Some(0.035));
    assert_eq!(f.completed, Some(true));
    assert_eq!(f.retransmissions, 0);
    assert_eq!(r.afct_s, Some(0.035));
}

#[test]
fn slow_start_doubles_each_round_trip() {
    // 70 segments: 10 leave at t = 0, 20 at one RTT (each ACK releases two), 40 at two RTTs.
    // On an infinitely fast link with 10 ms each way the last byte arrives at 2 RTT + 10 ms.
    let r = run(r#"
        duration = "1s"
        [nodes]
        hosts = ["a", "b"]
        [[links]]
        between = ["a", "b"]
        rate = "inf"
        delay = "10ms"
        [[flows]]
        id = "f"
        from = "a"
        to = "b"
        size = "70pkts"
        "#);
    assert_eq!(r.flow("f").unwrap().fct_s, Some(0.050));
}

#[test]
fn constant_rate_flow_throughput_and_link_utilisation() {
    // A 1 Mb/s CBR source of 1000-byte datagrams (972 B payload) active from 2 s to 8 s; the
    // summary window is [0, 10 s] but the flow's active part is [2 s, 8 s].
    let r = run(r#"
        duration = "10s"
        [nodes]
        hosts = ["a", "b"]
        [[links]]
        between = ["a", "b"]
        rate = "4Mbps"
        delay = "1ms"
        [[flows]]
        id = "cbr"
        kind = "udp-cbr"
        from = "a"
        to = "b"
        rate = "1Mbps"
        packet_size = "1000B"
        start = "2s"
        stop = "8s"
        "#);
    let f = r.flow("cbr").unwrap();
    assert_eq!(f.window_active_s, 6.0);
    // 750 datagrams are sent in [2 s, 8 s); those in flight at 8 s arrive later.
    assert_eq!(f.packets_sent, 750);
    let expected = 1e6 * 972.0 / 1000.0;
    let per_packet = 972.0 * 8.0 / 6.0;
    assert!(
        (f.throughput_bps.unwrap() - expected).abs() <= per_packet,
        "{:?}",
        f.throughput_bps
    );
    assert_eq!(f.bytes_delivered, 750 * 972);
    let l = r.link("a-b:a->b").unwrap();
    assert_eq!(l.tx_bytes, 750 * 1000);
    assert!(
        (l.utilization.unwrap() - 0.15).abs() < 1e-12,
        "6 s at 1 Mb/s over 10 s of 4 Mb/s"
    );
    assert_eq!(l.drops, 0);
    // A constant queue of exactly one packet in service 2 ms of every 8 ms: mean 250 B while on.
    assert!(
        (l.mean_queue_bytes - 1000.0 * 0.25 * 0.6).abs() < 1.0,
        "{}",
        l.mean_queue_bytes
    );
}

#[test]
fn jain_index_and_shares_follow_from_throughputs() {
    let r = run(r#"
        duration = "10s"
        [nodes]
        hosts = ["a", "b"]
        [[links]]
        between = ["a", "b"]
        rate = "100Mbps"
        delay = "1ms"
        [[flows]]
        id = "x"
        kind = "udp-cbr"
        from = "a"
        to = "b"
        rate = "1Mbps"
        [[flows]]
        id = "y"
        kind = "udp-cbr"
        from = "a"
        to = "b"
        rate = "3Mbps"
        "#);
    let x = r.flow("x").unwrap().throughput_bps.unwrap();
    let y = r.flow("y").unwrap().throughput_bps.unwrap();
    let jain = (x + y).powi(2) / (2.0 * (x * x + y * y));
    assert!((r.jain_index.unwrap() - jain).abs() < 1e-12);
    assert!((jain - 0.8).abs() < 0.001, "rates 1:3 give 16/20");
    assert!((r.flow("x").unwrap().share.unwrap() - x / (x + y)).abs() < 1e-12);
}

#[test]
fn poisson_generator_offers_the_requested_load() {
    // load 0.5 of 10 Mb/s with 100 kB mean exponential sizes: 6.25 flows/s over 400 s.
    let r = run(r#"
        duration = "400s"
        [nodes]
        hosts = ["a", "b"]
        [[links]]
        between = ["a", "b"]
        rate = "10Mbps"
        delay = "5ms"
        queue = { type = "droptail", size = "200pkts" }
        [[traffic]]
        id = "p"
        kind = "poisson"
        from = "a"
        to = "b"
        load = 0.5
        size = { dist = "exponential", mean = "100KB" }
        "#);
    let n = r.flows.len() as f64;
    assert!(
        (n - 2500.0).abs() < 3.0 * 2500f64.sqrt(),
        "{n} flows, expected 2500 ± 150"
    );
    let offered: u64 = r.flows.iter().map(|f| f.size_bytes.unwrap()).sum();
    let load = offered as f64 * 8.0 / (10e6 * 400.0);
    assert!((load - 0.5).abs() < 0.05, "offered load {load}");
    let done = r.flows.iter().filter(|f| f.completed == Some(true)).count() as f64;
    assert!(
        done / n > 0.99,
        "an underloaded link completes almost every flow: {done}/{n}"
    );
}

#[test]
fn wires_pass_packets_at_once_and_count_them() {
    // a -> w (infinite rate, no delay: a wire crossed without an event) -> b (12 Mb/s, 25 ms).
    // The flow completes exactly as over the 12 Mb/s link alone, and the wire counts every
    // packet the bottleneck received, in both directions.
    let r = run(r#"
        duration = "1s"
        [nodes]
        hosts = ["a", "b"]
        routers = ["w"]
        [[links]]
        id = "wire"
        between = ["a", "w"]
        rate = "inf"
        delay = "0ms"
        [[links]]
        id = "slow"
        between = ["w", "b"]
        rate = "12Mbps"
        delay = "25ms"
        [[flows]]
        id = "f"
        from = "a"
        to = "b"
        size = "10pkts"
        "#);
    let f = r.flow("f").unwrap();
    assert_eq!(f.fct_s, Some(0.035));
    let (wire, slow) = (r.link("wire:a->w").unwrap(), r.link("slow:w->b").unwrap());
    assert_eq!(wire.arrivals, 10);
    assert_eq!(wire.tx_bytes, 15_000);
    assert_eq!(slow.arrivals, 10);
    assert_eq!(slow.tx_bytes, 15_000);
    let (back_wire, back_slow) = (r.link("wire:w->a").unwrap(), r.link("slow:b->w").unwrap());
    assert!(back_slow.arrivals > 0);
    assert_eq!(back_wire.arrivals, back_slow.arrivals);
}

#[test]
fn a_route_of_wires_only_still_delivers() {
    // Every link is a wire: the sender's first hop stays a plain link (one event), the second
    // is crossed at once; the transfer takes no time at all.
    let r = run(r#"
        duration = "1s"
        [nodes]
        hosts = ["a", "b"]
        routers = ["w"]
        [[links]]
        between = ["a", "w"]
        rate = "inf"
        delay = "0ms"
        [[links]]
        between = ["w", "b"]
        rate = "inf"
        delay = "0ms"
        [[flows]]
        id = "f"
        from = "a"
        to = "b"
        size = "30pkts"
        "#);
    let f = r.flow("f").unwrap();
    assert_eq!(f.completed, Some(true));
    assert_eq!(f.fct_s, Some(0.0));
}

#[test]
fn a_wire_with_a_byte_limit_below_the_packet_size_drops_like_a_queue() {
    // A 1000-byte drop-tail limit on an infinitely fast wire: every 1500-byte data packet is
    // dropped, as the queue would drop it, and nothing arrives.
    let r = run(r#"
        duration = "1s"
        [nodes]
        hosts = ["a", "b"]
        routers = ["w"]
        [[links]]
        id = "wire"
        between = ["a", "w"]
        rate = "inf"
        delay = "0ms"
        queue = { type = "droptail", size = "1000B" }
        [[links]]
        between = ["w", "b"]
        rate = "12Mbps"
        delay = "25ms"
        [[flows]]
        id = "f"
        from = "a"
        to = "b"
        size = "10pkts"
        "#);
    let wire = r.link("wire:a->w").unwrap();
    assert!(wire.drops >= 10, "{wire:?}");
    assert_eq!(wire.drops, wire.arrivals);
    assert_eq!(r.flow("f").unwrap().bytes_delivered, 0);
}
