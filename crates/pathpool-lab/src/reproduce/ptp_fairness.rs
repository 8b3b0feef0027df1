//! `ptp-fairness`: the PTP paper's scenario 3 (spec 004 §7.3, Figs 18-20): a multipath
//! consumer (content A from producers 5 and 6) and a single-path one (content B from 5) share
//! the bottleneck 3-4. Compared: the multipath consumer's share of the two consumers' goodput
//! under each of the four solutions ([`super::ptp_solutions`]). Observed: each consumer's
//! goodput.

use super::ptp_solutions::SOLUTIONS;
use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/ptp-fairness.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/ptp-fairness.toml");

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "ptp-fairness",
    title: "A multipath and a single-path consumer at one bottleneck (scenario 3)",
    source: "004-ptp-ndn.md §7.3 Figs 19-20",
    run,
    compared,
};

const LINKS: [&str; 5] = ["l13", "l23", "l34", "l45", "l46"];

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    SOLUTIONS
        .iter()
        .map(|s| (format!("{}: multipath share", s.name), "%"))
        .collect()
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(3, 1);
    let targets = published::of(EXPERIMENT.id)?;
    let mut jobs = Vec::new();
    for s in &SOLUTIONS {
        let mut o = s.overrides(&["multi", "single"], &LINKS);
        if ctx.quick {
            o.push(("duration".into(), "\"30s\"".into()));
        }
        let o: Vec<(&str, String)> = o.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        for seed in 1..=u64::from(seeds) {
            jobs.push(Job::new(FILE, TEXT, &o, seed));
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut report = Report::default();
    let mut csv = String::from("solution,seed,multi_mbps,single_mbps,multi_share_pct\n");
    for (s, runs) in SOLUTIONS.iter().zip(results.chunks(seeds as usize)) {
        let (mut shares, mut multi, mut single) = (Vec::new(), Vec::new(), Vec::new());
        for (seed, r) in runs.iter().enumerate() {
            let rate = |id: &str| {
                r.flow(id)
                    .and_then(|f| f.throughput_bps)
                    .map(|b| b / 1e6)
                    .ok_or(format!("no goodput for {id}"))
            };
            let (m, g) = (rate("multi")?, rate("single")?);
            let share = 100.0 * m / (m + g);
            csv += &format!("{},{},{m:.4},{g:.4},{share:.2}\n", s.name, seed + 1);
            shares.push(share);
            multi.push(m);
            single.push(g);
        }
        report.comparisons.push(targets.compare(
            &format!("{}: multipath share", s.name),
            "%",
            Estimate::of(&shares),
        )?);
        report.observations.push(Observation::new(
            format!("{}: multipath consumer's goodput", s.name),
            "Mb/s",
            Estimate::of(&multi),
        ));
        report.observations.push(Observation::new(
            format!("{}: single-path consumer's goodput", s.name),
            "Mb/s",
            Estimate::of(&single),
        ));
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
