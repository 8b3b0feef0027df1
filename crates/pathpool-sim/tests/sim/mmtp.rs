//! mmTP downloads in the simulator: multisource, multipath, a silent publisher, groups, and
//! errors.

use crate::common::{error, run};

/// A subscriber `s` behind router `r`; publishers p1, p2, p3 each on their own 10 Mb/s link
/// to `r` with one-way delays 10, 20 and 40 ms; `r`-`s` is 1 Gb/s. `{flows}` is appended.
fn three_sources(flows: &str) -> String {
    format!(
        r#"
        duration = "60s"
        [nodes]
        hosts = ["s", "p1", "p2", "p3"]
        routers = ["r"]
        [[links]]
        id = "l1"
        between = ["p1", "r"]
        rate = "10Mbps"
        delay = "10ms"
        queue = {{ type = "droptail", size = "50KB" }}
        [[links]]
        id = "l2"
        between = ["p2", "r"]
        rate = "10Mbps"
        delay = "20ms"
        queue = {{ type = "droptail", size = "50KB" }}
        [[links]]
        id = "l3"
        between = ["p3", "r"]
        rate = "10Mbps"
        delay = "40ms"
        queue = {{ type = "droptail", size = "100KB" }}
        [[links]]
        between = ["r", "s"]
        rate = "1Gbps"
        delay = "1ms"
        {flows}
        "#
    )
}

#[test]
fn a_multisource_download_completes_and_uses_every_source() {
    let r = run(&three_sources(
        r#"[[flows]]
        id = "dl"
        kind = "mmtp"
        sources = ["p1", "p2", "p3"]
        to = "s"
        size = "12MB"
        "#,
    ));
    let f = r.flow("dl").unwrap();
    assert_eq!(f.completed, Some(true), "{f:?}");
    assert_eq!(f.bytes_delivered, 12_000_000);
    // Windows start at one chunk and grow by slow start: re-requests stay a small fraction
    // of the 8220 chunks (a window that started at thousands of chunks flooded the
    // subscriber's uplink with requests and re-requested most of them).
    assert!(f.retransmissions < 400, "{}", f.retransmissions);
    let subs: Vec<_> = r.subflows.iter().filter(|s| s.flow == "dl").collect();
    assert_eq!(subs.len(), 3);
    // Every source delivered a good part; the one with the shortest RTT the most.
    let got: Vec<u64> = subs.iter().map(|s| s.bytes_acked).collect();
    assert_eq!(got.iter().sum::<u64>(), 12_000_000);
    assert!(got.iter().all(|&b| b > 1_000_000), "{got:?}");
    assert!(got[0] > got[2], "{got:?}");
    // Every path ends on the link r-s: one group under the thesis's shared-link rule (the
    // default controller, Reno, runs the subflows uncoupled whatever their groups).
    let groups: Vec<u32> = subs.iter().map(|s| s.group).collect();
    assert_eq!(groups, vec![0, 0, 0]);
    // Three 10 Mb/s sources beat any single one: 12 MB alone at 10 Mb/s needs > 9.6 s.
    let fct = f.fct_s.unwrap();
    assert!(fct < 9.6 * 0.6, "{fct}");
    let single = run(&three_sources(
        r#"[[flows]]
        id = "one"
        kind = "mmtp"
        from = "p1"
        to = "s"
        size = "12MB"
        "#,
    ));
    let one = single.flow("one").unwrap();
    assert_eq!(one.completed, Some(true));
    assert!(one.fct_s.unwrap() > 9.6, "{:?}", one.fct_s);
}

#[test]
fn a_silent_publisher_costs_time_but_the_download_completes() {
    let flow = |outage: &str| {
        three_sources(&format!(
            r#"[[flows]]
            id = "dl"
            kind = "mmtp"
            sources = ["p1", "p2", "p3"]
            to = "s"
            size = "20MB"
            {outage}
            "#
        ))
    };
    let normal = run(&flow(""));
    let failed = run(&flow(
        r#"[[flows.outages]]
        source = "p1"
        start = "2s"
        stop = "9s"
        "#,
    ));
    let (a, b) = (normal.flow("dl").unwrap(), failed.flow("dl").unwrap());
    assert_eq!(b.completed, Some(true));
    assert_eq!(b.bytes_delivered, 20_000_000);
    let (t0, t1) = (a.fct_s.unwrap(), b.fct_s.unwrap());
    assert!(t1 > t0, "{t0} {t1}");
    // p1 stood for a third of the capacity for 7 s: the others take over, so the loss is
    // well under the 7 s of the outage.
    assert!(t1 - t0 < 7.0, "{t0} {t1}");
    let p1 = failed.subflows.iter().find(|s| s.subflow == 0).unwrap();
    assert!(p1.timeouts > 0);
}

#[test]
fn with_tm_assistance_paths_sharing_a_link_are_one_group() {
    // Two paths from p1: through r directly, and through a second router q; they share the
    // link r-s, so one group; without assistance also one; disjoint sources, two.
    let r = run(&three_sources(
        r#"[[flows]]
        id = "dl"
        kind = "mmtp"
        sources = ["p1", "p2"]
        to = "s"
        size = "2MB"
        cc = "nmcc"
        tm = { k = 1, assistance = "shared-link" }
        "#,
    ));
    let groups: Vec<u32> = r.subflows.iter().map(|s| s.group).collect();
    // p1 and p2 both reach s over r-s: shared-link groups them.
    assert_eq!(groups, vec![0, 0]);
    let r = run(&three_sources(
        r#"[[flows]]
        id = "dl"
        kind = "mmtp"
        sources = ["p1", "p2"]
        to = "s"
        size = "2MB"
        cc = "nmcc"
        tm = { k = 1, assistance = "bottleneck" }
        "#,
    ));
    let groups: Vec<u32> = r.subflows.iter().map(|s| s.group).collect();
    assert_eq!(
        groups,
        vec![0, 1],
        "r-s is 100 times faster: not a bottleneck"
    );
    assert_eq!(r.flow("dl").unwrap().completed, Some(true));
}

#[test]
fn mmtp_errors_name_the_field() {
    let flow =
        |body: &str| three_sources(&format!("[[flows]]\nkind = \"mmtp\"\nto = \"s\"\n{body}\n"));
    let e = error(&flow("sources = [\"p1\"]\n"));
    assert!(
        e.contains("flows[0].size") && e.contains("content's size"),
        "{e}"
    );
    let e = error(&flow("size = \"1MB\"\n"));
    assert!(
        e.contains("flows[0].from") && e.contains("publisher"),
        "{e}"
    );
    let e = error(&flow("from = \"p1\"\nsources = [\"p2\"]\nsize = \"1MB\"\n"));
    assert!(e.contains("either from"), "{e}");
    let e = error(&flow("sources = [\"p1\", \"p1\"]\nsize = \"1MB\"\n"));
    assert!(
        e.contains("flows[0].sources[1]") && e.contains("twice"),
        "{e}"
    );
    let e = error(&flow("sources = [\"p1\", \"q\"]\nsize = \"1MB\"\n"));
    assert!(e.contains("flows[0].sources[1]"), "{e}");
    let e = error(&flow(
        "sources = [\"p1\"]\nsize = \"1MB\"\n[[flows.outages]]\nsource = \"p2\"\nstart = \"1s\"\nstop = \"2s\"\n",
    ));
    assert!(
        e.contains("flows[0].outages[0].source") && e.contains("not a source"),
        "{e}"
    );
    let e = error(&flow(
        "sources = [\"p1\"]\nsize = \"1MB\"\nroute = [\"p1\", \"r\", \"s\"]\n",
    ));
    assert!(e.contains("flows[0].route"), "{e}");
    let e = error(&three_sources(
        "[[flows]]\nfrom = \"p1\"\nto = \"s\"\noutages = []\n",
    ));
    assert!(e.contains("only for kind = \"mmtp\""), "{e}");
    let e = error(&three_sources("[[flows]]\nto = \"s\"\n"));
    assert!(e.contains("flows[0].from") && e.contains("missing"), "{e}");
    let e = error(&flow(
        "sources = [\"p1\"]\nsize = \"1MB\"\nmmtp = { backoff_limit = \"2\" }\n",
    ));
    assert!(e.contains("backoff_limit") && e.contains("unit"), "{e}");
}

#[test]
fn gap_based_loss_detection_is_a_named_option_that_shortens_a_lossy_download() {
    let flows = |extra: &str| {
        three_sources(&format!(
            r#"[[flows]]
        id = "one"
        kind = "mmtp"
        from = "p1"
        to = "s"
        size = "12MB"
        {extra}
        "#
        ))
    };
    let timer = run(&flows(""));
    let gap = run(&flows("mmtp = { gap_threshold = 3 }"));
    let (t, g) = (
        timer.flow("one").unwrap().fct_s.unwrap(),
        gap.flow("one").unwrap().fct_s.unwrap(),
    );
    assert_eq!(gap.flow("one").unwrap().completed, Some(true));
    // 12 MB over 10 Mb/s with a 50 KB queue: every overflow costs the timer-only subscriber a
    // 200 ms timeout and a restart from one chunk; gap detection halves instead.
    assert!(g < t, "gap {g} s, timer {t} s");
    assert!(
        error(&flows("mmtp = { gap_threshold = 0 }")).contains("gap_threshold: must be at least 1"),
        "{}",
        error(&flows("mmtp = { gap_threshold = 0 }"))
    );
}
