//! INRPP (issue 21): the scenario's `[inrpp]` makes every router an INRPP router
//! ([`add_routers`]); a TCP flow with `cc = "inrpp"` is an INRPP host's flow
//! ([`add_inrpp_flows`], each flow [`add_inrpp_flow`], which traffic generators share), whose
//! routes cross those routers and, for each router on its path
//! and each detour of the interface the flow leaves on, a detour route.

use std::collections::HashSet;

use pathpool_core::{BufferSize, Dur, QueueSize, Time};
use pathpool_proto::inrpp::router::{InterfaceConfig, Router, RouterConfig};
use pathpool_topo::{EdgeId, NodeIx};

use super::entry::Entry;
use super::net::{FlowPaths, Net};
use super::rate::{add_rate_entry, add_rate_flow, check_size};
use super::tcp::FlowEnds;
use super::tcp_params::TcpParams;
use super::{at, k};
use crate::error::{PathSeg, SpecError};
use crate::inrpp_router::{RouterRole, SimRouter};
use crate::packet::INRPP_MAX_NONCE;
use crate::rate_flow::RateProto;
use crate::sim::Simulation;
use crate::spec::{FlowCc, InrppSpec, Scenario, TcpFlowSpec};

/// The block of nonces each INRPP router takes, one per interface (a router with more
/// interfaces takes as many as it has): routers of at most this many interfaces keep the
/// numbers they had when this was a limit.
const NONCE_BLOCK: u32 = 64;

/// Adds an INRPP router at every router node when the scenario has `[inrpp]`, its
/// parameters checked; fills `net.router`.
pub(super) fn add_routers(
    sim: &mut Simulation,
    net: &mut Net,
    sc: &Scenario,
) -> Result<(), SpecError> {
    net.router = vec![None; net.names.len()];
    let Some(spec) = &sc.inrpp else {
        return Ok(());
    };
    let field = |name: &str| at(&[k("inrpp"), k(name)]);
    let bytes = |b: Option<pathpool_core::ByteSize>, default: u64| b.map_or(default, |b| b.0);
    let cache = bytes(spec.cache, InrppSpec::DEFAULT_CACHE);
    let high = bytes(spec.cache_high, InrppSpec::DEFAULT_CACHE_HIGH);
    let low = bytes(spec.cache_low, InrppSpec::DEFAULT_CACHE_LOW);
    if high > cache {
        return Err(SpecError::at(
            field("cache_high"),
            format!("{high}B is more than inrpp.cache ({cache}B); S_high must fit in the cache"),
        ));
    }
    if low >= high {
        return Err(SpecError::at(
            field("cache_low"),
            format!("{low}B is not below inrpp.cache_high ({high}B); S_low < S_high"),
        ));
    }
    let positive = |name: &str, d: Option<Dur>, default: Dur| {
        let d = d.unwrap_or(default);
        if d == Dur::ZERO {
            Err(SpecError::at(field(name), "must be positive"))
        } else {
            Ok(d)
        }
    };
    let db_duration = positive(
        "db_duration",
        spec.db_duration,
        InrppSpec::DEFAULT_DB_DURATION,
    )?;
    let nonce_timeout = positive(
        "nonce_timeout",
        spec.nonce_timeout,
        InrppSpec::DEFAULT_NONCE_TIMEOUT,
    )?;
    let advert_interval = positive(
        "advert_interval",
        spec.advert_interval,
        InrppSpec::DEFAULT_ADVERT_INTERVAL,
    )?;
    let meter_weight = spec.meter_weight.unwrap_or(InrppSpec::DEFAULT_METER_WEIGHT);
    if !(meter_weight > 0.0 && meter_weight <= 1.0) {
        return Err(SpecError::at(
            field("meter_weight"),
            format!("{meter_weight} is not in (0, 1]"),
        ));
    }
    let config = RouterConfig {
        cache_bytes: cache,
        cache_high_bytes: high,
        cache_low_bytes: low,
        db_duration,
        nonce_timeout,
        meter_weight,
    };
    let q_high = spec.queue_high.unwrap_or(InrppSpec::DEFAULT_QUEUE_HIGH);
    let q_low = spec.queue_low.unwrap_or(InrppSpec::DEFAULT_QUEUE_LOW);
    let is_router = |n: NodeIx| !net.is_host[n.0 as usize];
    let host_interfaces = spec.host_interfaces.unwrap_or(true);
    let mut count = 0u32;
    // The first nonce of the next router's block, less one.
    let mut nonce_base = 0u32;
    for node in (0..net.names.len() as u32).map(NodeIx) {
        if !is_router(node) {
            continue;
        }
        // Without host interfaces, only the links to other routers (D305).
        let edges: Vec<EdgeId> = net
            .graph
            .out_edges(node)
            .iter()
            .copied()
            .filter(|&e| host_interfaces || is_router(net.graph.ends(e).1))
            .collect();
        let block = NONCE_BLOCK.max(edges.len() as u32);
        if u64::from(nonce_base) + u64::from(block) > u64::from(INRPP_MAX_NONCE) {
            return Err(SpecError::at(
                at(&[k("inrpp")]),
                format!(
                    "the INRPP routers have too many interfaces for the packets' 24-bit nonces \
                     (at most {INRPP_MAX_NONCE} in all, counting at least {NONCE_BLOCK} a \
                     router); inrpp.host_interfaces = false leaves the host links out"
                ),
            ));
        }
        let neighbours: Vec<NodeIx> = edges.iter().map(|&e| net.graph.ends(e).1).collect();
        let mut interfaces = Vec::with_capacity(edges.len());
        let mut detour_ifaces = Vec::with_capacity(edges.len());
        for (i, &e) in edges.iter().enumerate() {
            let link = &sim.links[e.0 as usize];
            let rate = net.rate[e.0 as usize];
            let at_rate = |q: QueueSize, name: &str| match q.at_rate(rate) {
                Ok(BufferSize::Bytes(b)) => Ok(b),
                Ok(BufferSize::Packets(p)) => Ok(p * 1500),
                Err(m) => Err(SpecError::at(field(name), format!("link {}: {m}", link.id))),
            };
            let (qh, ql) = (at_rate(q_high, "queue_high")?, at_rate(q_low, "queue_low")?);
            if ql >= qh {
                return Err(SpecError::at(
                    field("queue_low"),
                    format!(
                        "{ql}B is not below inrpp.queue_high ({qh}B) on link {}",
                        link.id
                    ),
                ));
            }
            if let Some(limit) = net.queue_limit[e.0 as usize] {
                if qh > limit {
                    return Err(SpecError::at(
                        field("queue_high"),
                        format!(
                            "{qh}B is more than link {}'s queue holds ({limit}B); L_high must be \
                             reachable",
                            link.id
                        ),
                    ));
                }
            }
            let n = neighbours[i];
            // Table 4: the neighbours d, INRPP routers themselves, that also link to n.
            let detours: Vec<usize> = (0..edges.len())
                .filter(|&j| {
                    let d = neighbours[j];
                    j != i
                        && is_router(d)
                        && net
                            .graph
                            .out_edges(d)
                            .iter()
                            .any(|&de| net.graph.ends(de).1 == n)
                })
                .collect();
            let nonce = nonce_base + i as u32 + 1;
            debug_assert!(nonce <= INRPP_MAX_NONCE);
            interfaces.push(InterfaceConfig {
                capacity_bps: rate.bps() as f64,
                queue_high_bytes: qh,
                queue_low_bytes: ql,
                nonce,
                detours: detours.clone(),
            });
            detour_ifaces.push(detours);
        }
        let elem = sim.elements.add_router(SimRouter {
            node: net.names[node.0 as usize].clone(),
            elem: 0,
            router: Router::new(config, interfaces),
            out_elems: edges.iter().map(|e| net.elem[e.0 as usize]).collect(),
            peers: Vec::new(),
            neighbours: neighbours.iter().map(|n| n.0).collect(),
            neighbour_names: neighbours
                .iter()
                .map(|n| net.names[n.0 as usize].clone())
                .collect(),
            detour_ifaces,
            advert_interval,
            next_advert: Time::ZERO + advert_interval,
            dropped: 0,
            detoured_bytes: 0,
        });
        net.router[node.0 as usize] = Some(count);
        net.router_elem.push(elem);
        net.router_node.push(node.0);
        count += 1;
        nonce_base += block;
    }
    for router in &mut sim.elements.routers {
        router.peers = router
            .neighbours
            .iter()
            .map(|&n| net.router[n as usize])
            .collect();
    }
    Ok(())
}

/// A TCP entry with `cc = "inrpp"`: single-path flows of INRPP hosts, one per copy
/// ([`add_inrpp_flow`]).
pub(super) fn add_inrpp_flows(
    sim: &mut Simulation,
    entry: &Entry<'_>,
    f: &TcpFlowSpec,
    base_tcp: &TcpParams,
    ids: &mut HashSet<String>,
) -> Result<(), SpecError> {
    add_rate_entry(
        sim,
        entry,
        f,
        base_tcp,
        ids,
        "\"inrpp\" is a single-path transport (its routers pool paths)",
        add_inrpp_flow,
    )
}

/// Adds one INRPP host's flow on `paths`: a rate-based source at the rate of its first
/// (access) link and a receiver acknowledging every segment, their routes crossing the INRPP
/// routers, with the detour routes of each router hop. `ends.overhead` is not used (INRPP
/// hosts pace by rate); a size out of range is reported at `size_field`.
pub(super) fn add_inrpp_flow(
    sim: &mut Simulation,
    net: &Net,
    ends: FlowEnds,
    paths: &FlowPaths,
    params: &TcpParams,
    size_field: &[PathSeg],
) -> Result<(), SpecError> {
    check_size(ends.size, FlowCc::Inrpp, size_field)?;
    let back = paths.back.clone().expect("INRPP flows have a reverse path");
    let flow = sim.flows.len() as u64;
    let src_elem = sim.elements.len() as u32;
    let sink_elem = src_elem + 1;
    // The data route, with each router hop's role by its offset.
    let (data, data_roles) = route_with_routers(net, &paths.data, sink_elem, |x, k| {
        let router = net.router[x.0 as usize]?;
        let next = *paths.data.get(k + 1)?;
        let primary = iface_of(sim, router, net.graph.ends(next).1)?;
        Some((router, RouterRole::Data { flow, primary }))
    });
    let (ack, ack_roles) = route_with_routers(net, &back, src_elem, |x, k| {
        let router = net.router[x.0 as usize]?;
        back.get(k + 1)?;
        let came_from = net.graph.ends(back[k]).0;
        let arrival = iface_of(sim, router, came_from)?;
        Some((router, RouterRole::Ack { flow, arrival }))
    });
    let data_start = sim.routes.add(&data);
    for &(o, r, role) in &data_roles {
        sim.router_hops.add_role(data_start + o, r, role);
    }
    let ack_start = sim.routes.add(&ack);
    for &(o, r, role) in &ack_roles {
        sim.router_hops.add_role(ack_start + o, r, role);
    }
    add_detour_routes(sim, net, &data, &data_roles, data_start);
    add_rate_flow(
        sim,
        net,
        ends,
        paths,
        params,
        RateProto::Inrpp,
        (data_start, ack_start),
    );
    Ok(())
}

/// The interface of router `r` towards node `n`.
fn iface_of(sim: &Simulation, r: u32, n: NodeIx) -> Option<usize> {
    sim.elements.routers[r as usize]
        .neighbours
        .iter()
        .position(|&m| m == n.0)
}

/// A route's elements over `edges` to `end`, with a router hop after each link into a node
/// whose router `role(node, k)` gives a role for (k: the link's index); returns the elements
/// and `(offset, router, role)` of each router hop.
fn route_with_routers(
    net: &Net,
    edges: &[EdgeId],
    end: u32,
    mut role: impl FnMut(NodeIx, usize) -> Option<(u32, RouterRole)>,
) -> (Vec<u32>, Vec<(u32, u32, RouterRole)>) {
    let mut hops = Vec::with_capacity(edges.len() * 2 + 1);
    let mut roles = Vec::new();
    for (k, &e) in edges.iter().enumerate() {
        hops.push(net.elem[e.0 as usize]);
        if let Some((r, rl)) = role(net.graph.ends(e).1, k) {
            roles.push((hops.len() as u32, r, rl));
            hops.push(router_elem(net, r));
        }
    }
    hops.push(end);
    (hops, roles)
}

fn router_elem(net: &Net, r: u32) -> u32 {
    net.router_elem[r as usize]
}

/// For every data hop of a route and every detour of its interface: the route `[link x→d,
/// detour node d, link d→n]` followed by the rest of the data route after the link x→n,
/// registered as that hop's detour (D284: a packet on a detour route is not detoured again).
fn add_detour_routes(
    sim: &mut Simulation,
    net: &Net,
    data: &[u32],
    roles: &[(u32, u32, RouterRole)],
    start: u32,
) {
    for &(o, r, role) in roles {
        let RouterRole::Data { primary, .. } = role else {
            continue;
        };
        let router = &sim.elements.routers[r as usize];
        let n = router.neighbours[primary];
        let me = net.router_node[r as usize];
        // The data route after the primary link: offsets o + 2 onwards.
        let suffix = &data[o as usize + 2..];
        let suffix_roles: Vec<(u32, u32, RouterRole)> = roles
            .iter()
            .filter(|&&(q, ..)| q >= o + 2)
            .map(|&(q, rr, rl)| (q - (o + 2) + 3, rr, rl))
            .collect();
        let mut routes = Vec::new();
        for &j in &router.detour_ifaces[primary] {
            let d = router.neighbours[j];
            let Some(dr) = net.router[d as usize] else {
                continue;
            };
            let detour_node = &sim.elements.routers[dr as usize];
            let (Some(from), Some(to)) = (
                detour_node.neighbours.iter().position(|&m| m == me),
                detour_node.neighbours.iter().position(|&m| m == n),
            ) else {
                continue;
            };
            let mut hops = vec![
                router.out_elems[j],
                router_elem(net, dr),
                detour_node.out_elems[to],
            ];
            hops.extend_from_slice(suffix);
            routes.push((j, dr, RouterRole::Detoured { from, to }, hops));
        }
        for (j, dr, drole, hops) in routes {
            let ds = sim.routes.add(&hops);
            sim.router_hops.add_role(ds + 1, dr, drole);
            for &(q, rr, rl) in &suffix_roles {
                sim.router_hops.add_role(ds + q, rr, rl);
            }
            sim.router_hops.add_detour(start + o + 1, j, ds);
        }
    }
}
