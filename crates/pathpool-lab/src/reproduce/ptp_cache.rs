//! `ptp-cache`: the PTP paper's scenario 4 (spec 004 §7.4, Figs 22-23): a consumer fetches a
//! content whose first 2000 packets another consumer left half in a store on its path. PTP
//! only, as in the paper. Compared (windows fixed before the run): the second consumer's
//! goodput from 22 s to 27 s, while the store answers about half of its Interests (published
//! about 1.9 Mb/s: 0.9 from the store and 1 from the producer), and from 32 s to 55 s, after
//! the cached packets (about 1 Mb/s, the 4-3 bottleneck). Observed: the store's hits, when
//! the second consumer first ran above 1.5 Mb/s (its reaction to the store) and when it first
//! fell to 1.2 Mb/s or below after that (its reaction to the store running out), and when the
//! first consumer finished (it must before 20 s, as the paper's stops).

use pathpool_sim::Results;

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/ptp-cache.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/ptp-cache.toml");
const SOURCE: &str = "004-ptp-ndn.md §7.4 Figs 22-23";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "ptp-cache",
    title: "PTP's reaction to a half-cached content (scenario 4)",
    source: SOURCE,
    run,
    compared,
};

/// The windows of the two phases, seconds.
const CACHED: (f64, f64) = (22.0, 27.0);
const AFTER: (f64, f64) = (32.0, 55.0);

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    vec![
        ("goodput while the store answers".into(), "Mb/s"),
        ("goodput after the cached packets".into(), "Mb/s"),
    ]
}

/// Flow `id`'s samples: (time, cumulative delivered bytes, goodput of the last interval).
fn samples(r: &Results, id: &str) -> Result<Vec<(f64, f64, f64)>, String> {
    let t = &r.flow_timeseries;
    let (Some(time), Some(flow), Some(bytes), Some(goodput)) = (
        t.f64s("time_s"),
        t.strs("flow"),
        t.u64s("delivered_bytes"),
        t.f64s("goodput_bps"),
    ) else {
        return Err("flow_timeseries lacks a column".into());
    };
    Ok((0..time.len())
        .filter(|&i| flow[i] == id)
        .map(|i| (time[i], bytes[i] as f64, goodput[i]))
        .collect())
}

/// Goodput in Mb/s between the samples at `from` and `to` seconds.
fn goodput(s: &[(f64, f64, f64)], (from, to): (f64, f64)) -> Result<f64, String> {
    let at = |t: f64| {
        s.iter()
            .find(|x| (x.0 - t).abs() < 1e-9)
            .map(|x| x.1)
            .ok_or(format!("no sample at {t} s"))
    };
    Ok((at(to)? - at(from)?) * 8.0 / (to - from) / 1e6)
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(5, 1);
    let targets = published::of(EXPERIMENT.id)?;
    let jobs: Vec<Job> = (1..=u64::from(seeds))
        .map(|seed| Job::new(FILE, TEXT, &[], seed))
        .collect();
    let results = ctx.runner.run(&jobs)?;
    let mut report = Report::default();
    let (mut cached, mut after, mut hits, mut up, mut down, mut first_done) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut csv = String::from("seed,time_s,goodput_bps\n");
    for (seed, r) in results.iter().enumerate() {
        let s = samples(r, "second")?;
        for x in &s {
            csv += &format!("{},{},{:.0}\n", seed + 1, x.0, x.2);
        }
        cached.push(goodput(&s, CACHED)?);
        after.push(goodput(&s, AFTER)?);
        let n = r.ndn_nodes.as_ref().ok_or("no ndn_nodes")?;
        let nodes = n.strs("node").ok_or("no node column")?;
        let k = nodes.iter().position(|x| x == "3").ok_or("no node 3")?;
        if let Some(pathpool_sim::Column::OptU64(h)) = n.column("cs_hits") {
            hits.push(h[k].unwrap_or(0) as f64);
        }
        let rise = s.iter().find(|x| x.0 > 20.0 && x.2 >= 1.5e6).map(|x| x.0);
        up.push(rise.map_or(f64::NAN, |t| t - 20.0));
        let fall = rise.and_then(|t0| s.iter().find(|x| x.0 > t0 && x.2 <= 1.2e6).map(|x| x.0));
        down.push(fall.unwrap_or(f64::NAN));
        first_done.push(r.flow("first").and_then(|f| f.fct_s).unwrap_or(f64::NAN));
    }
    report.comparisons.push(targets.compare(
        "goodput while the store answers",
        "Mb/s",
        Estimate::of(&cached),
    )?);
    report.comparisons.push(targets.compare(
        "goodput after the cached packets",
        "Mb/s",
        Estimate::of(&after),
    )?);
    for (what, unit, v) in [
        ("node 3's store: hits", "", &hits),
        ("second consumer above 1.5 Mb/s, after its start", "s", &up),
        ("second consumer back at 1.2 Mb/s or below, at", "s", &down),
        ("first consumer done at", "s", &first_done),
    ] {
        report
            .observations
            .push(Observation::new(what, unit, Estimate::of(v)));
    }
    report.files.push(("second-goodput.csv".into(), csv));
    Ok(report)
}
