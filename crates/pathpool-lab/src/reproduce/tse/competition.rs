//! `tse-independent-competition`: Tse E3 (Fig. 4-5). A multipath flow with one subflow on each
//! of the sixteen paths; one NewReno flow on each of k = 0..16 of them. Throughput in
//! fair-share units of 1/32 of the system (half a path's goodput capacity). The stringent
//! line is 33 − 2k (32 at k = 0). Published: Multi-Priority TCP and Bilevel TFRC at or below
//! it, reaching about 1 unit at k = 16; the Hacker scheme "15 times the stringently fair
//! allowed throughput" at k = 16 (read as: well above 1 unit; criterion ≥ 2 units).

use super::super::{published, Ctx, Experiment, Observation, Report};
use super::{bps, estimate, mp_paths, run_all, tcps, Config, Scheme, PATH_GOODPUT_BPS};

pub(in super::super) const EXPERIMENT: Experiment = Experiment {
    id: "tse-independent-competition",
    title: "a 16-subflow multipath flow against NewReno flows on k of its 16 paths",
    source: SOURCE,
    run,
    compared,
};

const SOURCE: &str = "Tse 2006 §4.2 E3, Fig. 4-5 (spec §5 E3, §5.10 item 4)";

const COMPARED: [Scheme; 1] = [Scheme::Hacker];
const EXTRAS: [Scheme; 2] = [Scheme::BilevelTcp, Scheme::Uncoupled];

/// One fair-share unit: 1/32 of the 16 paths' goodput capacity.
const UNIT_BPS: f64 = PATH_GOODPUT_BPS / 2.0;

fn competitors(quick: bool) -> Vec<u32> {
    if quick {
        vec![0, 4, 8, 12, 16]
    } else {
        (0..=16).collect()
    }
}

fn metric(s: Scheme, k: u32) -> String {
    format!("{}: fair-share units, {k} paths with a NewReno", s.label())
}

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    COMPARED.iter().map(|&s| (metric(s, 16), "units")).collect()
}

/// The stringently fair throughput in units with k competitors (spec §1's table).
fn stringent_line(k: u32) -> f64 {
    if k == 0 {
        32.0
    } else {
        33.0 - 2.0 * f64::from(k)
    }
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let targets = published::of(EXPERIMENT.id)?;
    let ks = competitors(ctx.quick);
    let schemes: Vec<Scheme> = COMPARED.iter().chain(&EXTRAS).copied().collect();
    let mut configs = Vec::new();
    for &s in &schemes {
        for &k in &ks {
            let mut o = s.overrides();
            o.push(mp_paths(1..=16));
            o.extend(tcps(1..=k));
            configs.push(Config::new(o));
        }
    }
    let runs = run_all(ctx, &configs, seeds)?;
    let mut report = Report::default();
    let mut csv = String::from("scheme,competitors,seed,units,stringent_line\n");
    let units = |r: &pathpool_sim::Results| bps(r, "mp") / UNIT_BPS;
    for (i, &s) in schemes.iter().enumerate() {
        for (j, &k) in ks.iter().enumerate() {
            let rs = &runs[i * ks.len() + j];
            for r in rs {
                csv += &format!(
                    "{},{k},{},{:.3},{}\n",
                    s.label(),
                    r.seed,
                    units(r),
                    stringent_line(k)
                );
            }
            let e = estimate(rs, units);
            if COMPARED.contains(&s) && k == 16 {
                report
                    .comparisons
                    .push(targets.compare(&metric(s, k), "units", e)?);
            } else {
                report.observations.push(Observation::new(
                    format!("{} (stringent line {})", metric(s, k), stringent_line(k)),
                    "units",
                    e,
                ));
            }
        }
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
