//! The INRPP document's metrics (spec 001 §5.1): Jain's index sampled every
//! `measure.fairness_interval` and averaged (D290), and the AFCT per flow-size bin (D291).

use crate::common::{error, run};

/// Two TCP flows from s1 and s2 to d across a 10 Mb/s, 10 ms bottleneck a–b, with `flows`
/// (TOML lines appended to each flow: `[first, second]`) and `measure` lines.
fn dumbbell(first: &str, second: &str, measure: &str) -> String {
    format!(
        r#"
        duration = "20s"
        [measure]
        interval = "1s"
        {measure}
        [nodes]
        hosts = ["s1", "s2", "d"]
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
        rate = "10Mbps"
        delay = "10ms"
        queue = {{ type = "droptail", size = "50pkts" }}
        [[links]]
        between = ["b", "d"]
        rate = "100Mbps"
        delay = "1ms"
        [[flows]]
        id = "x"
        from = "s1"
        to = "d"
        {first}
        [[flows]]
        id = "y"
        from = "s2"
        to = "d"
        {second}
        "#
    )
}

#[test]
fn two_equal_flows_on_a_shared_bottleneck_sample_close_to_one() {
    let sampled = |interval: &str| {
        let r = run(&dumbbell(
            "",
            "",
            &format!("start = \"5s\"\nfairness_interval = \"{interval}\""),
        ));
        let j = r.jain_sampled.expect("asked for");
        let s = r.summary(0.0);
        assert_eq!(s.jain_sampled, Some(j.mean()));
        assert_eq!(s.jain_sampled_samples, Some(j.samples()));
        let since = r.jain_sampled_since_start.expect("with the samples");
        assert_eq!(s.jain_sampled_since_start, Some(since.mean()));
        // Means since the start smooth the packet trains out: two equal flows read near 1
        // however short the interval.
        assert!(since.mean().unwrap() > 0.99, "{since:?}");
        (j, r.jain_index.unwrap())
    };
    // Over 100 ms samples (about 85 packets of the bottleneck) two NewReno flows with the
    // same RTT share evenly: 0.965 measured; over the whole window 0.99999.
    let (j, whole) = sampled("100ms");
    assert_eq!((j.samples(), j.skipped()), (150, 0));
    let coarse = j.mean().unwrap();
    assert!(coarse > 0.9 && coarse <= 1.0, "{coarse}");
    assert!(whole > 0.999, "{whole}");

    // Over 10 ms (about 8 packets) each sample sees the flows' packet trains and the stalls
    // of in-order delivery behind a loss: 0.586 measured, between the index of one flow
    // taking all (0.5) and the 100 ms figure. 15 s of window in 10 ms samples, both flows
    // active in every one; a few are skipped because neither flow delivered a byte in
    // order in them (both waiting for a retransmission).
    let (j, _) = sampled("10ms");
    assert_eq!(j.samples() + j.skipped(), 1500);
    assert!(j.skipped() < 100, "{j:?}");
    let fine = j.mean().unwrap();
    assert!(fine > 0.55 && fine < coarse, "{fine}");
}

#[test]
fn a_flow_alone_counts_in_no_sample() {
    // y starts at 10 s: from 0 to 10 s x is alone and those 100 samples are skipped; y
    // counts from the sample [10 s, 10.1 s] on, its slow start included.
    let r = run(&dumbbell(
        "",
        "start = \"10s\"",
        "fairness_interval = \"100ms\"",
    ));
    let j = r.jain_sampled.unwrap();
    assert_eq!((j.samples(), j.skipped()), (100, 100));
    let both = j.mean().unwrap();
    assert!(both > 0.8 && both <= 1.0, "{both}");

    // A flow stopping at 15 s: active over the intervals that end by then.
    let r = run(&dumbbell(
        "stop = \"15s\"",
        "start = \"10s\"",
        "fairness_interval = \"100ms\"",
    ));
    let j = r.jain_sampled.unwrap();
    assert_eq!((j.samples(), j.skipped()), (50, 150));

    // x a finite flow that completes before y starts: no sample has two flows.
    let r = run(&dumbbell(
        "size = \"1MB\"",
        "start = \"10s\"",
        "fairness_interval = \"100ms\"",
    ));
    assert!(r.flow("x").unwrap().completed.unwrap());
    let j = r.jain_sampled.unwrap();
    assert_eq!((j.samples(), j.mean()), (0, None));
    assert_eq!(r.summary(0.0).jain_sampled, Some(None));
}

#[test]
fn sampling_fairness_changes_nothing_else() {
    let plain = run(&dumbbell("", "start = \"3s\"", ""));
    let sampled = run(&dumbbell(
        "",
        "start = \"3s\"",
        "fairness_interval = \"10ms\"",
    ));
    assert!(plain.jain_sampled.is_none());
    assert_eq!(plain.flows, sampled.flows);
    assert_eq!(plain.links, sampled.links);
    assert_eq!(plain.tables(), sampled.tables());
    let json = |r: &pathpool_sim::Results| serde_json::to_value(r.summary(0.0)).unwrap();
    let (a, b) = (json(&plain), json(&sampled));
    for key in [
        "jain_sampled",
        "jain_sampled_samples",
        "jain_sampled_since_start",
    ] {
        assert!(a.get(key).is_none() && b.get(key).is_some(), "{key}");
    }
    // Only the sampler's extra events differ: 2000 samples over 20 s, some at a tick's time.
    assert!(
        b["events"].as_u64().unwrap() > a["events"].as_u64().unwrap(),
        "{a} {b}"
    );
}

#[test]
fn afct_bins_tabulate_the_finite_flows_by_size() {
    let r = run(&dumbbell(
        "size = \"100KB\"",
        "size = \"1MB\"",
        "afct_bins_per_decade = 4",
    ));
    let bins = r.afct_bins.as_ref().unwrap();
    let (x, y) = (r.flow("x").unwrap(), r.flow("y").unwrap());
    assert_eq!(bins.len(), 2);
    assert_eq!((bins[0].lo_bytes, bins[1].lo_bytes), (1e5, 1e6));
    assert_eq!(bins[0].mean_fct_s, x.fct_s);
    assert_eq!(bins[1].mean_fct_s, y.fct_s);
    assert_eq!(
        (bins[0].completed, bins[0].not_completed),
        (1, 0),
        "{bins:?}"
    );
    let t = r.afct_bins_table().unwrap();
    assert!(r.tables().iter().any(|t| t.name == "afct_bins"));
    assert_eq!(t.name, "afct_bins");
    // Without the field, no table.
    let r = run(&dumbbell("size = \"100KB\"", "", ""));
    assert!(r.afct_bins.is_none());
    assert!(r.tables().iter().all(|t| t.name != "afct_bins"));
}

#[test]
fn bad_measure_fields_are_named() {
    let e = error(&dumbbell("", "", "fairness_interval = \"0s\""));
    assert!(
        e.ends_with(": measure.fairness_interval: must be positive"),
        "{e}"
    );
    let e = error(&dumbbell("", "", "fairness_interval = \"1ps\""));
    assert!(
        e.contains(": measure.fairness_interval: 1ps would take more than"),
        "{e}"
    );
    let e = error(&dumbbell("", "", "afct_bins_per_decade = 0"));
    assert!(
        e.ends_with(
            ": measure.afct_bins_per_decade: must be at least 1 (bins per decade of flow size)"
        ),
        "{e}"
    );
}
