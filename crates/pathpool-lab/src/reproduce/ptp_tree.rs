//! `ptp-tree`: the PTP paper's scenario 1 (spec 004 §7.1, Figs 12-14): one consumer, four
//! producers at the leaves of a tree, case I (different leaf bandwidths) and case II (equal
//! bandwidths, different latencies). Compared: the utilization of each solution, the Data
//! throughput of link 1-2 (every byte crosses it) over the max flow (the sum of the leaf
//! links, which the 20 Mb/s trunks do not limit), and PTP's margin over the best baseline.
//! Observed: each leaf link's utilization, and each run's losses.
//!
//! Sol.1 PTP; Sol.2 OMCC-RF (RFA forwarding, RAAQM consumer); Sol.3 RFA + CHoPCoP (RIC
//! consumer over REM queues of 1000 packets, FISP shaping: CHoPCoP "configured to queue
//! sufficient packets", D326); Sol.4 PAF + RAAQM.

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/ptp-tree.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/ptp-tree.toml");
const SOURCE: &str = "004-ptp-ndn.md §7.1 Figs 13-14";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "ptp-tree",
    title: "PTP and three baselines on the tree of four producers (scenario 1)",
    source: SOURCE,
    run,
    compared,
};

/// Overrides of a scenario: (key, TOML value).
type Overrides = &'static [(&'static str, &'static str)];

/// The solutions: name, and the overrides that make them.
const SOLUTIONS: [(&str, Overrides); 4] = [
    ("PTP", &[]),
    (
        "OMCC-RF",
        &[
            ("flows.consumer.transport", "\"raaqm\""),
            ("ndn.strategy", "\"rfa\""),
        ],
    ),
    (
        "RFA+CHoPCoP",
        &[
            ("flows.consumer.transport", "\"ric\""),
            ("ndn.strategy", "\"rfa\""),
            ("ndn.fisp", "true"),
        ],
    ),
    (
        "PAF+RAAQM",
        &[
            ("flows.consumer.transport", "\"raaqm\""),
            ("ndn.strategy", "\"paf\""),
        ],
    ),
];

/// CHoPCoP's queues: REM with room to queue what RFA's pending-Interest balance needs.
const CHOPCOP_QUEUE: &str =
    "{ type = \"rem\", size = \"1000pkts\", min_th = \"100pkts\", max_th = \"300pkts\" }";

const LINKS: [&str; 7] = ["l12", "l23", "l24", "l35", "l36", "l47", "l48"];
const LEAVES: [&str; 4] = ["l35:5->3", "l36:6->3", "l47:7->4", "l48:8->4"];

/// The cases: name, overrides, max flow in bit/s.
const CASES: [(&str, Overrides, f64); 2] = [
    ("I", &[], 10e6),
    (
        "II",
        &[
            ("links.l35.rate", "\"2Mbps\""),
            ("links.l36.rate", "\"2Mbps\""),
            ("links.l47.rate", "\"2Mbps\""),
            ("links.l48.rate", "\"2Mbps\""),
            ("links.l23.delay", "\"10ms\""),
            ("links.l35.delay", "\"10ms\""),
            ("links.l36.delay", "\"10ms\""),
            ("links.l24.delay", "\"20ms\""),
            ("links.l47.delay", "\"20ms\""),
            ("links.l48.delay", "\"20ms\""),
        ],
        8e6,
    ),
];

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    let mut rows = Vec::new();
    for (case, ..) in CASES {
        for (s, _) in SOLUTIONS {
            rows.push((format!("{s}: utilization, case {case}"), "%"));
        }
        rows.push((
            format!("PTP's margin over the best baseline, case {case}"),
            "points",
        ));
    }
    rows
}

/// The overrides of solution `s` (its own, and CHoPCoP's queues on every link).
fn solution_overrides(s: usize, links: &[&str]) -> Vec<(String, String)> {
    let mut o: Vec<(String, String)> = SOLUTIONS[s]
        .1
        .iter()
        .map(|&(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if SOLUTIONS[s].0 == "RFA+CHoPCoP" {
        o.extend(
            links
                .iter()
                .map(|l| (format!("links.{l}.queue"), CHOPCOP_QUEUE.to_string())),
        );
    }
    o
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(3, 1);
    let targets = published::of(EXPERIMENT.id)?;
    let mut quick: Vec<(&str, String)> = Vec::new();
    if ctx.quick {
        quick.push(("duration", "\"30s\"".into()));
    }
    let mut jobs = Vec::new();
    for (_, case, _) in CASES {
        for s in 0..SOLUTIONS.len() {
            let own = solution_overrides(s, &LINKS);
            let mut o: Vec<(&str, String)> =
                case.iter().map(|&(k, v)| (k, v.to_string())).collect();
            o.extend(own.iter().map(|(k, v)| (k.as_str(), v.clone())));
            o.extend(quick.iter().cloned());
            for seed in 1..=u64::from(seeds) {
                jobs.push(Job::new(FILE, TEXT, &o, seed));
            }
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut chunks = results.chunks(seeds as usize);
    let mut report = Report::default();
    let mut csv =
        String::from("case,solution,seed,utilization_pct,leaf_utilizations_pct,resends,timeouts\n");
    for (case, _, max_flow) in CASES {
        let mut means = Vec::new();
        for (s, _) in SOLUTIONS {
            let runs = chunks.next().ok_or("missing runs")?;
            let mut util = Vec::new();
            let mut leaves: Vec<Vec<f64>> = vec![Vec::new(); LEAVES.len()];
            for (seed, r) in runs.iter().enumerate() {
                let l = r.link("l12:2->1").ok_or("no link l12:2->1")?;
                let u = 100.0 * l.throughput_bps / max_flow;
                util.push(u);
                let mut shown = Vec::new();
                for (k, id) in LEAVES.iter().enumerate() {
                    let v = 100.0 * r.link(id).and_then(|x| x.utilization).unwrap_or(f64::NAN);
                    leaves[k].push(v);
                    shown.push(format!("{v:.1}"));
                }
                let f = r.flow("consumer").ok_or("no consumer")?;
                csv += &format!(
                    "{case},{s},{},{u:.3},{},{},{}\n",
                    seed + 1,
                    shown.join(" "),
                    f.retransmissions,
                    f.timeouts
                );
            }
            let e = Estimate::of(&util);
            means.push(e.mean);
            report.comparisons.push(targets.compare(
                &format!("{s}: utilization, case {case}"),
                "%",
                e,
            )?);
            for (k, id) in LEAVES.iter().enumerate() {
                report.observations.push(Observation::new(
                    format!("{s}, case {case}: utilization of {id}"),
                    "%",
                    Estimate::of(&leaves[k]),
                ));
            }
        }
        let best = means[1..].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        report.comparisons.push(targets.compare(
            &format!("PTP's margin over the best baseline, case {case}"),
            "points",
            Estimate::of(&[means[0] - best]),
        )?);
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
