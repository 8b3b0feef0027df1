//! `ptp-mesh`: the PTP paper's scenario 5 (spec 004 §7.5, Fig. 24, Table I): one consumer and
//! four producers on a hierarchical mesh with two redundant links, PTP only (as the paper).
//! Compared: the Data throughput of link 2->1 (published 1350 of the max flow's 1400 kb/s),
//! each of Table I's 16 links, and whether the redundant links 3-4 and 5-7 stay unfilled.
//! Observed: the paths the consumer's probes found, its timeouts and duplicate Data.

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/ptp-mesh.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/ptp-mesh.toml");
const SOURCE: &str = "004-ptp-ndn.md §7.5 Table I";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "ptp-mesh",
    title: "PTP on the hierarchical mesh: max flow, Table I, redundant links (scenario 5)",
    source: SOURCE,
    run,
    compared,
};

/// Table I's links, Data direction: (from, to, the link's id in the scenario).
const TABLE_I: [(&str, &str, &str); 16] = [
    ("2", "1", "1-2:2->1"),
    ("3", "2", "2-3:3->2"),
    ("4", "2", "2-4:4->2"),
    ("8", "2", "2-8:8->2"),
    ("7", "3", "3-7:7->3"),
    ("9", "3", "3-9:9->3"),
    ("7", "4", "4-7:7->4"),
    ("5", "4", "4-5:5->4"),
    ("11", "4", "4-11:11->4"),
    ("5", "8", "8-5:5->8"),
    ("6", "8", "8-6:6->8"),
    ("12", "6", "6-12:12->6"),
    ("11", "5", "5-11:11->5"),
    ("10", "5", "5-10:10->5"),
    ("10", "7", "7-10:10->7"),
    ("9", "7", "7-9:9->7"),
];

/// The redundant links, both directions.
const REDUNDANT: [(&str, [&str; 2]); 2] = [
    ("3-4", ["3-4:3->4", "3-4:4->3"]),
    ("5-7", ["5-7:5->7", "5-7:7->5"]),
];

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    let mut rows: Vec<(String, &'static str)> = TABLE_I
        .iter()
        .map(|(a, b, _)| (format!("throughput {a}=>{b}"), "kb/s"))
        .collect();
    for (name, _) in REDUNDANT {
        rows.push((format!("redundant link {name}: busier direction"), "kb/s"));
    }
    rows
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(3, 1);
    let targets = published::of(EXPERIMENT.id)?;
    let mut o: Vec<(&str, String)> = Vec::new();
    if ctx.quick {
        o.push(("duration", "\"150s\"".into()));
    }
    let jobs: Vec<Job> = (1..=u64::from(seeds))
        .map(|seed| Job::new(FILE, TEXT, &o, seed))
        .collect();
    let results = ctx.runner.run(&jobs)?;
    let mut report = Report::default();
    let mut csv = String::from("seed,link,throughput_kbps\n");
    let kbps = |r: &pathpool_sim::Results, id: &str| -> Result<f64, String> {
        Ok(r.link(id).ok_or(format!("no link {id}"))?.throughput_bps / 1e3)
    };
    for (a, b, id) in TABLE_I {
        let mut v = Vec::new();
        for (seed, r) in results.iter().enumerate() {
            let x = kbps(r, id)?;
            csv += &format!("{},{id},{x:.3}\n", seed + 1);
            v.push(x);
        }
        report.comparisons.push(targets.compare(
            &format!("throughput {a}=>{b}"),
            "kb/s",
            Estimate::of(&v),
        )?);
    }
    for (name, ids) in REDUNDANT {
        let mut v = Vec::new();
        for r in &results {
            v.push(kbps(r, ids[0])?.max(kbps(r, ids[1])?));
        }
        report.comparisons.push(targets.compare(
            &format!("redundant link {name}: busier direction"),
            "kb/s",
            Estimate::of(&v),
        )?);
    }
    let mut found = Vec::new();
    let mut timeouts = Vec::new();
    let mut resends = Vec::new();
    for r in &results {
        found.push(r.ndn_paths.as_ref().map_or(0, pathpool_sim::Table::rows) as f64);
        let f = r.flow("consumer").ok_or("no consumer")?;
        timeouts.push(f.timeouts as f64);
        resends.push(f.retransmissions as f64);
    }
    report.observations.push(Observation::new(
        "paths the probes found",
        "",
        Estimate::of(&found),
    ));
    report.observations.push(Observation::new(
        "Interest timeouts (probes' included)",
        "",
        Estimate::of(&timeouts),
    ));
    report.observations.push(Observation::new(
        "Interests sent again",
        "",
        Estimate::of(&resends),
    ));
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
