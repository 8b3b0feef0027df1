//! What the PTP paper's utilization experiments share (scenarios 1 and 2, spec 004 §7.1-7.2):
//! one consumer (`consumer`), cases of link settings, the four solutions of
//! [`super::ptp_solutions`]. Compared: each solution's utilization, the Data throughput of the
//! consumer's one link on the wire over the case's max flow, and PTP's margin over the best
//! baseline. Observed: the utilization of the links inside the network.

use super::ptp_solutions::SOLUTIONS;
use super::{published, Ctx, Estimate, Job, Observation, Report};

/// Overrides of a scenario: (key, TOML value).
pub(super) type Overrides = &'static [(&'static str, &'static str)];

/// One utilization experiment.
pub(super) struct Setup {
    /// The experiment's id.
    pub(super) id: &'static str,
    /// Its scenario file and text.
    pub(super) file: &'static str,
    pub(super) text: &'static str,
    /// Every link's id (CHoPCoP's queues go on all of them).
    pub(super) links: &'static [&'static str],
    /// The link direction whose Data throughput is the download rate.
    pub(super) download: &'static str,
    /// The link directions observed.
    pub(super) observed: &'static [&'static str],
    /// The cases: name, overrides, max flow in bit/s.
    pub(super) cases: &'static [(&'static str, Overrides, f64)],
}

/// The metrics `setup` compares.
pub(super) fn compared(setup: &Setup) -> Vec<(String, &'static str)> {
    let mut rows = Vec::new();
    for (case, ..) in setup.cases {
        for s in &SOLUTIONS {
            rows.push((format!("{}: utilization, case {case}", s.name), "%"));
        }
        rows.push((
            format!("PTP's margin over the best baseline, case {case}"),
            "points",
        ));
    }
    rows
}

/// Runs `setup`: every case with every solution, three seeds (one of 30 s with `--quick`).
pub(super) fn run(setup: &Setup, ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(3, 1);
    let targets = published::of(setup.id)?;
    let mut quick: Vec<(&str, String)> = Vec::new();
    if ctx.quick {
        quick.push(("duration", "\"30s\"".into()));
    }
    let mut jobs = Vec::new();
    for (_, case, _) in setup.cases {
        for s in &SOLUTIONS {
            let own = s.overrides(&["consumer"], setup.links);
            let mut o: Vec<(&str, String)> =
                case.iter().map(|&(k, v)| (k, v.to_string())).collect();
            o.extend(own.iter().map(|(k, v)| (k.as_str(), v.clone())));
            o.extend(quick.iter().cloned());
            for seed in 1..=u64::from(seeds) {
                jobs.push(Job::new(setup.file, setup.text, &o, seed));
            }
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut chunks = results.chunks(seeds as usize);
    let mut report = Report::default();
    let mut csv = String::from(
        "case,solution,seed,utilization_pct,observed_utilizations_pct,resends,timeouts\n",
    );
    for (case, _, max_flow) in setup.cases {
        let mut means = Vec::new();
        for s in SOLUTIONS.iter().map(|s| s.name) {
            let runs = chunks.next().ok_or("missing runs")?;
            let mut util = Vec::new();
            let mut observed: Vec<Vec<f64>> = vec![Vec::new(); setup.observed.len()];
            for (seed, r) in runs.iter().enumerate() {
                let l = r
                    .link(setup.download)
                    .ok_or(format!("no link {}", setup.download))?;
                let u = 100.0 * l.throughput_bps / max_flow;
                util.push(u);
                let mut shown = Vec::new();
                for (k, id) in setup.observed.iter().enumerate() {
                    let v = 100.0 * r.link(id).and_then(|x| x.utilization).unwrap_or(f64::NAN);
                    observed[k].push(v);
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
            for (k, id) in setup.observed.iter().enumerate() {
                report.observations.push(Observation::new(
                    format!("{s}, case {case}: utilization of {id}"),
                    "%",
                    Estimate::of(&observed[k]),
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
