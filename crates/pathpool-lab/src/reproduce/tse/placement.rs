//! `tse-priority-placement`: Tse E8 (Fig. 4-11). Two empty paths; Multi-Priority TCP with its
//! NewReno subflow on path 1 and its TCP-LP subflow on path 2; k NewReno flows join either the
//! base path or the background path. Published: competition on the base path leaves
//! Multi-Priority TCP (1 + 1/(k + 1))/2 of the total (2/3 at k = 2), the stringent bound;
//! competition on the background path gives "the flat line at 50%, regardless of how many
//! competing TCP flows are present".

use super::super::{published, Ctx, Experiment, Report};
use super::{estimate, run_all, tcps, tcps_bps, Config, Scheme};
use pathpool_sim::Results;

pub(in super::super) const EXPERIMENT: Experiment = Experiment {
    id: "tse-priority-placement",
    title: "Multi-Priority TCP with k NewReno flows on its base or its background path",
    source: "Tse 2006 §4.4 E8, Fig. 4-11 (spec §5 E8, §5.10 item 9)",
    run,
    compared,
};

fn counts(quick: bool) -> &'static [u32] {
    if quick {
        &[1, 2, 8]
    } else {
        &[1, 2, 3, 4, 6, 8]
    }
}

/// Where the NewReno flows run.
const PLACES: [(u32, &str); 2] = [(1, "base"), (2, "background")];

fn metric(place: &str, k: u32) -> String {
    format!("Multi-Priority TCP: share of all traffic, {k} NewReno on the {place} path")
}

fn compared(quick: bool) -> Vec<(String, &'static str)> {
    PLACES
        .iter()
        .flat_map(|&(_, place)| counts(quick).iter().map(move |&k| (metric(place, k), "%")))
        .collect()
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    // Quick: all 10 seeds (a few seconds). With 3 to 6 the 8-competitor background figure,
    // whose interval ends at its band's edge, lay below the band where the full run cannot
    // tell (D145, 2026-11-27).
    let seeds = ctx.seeds(10, 10);
    let targets = published::of(EXPERIMENT.id)?;
    let ks = counts(ctx.quick);
    let s = Scheme::MultiPriority;
    let mut configs = Vec::new();
    for (path, _) in PLACES {
        for &k in ks {
            let mut o = s.overrides();
            o.push(s.paths([1, 2]));
            o.extend(tcps(std::iter::repeat_n(path, k as usize)));
            configs.push(Config::new(o));
        }
    }
    let runs = run_all(ctx, &configs, seeds)?;
    let share = |r: &Results| {
        let mp = s.bps(r);
        100.0 * mp / (mp + tcps_bps(r))
    };
    let mut report = Report::default();
    let mut csv = String::from("place,competitors,seed,mp_share_pct\n");
    for (i, (_, place)) in PLACES.iter().enumerate() {
        for (j, &k) in ks.iter().enumerate() {
            let rs = &runs[i * ks.len() + j];
            for r in rs {
                csv += &format!("{place},{k},{},{:.3}\n", r.seed, share(r));
            }
            report.comparisons.push(targets.compare(
                &metric(place, k),
                "%",
                estimate(rs, share),
            )?);
        }
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
