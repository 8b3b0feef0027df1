//! `tse-independent-empty`: Tse E2 (Figs 4-3, 4-4). Sixteen disjoint, equal, empty paths; a
//! multipath flow with one subflow on each of n = 1..16 of them: its throughput as a multiple
//! of one NewReno flow alone on one path (same seed). Published: the Hacker scheme (and
//! Multi-Priority TCP) ≈ n; Bilevel TFRC 80% of the capacity (≈ 13× at 16); 1/N TFRC
//! slightly above the others.

use super::super::{published, Ctx, Estimate, Experiment, Observation, Report};
use super::{bps, estimate, mp_paths, run_all, tcps, Config, Scheme};

pub(in super::super) const EXPERIMENT: Experiment = Experiment {
    id: "tse-independent-empty",
    title: "a multipath flow on 1..16 disjoint empty paths, as a multiple of one NewReno",
    source: SOURCE,
    run,
    compared,
};

const SOURCE: &str = "Tse 2006 §4.2 E2, Figs 4-3/4-4 (spec §5 E2, §5.10 item 3)";

/// Schemes compared with the thesis; the extra (Bilevel TCP) is measured beside them.
const COMPARED: [Scheme; 2] = [Scheme::Hacker, Scheme::Uncoupled];
const EXTRAS: [Scheme; 1] = [Scheme::BilevelTcp];

fn subflows(quick: bool) -> &'static [u32] {
    if quick {
        &[1, 4, 16]
    } else {
        &[1, 2, 4, 8, 16]
    }
}

fn metric(s: Scheme, n: u32) -> String {
    format!("{}: multiple of one NewReno, {n} subflows", s.label())
}

fn compared(quick: bool) -> Vec<(String, &'static str)> {
    COMPARED
        .iter()
        .flat_map(|&s| subflows(quick).iter().map(move |&n| (metric(s, n), "×")))
        .collect()
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let targets = published::of(EXPERIMENT.id)?;
    let ns = subflows(ctx.quick);
    // The reference: one NewReno alone on path 1 (the multipath flow absent).
    let mut reference = tcps([1]);
    reference.push(("flows.mp.count", "0".into()));
    let mut configs = vec![Config::new(reference)];
    let schemes: Vec<Scheme> = COMPARED.iter().chain(&EXTRAS).copied().collect();
    for &s in &schemes {
        for &n in ns {
            let mut o = s.overrides();
            o.push(mp_paths(1..=n));
            configs.push(Config::new(o));
        }
    }
    let runs = run_all(ctx, &configs, seeds)?;
    let alone: Vec<f64> = runs[0].iter().map(|r| bps(r, "tcp1")).collect();
    let mut report = Report::default();
    report.observations.push(Observation::new(
        "one NewReno alone on a path, Mb/s",
        "Mb/s",
        Estimate::of(&alone).scaled(1e-6),
    ));
    let mut csv = String::from("scheme,subflows,seed,mp_bps,newreno_alone_bps\n");
    let mut k = 1;
    for &s in &schemes {
        for &n in ns {
            let rs = &runs[k];
            // Per seed: the multipath flow against the NewReno of the same seed.
            let e = estimate(rs, |r| {
                let seed = (r.seed - 1) as usize;
                bps(r, "mp") / alone[seed]
            });
            for r in rs {
                csv += &format!(
                    "{},{n},{},{:.0},{:.0}\n",
                    s.label(),
                    r.seed,
                    bps(r, "mp"),
                    alone[(r.seed - 1) as usize]
                );
            }
            if COMPARED.contains(&s) {
                report
                    .comparisons
                    .push(targets.compare(&metric(s, n), "×", e)?);
            } else {
                report
                    .observations
                    .push(Observation::new(metric(s, n), "×", e));
            }
            k += 1;
        }
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
