//! `tse-independent-competition`: Tse E3 (Fig. 4-5). A multipath flow with one subflow on each
//! of the sixteen paths; one NewReno flow on each of k = 0..16 of them. Throughput in
//! fair-share units of 1/32 of the system (half a path's goodput capacity). The stringent
//! line is 33 − 2k (32 at k = 0). Published: Multi-Priority TCP and Bilevel TFRC at or below
//! it, reaching about 1 unit at k = 16; the Hacker scheme "15 times the stringently fair
//! allowed throughput" at k = 16 (read as: well above 1 unit; criterion ≥ 2 units).

use super::super::Estimate;
use super::super::{published, Ctx, Experiment, Observation, Report};
use super::{estimate, run_all, tcps, Config, Scheme, PATH_GOODPUT_BPS};

pub(in super::super) const EXPERIMENT: Experiment = Experiment {
    id: "tse-independent-competition",
    title: "a 16-subflow multipath flow against NewReno flows on k of its 16 paths",
    source: SOURCE,
    run,
    compared,
};

const SOURCE: &str = "Tse 2006 §4.2 E3, Fig. 4-5 (spec §5 E3, §5.10 item 4)";

/// Published at or below the stringent line, and about 1 unit at k = 16.
const FAIR: [Scheme; 2] = [Scheme::MultiPriority, Scheme::BilevelTfrc];
const OTHERS: [Scheme; 4] = [
    Scheme::Hacker,
    Scheme::FractionalTfrc,
    Scheme::BilevelTcp,
    Scheme::Uncoupled,
];

/// "Bilevel TFRC is slightly more conservative when competing with existing flows" than
/// Multi-Priority TCP: compared half-way, at k = 8.
const CONSERVATISM_METRIC: &str = "Bilevel TFRC less Multi-Priority TCP, 8 paths with a NewReno";

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

/// The at-or-below-the-line comparison of a fair scheme at k.
fn line_metric(s: Scheme, k: u32) -> String {
    format!("{} against the stringent line", metric(s, k))
}

fn compared(quick: bool) -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for s in FAIR {
        for k in competitors(quick) {
            v.push((line_metric(s, k), "units"));
        }
        v.push((metric(s, 16), "units"));
    }
    v.push((metric(Scheme::Hacker, 16), "units"));
    v.push((CONSERVATISM_METRIC.to_string(), "units"));
    v
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
    let schemes: Vec<Scheme> = FAIR.iter().chain(&OTHERS).copied().collect();
    let mut configs = Vec::new();
    for &s in &schemes {
        for &k in &ks {
            let mut o = s.overrides();
            o.push(s.paths(1..=16));
            o.extend(tcps(1..=k));
            configs.push(Config::new(o));
        }
    }
    let runs = run_all(ctx, &configs, seeds)?;
    let mut report = Report::default();
    let mut csv = String::from("scheme,competitors,seed,units,stringent_line\n");
    let mut at8: Vec<Vec<f64>> = Vec::new();
    for (i, &s) in schemes.iter().enumerate() {
        let units = |r: &pathpool_sim::Results| s.bps(r) / UNIT_BPS;
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
            if FAIR.contains(&s) {
                report
                    .comparisons
                    .push(targets.compare(&line_metric(s, k), "units", e)?);
                if k == 16 {
                    report
                        .comparisons
                        .push(targets.compare(&metric(s, k), "units", e)?);
                }
                if k == 8 {
                    at8.push(rs.iter().map(units).collect());
                }
            } else if s == Scheme::Hacker && k == 16 {
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
    if let [mp, bilevel] = &at8[..] {
        let less: Vec<f64> = bilevel.iter().zip(mp).map(|(b, m)| b - m).collect();
        report.comparisons.push(targets.compare(
            CONSERVATISM_METRIC,
            "units",
            Estimate::of(&less),
        )?);
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
