//! `inrpp-detour-census`: the INRPP document's Table 1 (spec 001 §2), one-hop detours in
//! nine Rocketfuel ISP maps.
//!
//! The maps are `data/rocketfuel/` (an attributed copy, embedded). The compared figures count
//! links (D273); the edge-to-edge path reading (D274) is printed beside them, with how many
//! of the table's cells each reading puts within tolerance, so that a reader sees which one
//! the published table fits. Nothing here is random: one run is the census.

use pathpool_topo::census::{link_census, path_census, Census};
use pathpool_topo::parse_rocketfuel;

use super::{published, Ctx, Estimate, Experiment, Observation, Report};

const SOURCE: &str = "001-inrpp.md §2 Table 1";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "inrpp-detour-census",
    title: "One-hop detours in nine Rocketfuel ISP maps (INRPP Table 1)",
    source: SOURCE,
    run,
    compared,
};

/// `(name in Table 1, AS number, map text)`, in the table's order.
const MAPS: [(&str, u32, &str); 9] = [
    (
        "Telstra",
        1221,
        include_str!("../../../../data/rocketfuel/1221.r0.cch.abr"),
    ),
    (
        "Sprintlink",
        1239,
        include_str!("../../../../data/rocketfuel/1239.r0.cch.abr"),
    ),
    (
        "Ebone",
        1755,
        include_str!("../../../../data/rocketfuel/1755.r0.cch.abr"),
    ),
    (
        "Verio",
        2914,
        include_str!("../../../../data/rocketfuel/2914.r0.cch.abr"),
    ),
    (
        "Tiscali",
        3257,
        include_str!("../../../../data/rocketfuel/3257.r0.cch.abr"),
    ),
    (
        "Level3",
        3356,
        include_str!("../../../../data/rocketfuel/3356.r0.cch.abr"),
    ),
    (
        "Exodus",
        3967,
        include_str!("../../../../data/rocketfuel/3967.r0.cch.abr"),
    ),
    (
        "VSNL",
        4755,
        include_str!("../../../../data/rocketfuel/4755.r0.cch.abr"),
    ),
    (
        "AT&T",
        7018,
        include_str!("../../../../data/rocketfuel/7018.r0.cch.abr"),
    ),
];

/// Table 1's split columns as the metrics name them.
const SPLIT: [&str; 5] = [
    "1 detour",
    "2 detours",
    "3 detours",
    "4 detours",
    "5+ detours",
];

/// The seven figures of a row, as `(metric, unit, value)`.
fn row(name: &str, c: &Census) -> Vec<(String, &'static str, f64)> {
    let mut v = vec![(
        format!("{name}: links with a 1-hop detour"),
        "%",
        c.percent_with_detour(),
    )];
    for (label, pct) in SPLIT.iter().zip(c.percent_by_count()) {
        v.push((format!("{name}: {label}, % of links with one"), "%", pct));
    }
    v.push((
        format!("{name}: most 1-hop detours of a link"),
        "",
        c.max_link_detours as f64,
    ));
    v
}

/// Sprintlink's 5+ cell, compared a second time with the value that makes its row 100%.
const SPRINTLINK_CORRECTED: &str =
    "Sprintlink: 5+ detours, % of links with one (row corrected to 100%)";

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    let empty = Census {
        population: 0,
        with_detour: 0,
        by_count: [0; 5],
        max_link_detours: 0,
    };
    let mut v: Vec<(String, &'static str)> = MAPS
        .iter()
        .flat_map(|(name, ..)| row(name, &empty).into_iter().map(|(m, u, _)| (m, u)))
        .collect();
    v.push((SPRINTLINK_CORRECTED.into(), "%"));
    v
}

fn run(_ctx: &Ctx<'_>) -> Result<Report, String> {
    let targets = published::of(EXPERIMENT.id)?;
    let mut report = Report::default();
    let mut csv = String::from(
        "network,as,routers,links,edge_routers,reading,population,with_detour_pct,\
         one_pct,two_pct,three_pct,four_pct,five_plus_pct,max_link_detours\n",
    );
    let (mut within_links, mut within_paths, mut cells) = (0usize, 0usize, 0usize);
    for (name, asn, text) in MAPS {
        let map = parse_rocketfuel(name, text)
            .map_err(|e| format!("data/rocketfuel/{asn}.r0.cch.abr: {e}"))?;
        let edge: Vec<bool> = map.backbone.iter().map(|b| !b).collect();
        let links = link_census(&map.topology);
        let paths = path_census(&map.topology, &edge);
        for (reading, c) in [("links", &links), ("edge-to-edge paths", &paths)] {
            let p = c.percent_by_count();
            csv += &format!(
                "{name},{asn},{},{},{},{reading},{},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{}\n",
                map.topology.nodes().len(),
                map.topology.links().len(),
                edge.iter().filter(|&&e| e).count(),
                c.population,
                c.percent_with_detour(),
                p[0],
                p[1],
                p[2],
                p[3],
                p[4],
                c.max_link_detours
            );
        }
        for ((metric, unit, measured), (_, _, by_path)) in
            row(name, &links).into_iter().zip(row(name, &paths))
        {
            let target = targets.target(&metric, unit)?;
            let fits = |x: f64| (x - target.published).abs() <= target.tolerance + 1e-9;
            cells += 1;
            within_links += usize::from(fits(measured));
            within_paths += usize::from(fits(by_path));
            report
                .comparisons
                .push(targets.compare(&metric, unit, Estimate::of(&[measured]))?);
            if unit == "%" {
                report.observations.push(Observation::new(
                    metric.replacen("links", "edge-to-edge paths", 1),
                    unit,
                    Estimate::of(&[by_path]),
                ));
            }
        }
        if name == "Sprintlink" {
            report.comparisons.push(targets.compare(
                SPRINTLINK_CORRECTED,
                "%",
                Estimate::of(&[links.percent_by_count()[4]]),
            )?);
        }
    }
    for (reading, n) in [
        ("links", within_links),
        ("edge-to-edge paths", within_paths),
    ] {
        report.observations.push(Observation::new(
            format!("cells of Table 1 within tolerance, counting {reading} (of {cells})"),
            "",
            Estimate::of(&[n as f64]),
        ));
    }
    report.files.push(("census.csv".into(), csv));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every embedded map reads as the copy's README describes it: no router without a
    /// line, links listed from both ends.
    #[test]
    fn every_map_reads() {
        for (name, asn, text) in MAPS {
            let m = parse_rocketfuel(name, text).unwrap_or_else(|e| panic!("{asn}: {e}"));
            assert_eq!(m.topology.dropped_parallel_links(), 0, "{name}");
            assert!(m.topology.links().len() >= 12, "{name}");
        }
        assert_eq!(compared(false).len(), 9 * 7 + 1);
    }
}
