//! Issue 17, acceptance 1: the windows of every flow and subflow stay within a few times what
//! their path holds, retransmissions stay rare, and (with htsim's 10 ms timer scan) no subflow
//! is locked out, on scenarios/validation/runaway.toml for seeds 1-6 and both partial-ACK
//! timer settings. Before D124 seed 1 reached a 124 MB window
//! on a path holding 50 KB and retransmitted 5.8% of its packets.

use pathpool_sim::{Column, LoadedScenario};

const SCENARIO: &str = include_str!("../../../../scenarios/validation/runaway.toml");

/// What each path holds: its bandwidth-delay product plus its buffer, in bytes (20 Mb/s;
/// 10 ms and 100 ms round trips; 17 and 167 packets of 1500 B).
const PATH_BYTES: [f64; 2] = [25_000.0 + 17.0 * 1500.0, 250_000.0 + 167.0 * 1500.0];

fn column<'a>(t: &'a pathpool_sim::Table, name: &str) -> &'a Column {
    t.column(name)
        .unwrap_or_else(|| panic!("{}: no column {name}", t.name))
}

/// Runs seeds 1-6 with both partial-ACK timer settings, asserting the window and
/// retransmission bounds; returns the runs in which mp/0 carried less than 1 Mb/s.
fn check(timer_granularity: &str) -> Vec<String> {
    let mut lockouts = Vec::new();
    for timer in ["slow-but-steady", "impatient"] {
        for seed in 1..=6u64 {
            let overrides = [
                ("tcp.timer_granularity", format!("\"{timer_granularity}\"")),
                ("tcp.partial_ack_timer", format!("\"{timer}\"")),
                ("measure.trace_cwnd", "true".to_string()),
                // One sample per round trip of path 1: a window cannot grow four-fold and
                // back within it.
                ("measure.interval", "\"10ms\"".to_string()),
            ]
            .map(|(k, v)| (k.to_string(), v));
            let loaded = LoadedScenario::from_toml(SCENARIO, "runaway.toml", &overrides)
                .unwrap_or_else(|e| panic!("{e}"));
            let mut sim = loaded.compile(Some(seed)).unwrap_or_else(|e| panic!("{e}"));
            sim.run();
            let r = sim.results();
            let limit = |path: usize| 4.0 * PATH_BYTES[path];
            // Subflows: flow "mp", subflow k on path k.
            let t = &r.subflow_timeseries;
            let (Column::U64(sub), Column::F64(cwnd), Column::F64(ssthresh)) = (
                column(t, "subflow"),
                column(t, "cwnd_bytes"),
                column(t, "ssthresh_bytes"),
            ) else {
                panic!("unexpected column types in {}", t.name);
            };
            for i in 0..sub.len() {
                let path = sub[i] as usize;
                for (what, v) in [("cwnd", cwnd[i]), ("ssthresh", ssthresh[i])] {
                    if v.is_finite() {
                        assert!(
                            v <= limit(path),
                            "{timer} seed {seed}: mp/{path} {what} {v} B > 4 × {} B",
                            PATH_BYTES[path]
                        );
                    }
                }
            }
            // Single-path flows: r1 on path 1 (index 0), r2 on path 2.
            let t = &r.flow_timeseries;
            let (Column::Str(flow), Column::F64(cwnd), Column::F64(ssthresh)) = (
                column(t, "flow"),
                column(t, "cwnd_bytes"),
                column(t, "ssthresh_bytes"),
            ) else {
                panic!("unexpected column types in {}", t.name);
            };
            for i in 0..flow.len() {
                let path = match flow[i].as_str() {
                    "r1" => 0,
                    "r2" => 1,
                    _ => continue,
                };
                for (what, v) in [("cwnd", cwnd[i]), ("ssthresh", ssthresh[i])] {
                    if v.is_finite() {
                        assert!(
                            v <= limit(path),
                            "{timer} seed {seed}: {} {what} {v} B > 4 × {} B",
                            flow[i],
                            PATH_BYTES[path]
                        );
                    }
                }
            }
            for f in &r.flows {
                let ratio = f.retransmissions as f64 / f.packets_sent as f64;
                assert!(
                    ratio < 0.02,
                    "{timer} seed {seed}: {} retransmitted {:.2}% of its packets",
                    f.id,
                    100.0 * ratio
                );
            }
            let sub0 = &r.subflows[0];
            let mbps = sub0.throughput_bps.unwrap_or(0.0) / 1e6;
            eprintln!(
                "timer granularity {timer_granularity}, {timer} seed {seed}: mp/0 {mbps:.2} Mb/s, {} timeouts, {} fast recoveries",
                sub0.timeouts, sub0.fast_recoveries
            );
            if mbps < 1.0 {
                lockouts.push(format!("{timer} seed {seed}"));
            }
        }
    }
    lockouts
}

/// With the retransmission timer checked every 10 ms, as htsim's scanner does, no run shuts
/// the LIA subflow on path 1 out: htsim gives it 6.8-7.1 Mb/s on these seeds.
#[test]
fn windows_and_retransmissions_stay_bounded_and_no_subflow_is_locked_out() {
    let lockouts = check("10ms");
    assert!(lockouts.is_empty(), "locked out: {lockouts:?}");
}

/// With an exact timer the same bounds hold, but a drop-tail phase effect can lock the
/// subflow out (docs/validation.md: which seeds depends on microseconds of path delay).
/// Printed, not asserted.
#[test]
fn with_an_exact_timer_the_bounds_still_hold() {
    let lockouts = check("0s");
    eprintln!("exact timer: mp/0 below 1 Mb/s in {lockouts:?}");
}
