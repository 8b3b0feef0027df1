//! `tse-shared-bottleneck`: Tse E1 (Figs 4-1, 4-2). One NewReno flow and a multipath flow of
//! n = 1..16 subflows, all on one bottleneck: the multipath flow's share of what the two
//! carry. Published: Multi-Priority TCP and Bilevel TFRC ≈ 50% for every n; the Hacker
//! scheme rising with n.

use super::super::{published, Ctx, Experiment, Observation, Report};
use super::{bps, drop_tail, estimate, run_all, tcps, Config, Scheme};

pub(in super::super) const EXPERIMENT: Experiment = Experiment {
    id: "tse-shared-bottleneck",
    title: "a multipath flow of 1..16 subflows and one NewReno on one bottleneck",
    source: SOURCE,
    run,
    compared,
};

const SOURCE: &str = "Tse 2006 §4.2 E1, Figs 4-1/4-2 (spec §5 E1, §5.10 item 2)";

/// The schemes compared with the thesis, and the extras measured beside them.
const COMPARED: [Scheme; 3] = [Scheme::MultiPriority, Scheme::BilevelTfrc, Scheme::Hacker];
const EXTRAS: [Scheme; 3] = [
    Scheme::FractionalTfrc,
    Scheme::BilevelTcp,
    Scheme::Uncoupled,
];

/// Whether the figure at `n` subflows is compared: every n for the schemes published near
/// 50%, n = 1 for the Hacker scheme (whose rise is compared instead).
fn compares_share(s: Scheme, n: u32) -> bool {
    match s {
        Scheme::Hacker => n == 1,
        _ => COMPARED.contains(&s),
    }
}

fn subflows(quick: bool) -> &'static [u32] {
    if quick {
        &[1, 4, 16]
    } else {
        &[1, 2, 4, 8, 16]
    }
}

fn share_metric(s: Scheme, n: u32) -> String {
    format!("{}: share, {n} subflows", s.label())
}

fn rise_metric(s: Scheme) -> String {
    format!("{}: rise of the share from 1 to 16 subflows", s.label())
}

fn compared(quick: bool) -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for s in COMPARED {
        for &n in subflows(quick) {
            if compares_share(s, n) {
                v.push((share_metric(s, n), "%"));
            }
        }
    }
    v.push((rise_metric(Scheme::Hacker), "points"));
    v
}

/// The multipath flow's share (%) of what it and the NewReno flow carried.
fn share(s: Scheme, r: &pathpool_sim::Results) -> f64 {
    let (mp, tcp) = (s.bps(r), bps(r, "tcp1"));
    100.0 * mp / (mp + tcp)
}

fn config(s: Scheme, n: u32) -> Config {
    let mut o = s.overrides();
    o.extend(tcps([1]));
    o.push(s.paths(std::iter::repeat_n(1, n as usize)));
    Config::new(o)
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let targets = published::of(EXPERIMENT.id)?;
    let ns = subflows(ctx.quick);
    let schemes: Vec<Scheme> = COMPARED.iter().chain(&EXTRAS).copied().collect();
    let mut configs = Vec::new();
    for &s in &schemes {
        for &n in ns {
            configs.push(config(s, n));
        }
        // The thesis's key points again with drop-tail (spec §5.0).
        configs.push(config(s, 16).with(drop_tail([1])));
    }
    let runs = run_all(ctx, &configs, seeds)?;
    let mut report = Report::default();
    let mut csv = String::from("scheme,queue,subflows,seed,share_pct\n");
    let mut k = 0;
    for &s in &schemes {
        let mut at = Vec::new();
        for (&n, rs) in ns.iter().zip(&runs[k..]) {
            let e = estimate(rs, |r| share(s, r));
            for (seed, r) in rs.iter().enumerate() {
                csv += &format!("{},red,{n},{},{:.3}\n", s.label(), seed + 1, share(s, r));
            }
            if compares_share(s, n) {
                report
                    .comparisons
                    .push(targets.compare(&share_metric(s, n), "%", e)?);
            } else {
                report
                    .observations
                    .push(Observation::new(share_metric(s, n), "%", e));
            }
            at.push(rs);
        }
        let tail = &runs[k + ns.len()];
        report.observations.push(Observation::new(
            format!("{}: share, 16 subflows, drop-tail", s.label()),
            "%",
            estimate(tail, |r| share(s, r)),
        ));
        for (seed, r) in tail.iter().enumerate() {
            csv += &format!(
                "{},drop-tail,16,{},{:.3}\n",
                s.label(),
                seed + 1,
                share(s, r)
            );
        }
        if s == Scheme::Hacker {
            // Per seed: the share with 16 subflows less the share with 1.
            let rise: Vec<f64> = at[at.len() - 1]
                .iter()
                .zip(at[0])
                .map(|(hi, lo)| share(s, hi) - share(s, lo))
                .collect();
            report.comparisons.push(targets.compare(
                &rise_metric(s),
                "points",
                super::super::Estimate::of(&rise),
            )?);
        }
        k += ns.len() + 1;
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
