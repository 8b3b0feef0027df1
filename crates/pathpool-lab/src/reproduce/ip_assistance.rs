//! `ip-assistance`: topological assistance for multipath TCP over IP (thesis §5.1, spec
//! §9.1–9.2) on the Topology Zoo ASes of E7. The thesis sketches the designs and gives no
//! numbers, so every figure here is measured only.
//!
//! On each network the same placements (one seed = one placement, as in `domain-scale`) run
//! in seven arms: every client single-path (the baseline), and with half the clients
//! multipath, for NMCC and LIA each:
//!
//! * **no assistance**: end-to-end MPTCP over the 2 least-hop paths, all subflows one coupled
//!   group (the endpoints' friendly default);
//! * **SDN** (design 3): the same paths, grouped by the controller at each subflow's set-up;
//! * **MPLS ingress** (design B): the multipath clients are plain TCP hosts; the ingress router
//!   of their server carries all of them that leave by one egress router as one multipath
//!   connection over the 2 least-hop label-switched paths, grouped by the administrator's
//!   overlap information (decision D338).
//!
//! Figures per placement: the multipath clients' gain (their throughput over what the same
//! clients got single-path in the baseline) and the single-path clients' throughput kept
//! (against the baseline: 100% is perfectly friendly), pooled over placements and networks,
//! and per network in `by_topology.csv` and the two figures.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use pathpool_sim::Results;

use super::domain_scale::{find_topologies, QUICK};
use super::{svg, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/ip-assistance.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/ip-assistance.toml");
const SOURCE: &str = "thesis §5.1.1-5.1.2 (spec §9.1-9.2); no published figures";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "ip-assistance",
    title: "MPTCP on Topology Zoo ASes: no assistance, SDN controller (design 3), MPLS ingress proxy (design B)",
    source: SOURCE,
    run,
    compared,
};

/// The thesis gives no numbers for these designs: nothing is compared.
fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    Vec::new()
}

/// A line of a figure: (x, y) points.
type Curve = Vec<(f64, f64)>;

/// One arm: its label, congestion control and overrides.
struct Arm {
    label: &'static str,
    cc: &'static str,
    set: &'static [(&'static str, &'static str)],
}

const BASELINE: Arm = Arm {
    label: "single-path",
    cc: "newreno",
    set: &[("generate.domain.multipath_share", "0")],
};

/// The assisted arms, without their congestion control.
const DESIGNS: [(&str, &[(&str, &str)]); 3] = [
    (
        "no assistance",
        &[("generate.domain.paths.assistance", "\"none\"")],
    ),
    ("SDN", &[("generate.domain.assisted_by", "\"sdn\"")]),
    (
        "MPLS ingress",
        &[("generate.domain.assisted_by", "\"mpls-ingress\"")],
    ),
];

/// The control: the ingress proxy with one label-switched path per egress, which only
/// aggregates and shortens the loop, so that the MPLS arm's gain can be told apart from what
/// its second path adds.
const PROXY_ONLY: Arm = Arm {
    label: "MPLS ingress 1 LSP",
    cc: "nmcc",
    set: &[
        ("generate.domain.assisted_by", "\"mpls-ingress\""),
        ("generate.domain.paths.k", "1"),
    ],
};

fn arms() -> Vec<Arm> {
    let mut v = vec![BASELINE];
    for cc in ["nmcc", "lia"] {
        for (label, set) in DESIGNS {
            v.push(Arm { label, cc, set });
        }
    }
    v.push(PROXY_ONLY);
    v
}

impl Arm {
    fn name(&self) -> String {
        if self.set == BASELINE.set {
            self.label.to_string()
        } else {
            format!("{} ({})", self.label, self.cc.to_uppercase())
        }
    }
}

/// Each client's throughput in b/s (a connection an MPLS ingress carries for several clients
/// serves them round-robin: an equal part each), whether it is a multipath client, and the
/// multipath connections with subflows in more than one group, of those with several.
struct Run {
    clients: BTreeMap<usize, (f64, bool)>,
    split: (usize, usize),
}

fn parse_run(r: &Results) -> Result<Run, String> {
    let mut clients = BTreeMap::new();
    let mut split = (0, 0);
    for f in &r.flows {
        let bps = f.throughput_bps.unwrap_or(0.0);
        let (ids, multipath) = if let Some(ids) = f.id.strip_prefix("mp") {
            (ids, true)
        } else if let Some(ids) = f.id.strip_prefix("sp") {
            (ids, false)
        } else {
            return Err(format!("unexpected flow {:?} in a generated domain", f.id));
        };
        let members: Vec<usize> = ids
            .split('+')
            .map(|j| j.parse().map_err(|_| format!("bad flow id {:?}", f.id)))
            .collect::<Result<_, _>>()?;
        for j in &members {
            clients.insert(*j, (bps / members.len() as f64, multipath));
        }
        let mut groups: Vec<u32> = r
            .subflows
            .iter()
            .filter(|s| s.flow == f.id)
            .map(|s| s.group)
            .collect();
        if groups.len() > 1 {
            groups.dedup();
            split.1 += 1;
            split.0 += usize::from(groups.len() > 1);
        }
    }
    Ok(Run { clients, split })
}

/// (gain of the multipath clients over the baseline, single-path clients' throughput kept,
/// the whole network's throughput against the baseline), in %.
fn against(base: &Run, arm: &Run) -> Result<(f64, f64, f64), String> {
    let (mut mp, mut mp_base, mut sp, mut sp_base, mut all, mut all_base) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (j, &(bps, multipath)) in &arm.clients {
        let b = base
            .clients
            .get(j)
            .ok_or_else(|| format!("client {j} missing from the baseline"))?
            .0;
        if multipath {
            mp += bps;
            mp_base += b;
        } else {
            sp += bps;
            sp_base += b;
        }
        all += bps;
        all_base += b;
    }
    Ok((
        100.0 * (mp / mp_base - 1.0),
        100.0 * sp / sp_base,
        100.0 * all / all_base,
    ))
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let (source, mut topos, mut missing) = find_topologies(ctx.zoo_dir.as_deref())?;
    if ctx.quick {
        topos.retain(|t| QUICK.contains(&t.name));
    }
    // The multipath clients are dual-homed (E7b's rule): a second access node is needed.
    for t in topos.iter().filter(|t| t.access_nodes < 2) {
        missing.push(format!(
            "{}: left out, {} access node(s) in this file and dual-homing needs two",
            t.name, t.access_nodes
        ));
    }
    topos.retain(|t| t.access_nodes >= 2);
    if topos.is_empty() {
        return Err("no topology with two access nodes to run on".into());
    }
    topos.sort_by(|a, b| a.density.total_cmp(&b.density));
    let seeds = ctx.seeds(30, 10);
    let arms = arms();
    let mut jobs = Vec::new();
    for t in &topos {
        let path = format!("{:?}", t.path.display().to_string());
        for arm in &arms {
            let mut set: Vec<(&str, String)> = vec![
                ("generate.domain.topology", path.clone()),
                ("generate.domain.cc", format!("\"{}\"", arm.cc)),
            ];
            set.extend(arm.set.iter().map(|(k, v)| (*k, (*v).to_string())));
            for seed in 1..=u64::from(seeds) {
                jobs.push(Job::new(FILE, TEXT, &set, seed));
            }
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut report = Report::default();
    let mut runs_csv = String::from(
        "topology,density,arm,cc,seed,multipath_clients,single_path_clients,connections,\
         multipath_gain_pct,single_path_kept_pct,network_pct,split_connections,multi_subflow_connections\n",
    );
    let mut topo_csv = String::from(
        "topology,density,arm,cc,placements,multipath_gain_pct,ci95,single_path_kept_pct,ci95\n",
    );
    // Per arm: every placement's (gain, kept, network); the split connections.
    let mut pooled: Vec<[Vec<f64>; 3]> = vec![Default::default(); arms.len()];
    let mut split: Vec<Vec<f64>> = vec![Vec::new(); arms.len()];
    // Per arm, per network: (density, throughput against single-path), (density, kept).
    let mut curves: Vec<[Curve; 2]> = vec![Default::default(); arms.len()];
    let per_topo = arms.len() * seeds as usize;
    for (t, chunk) in topos.iter().zip(results.chunks(per_topo)) {
        let runs: Vec<Run> = chunk.iter().map(parse_run).collect::<Result<_, _>>()?;
        let (base, assisted) = runs.split_at(seeds as usize);
        for (a, arm_runs) in assisted.chunks(seeds as usize).enumerate() {
            let a = a + 1;
            let arm = &arms[a];
            let mut figures: [Vec<f64>; 3] = Default::default();
            for (p, (b, r)) in base.iter().zip(arm_runs).enumerate() {
                let (gain, kept, network) =
                    against(b, r).map_err(|e| format!("{}, placement {}: {e}", t.name, p + 1))?;
                for (v, x) in figures.iter_mut().zip([gain, kept, network]) {
                    v.push(x);
                }
                if r.split.1 > 0 {
                    split[a].push(100.0 * r.split.0 as f64 / r.split.1 as f64);
                }
                let n_mp = r.clients.values().filter(|c| c.1).count();
                let _ = writeln!(
                    runs_csv,
                    "{},{:.4},{},{},{},{n_mp},{},{},{gain:.3},{kept:.3},{network:.3},{},{}",
                    t.name,
                    t.density,
                    arm.label,
                    arm.cc,
                    p + 1,
                    r.clients.len() - n_mp,
                    chunk[a * seeds as usize + p].flows.len(),
                    r.split.0,
                    r.split.1,
                );
            }
            let (g, k) = (Estimate::of(&figures[0]), Estimate::of(&figures[1]));
            let _ = writeln!(
                topo_csv,
                "{},{:.4},{},{},{},{:.3},{:.3},{:.3},{:.3}",
                t.name, t.density, arm.label, arm.cc, g.n, g.mean, g.ci95, k.mean, k.ci95
            );
            curves[a][0].push((t.density, 100.0 + g.mean));
            curves[a][1].push((t.density, k.mean));
            for (all, v) in pooled[a].iter_mut().zip(figures) {
                all.extend(v);
            }
        }
    }
    for (a, arm) in arms.iter().enumerate().skip(1) {
        let name = arm.name();
        let [gain, kept, network] = &pooled[a];
        report.observations.push(Observation::new(
            format!("{name}: multipath clients' gain over single-path"),
            "%",
            Estimate::of(gain),
        ));
        report.observations.push(Observation::new(
            format!("{name}: single-path clients' throughput kept"),
            "%",
            Estimate::of(kept),
        ));
        report.observations.push(Observation::new(
            format!("{name}: network throughput against all single-path"),
            "%",
            Estimate::of(network),
        ));
        if arm.set != DESIGNS[0].1 && !split[a].is_empty() {
            report.observations.push(Observation::new(
                format!("{name}: multipath connections with subflows in two groups"),
                "%",
                Estimate::of(&split[a]),
            ));
        }
    }
    let names: Vec<String> = arms.iter().map(Arm::name).collect();
    for (file, title, y_label, pick) in [
        (
            "gain.svg",
            "Multipath clients' throughput against single-path, by network",
            "throughput relative to single-path (%)",
            0,
        ),
        (
            "friendliness.svg",
            "Single-path clients' throughput kept, by network",
            "single-path throughput kept (%)",
            1,
        ),
    ] {
        let series: Vec<(&str, Vec<(f64, f64)>)> = names
            .iter()
            .zip(&curves)
            .skip(1)
            .map(|(n, c)| (n.as_str(), c[pick].clone()))
            .collect();
        report.files.push((
            file.into(),
            svg::line_chart(
                title,
                ("network density (Table 4.2 order)", y_label),
                &series,
            ),
        ));
    }
    let mut notes = format!("topologies: {source}\n");
    for m in &missing {
        let _ = writeln!(notes, "missing: {m}");
    }
    report.files.push(("topologies.txt".into(), notes));
    report.files.push(("runs.csv".into(), runs_csv));
    report.files.push(("by_topology.csv".into(), topo_csv));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of 4 routers with 3 leaves (access nodes 4, 5, 6).
    const GML: &str = "graph [\n node [ id 0 ]\n node [ id 1 ]\n node [ id 2 ]\n node [ id 3 ]\n \
        node [ id 4 ]\n node [ id 5 ]\n node [ id 6 ]\n edge [ source 0 target 1 ]\n \
        edge [ source 1 target 2 ]\n edge [ source 2 target 3 ]\n edge [ source 3 target 0 ]\n \
        edge [ source 4 target 0 ]\n edge [ source 5 target 1 ]\n edge [ source 6 target 2 ]\n]\n";

    #[test]
    fn a_proxied_connection_is_shared_equally_by_its_members() {
        let dir = tempfile::Builder::new()
            .prefix("pathpool-ipa-")
            .tempdir()
            .unwrap();
        let gml = dir.path().join("ring.gml");
        std::fs::write(&gml, GML).unwrap();
        let topology = format!("{:?}", gml.display().to_string());
        let mut aggregated = 0;
        for seed in 1..=4 {
            let set = vec![
                ("generate.domain.topology".to_string(), topology.clone()),
                ("duration".to_string(), "\"10s\"".to_string()),
                ("measure.start".to_string(), "\"5s\"".to_string()),
                (
                    "generate.domain.assisted_by".to_string(),
                    "\"mpls-ingress\"".to_string(),
                ),
            ];
            let l = pathpool_sim::LoadedScenario::from_toml(TEXT, FILE, &set).unwrap();
            let mut sim = l.compile(Some(seed)).unwrap();
            sim.run();
            let r = sim.results();
            let run = parse_run(&r).unwrap();
            // Six clients, each once; together they have what the connections delivered.
            assert_eq!(
                run.clients.keys().copied().collect::<Vec<_>>(),
                (0..6).collect::<Vec<_>>()
            );
            let flows: f64 = r
                .flows
                .iter()
                .map(|f| f.throughput_bps.unwrap_or(0.0))
                .sum();
            let clients: f64 = run.clients.values().map(|c| c.0).sum();
            assert!((flows - clients).abs() < 1e-6 * flows, "{flows} {clients}");
            assert_eq!(run.clients.values().filter(|c| c.1).count(), 3);
            for f in r.flows.iter().filter(|f| f.id.contains('+')) {
                aggregated += 1;
                let members: Vec<usize> =
                    f.id[2..].split('+').map(|j| j.parse().unwrap()).collect();
                let part = f.throughput_bps.unwrap() / members.len() as f64;
                assert!(part > 0.0);
                for j in members {
                    assert_eq!(run.clients[&j], (part, true));
                }
            }
        }
        assert!(aggregated > 0, "no connection carried two clients");
    }

    fn run_of(clients: &[(usize, f64, bool)]) -> Run {
        Run {
            clients: clients.iter().map(|&(j, b, m)| (j, (b, m))).collect(),
            split: (0, 0),
        }
    }

    #[test]
    fn gains_are_the_same_clients_against_the_baseline() {
        let base = run_of(&[(0, 4.0, false), (1, 2.0, false), (2, 2.0, false)]);
        // Clients 0 and 1 multipath: 9 against 6; client 2 keeps 1 of 2.
        let arm = run_of(&[(0, 5.0, true), (1, 4.0, true), (2, 1.0, false)]);
        let (gain, kept, network) = against(&base, &arm).unwrap();
        assert!((gain - 50.0).abs() < 1e-9);
        assert!((kept - 50.0).abs() < 1e-9);
        assert!((network - 125.0).abs() < 1e-9);
        let e = against(&run_of(&[(0, 1.0, false)]), &arm).unwrap_err();
        assert!(e.contains("client 1 missing"), "{e}");
    }
}
