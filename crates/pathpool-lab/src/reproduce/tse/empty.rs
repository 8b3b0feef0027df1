//! `tse-independent-empty`: Tse E2 (Figs 4-3, 4-4). Sixteen disjoint, equal, empty paths; a
//! multipath flow with one subflow on each of n = 1..16 of them: its throughput as a multiple
//! of one NewReno flow alone on one path (same seed). Published: the Hacker scheme (and
//! Multi-Priority TCP) ≈ n; Bilevel TFRC 80% of the capacity (≈ 13× at 16); 1/N TFRC
//! slightly above the others.

use super::super::{published, Ctx, Estimate, Experiment, Observation, Report};
use super::{bps, estimate, run_all, tcps, Config, Scheme, PATH_GOODPUT_BPS};

pub(in super::super) const EXPERIMENT: Experiment = Experiment {
    id: "tse-independent-empty",
    title: "a multipath flow on 1..16 disjoint empty paths, as a multiple of one NewReno",
    source: SOURCE,
    run,
    compared,
};

const SOURCE: &str = "Tse 2006 §4.2 E2, Figs 4-3/4-4 (spec §5 E2, §5.10 item 3)";

/// Schemes compared with n× at every n; the others are compared at 16 subflows only (Bilevel
/// TFRC, 1/N TFRC) or measured only (Bilevel TCP).
const COMPARED: [Scheme; 3] = [Scheme::MultiPriority, Scheme::Hacker, Scheme::Uncoupled];
const OTHERS: [Scheme; 3] = [
    Scheme::BilevelTfrc,
    Scheme::FractionalTfrc,
    Scheme::BilevelTcp,
];

const BILEVEL_CAPACITY_METRIC: &str = "Bilevel TFRC: share of the capacity, 16 subflows";
const FRACTIONAL_METRIC: &str = "1/N TFRC over Multi-Priority TCP, 16 subflows";

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
    let mut v: Vec<(String, &'static str)> = COMPARED
        .iter()
        .flat_map(|&s| subflows(quick).iter().map(move |&n| (metric(s, n), "×")))
        .collect();
    v.push((metric(Scheme::BilevelTfrc, 16), "×"));
    v.push((BILEVEL_CAPACITY_METRIC.to_string(), "%"));
    v.push((FRACTIONAL_METRIC.to_string(), "×"));
    v
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let targets = published::of(EXPERIMENT.id)?;
    let ns = subflows(ctx.quick);
    // The reference: one NewReno alone on path 1 (the multipath flow absent).
    let mut reference = tcps([1]);
    reference.push(("flows.mp.count", "0".into()));
    let mut configs = vec![Config::new(reference)];
    let schemes: Vec<Scheme> = COMPARED.iter().chain(&OTHERS).copied().collect();
    for &s in &schemes {
        for &n in ns {
            let mut o = s.overrides();
            o.push(s.paths(1..=n));
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
    // Per seed at 16 subflows: Multi-Priority TCP's and 1/N TFRC's throughput.
    let (mut mp16, mut frac16) = (Vec::new(), Vec::new());
    for &s in &schemes {
        for &n in ns {
            let rs = &runs[k];
            // Per seed: the multipath flow against the NewReno of the same seed.
            let multiple = |r: &pathpool_sim::Results| s.bps(r) / alone[(r.seed - 1) as usize];
            let e = estimate(rs, multiple);
            for r in rs {
                csv += &format!(
                    "{},{n},{},{:.0},{:.0}\n",
                    s.label(),
                    r.seed,
                    s.bps(r),
                    alone[(r.seed - 1) as usize]
                );
            }
            let at16 = n == 16;
            if COMPARED.contains(&s) || (at16 && s == Scheme::BilevelTfrc) {
                report
                    .comparisons
                    .push(targets.compare(&metric(s, n), "×", e)?);
            } else {
                report
                    .observations
                    .push(Observation::new(metric(s, n), "×", e));
            }
            if at16 && s == Scheme::BilevelTfrc {
                let capacity = 16.0 * PATH_GOODPUT_BPS;
                report.comparisons.push(targets.compare(
                    BILEVEL_CAPACITY_METRIC,
                    "%",
                    estimate(rs, |r| 100.0 * s.bps(r) / capacity),
                )?);
            }
            if at16 && s == Scheme::MultiPriority {
                mp16 = rs.iter().map(|r| s.bps(r)).collect();
            }
            if at16 && s == Scheme::FractionalTfrc {
                frac16 = rs.iter().map(|r| s.bps(r)).collect();
            }
            k += 1;
        }
    }
    let ratio: Vec<f64> = frac16.iter().zip(&mp16).map(|(f, m)| f / m).collect();
    report
        .comparisons
        .push(targets.compare(FRACTIONAL_METRIC, "×", Estimate::of(&ratio))?);
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
