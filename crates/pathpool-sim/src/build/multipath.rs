//! The subflows of a multipath TCP connection: listed (`paths`, `subflows`), the k
//! least-cost paths (`k_paths`), or the topology manager's (`tm`), each with its data and ACK
//! paths and its coupling group.

use pathpool_core::{Dur, Time};
use pathpool_topo::NodeIx;

use super::net::{flow_paths, topology_manager, FlowPaths, Net};
use super::{child, ix};
use crate::error::{PathSeg, SpecError};
use crate::packet::MAX_SUBFLOWS;
use crate::spec::{SubflowSpec, TcpFlowSpec, TmPolicy};

/// One subflow of a multipath connection: as the scenario gives it, its paths, and the
/// paths it moves to (`moves`, with their times).
#[derive(Clone)]
pub(super) struct Planned {
    pub(super) spec: SubflowSpec,
    pub(super) paths: FlowPaths,
    pub(super) moves: Vec<(Time, FlowPaths)>,
}

impl Planned {
    fn fixed(spec: SubflowSpec, paths: FlowPaths) -> Planned {
        Planned {
            spec,
            paths,
            moves: Vec::new(),
        }
    }
}

/// A multipath connection's subflows with their paths.
pub(super) type Plan = Vec<Planned>;

/// The subflows of a multipath flow (`paths` or `subflows`), checked, with their paths;
/// `None` for a single-path flow.
pub(super) fn multipath_plan(
    net: &Net,
    f: &TcpFlowSpec,
    from: NodeIx,
    to: NodeIx,
    here: &[PathSeg],
    duration: Dur,
) -> Result<Option<Plan>, SpecError> {
    let field = |name: &str| child(here, name);
    let (specs, name): (Vec<SubflowSpec>, &str) = match (&f.paths, &f.subflows) {
        (Some(_), Some(_)) => {
            return Err(SpecError::at(
                field("subflows"),
                "give either paths or subflows, not both",
            ))
        }
        (Some(paths), None) => (
            paths
                .iter()
                .map(|r| SubflowSpec {
                    route: Some(r.clone()),
                    ..SubflowSpec::default()
                })
                .collect(),
            "paths",
        ),
        (None, Some(sfs)) => (sfs.clone(), "subflows"),
        (None, None) if f.k_paths.is_some() && f.tm.is_some() => {
            return Err(SpecError::at(
                field("tm"),
                "give either k_paths or tm, not both",
            ));
        }
        (None, None) if f.k_paths.is_some() => {
            return k_paths_plan(net, f, from, to, here).map(Some);
        }
        (None, None) if f.tm.is_some() && f.sdn.is_some() => {
            return Err(SpecError::at(
                field("sdn"),
                "the topology manager (tm) already assigns the coupling groups; give tm or sdn",
            ));
        }
        (None, None) if f.tm.is_some() => {
            return tm_plan(net, f, from, to, here).map(Some);
        }
        (None, None) => {
            if f.sdn.is_some() {
                return Err(SpecError::at(
                    field("sdn"),
                    "an SDN controller groups the subflows of a multipath flow (give paths, \
                     subflows or k_paths)",
                ));
            }
            if f.scheduler.is_some() {
                return Err(SpecError::at(
                    field("scheduler"),
                    "a scheduler is for multipath flows (give paths or subflows)",
                ));
            }
            for (name, set) in [
                ("receive_buffer", f.receive_buffer.is_some()),
                (
                    "opportunistic_retransmission",
                    f.opportunistic_retransmission.is_some(),
                ),
                ("penalisation", f.penalisation.is_some()),
            ] {
                if set {
                    return Err(SpecError::at(
                        field(name),
                        "the connection-level receive buffer is for multipath flows (give paths, \
                         subflows, k_paths or tm); a single-path flow's receive window is tcp.rwnd",
                    ));
                }
            }
            return Ok(None);
        }
    };
    if f.k_paths.is_some() {
        return Err(SpecError::at(
            field("k_paths"),
            format!("give either k_paths or {name}, not both"),
        ));
    }
    if f.tm.is_some() {
        return Err(SpecError::at(
            field("tm"),
            format!("give either tm or {name}, not both"),
        ));
    }
    if f.route.is_some() {
        return Err(SpecError::at(
            field("route"),
            format!("a multipath flow gives each subflow's route in {name}, not route"),
        ));
    }
    if specs.is_empty() {
        return Err(SpecError::at(field(name), "give at least one subflow"));
    }
    if f.sdn.is_some() {
        if let Some(i) = specs.iter().position(|s| s.group != 0) {
            return Err(SpecError::at(
                child(&[field(name), vec![ix(i)]].concat(), "group"),
                "the SDN controller (sdn) assigns the coupling groups; leave group out",
            ));
        }
    }
    if specs.len() > MAX_SUBFLOWS as usize {
        return Err(SpecError::at(
            field(name),
            format!("at most {MAX_SUBFLOWS} subflows per connection"),
        ));
    }
    let mut out = Vec::with_capacity(specs.len());
    for (i, sf) in specs.into_iter().enumerate() {
        let mut here = field(name);
        here.push(ix(i));
        let route_path = if name == "paths" {
            here.clone()
        } else {
            child(&here, "route")
        };
        let start = sf.start.unwrap_or(f.common.start);
        if name == "subflows" {
            if start < f.common.start || start >= duration {
                return Err(SpecError::at(
                    child(&here, "start"),
                    format!(
                        "must be within the flow's life: from its start ({}) to before the end of the run ({duration})",
                        f.common.start
                    ),
                ));
            }
            if sf.stop.is_some_and(|s| s <= start) {
                return Err(SpecError::at(child(&here, "stop"), "must be after start"));
            }
        }
        let paths = flow_paths(net, from, to, sf.route.as_ref(), &here, route_path, true)?;
        let mut moves = Vec::with_capacity(sf.moves.len());
        let mut after = start;
        for (m, mv) in sf.moves.iter().enumerate() {
            let mut at_move = child(&here, "moves");
            at_move.push(ix(m));
            let end = sf.stop.unwrap_or(duration);
            if mv.at <= after || mv.at >= end {
                return Err(SpecError::at(
                    child(&at_move, "at"),
                    format!(
                        "must be after the subflow's start ({start}) and any earlier move, and before it ends ({end})"
                    ),
                ));
            }
            after = mv.at;
            let to_paths = flow_paths(
                net,
                from,
                to,
                Some(&mv.route),
                &at_move,
                child(&at_move, "route"),
                true,
            )?;
            moves.push((Time::ZERO + mv.at, to_paths));
        }
        out.push(Planned {
            spec: sf,
            paths,
            moves,
        });
    }
    Ok(Some(out))
}

/// The subflows of a flow with `k_paths = k`: one on each of the k least-cost loopless paths
/// (Yen), ACKs on the reverse node lists.
fn k_paths_plan(
    net: &Net,
    f: &TcpFlowSpec,
    from: NodeIx,
    to: NodeIx,
    here: &[PathSeg],
) -> Result<Plan, SpecError> {
    let field = |name: &str| child(here, name);
    let k = f.k_paths.unwrap_or(1);
    if f.route.is_some() {
        return Err(SpecError::at(
            field("route"),
            "k_paths chooses the routes; give one or the other",
        ));
    }
    if k == 0 || k > MAX_SUBFLOWS {
        return Err(SpecError::at(
            field("k_paths"),
            format!("must be between 1 and {MAX_SUBFLOWS}"),
        ));
    }
    let paths = net.k_shortest(from, to, k as usize);
    if paths.len() < k as usize {
        return Err(SpecError::at(
            field("k_paths"),
            format!(
                "asked for {k} paths from {:?} to {:?}, the network has {} loopless one(s)",
                net.names[from.0 as usize],
                net.names[to.0 as usize],
                paths.len()
            ),
        ));
    }
    paths
        .into_iter()
        .map(|data| {
            let mut rev = vec![to];
            rev.extend(data.iter().rev().map(|&e| net.graph.ends(e).0));
            let back = net.along(
                &rev,
                &field("k_paths"),
                " for the ACKs of a k-shortest path (make the link duplex)",
            )?;
            Ok(Planned::fixed(
                SubflowSpec::default(),
                FlowPaths {
                    data,
                    back: Some(back),
                },
            ))
        })
        .collect()
}

/// The subflows of a flow with a `tm` table: the topology manager's paths from `from` to
/// `to`, each with its reverse for the ACKs, in the coupling groups it assigns (thesis §5).
fn tm_plan(
    net: &Net,
    f: &TcpFlowSpec,
    from: NodeIx,
    to: NodeIx,
    here: &[PathSeg],
) -> Result<Plan, SpecError> {
    let field = |name: &str| child(here, name);
    let Some(tm) = &f.tm else {
        return Ok(Vec::new());
    };
    let tm_field = |name: &str| child(&field("tm"), name);
    if f.route.is_some() {
        return Err(SpecError::at(
            field("route"),
            "the topology manager chooses the routes (tm); give one or the other",
        ));
    }
    let (manager, k) = topology_manager(net, tm, &field("tm"))?;
    let internal = |e: pathpool_psi::TmError| SpecError::at(field("tm"), e.to_string());
    let set = manager.paths(&[from], to).map_err(|e| match e {
        pathpool_psi::TmError::NoPath { .. } => SpecError::at(
            field("tm"),
            format!(
                "the topology manager found no path from {:?} to {:?} with a reverse for the ACKs (make the links duplex)",
                net.names[from.0 as usize], net.names[to.0 as usize]
            ),
        ),
        e => internal(e),
    })?;
    if set.paths.len() < k {
        return Err(SpecError::at(
            tm_field("k"),
            format!(
                "asked for {k} paths from {:?} to {:?}; the {} policy finds {}",
                net.names[from.0 as usize],
                net.names[to.0 as usize],
                match tm.policy {
                    TmPolicy::KShortest => "k-shortest",
                    TmPolicy::DisjointOnly => "disjoint-only",
                    TmPolicy::KDisjoint => "k-disjoint",
                },
                set.paths.len()
            ),
        ));
    }
    Ok(set
        .paths
        .into_iter()
        .map(|p| {
            Planned::fixed(
                SubflowSpec {
                    group: p.group_id,
                    ..SubflowSpec::default()
                },
                FlowPaths {
                    data: p.forward,
                    back: Some(p.reverse),
                },
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{compile, diamond, error};

    fn flow(extra: &str) -> String {
        diamond(&format!(
            "[[flows]]\nfrom = \"a\"\nto = \"b\"\ncc = \"lia\"\n{extra}"
        ))
    }

    /// Each subflow's nodes and group.
    fn subflows(text: &str) -> Vec<(String, u32)> {
        compile(text).flows[0]
            .subflows
            .iter()
            .map(|s| (s.path.join(" "), s.group))
            .collect()
    }

    #[test]
    fn listed_paths_and_subflows_become_subflows_in_order() {
        let two = subflows(&flow(
            "paths = [[\"a\", \"r2\", \"b\"], [\"a\", \"r1\", \"b\"]]",
        ));
        assert_eq!(two, [("a r2 b".into(), 0), ("a r1 b".into(), 0)]);
        let text = flow(
            "[[flows.subflows]]\nroute = [\"a\", \"r1\", \"b\"]\n[[flows.subflows]]\ngroup = 1\nstart = \"2s\"\nstop = \"4s\"",
        );
        assert_eq!(
            subflows(&text),
            [("a r1 b".into(), 0), ("a r1 b".into(), 1)],
            "a subflow without a route takes the shortest path"
        );
        let sim = compile(&text);
        let sf = &sim.flows[0].subflows[1];
        assert_eq!(
            (sf.start, sf.stop),
            (
                pathpool_core::Time::from_secs(2),
                Some(pathpool_core::Time::from_secs(4))
            )
        );
        // The flow's path is its first subflow's.
        assert_eq!(sim.flows[0].path, ["a", "r1", "b"]);
    }

    #[test]
    fn k_paths_and_tm_choose_the_routes() {
        let k2 = subflows(&flow("k_paths = 2"));
        assert_eq!(k2, [("a r1 b".into(), 0), ("a r2 b".into(), 0)]);
        let tm = subflows(&flow("tm = { k = 2 }"));
        assert_eq!(tm.len(), 2);
        let mut nodes: Vec<&str> = tm.iter().map(|(p, _)| p.as_str()).collect();
        nodes.sort_unstable();
        assert_eq!(nodes, ["a r1 b", "a r2 b"]);
        let e = error(&flow("k_paths = 3"));
        assert_eq!(
            e,
            "flows[0].k_paths: asked for 3 paths from \"a\" to \"b\", the network has 2 loopless one(s)"
        );
        let e = error(&flow("tm = { k = 3 }"));
        assert_eq!(
            e,
            "flows[0].tm.k: asked for 3 paths from \"a\" to \"b\"; the k-shortest policy finds 2"
        );
        let e = error(&flow("k_paths = 0"));
        assert_eq!(e, "flows[0].k_paths: must be between 1 and 2048");
    }

    #[test]
    fn one_way_of_choosing_subflows_at_a_time() {
        let cases = [
            (
                "paths = [[\"a\", \"r1\", \"b\"]]\nsubflows = []",
                "flows[0].subflows: give either paths or subflows, not both",
            ),
            (
                "k_paths = 2\ntm = { k = 2 }",
                "flows[0].tm: give either k_paths or tm, not both",
            ),
            (
                "paths = [[\"a\", \"r1\", \"b\"]]\nk_paths = 2",
                "flows[0].k_paths: give either k_paths or paths, not both",
            ),
            (
                "subflows = [{}]\ntm = { k = 2 }",
                "flows[0].tm: give either tm or subflows, not both",
            ),
            (
                "paths = [[\"a\", \"r1\", \"b\"]]\nroute = [\"a\", \"r1\", \"b\"]",
                "flows[0].route: a multipath flow gives each subflow's route in paths, not route",
            ),
            (
                "k_paths = 2\nroute = [\"a\", \"r1\", \"b\"]",
                "flows[0].route: k_paths chooses the routes; give one or the other",
            ),
            (
                "tm = { k = 2 }\nroute = [\"a\", \"r1\", \"b\"]",
                "flows[0].route: the topology manager chooses the routes (tm); give one or the other",
            ),
            ("paths = []", "flows[0].paths: give at least one subflow"),
            (
                "paths = [[\"a\", \"r1\", \"r2\"]]",
                "flows[0].paths[0]: a route must start at `from` and end at `to`",
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(error(&flow(extra)), want, "{extra}");
        }
    }

    #[test]
    fn subflow_times_are_within_the_flows_life() {
        let e = error(&flow("start = \"2s\"\nsubflows = [{ start = \"1s\" }]"));
        assert!(
            e.starts_with(
                "flows[0].subflows[0].start: must be within the flow's life: from its start (2s)"
            ),
            "{e}"
        );
        let e = error(&flow("subflows = [{ start = \"1s\", stop = \"1s\" }]"));
        assert_eq!(e, "flows[0].subflows[0].stop: must be after start");
    }

    #[test]
    fn multipath_options_on_a_single_path_flow_are_refused() {
        let single =
            |extra: &str| diamond(&format!("[[flows]]\nfrom = \"a\"\nto = \"b\"\n{extra}"));
        let e = error(&single("scheduler = \"round-robin\""));
        assert!(
            e.starts_with("flows[0].scheduler: a scheduler is for multipath flows"),
            "{e}"
        );
        let e = error(&single("receive_buffer = \"100KB\""));
        assert!(
            e.starts_with("flows[0].receive_buffer: the connection-level receive buffer is for multipath flows"),
            "{e}"
        );
    }
}
