//! `tse-bilevel-placement`: Tse E7 (Figs 4-9, 4-10). Two equal paths, one NewReno flow on the
//! top one (path 1); Bilevel TFRC with one subflow on the empty bottom path (path 2) and
//! m = 1..15 on the top path, at four capacities. Measured: what all flows carry over the two
//! paths' goodput capacity. Published: it falls as subflows are added to the congested path,
//! "exacerbated at higher rates", converging to 50% with the bottom path unused; Bilevel TFRC
//! "never violates the stringent fairness criteria" (its bound here: half the top path plus
//! all of the bottom one, 1.5 paths).

use super::super::{published, Ctx, Estimate, Experiment, Observation, Report};
use super::{bps, estimate, run_all, tcps, Config, Scheme, PATH_GOODPUT_BPS};
use pathpool_sim::Results;

pub(in super::super) const EXPERIMENT: Experiment = Experiment {
    id: "tse-bilevel-placement",
    title: "Bilevel TFRC with 1 subflow on an empty path and 1..15 on a path with a NewReno",
    source: "Tse 2006 §4.4 E7, Figs 4-9/4-10 (spec §5 E7, §5.10 item 8)",
    run,
    compared,
};

fn capacities(quick: bool) -> &'static [f64] {
    if quick {
        &[1.5, 10.0]
    } else {
        &[1.5, 5.0, 10.0, 45.0]
    }
}

fn top_subflows(quick: bool) -> &'static [u32] {
    if quick {
        &[1, 15]
    } else {
        &[1, 3, 7, 15]
    }
}

fn fall_metric(c: f64) -> String {
    format!("fall of the utilisation from 1 to 15 top subflows, {c} Mb/s")
}

fn faster_metric(quick: bool) -> String {
    let cs = capacities(quick);
    format!(
        "fall at {} Mb/s less fall at {} Mb/s",
        cs[cs.len() - 1],
        cs[0]
    )
}

fn bound_metric(m: u32, c: f64) -> String {
    format!("Bilevel TFRC over its stringent bound, {m} top subflows, {c} Mb/s")
}

fn compared(quick: bool) -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for &c in capacities(quick) {
        v.push((fall_metric(c), "points"));
        for &m in top_subflows(quick) {
            v.push((bound_metric(m, c), "×"));
        }
    }
    v.push((faster_metric(quick), "points"));
    v
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let targets = published::of(EXPERIMENT.id)?;
    let (cs, ms) = (capacities(ctx.quick), top_subflows(ctx.quick));
    let s = Scheme::BilevelTfrc;
    let mut configs = Vec::new();
    for &c in cs {
        for &m in ms {
            let mut o = s.overrides();
            o.extend(tcps([1]));
            o.push(s.paths(std::iter::once(2).chain(std::iter::repeat_n(1, m as usize))));
            let rate = format!("{c}Mbps");
            let more = ["p1", "p1r", "p2", "p2r"]
                .iter()
                .map(|l| (format!("links.{l}.rate"), rate.clone()))
                .collect();
            configs.push(Config::new(o).with(more));
        }
    }
    let runs = run_all(ctx, &configs, seeds)?;
    let mut report = Report::default();
    let mut csv =
        String::from("capacity_mbps,top_subflows,seed,utilisation_pct,bilevel_bps,tcp_bps\n");
    let mut falls: Vec<Vec<f64>> = Vec::new();
    for (i, &c) in cs.iter().enumerate() {
        let goodput = c / 5.0 * PATH_GOODPUT_BPS;
        let util = |r: &Results| 100.0 * (s.bps(r) + bps(r, "tcp1")) / (2.0 * goodput);
        let over = |r: &Results| s.bps(r) / (1.5 * goodput);
        for (j, &m) in ms.iter().enumerate() {
            let rs = &runs[i * ms.len() + j];
            for r in rs {
                csv += &format!(
                    "{c},{m},{},{:.3},{:.0},{:.0}\n",
                    r.seed,
                    util(r),
                    s.bps(r),
                    bps(r, "tcp1")
                );
            }
            report.observations.push(Observation::new(
                format!("utilisation of both paths, {m} top subflows, {c} Mb/s"),
                "%",
                estimate(rs, util),
            ));
            report.comparisons.push(targets.compare(
                &bound_metric(m, c),
                "×",
                estimate(rs, over),
            )?);
        }
        let (first, last) = (&runs[i * ms.len()], &runs[i * ms.len() + ms.len() - 1]);
        let fall: Vec<f64> = first
            .iter()
            .zip(last)
            .map(|(a, b)| util(a) - util(b))
            .collect();
        report
            .comparisons
            .push(targets.compare(&fall_metric(c), "points", Estimate::of(&fall))?);
        falls.push(fall);
    }
    let faster: Vec<f64> = falls[falls.len() - 1]
        .iter()
        .zip(&falls[0])
        .map(|(hi, lo)| hi - lo)
        .collect();
    report.comparisons.push(targets.compare(
        &faster_metric(ctx.quick),
        "points",
        Estimate::of(&faster),
    )?);
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
