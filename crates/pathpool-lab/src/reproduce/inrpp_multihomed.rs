//! `inrpp-multihomed`: the INRPP document's §5.3, Figs 13-15 and Table 6: Poisson Pareto
//! traffic from a host on n0 to a host on n1 of the multihomed topology, with TCP, RCP and
//! INRPP on one host and MPTCP on a host multihomed to n0 and n2; mean sizes of 30 and 500
//! segments, with and without UDP cross traffic on n0-n1. Compared: Table 6's fairness (10-ms
//! samples), and the prose's claims on AFCT read as ratios: INRPP and MPTCP below TCP and
//! RCP, INRPP below MPTCP, cross traffic raising INRPP's and MPTCP's AFCT by at most 10% and
//! TCP's and RCP's by more. Observed: each configuration's AFCT, the largest per-bin
//! reduction of INRPP against MPTCP (the prose: up to about 50%), and the fairness on each
//! flow's mean since its start (D301).
//!
//! Arrivals and sizes are random: each seed draws its own 1000 flows (200 with --quick).

use std::fmt::Write as _;

use pathpool_sim::Results;

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/inrpp-multihomed.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/inrpp-multihomed.toml");
const SOURCE: &str = "001-inrpp.md §5.3 Figs 13-15, Table 6";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "inrpp-multihomed",
    title: "Poisson Pareto flows on the multihomed topology: TCP, RCP, MPTCP, INRPP (Table 6)",
    source: SOURCE,
    run,
    compared,
};

/// The transports: the name in the metrics and what the generator's entry becomes.
const TRANSPORTS: [(&str, &[(&str, &str)]); 4] = [
    ("TCP", &[("traffic.0.cc", "newreno")]),
    ("RCP", &[("traffic.0.cc", "rcp")]),
    (
        "MPTCP",
        &[
            ("traffic.0.cc", "lia"),
            ("traffic.0.from", "m"),
            (
                "traffic.0.paths",
                r#"[["m", "n0", "n1", "r"], ["m", "n2", "n1", "r"]]"#,
            ),
        ],
    ),
    ("INRPP", &[("traffic.0.cc", "inrpp")]),
];

/// Mean flow sizes in full segments, and the run's duration (full, quick): long enough for
/// the arrivals (1000 flows at ρ = 0.9 of 10 Mb/s: 39 s and 650 s) and the largest flows.
const SIZES: [(u32, &str, &str); 2] = [(30, "150s", "60s"), (500, "900s", "300s")];

/// Flows per run (full, quick).
const FLOWS: (u32, u32) = (1000, 200);

/// A configuration's label in the metrics.
fn label(size: u32, cross: bool) -> String {
    if cross {
        format!("cross traffic, E[L] = {size}")
    } else {
        format!("E[L] = {size}")
    }
}

/// The AFCT claims, as (metric, numerator, denominator), per size without cross traffic.
const AFCT_RATIOS: [(&str, &str); 5] = [
    ("TCP", "INRPP"),
    ("RCP", "INRPP"),
    ("TCP", "MPTCP"),
    ("RCP", "MPTCP"),
    ("MPTCP", "INRPP"),
];

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    let mut rows: Vec<(String, &'static str)> = Vec::new();
    for cross in [false, true] {
        for (size, ..) in SIZES {
            for (t, _) in TRANSPORTS {
                rows.push((format!("{t}: fairness, {}", label(size, cross)), ""));
            }
        }
    }
    for (size, ..) in SIZES {
        for (a, b) in AFCT_RATIOS {
            rows.push((format!("AFCT, {a} over {b}, E[L] = {size}"), "ratio"));
        }
        for (t, _) in TRANSPORTS {
            rows.push((
                format!("{t}: AFCT with cross traffic over without, E[L] = {size}"),
                "ratio",
            ));
        }
    }
    rows
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(3, 1);
    let targets = published::of(EXPERIMENT.id)?;
    let flows = if ctx.quick { FLOWS.1 } else { FLOWS.0 };
    let mut configs = Vec::new();
    let mut jobs = Vec::new();
    for cross in [false, true] {
        for (size, full, quick) in SIZES {
            for (transport, set) in TRANSPORTS {
                let mut o: Vec<(&str, String)> =
                    set.iter().map(|&(k, v)| (k, v.to_string())).collect();
                o.push(("traffic.0.size.mean", format!("{size}pkts")));
                o.push(("traffic.0.max_flows", flows.to_string()));
                o.push(("duration", (if ctx.quick { quick } else { full }).into()));
                o.push(("flows.0.count", u32::from(cross).to_string()));
                for seed in 1..=u64::from(seeds) {
                    jobs.push(Job::new(FILE, TEXT, &o, seed));
                }
                configs.push((cross, size, transport));
            }
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut report = Report::default();
    let mut csv = String::from(
        "transport,size_pkts,cross,seed,flows,completed,afct_s,fairness,fairness_since_start\n",
    );
    // Per configuration: AFCT, fairness and the per-bin AFCT (mean over seeds).
    let mut afct = Vec::new();
    let mut bins: Vec<Vec<(f64, Option<f64>)>> = Vec::new();
    for (&(cross, size, transport), runs) in configs.iter().zip(results.chunks(seeds as usize)) {
        let (mut afcts, mut jains, mut since) = (Vec::new(), Vec::new(), Vec::new());
        for (seed, r) in runs.iter().enumerate() {
            let (n, done) = completed(r);
            let a = r.afct_s.unwrap_or(f64::NAN);
            let j = r.jain_sampled.and_then(|j| j.mean()).unwrap_or(f64::NAN);
            let s = r
                .jain_sampled_since_start
                .and_then(|j| j.mean())
                .unwrap_or(f64::NAN);
            let _ = writeln!(
                csv,
                "{transport},{size},{cross},{},{n},{done},{a:.5},{j:.4},{s:.4}",
                seed + 1
            );
            afcts.push(a);
            jains.push(j);
            since.push(s);
        }
        let l = label(size, cross);
        report.comparisons.push(targets.compare(
            &format!("{transport}: fairness, {l}"),
            "",
            Estimate::of(&jains),
        )?);
        report.observations.push(Observation::new(
            format!("{transport}: AFCT, {l}"),
            "s",
            Estimate::of(&afcts),
        ));
        report.observations.push(Observation::new(
            format!("{transport}: fairness, {l}, means since each flow's start (D301)"),
            "",
            Estimate::of(&since),
        ));
        afct.push(((cross, size, transport), afcts));
        bins.push(mean_bins(runs));
    }
    // Each seed draws the same flows for every transport: ratios are taken seed by seed.
    let ratios = |(c1, t1): (bool, &str), (c2, t2): (bool, &str), size: u32| {
        let of = |cross: bool, t: &str| {
            afct.iter()
                .find(|((c, s, x), _)| *c == cross && *s == size && *x == t)
                .map(|(_, a)| a.clone())
                .unwrap_or_default()
        };
        let (a, b) = (of(c1, t1), of(c2, t2));
        let r: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x / y).collect();
        Estimate::of(&r)
    };
    let bins_of = |size: u32, t: &str| {
        configs
            .iter()
            .position(|&(c, s, x)| !c && s == size && x == t)
            .map(|i| bins[i].clone())
            .unwrap_or_default()
    };
    for (size, ..) in SIZES {
        for (a, b) in AFCT_RATIOS {
            report.comparisons.push(targets.compare(
                &format!("AFCT, {a} over {b}, E[L] = {size}"),
                "ratio",
                ratios((false, a), (false, b), size),
            )?);
        }
        for (t, _) in TRANSPORTS {
            report.comparisons.push(targets.compare(
                &format!("{t}: AFCT with cross traffic over without, E[L] = {size}"),
                "ratio",
                ratios((true, t), (false, t), size),
            )?);
        }
        // The prose: INRPP "up to ≈50%" shorter than MPTCP in some size bins.
        let (inrpp, mptcp) = (bins_of(size, "INRPP"), bins_of(size, "MPTCP"));
        let best = inrpp
            .iter()
            .filter_map(|&(lo, i)| {
                let m = mptcp.iter().find(|(l, _)| *l == lo)?.1?;
                Some(100.0 * (1.0 - i? / m))
            })
            .fold(f64::NAN, f64::max);
        report.observations.push(Observation::new(
            format!("INRPP below MPTCP, largest reduction in a size bin, E[L] = {size}"),
            "%",
            Estimate::of(&[best]),
        ));
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}

/// Finite flows and how many completed.
fn completed(r: &Results) -> (usize, usize) {
    let finite = r.flows.iter().filter(|f| f.size_bytes.is_some());
    let n = finite.clone().count();
    (n, finite.filter(|f| f.fct_s.is_some()).count())
}

/// The mean over runs of each size bin's AFCT, by the bin's lower edge in bytes (a bin
/// without a completed flow in a run does not count for it).
fn mean_bins(runs: &[Results]) -> Vec<(f64, Option<f64>)> {
    let mut sums: Vec<(f64, u32)> = Vec::new();
    let mut edges: Vec<f64> = Vec::new();
    for r in runs {
        for b in r.afct_bins.iter().flatten() {
            let i = match edges.iter().position(|&e| e == b.lo_bytes) {
                Some(i) => i,
                None => {
                    edges.push(b.lo_bytes);
                    sums.push((0.0, 0));
                    edges.len() - 1
                }
            };
            if let Some(m) = b.mean_fct_s {
                sums[i].0 += m;
                sums[i].1 += 1;
            }
        }
    }
    let mut order: Vec<usize> = (0..edges.len()).collect();
    order.sort_by(|&a, &b| edges[a].total_cmp(&edges[b]));
    order
        .into_iter()
        .map(|i| {
            let (sum, n) = sums[i];
            (edges[i], (n > 0).then(|| sum / f64::from(n)))
        })
        .collect()
}
