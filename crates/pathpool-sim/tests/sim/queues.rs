//! The random-drop queue (htsim's `RandomQueue`, D120) against drop-tail, and its errors.

use crate::common::{error, run};

/// Two seconds of a 24 Mb/s constant-bit-rate flow into a 12 Mb/s link with `queue`: the
/// queue is offered twice what it can serve, so it sits at its limit.
fn overload(queue: &str) -> String {
    format!(
        r#"duration = "2s"
        [nodes]
        hosts = ["a", "b"]
        [[links]]
        id = "l"
        between = ["a", "b"]
        rate = "12Mbps"
        delay = "10ms"
        queue = {queue}
        [[flows]]
        id = "cbr"
        kind = "udp-cbr"
        from = "a"
        to = "b"
        rate = "24Mbps"
        "#
    )
}

#[test]
fn with_p_zero_the_random_queue_is_drop_tail() {
    let droptail = run(&overload(r#"{ type = "droptail", size = "20pkts" }"#));
    let random = run(&overload(
        r#"{ type = "random", size = "20pkts", band = "5pkts", p = 0.0 }"#,
    ));
    let (d, r) = (
        droptail.link("l:a->b").unwrap(),
        random.link("l:a->b").unwrap(),
    );
    assert!(d.drops > 1000, "the overload drops: {}", d.drops);
    assert_eq!(
        (r.drops, r.tx_bytes, r.max_queue_bytes),
        (d.drops, d.tx_bytes, d.max_queue_bytes)
    );
}

#[test]
fn with_p_one_the_band_is_never_entered() {
    let r = run(&overload(
        r#"{ type = "random", size = "20pkts", band = "5pkts", p = 1.0 }"#,
    ));
    let l = r.link("l:a->b").unwrap();
    // An arrival that would make 16 packets is always dropped: the queue holds at most 15.
    assert_eq!(l.max_queue_bytes, 15 * 1500);
    let d = run(&overload(r#"{ type = "droptail", size = "15pkts" }"#));
    assert_eq!(
        l.drops,
        d.link("l:a->b").unwrap().drops,
        "a 15-packet drop-tail queue"
    );
}

#[test]
fn in_the_band_arrivals_are_dropped_at_random_and_the_limit_holds() {
    // htsim's defaults: a 3-packet band, p = 0.1. Under overload the queue still reaches its
    // limit (nine arrivals in ten pass the band), but drops start below it.
    let r = run(&overload(r#"{ type = "random", size = "20pkts" }"#));
    let l = r.link("l:a->b").unwrap();
    assert_eq!(l.max_queue_bytes, 20 * 1500);
    let d = run(&overload(r#"{ type = "droptail", size = "20pkts" }"#));
    let dl = d.link("l:a->b").unwrap();
    assert!(
        l.mean_queue_bytes < dl.mean_queue_bytes,
        "random {} B, drop-tail {} B on average",
        l.mean_queue_bytes,
        dl.mean_queue_bytes
    );
    // Bytes: the band defaults to 4500B.
    let b = run(&overload(
        r#"{ type = "random", size = "30000B", p = 1.0 }"#,
    ));
    assert_eq!(b.link("l:a->b").unwrap().max_queue_bytes, 30_000 - 4500);
}

#[test]
fn bad_random_queues_are_refused_with_the_field_named() {
    let e = error(&overload(
        r#"{ type = "random", size = "20pkts", band = "3000B" }"#,
    ));
    assert!(e.contains("band") && e.contains("unit"), "{e}");
    let e = error(&overload(
        r#"{ type = "random", size = "20pkts", band = "21pkts" }"#,
    ));
    assert!(e.contains("band") && e.contains("larger"), "{e}");
    let e = error(&overload(
        r#"{ type = "random", size = "20pkts", p = 1.5 }"#,
    ));
    assert!(e.contains(".p") && e.contains("[0, 1]"), "{e}");
    let e = error(&overload(r#"{ type = "random", size = "0pkts" }"#));
    assert!(
        e.contains("size") && e.contains("at least one packet"),
        "{e}"
    );
}
