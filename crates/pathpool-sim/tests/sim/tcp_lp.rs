//! TCP-LP in the simulator (issue 20, acceptance 3; 003-tse-fairness.md §4.2): beside one
//! NewReno flow it takes little, since its one-way delay shows the queue before the loss that
//! NewReno waits for. Alone it does not fill the path as NewReno does (D245).

use pathpool_sim::Results;

use crate::common::{flow_s_to_d, run_bottleneck as run, RED_100 as RED};

fn flow(id: &str, cc: &str) -> String {
    flow_s_to_d(id, cc, "")
}

/// A TCP-LP flow with `tcp.tcp_lp` options `lp` (the inside of an inline TOML table).
fn lp_flow(id: &str, lp: &str) -> String {
    flow(id, "tcp-lp") + &format!("tcp = {{ tcp_lp = {{ {lp} }} }}\n")
}

fn bps(r: &Results, id: &str) -> f64 {
    r.flow(id).unwrap().throughput_bps.unwrap()
}

const DROP_TAIL: &str = r#"{ type = "droptail", size = "100pkts" }"#;

/// TCP-LP's share (with `tcp.tcp_lp` options `lp`) of the bottleneck it shares with one
/// NewReno flow.
fn share_beside_newreno(queue: &str, lp: &str, seed: u64) -> f64 {
    let r = run(queue, &(lp_flow("lp", lp) + &flow("tcp", "newreno")), seed);
    let (lp, tcp) = (bps(&r, "lp"), bps(&r, "tcp"));
    eprintln!(
        "seed {seed}: tcp-lp {:.3} Mb/s, newreno {:.3} Mb/s, share {:.3}",
        lp / 1e6,
        tcp / 1e6,
        lp / (lp + tcp)
    );
    lp / (lp + tcp)
}

#[test]
fn tcp_lp_takes_at_most_a_quarter_beside_one_newreno() {
    // Measured when written (seeds 1, 2, 3): drop-tail 0.009 on each (TCP-LP sits at its
    // probe window while NewReno keeps the queue full); RED 0.155, 0.156, 0.089 (RED's
    // early drops keep the queue short, so TCP-LP sees fewer CIs).
    for seed in 1..=3 {
        let dt = share_beside_newreno(DROP_TAIL, "", seed);
        assert!(dt <= 0.25, "drop-tail, seed {seed}: {dt:.3}");
        let red = share_beside_newreno(RED, "", seed);
        assert!(red <= 0.25, "RED, seed {seed}: {red:.3}");
        assert!(red > 0.0, "TCP-LP is not starved: {red:.3}");
    }
}

/// The reference implementations' rules (D265, D266), alone and all together as the Linux
/// port runs them.
const VARIANTS: [&str; 5] = [
    "ci_lowers_ssthresh = false",
    "itt_rtt = \"latest\"",
    "forget_largest_owd = true",
    "reset_extremes_on_ci = true",
    "ci_lowers_ssthresh = false, itt_rtt = \"latest\", forget_largest_owd = true, \
     reset_extremes_on_ci = true",
];

#[test]
fn every_variant_takes_at_most_a_quarter_beside_one_newreno() {
    // Measured when written (seeds 1-3): drop-tail at most 0.063, RED at most 0.162 (D267).
    for lp in VARIANTS {
        for seed in 1..=3 {
            for (name, queue) in [("drop-tail", DROP_TAIL), ("RED", RED)] {
                let share = share_beside_newreno(queue, lp, seed);
                assert!(share <= 0.25, "{lp}: {name}, seed {seed}: {share:.3}");
            }
        }
    }
}

#[test]
fn tcp_lp_sees_the_one_way_delay_in_the_simulator() {
    // Without the receiver's TSval TCP-LP would be NewReno and fill the 100-packet buffer as
    // NewReno does; with it, it yields at a queue a few packets deep and takes less (D244).
    let lp = bps(&run(DROP_TAIL, &flow("f", "tcp-lp"), 1), "f");
    let nr = bps(&run(DROP_TAIL, &flow("f", "newreno"), 1), "f");
    eprintln!(
        "alone: tcp-lp {:.3} Mb/s, newreno {:.3} Mb/s",
        lp / 1e6,
        nr / 1e6
    );
    assert!(lp < 0.9 * nr, "tcp-lp {lp} vs newreno {nr}");
}

/// Issue 20 acceptance 3 asks for TCP-LP alone within 10% of NewReno alone; no variant of
/// the reference rules meets it (D245, D267): measured ratios on seeds 1-3, drop-tail and RED,
/// 0.477 and 0.58-0.60 by default, 0.551 and 0.67-0.69 with `reset_extremes_on_ci` (the
/// best), 0.055 and 0.07 with `ci_lowers_ssthresh = false`, 0.145 and 0.18 with all of
/// Linux's rules. TCP-LP halves at the few packets of queue its own window (or a slow-start
/// burst) builds and, the ACKs still showing that queue, falls to one segment inside itt,
/// where one delay sample per round trip brings sowd back under the threshold only slowly.
#[test]
#[ignore = "fails: TCP-LP alone takes at best 0.55 of NewReno's throughput (D245, D267)"]
fn tcp_lp_alone_is_within_ten_percent_of_newreno_alone() {
    for (name, queue) in [("drop-tail", DROP_TAIL), ("RED", RED)] {
        for seed in 1..=3 {
            let lp = bps(&run(queue, &lp_flow("f", ""), seed), "f");
            let nr = bps(&run(queue, &flow("f", "newreno"), seed), "f");
            let ratio = lp / nr;
            eprintln!("{name}, seed {seed}: ratio {ratio:.3}");
            assert!(
                (ratio - 1.0).abs() <= 0.1,
                "{name}, seed {seed}: {ratio:.3}"
            );
        }
    }
}
