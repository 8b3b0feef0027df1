//! `inrpp-global-fairness`: the INRPP document's §1.3, Fig. 2: local stability and global
//! fairness. Two long-lived flows share a 10 Mb/s link; one then crosses a 2 Mb/s link that a
//! 3 Mb/s one-hop detour bypasses. Run once with INRPP routers and hosts, once with NewReno
//! over the same network; compared: each flow's goodput and Jain's index over the two.
//!
//! Nothing in either run is random (no send overhead, no random loss), so one seed is the
//! run; more seeds repeat it.

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/inrpp-global-fairness.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/inrpp-global-fairness.toml");
const SOURCE: &str = "001-inrpp.md §1.3 Fig. 2";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "inrpp-global-fairness",
    title: "Two flows, a 2 Mb/s bottleneck with a detour: end-to-end TCP vs INRPP (Fig. 2)",
    source: SOURCE,
    run,
    compared,
};

/// The transports compared: the name in the metrics and the flows' `cc`.
const TRANSPORTS: [(&str, &str); 2] = [("TCP", "newreno"), ("INRPP", "inrpp")];

/// The flows: id and what the metrics call them.
const FLOWS: [(&str, &str); 2] = [
    ("to4", "flow through the 2 Mb/s link"),
    ("to2", "flow ending at node 2"),
];

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    TRANSPORTS
        .iter()
        .flat_map(|(t, _)| {
            FLOWS
                .iter()
                .map(move |(_, name)| (format!("{t}: {name}"), "Mb/s"))
                .chain(std::iter::once((format!("{t}: Jain's index"), "")))
        })
        .collect()
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(1, 1);
    let targets = published::of(EXPERIMENT.id)?;
    let mut jobs = Vec::new();
    for (_, cc) in TRANSPORTS {
        let o: Vec<(&str, String)> = vec![
            ("flows.to4.cc", cc.to_string()),
            ("flows.to2.cc", cc.to_string()),
        ];
        for seed in 1..=u64::from(seeds) {
            jobs.push(Job::new(FILE, TEXT, &o, seed));
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut report = Report::default();
    let mut csv = String::from("transport,seed,flow,goodput_mbps,retransmissions,jain\n");
    for ((transport, _), chunk) in TRANSPORTS.iter().zip(results.chunks(seeds as usize)) {
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); FLOWS.len()];
        let mut jains = Vec::new();
        let mut drops = Vec::new();
        for (seed, r) in chunk.iter().enumerate() {
            for (k, (id, _)) in FLOWS.iter().enumerate() {
                let f = r.flow(id).ok_or_else(|| format!("no flow {id}"))?;
                let mbps = f.throughput_bps.unwrap_or(0.0) / 1e6;
                rates[k].push(mbps);
                csv += &format!(
                    "{transport},{},{id},{mbps:.4},{},{:.4}\n",
                    seed + 1,
                    f.retransmissions,
                    r.jain_index.unwrap_or(f64::NAN)
                );
            }
            jains.push(r.jain_index.unwrap_or(f64::NAN));
            drops.push(r.routers.iter().map(|x| x.cache_drops).sum::<u64>() as f64);
        }
        if *transport == "INRPP" {
            report.observations.push(Observation::new(
                "INRPP: packets dropped by full caches",
                "",
                Estimate::of(&drops),
            ));
        }
        for (k, (_, name)) in FLOWS.iter().enumerate() {
            report.comparisons.push(targets.compare(
                &format!("{transport}: {name}"),
                "Mb/s",
                Estimate::of(&rates[k]),
            )?);
        }
        report.comparisons.push(targets.compare(
            &format!("{transport}: Jain's index"),
            "",
            Estimate::of(&jains),
        )?);
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
