//! The domain-scale generator (`[generate.domain]`, thesis §4.4 E7): an AS topology read from
//! a Topology Zoo file, clients and servers placed on it by `pathpool_topo::place`, and one
//! long-lived download from a server to every client, expanded into plain nodes, links and
//! flows before the scenario is compiled.
//!
//! Names: the AS's nodes are routers `r<i>` (`i` = node index in the file, in file order),
//! clients hosts `c<j>`. An mmTP server is its router itself (a router may publish); a TCP
//! server is a host `s<i>` on link `srv<i>` to its router (infinite rate, no delay, so it
//! never queues, decision D52). Links: `core<i>` (intra-AS, duplex), `acc<j>` (client
//! `j`'s primary access link), `acc<j>b` (its second one).
//! Flows: `mp<j>` (multipath client `j`) and `sp<j>` (single-path client `j`).

use pathpool_cc::CcKind;
use pathpool_core::{BufferSize, Dur, Rate, Rng};
use pathpool_psi::{TmAssistance, TmMetric, TmPolicy};
use pathpool_topo::{
    k_shortest_paths, parse_gml, parse_topohub_json, place, NodeIx, PlacementRules, Topology,
};

use crate::error::{PathSeg, SpecError};
use crate::spec::{
    DomainAssistance, DomainSpec, DomainTransport, FlowCommon, FlowSpec, LinkSpec, MmtpFlowSpec,
    QueueSpec, Scenario, SdnSpec, TcpFlowSpec, TmSpec,
};

/// Random stream of the placement (the simulator's other streams are 1–4).
const STREAM_PLACEMENT: u64 = 5;

fn here(field: &str) -> Vec<PathSeg> {
    let mut p = vec![
        PathSeg::Key("generate".into()),
        PathSeg::Key("domain".into()),
    ];
    if !field.is_empty() {
        p.push(PathSeg::Key(field.into()));
    }
    p
}

/// Reads a Topology Zoo GML file or a topohub JSON file, by extension.
///
/// # Errors
/// A message naming the file: unreadable, unknown extension, or a parse error.
pub fn read_topology(path: &str) -> Result<Topology, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path:?}: {e}"))?;
    let lower = path.to_ascii_lowercase();
    let parsed = if lower.ends_with(".gml") {
        parse_gml(&text)
    } else if lower.ends_with(".json") {
        parse_topohub_json(&text)
    } else {
        return Err(format!(
            "{path:?}: expected a Topology Zoo .gml file or a topohub .json file"
        ));
    };
    parsed.map_err(|e| format!("{path:?}: {e}"))
}

/// The scenario with the domain generator expanded: generated nodes, links and flows first,
/// then the scenario's own; `generate` removed.
pub(crate) fn expand(sc: &Scenario, d: &DomainSpec, seed: u64) -> Result<Scenario, SpecError> {
    let topo = read_topology(&d.topology).map_err(|m| SpecError::at(here("topology"), m))?;
    let [f_lo, f_hi] = d.server_fraction.unwrap_or([0.1, 0.2]);
    let [d_lo, d_hi] = d
        .access_delay
        .unwrap_or([Dur::from_ms(5), Dur::from_ms(125)]);
    let rules = PlacementRules {
        clients_per_access_node: d.clients_per_access_node.unwrap_or(2) as usize,
        server_fraction: (f_lo, f_hi),
        access_delay: (d_lo, d_hi),
        dual_homed: d.dual_homed,
        multipath_share: d.multipath_share.unwrap_or(1.0),
    };
    let mut rng = Rng::stream(d.placement_seed.unwrap_or(seed), STREAM_PLACEMENT, 0);
    let placement = place(&topo, &rules, &mut rng).map_err(|e| match e {
        pathpool_topo::PlacementError::BadRule(field, why) => SpecError::at(here(field), why),
        e => SpecError::at(here("topology"), format!("{}: {e}", topo.name())),
    })?;
    let queue = d.queue.clone().unwrap_or_default();
    let access_rate = d.access_rate.unwrap_or(Rate::from_mbps(100));
    let second_rate = d.second_access_rate.unwrap_or(Rate::from_mbps(12));
    let core_rate = d.core_rate.unwrap_or(Rate::from_mbps(100));
    let core_delay = d.core_delay.unwrap_or(Dur::from_ms(5));
    let paths = d.paths.clone().unwrap_or_default();
    let assisted_by = d.assisted_by.unwrap_or_default();
    // An MPLS ingress with one label-switched path per egress is a proxy that only
    // aggregates: a control for what the paths add.
    if d.transport == DomainTransport::Tcp
        && paths.k < 2
        && assisted_by != DomainAssistance::MplsIngress
    {
        return Err(SpecError::at(
            here("paths"),
            "TCP multipath clients need k >= 2 (single-path clients: multipath_share = 0)",
        ));
    }
    check_assistance(d, assisted_by, &paths)?;
    if d.transport == DomainTransport::Tcp && d.size.is_some() {
        return Err(SpecError::at(
            here("size"),
            "TCP connections of a generated domain are long-lived",
        ));
    }

    // A download that cannot finish within the run: twice what both access links could
    // carry in the whole run (an mmTP subscriber keeps state per chunk, so not more).
    let long_lived_bytes = {
        let bps = access_rate.bps().saturating_add(second_rate.bps());
        let bytes = (bps as f64 / 8.0 * sc.duration.as_secs_f64() * 2.0) as u64;
        bytes.max(1_000_000)
    };
    let mut out = sc.clone();
    out.generate = None;
    let duplex =
        |id: String, a: String, b: String, rate: Rate, delay: Dur, q: &QueueSpec| LinkSpec {
            id: Some(id),
            between: Some(vec![a, b]),
            from: None,
            to: None,
            rate,
            delay,
            queue: q.clone(),
            loss: 0.0,
            weight: 1.0,
            failures: Vec::new(),
        };
    let mut routers: Vec<String> = (0..topo.nodes().len()).map(|i| format!("r{i}")).collect();
    let mut hosts: Vec<String> = Vec::new();
    let mut links = Vec::new();
    for (i, l) in topo.links().iter().enumerate() {
        links.push(duplex(
            format!("core{i}"),
            format!("r{}", l.a),
            format!("r{}", l.b),
            core_rate,
            core_delay,
            &queue,
        ));
    }
    // mmTP publishers sit at their AS node (a router may publish); TCP servers are hosts
    // on an infinite-rate wire to it (decision D68).
    let server_name = |i: usize| match d.transport {
        DomainTransport::Mmtp => format!("r{}", placement.servers[i]),
        DomainTransport::Tcp => format!("s{i}"),
    };
    if d.transport == DomainTransport::Tcp {
        for (i, &node) in placement.servers.iter().enumerate() {
            hosts.push(format!("s{i}"));
            links.push(duplex(
                format!("srv{i}"),
                format!("s{i}"),
                format!("r{node}"),
                Rate::INFINITE,
                Dur::ZERO,
                &QueueSpec::default(),
            ));
        }
    }
    let mut flows = Vec::new();
    // MPLS design B: the multipath clients' connections, by ingress (their server) and
    // egress router, each group carried as one connection (D338).
    let mut pep_groups: Vec<((usize, usize), Vec<usize>)> = Vec::new();
    for (j, c) in placement.clients.iter().enumerate() {
        let client = format!("c{j}");
        hosts.push(client.clone());
        links.push(duplex(
            format!("acc{j}"),
            client.clone(),
            format!("r{}", c.access_node),
            access_rate,
            c.access_delay,
            &queue,
        ));
        // A single-path client uses its primary interface only: its second link would carry
        // nothing, and leaving it out makes the one path the topology manager gives run on
        // the primary access link (decision D68).
        if let (true, Some(an), Some(delay)) =
            (c.multipath, c.second_access_node, c.second_access_delay)
        {
            links.push(duplex(
                format!("acc{j}b"),
                client.clone(),
                format!("r{an}"),
                second_rate,
                delay,
                &queue,
            ));
        }
        let server = server_name(c.server);
        if c.multipath && assisted_by == DomainAssistance::MplsIngress {
            let key = (c.server, c.access_node);
            if placement.servers[c.server] != c.access_node {
                match pep_groups.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, members)) => members.push(j),
                    None => pep_groups.push((key, vec![j])),
                }
                continue;
            }
            // The server sits at the client's own router: the connection never crosses the
            // domain, so it stays the end hosts' plain TCP connection.
            flows.push(tcp_flow(
                format!("mp{j}"),
                server,
                client,
                d.single_path_cc.unwrap_or(CcKind::NewReno),
                None,
            ));
            continue;
        }
        let (id, cc, tm) = if c.multipath {
            (
                format!("mp{j}"),
                d.cc.unwrap_or(CcKind::Nmcc),
                Some(paths.clone()),
            )
        } else {
            (
                format!("sp{j}"),
                d.single_path_cc.unwrap_or(CcKind::NewReno),
                None,
            )
        };
        let common = FlowCommon {
            id: Some(id),
            from: server,
            to: client,
            ..FlowCommon::default()
        };
        let f = match d.transport {
            DomainTransport::Mmtp => FlowSpec::Mmtp(MmtpFlowSpec {
                common,
                size: Some(d.size.unwrap_or(BufferSize::Bytes(long_lived_bytes))),
                tm: Some(tm.unwrap_or(TmSpec {
                    k: 1,
                    ..TmSpec::default()
                })),
                cc: Some(cc),
                ..MmtpFlowSpec::default()
            }),
            DomainTransport::Tcp => {
                let mut f = TcpFlowSpec {
                    common,
                    tm,
                    cc: Some(crate::spec::FlowCc::Window(cc)),
                    ..TcpFlowSpec::default()
                };
                if assisted_by == DomainAssistance::Sdn {
                    if let Some(tm) = f.tm.take() {
                        f.k_paths = Some(tm.k);
                        f.sdn = Some(SdnSpec::default());
                    }
                }
                FlowSpec::Tcp(f)
            }
        };
        flows.push(f);
    }
    let graph = topo.to_graph();
    let mut egresses: Vec<usize> = Vec::new();
    for ((server, egress), members) in pep_groups {
        let ingress = placement.servers[server];
        // The administrator's label-switched paths: up to k, as many as the AS has.
        let lsps = k_shortest_paths(
            &graph,
            NodeIx(ingress as u32),
            NodeIx(egress as u32),
            paths.k as usize,
            |_| 1.0,
        )
        .len();
        if lsps == 0 {
            return Err(SpecError::at(
                here("topology"),
                format!(
                    "{}: no path from node {ingress} to node {egress} (the AS is not connected)",
                    topo.name()
                ),
            ));
        }
        if !egresses.contains(&egress) {
            egresses.push(egress);
            hosts.push(format!("e{egress}"));
            links.push(duplex(
                format!("egr{egress}"),
                format!("e{egress}"),
                format!("r{egress}"),
                Rate::INFINITE,
                Dur::ZERO,
                &QueueSpec::default(),
            ));
        }
        let ids: Vec<String> = members.iter().map(usize::to_string).collect();
        flows.push(tcp_flow(
            format!("mp{}", ids.join("+")),
            server_name(server),
            format!("e{egress}"),
            d.cc.unwrap_or(CcKind::Nmcc),
            Some(TmSpec {
                k: lsps as u32,
                ..paths.clone()
            }),
        ));
    }
    routers.append(&mut out.nodes.routers);
    hosts.append(&mut out.nodes.hosts);
    out.nodes.routers = routers;
    out.nodes.hosts = hosts;
    links.append(&mut out.links);
    out.links = links;
    flows.append(&mut out.flows);
    out.flows = flows;
    Ok(out)
}

/// A long-lived TCP connection.
fn tcp_flow(id: String, from: String, to: String, cc: CcKind, tm: Option<TmSpec>) -> FlowSpec {
    FlowSpec::Tcp(TcpFlowSpec {
        common: FlowCommon {
            id: Some(id),
            from,
            to,
            ..FlowCommon::default()
        },
        tm,
        cc: Some(crate::spec::FlowCc::Window(cc)),
        ..TcpFlowSpec::default()
    })
}

/// `assisted_by` with the rest of the table: SDN and MPLS assistance are for TCP
/// connections, and take the k least-cost paths the way the controller or the
/// administrator computes them.
fn check_assistance(
    d: &DomainSpec,
    assisted_by: DomainAssistance,
    paths: &TmSpec,
) -> Result<(), SpecError> {
    let name = match assisted_by {
        DomainAssistance::Tm => return Ok(()),
        DomainAssistance::Sdn => "sdn",
        DomainAssistance::MplsIngress => "mpls-ingress",
    };
    if d.transport != DomainTransport::Tcp {
        return Err(SpecError::at(
            here("assisted_by"),
            format!(
                "assisted_by = {name:?} is for TCP connections (transport = \"tcp\"); mmTP \
                 downloads get their paths and groups from the topology manager"
            ),
        ));
    }
    if paths.policy != TmPolicy::KShortest || paths.metric != TmMetric::Hops {
        return Err(SpecError::at(
            here("paths"),
            format!(
                "with assisted_by = {name:?} the paths are the k least-hop paths: give \
                 policy = \"k-shortest\" and metric = \"hops\" (the defaults)"
            ),
        ));
    }
    if assisted_by == DomainAssistance::Sdn && paths.assistance != TmAssistance::SharedLink {
        return Err(SpecError::at(
            here("paths"),
            "with assisted_by = \"sdn\" the controller groups paths by shared links; leave \
             paths.assistance out (no assistance: assisted_by = \"tm\" with \
             paths.assistance = \"none\")",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::load::LoadedScenario;

    /// A ring of 4 routers with 3 leaves (access nodes 4, 5, 6).
    const GML: &str = "graph [\n node [ id 0 label \"a\" ]\n node [ id 1 label \"b\" ]\n \
        node [ id 2 label \"c\" ]\n node [ id 3 label \"d\" ]\n node [ id 4 label \"x\" ]\n \
        node [ id 5 label \"y\" ]\n node [ id 6 label \"z\" ]\n \
        edge [ source 0 target 1 ]\n edge [ source 1 target 2 ]\n edge [ source 2 target 3 ]\n \
        edge [ source 3 target 0 ]\n edge [ source 4 target 0 ]\n edge [ source 5 target 1 ]\n \
        edge [ source 6 target 2 ]\n]\n";

    /// A scenario of the ring with `extra` under `[generate.domain]`, and a fresh copy of
    /// [`GML`] for it in a directory of its own (tests run in parallel, and one writing the
    /// file while another reads it would hand the reader a truncated file). The directory
    /// goes when the returned guard is dropped: keep it until the scenario is compiled.
    fn scenario(extra: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::Builder::new()
            .prefix("pathpool-domain-")
            .tempdir()
            .unwrap();
        let gml = dir.path().join("ring.gml");
        std::fs::write(&gml, GML).unwrap();
        let text = format!(
            "duration = \"2s\"\n[measure]\ntrace_queues = false\n[generate.domain]\n\
             topology = {:?}\n{extra}",
            gml.display().to_string()
        );
        (dir, text)
    }

    fn expanded(extra: &str, seed: u64) -> crate::spec::Scenario {
        let (_gml, text) = scenario(extra);
        let l = LoadedScenario::from_toml(&text, "t.toml", &[]).unwrap();
        let d = l.scenario.generate.clone().unwrap().domain.unwrap();
        super::expand(&l.scenario, &d, seed).unwrap()
    }

    #[test]
    fn expands_the_placement_rules() {
        let sc = expanded("dual_homed = true\nmultipath_share = 0.5\n", 3);
        // 3 access nodes x 2 clients; 10-20% of 6 rounds to 1 server.
        let clients: Vec<&String> = sc
            .nodes
            .hosts
            .iter()
            .filter(|h| h.starts_with('c'))
            .collect();
        assert_eq!(clients.len(), 6);
        assert_eq!(sc.nodes.hosts.len(), 6, "mmTP servers are routers");
        // One server (10-20% of 6 rounds to 1), at an AS node.
        assert!(sc
            .flows
            .iter()
            .map(crate::spec::FlowSpec::common)
            .all(|f| f.from == sc.flows[0].common().from && f.from.starts_with('r')));
        assert_eq!(sc.nodes.routers.len(), 7);
        assert_eq!(sc.flows.len(), 6);
        let mp: Vec<_> = sc
            .flows
            .iter()
            .filter(|f| f.common().id.as_deref().unwrap().starts_with("mp"))
            .collect();
        assert_eq!(mp.len(), 3);
        // Only multipath clients have a second access link, on another access node.
        for flow in &sc.flows {
            let f = flow.common();
            let j = &f.to[1..];
            let second = sc
                .links
                .iter()
                .find(|l| l.id.as_deref() == Some(&format!("acc{j}b")));
            let first = sc
                .links
                .iter()
                .find(|l| l.id.as_deref() == Some(&format!("acc{j}")))
                .unwrap();
            assert_eq!(first.rate.bps(), 100_000_000);
            let multipath = f.id.as_deref().unwrap().starts_with("mp");
            assert_eq!(second.is_some(), multipath);
            if let Some(s) = second {
                assert_eq!(s.rate.bps(), 12_000_000);
                assert_ne!(
                    s.between.as_ref().unwrap()[1],
                    first.between.as_ref().unwrap()[1]
                );
            }
            assert_eq!(flow.kind(), crate::spec::FlowKind::Mmtp);
        }
        let core: Vec<_> = sc
            .links
            .iter()
            .filter(|l| l.id.as_deref().unwrap().starts_with("core"))
            .collect();
        assert_eq!(core.len(), 7);
        assert!(core
            .iter()
            .all(|l| l.delay == pathpool_core::Dur::from_ms(5)));
        // The same seed gives the same network; the generated scenario compiles and runs.
        assert_eq!(
            sc,
            expanded("dual_homed = true\nmultipath_share = 0.5\n", 3)
        );
        let (_gml, text) = scenario("dual_homed = true\n");
        let l = LoadedScenario::from_toml(&text, "t.toml", &[]).unwrap();
        let mut sim = l.compile(Some(3)).unwrap();
        sim.run();
        let r = sim.results();
        assert_eq!(r.flows.len(), 6);
        assert!(r.flows.iter().all(|f| f.bytes_delivered > 0));
    }

    /// Each multipath flow's subflows: (nodes, group).
    fn subflows(extra: &str, seed: u64) -> Vec<(String, Vec<(String, u32)>)> {
        let (_gml, text) = scenario(extra);
        let l = LoadedScenario::from_toml(&text, "t.toml", &[]).unwrap();
        let sim = l.compile(Some(seed)).unwrap();
        sim.flows
            .iter()
            .filter(|f| f.id.starts_with("mp"))
            .map(|f| {
                let sfs = f
                    .subflows
                    .iter()
                    .map(|s| (s.path.join(" "), s.group))
                    .collect();
                (f.id.clone(), sfs)
            })
            .collect()
    }

    const TCP: &str = "transport = \"tcp\"\ndual_homed = true\nmultipath_share = 0.5\n";

    #[test]
    fn an_sdn_controller_groups_the_paths_the_topology_manager_would() {
        let mut split = 0;
        for seed in 1..=4 {
            let tm = subflows(TCP, seed);
            let sdn = subflows(&format!("{TCP}assisted_by = \"sdn\"\n"), seed);
            assert_eq!(tm.len(), 3);
            // Static paths, every subflow set up at once (within the hold): the same paths in
            // the same groups.
            assert_eq!(sdn, tm, "seed {seed}");
            // Disjoint paths but for the server's wire are two groups (D339).
            split += sdn
                .iter()
                .filter(|(_, s)| s.iter().any(|x| x.1 > 0))
                .count();
        }
        assert!(split > 0);
        let sc = expanded(&format!("{TCP}assisted_by = \"sdn\"\n"), 1);
        for f in &sc.flows {
            let crate::spec::FlowSpec::Tcp(t) = f else {
                panic!("a TCP domain has TCP flows")
            };
            let multipath = t.common.id.as_deref().unwrap().starts_with("mp");
            assert_eq!(t.sdn.is_some(), multipath);
            assert_eq!(t.k_paths, multipath.then_some(2));
            assert!(t.tm.is_none());
        }
    }

    #[test]
    fn an_mpls_ingress_carries_its_connections_to_each_egress_as_one() {
        let extra = format!("{TCP}assisted_by = \"mpls-ingress\"\n");
        let mut aggregated = 0;
        for seed in 1..=6 {
            let tm = expanded(TCP, seed);
            let sc = expanded(&extra, seed);
            // The network is the same, plus an egress proxy host per egress router.
            let egress: Vec<&String> = sc
                .nodes
                .hosts
                .iter()
                .filter(|h| h.starts_with('e'))
                .collect();
            assert_eq!(sc.nodes.hosts.len(), tm.nodes.hosts.len() + egress.len());
            // Every multipath client is carried exactly once; single-path ones are untouched.
            let mut members: Vec<usize> = Vec::new();
            for f in &sc.flows {
                let crate::spec::FlowSpec::Tcp(t) = f else {
                    panic!("TCP flows")
                };
                let id = t.common.id.as_deref().unwrap();
                if let Some(ids) = id.strip_prefix("mp") {
                    let ids: Vec<usize> = ids.split('+').map(|j| j.parse().unwrap()).collect();
                    if t.common.to.starts_with('e') {
                        aggregated += 1;
                        let tm = t.tm.as_ref().unwrap();
                        assert!((1..=2).contains(&tm.k));
                        // All members share the ingress (server) and the egress router.
                        let access = |j: usize| {
                            let l = sc
                                .links
                                .iter()
                                .find(|l| l.id.as_deref() == Some(&format!("acc{j}")));
                            l.unwrap().between.as_ref().unwrap()[1].clone()
                        };
                        let egress_router = format!("r{}", &t.common.to[1..]);
                        assert!(ids.iter().all(|&j| access(j) == egress_router), "{id}");
                    } else {
                        // The server sits at the client's own router: plain TCP.
                        assert_eq!(ids.len(), 1);
                        assert!(t.tm.is_none() && t.common.to == format!("c{}", ids[0]));
                    }
                    members.extend(ids);
                } else {
                    assert_eq!(t.tm, None);
                }
            }
            members.sort_unstable();
            let expected: Vec<usize> = tm
                .flows
                .iter()
                .filter_map(|f| f.common().id.as_deref()?.strip_prefix("mp")?.parse().ok())
                .collect();
            assert_eq!(members, expected, "seed {seed}");
            let (_gml, text) = scenario(&extra);
            let l = LoadedScenario::from_toml(&text, "t.toml", &[]).unwrap();
            l.compile(Some(seed)).unwrap();
        }
        assert!(aggregated > 0);
        // It compiles and runs: every connection carries data.
        let (_gml, text) = scenario(&extra);
        let l = LoadedScenario::from_toml(&text, "t.toml", &[]).unwrap();
        let mut sim = l.compile(Some(2)).unwrap();
        sim.run();
        assert!(sim.results().flows.iter().all(|f| f.bytes_delivered > 0));
    }

    #[test]
    fn assistance_outside_tcp_or_with_other_paths_is_refused() {
        for (extra, want) in [
            (
                "assisted_by = \"sdn\"\n",
                "is for TCP connections (transport = \"tcp\")",
            ),
            (
                "transport = \"tcp\"\nassisted_by = \"mpls-ingress\"\npaths = { policy = \"k-disjoint\" }\n",
                "give policy = \"k-shortest\" and metric = \"hops\"",
            ),
            (
                "transport = \"tcp\"\nassisted_by = \"sdn\"\npaths = { assistance = \"none\" }\n",
                "the controller groups paths by shared links",
            ),
        ] {
            let (_gml, text) = scenario(extra);
            let l = LoadedScenario::from_toml(&text, "t.toml", &[]).unwrap();
            let e = l.compile(Some(1)).unwrap_err();
            assert!(e.path.starts_with("generate.domain."), "{e}");
            assert!(e.message.contains(want), "{e}");
        }
        let (_gml, text) = scenario("assisted_by = \"mpls\"\n");
        let e = LoadedScenario::from_toml(&text, "t.toml", &[]).unwrap_err();
        assert!(e.to_string().contains("assisted_by"), "{e}");
    }

    #[test]
    fn placement_seed_fixes_the_network() {
        let a = expanded("placement_seed = 9\n", 1);
        let b = expanded("placement_seed = 9\n", 2);
        assert_eq!(a, b);
    }

    #[test]
    fn bad_fields_are_named() {
        for (extra, field) in [
            (
                "server_fraction = [0.5, 0.1]\n",
                "generate.domain.server_fraction",
            ),
            ("multipath_share = 2.0\n", "generate.domain.multipath_share"),
            (
                "transport = \"tcp\"\npaths = { k = 1 }\n",
                "generate.domain.paths",
            ),
            // Every connection proxied: none would have carried the size.
            (
                "transport = \"tcp\"\nassisted_by = \"mpls-ingress\"\nsize = \"1MB\"\n",
                "generate.domain.size",
            ),
        ] {
            let (_gml, text) = scenario(extra);
            let l = LoadedScenario::from_toml(&text, "t.toml", &[]).unwrap();
            let e = l.compile(Some(1)).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
        let text = "duration = \"2s\"\n[generate.domain]\ntopology = \"/nonexistent/x.gml\"\n";
        let e = LoadedScenario::from_toml(text, "t.toml", &[])
            .unwrap()
            .compile(Some(1))
            .unwrap_err();
        assert_eq!(e.path, "generate.domain.topology");
        assert!(e.message.contains("cannot read"), "{e}");
        let text = "duration = \"2s\"\n[generate.domain]\ntopology = \"x.gml\"\nclients = 3\n";
        let e = LoadedScenario::from_toml(text, "t.toml", &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("generate.domain.clients: unknown field"),
            "{e}"
        );
    }
}
