//! `nmcc-short-transfers`: thesis E5d (Fig. 4.13), NMCC paper §5.3 Fig. 8.
//!
//! Share of a transfer = its mean rate (10 MB over its completion time) over the sum of the
//! mean rates of every transfer in the run (the flows table's `share`).

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/nmcc-short-transfers.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/nmcc-short-transfers.toml");
const SOURCE: &str = "thesis E5d Fig. 4.13; paper §5.3 Fig. 8";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "nmcc-short-transfers",
    title: "10 MB NMCC transfer vs 1 and 2 Reno transfers, friendly vs unfriendly slow start",
    source: SOURCE,
    run,
    compared,
};

/// (competitors, friendly slow start) of the compared cases.
const CASES: [(u32, bool); 4] = [(1, false), (2, false), (1, true), (2, true)];

/// The slow start's name in the report.
fn slow_start(friendly: bool) -> &'static str {
    if friendly {
        "friendly SS"
    } else {
        "unfriendly SS"
    }
}

/// The compared share of NMCC (without m_t) against `n` Reno transfers.
fn share_metric(n: u32, friendly: bool) -> String {
    format!("NMCC share, {n} Reno, {}", slow_start(friendly))
}

/// The compared metrics, in report order (the same in both runs).
fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    CASES
        .iter()
        .map(|&(n, friendly)| (share_metric(n, friendly), "%"))
        .collect()
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(20, 5);
    let targets = published::of(EXPERIMENT.id)?;
    let mut jobs = Vec::new();
    for (n, friendly) in CASES {
        for mt in [false, true] {
            let o: Vec<(&str, String)> = vec![
                ("flows.sp1.count", n.div_ceil(2).to_string()),
                ("flows.sp2.count", (n / 2).to_string()),
                (
                    "flows.nmcc.tcp",
                    format!(
                        "{{ nmcc = {{ friendly_slow_start = {friendly}, loss_time_factor = {mt} }} }}"
                    ),
                ),
            ];
            for seed in 1..=u64::from(seeds) {
                jobs.push(Job::new(FILE, TEXT, &o, seed));
            }
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut report = Report::default();
    let mut csv =
        String::from("competitors,friendly_ss,m_t,seed,nmcc_share,nmcc_fct_s,all_completed\n");
    let mut chunks = results.chunks(seeds as usize);
    for (n, friendly) in CASES {
        for mt in [false, true] {
            let chunk = chunks.next().ok_or("missing runs")?;
            let mut shares = Vec::new();
            let mut fcts = Vec::new();
            for (seed, r) in chunk.iter().enumerate() {
                let f = r.flow("nmcc").ok_or("no flow nmcc")?;
                let all_done = r.flows.iter().all(|f| f.completed == Some(true));
                if !all_done {
                    return Err(format!(
                        "a transfer did not complete within {} s; lengthen the run",
                        r.sim_time_s
                    ));
                }
                let share = 100.0 * f.share.unwrap_or(f64::NAN);
                let fct = f.fct_s.unwrap_or(f64::NAN);
                shares.push(share);
                fcts.push(fct);
                csv += &format!(
                    "{n},{friendly},{mt},{},{share:.4},{fct:.4},{all_done}\n",
                    seed + 1
                );
            }
            let ss = slow_start(friendly);
            if mt {
                report.observations.push(Observation::new(
                    format!("NMCC + m_t share, {n} Reno, {ss}"),
                    "%",
                    Estimate::of(&shares),
                ));
            } else {
                report.comparisons.push(targets.compare(
                    &share_metric(n, friendly),
                    "%",
                    Estimate::of(&shares),
                )?);
                report.observations.push(Observation::new(
                    format!("NMCC completion time, {n} Reno, {ss}"),
                    "s",
                    Estimate::of(&fcts),
                ));
            }
        }
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
