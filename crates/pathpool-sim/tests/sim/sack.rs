//! SACK loss recovery in the simulator (issue 17, item 2 and acceptance 2b): a slow-start
//! overshoot loses about twenty segments of one window (`scenarios/validation/sack-recovery.toml`).
//! NewReno (Slow-but-Steady) repairs one hole per round trip; SACK (RFC 6675) repairs them all
//! within a few round trips of seeing the loss, through one recovery, with no timeout.

use pathpool_sim::table::{Column, Table};
use pathpool_sim::{LoadedScenario, Results};

const SCENARIO: &str = include_str!("../../../../scenarios/validation/sack-recovery.toml");

fn run(sack: bool) -> Results {
    let overrides: Vec<(String, String)> = [
        ("tcp.sack", sack.to_string()),
        ("measure.trace_cwnd", "true".to_string()),
        ("measure.interval", "\"5ms\"".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let loaded = LoadedScenario::from_toml(SCENARIO, "sack-recovery.toml", &overrides)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut sim = loaded.compile(Some(1)).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    sim.results()
}

fn f64s<'a>(t: &'a Table, name: &str) -> &'a [f64] {
    match t.column(name) {
        Some(Column::F64(v)) => v,
        other => panic!("column {name}: {other:?}"),
    }
}

/// From the cwnd trace: when ssthresh was first set (the loss was found), how long until cwnd
/// grew past it again (recovery over, congestion avoidance), and the smoothed RTT then.
fn recovery(r: &Results) -> (f64, f64, f64) {
    let t = &r.flow_timeseries;
    let (time, cwnd, ssthresh, srtt) = (
        f64s(t, "time_s"),
        f64s(t, "cwnd_bytes"),
        f64s(t, "ssthresh_bytes"),
        f64s(t, "srtt_s"),
    );
    let start = (0..time.len())
        .find(|&i| ssthresh[i] < 1e12)
        .expect("a loss");
    let end = (start..time.len())
        .find(|&i| cwnd[i] > ssthresh[i])
        .expect("recovery ends");
    (time[start], time[end] - time[start], srtt[start])
}

#[test]
fn sack_repairs_a_window_of_losses_in_a_few_round_trips_newreno_in_one_per_loss() {
    let reno = run(false);
    let sack = run(true);
    let (fr, sr) = (
        reno.flow("transfer").unwrap(),
        sack.flow("transfer").unwrap(),
    );
    assert_eq!(fr.loss_recovery.as_deref(), Some("newreno"));
    assert_eq!(sr.loss_recovery.as_deref(), Some("sack"));
    let (reno_at, reno_time, srtt) = recovery(&reno);
    let (sack_at, sack_time, _) = recovery(&sack);
    eprintln!(
        "losses found at {reno_at} s (srtt {srtt:.3} s): NewReno {} retransmissions, recovery \
         {reno_time:.3} s = {:.1} RTTs, FCT {:?}; SACK {} retransmissions, recovery \
         {sack_time:.3} s = {:.1} RTTs, FCT {:?}",
        fr.retransmissions,
        reno_time / srtt,
        fr.fct_s,
        sr.retransmissions,
        sack_time / srtt,
        sr.fct_s
    );
    assert_eq!(
        reno_at, sack_at,
        "the same overshoot: the runs agree until the loss"
    );
    for f in [fr, sr] {
        assert_eq!((f.fast_recoveries, f.timeouts), (1, 0), "{f:?}");
        assert_eq!(f.completed, Some(true));
    }
    // Every hole resent once in both; at least ten of them.
    assert_eq!(fr.retransmissions, sr.retransmissions);
    assert!(sr.retransmissions >= 10);
    // NewReno: one hole per round trip. SACK: a round trip for the pipe to drain below the
    // halved window, one for the retransmissions, and part of one for the last hole found.
    assert!(
        reno_time / srtt >= 10.0,
        "NewReno: {:.1} RTTs",
        reno_time / srtt
    );
    assert!(
        sack_time / srtt <= 4.0,
        "SACK: {:.1} RTTs",
        sack_time / srtt
    );
    assert!(sr.fct_s.unwrap() < fr.fct_s.unwrap());
}
