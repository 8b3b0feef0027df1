//! NDN (issue 22): with `[ndn]` every node is an NDN node ([`add_ndn_nodes`]): one forwarder,
//! faces numbered 1.. in the order of the node's links in the file, FIBs filled by
//! `ndn.routing`, producers and content stores where `[[ndn.producers]]` and `[[ndn.cs]]`
//! put them; every directed link gets the two-hop route (the link, then the node at its far
//! end) that NDN packets take. Flows of `kind = "ndn"` are consumers ([`add_ndn_flows`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use pathpool_cc::{CcKind, CcOptions, MpccpConfig, WindowConfig};
use pathpool_core::hash::FxHashMap;
use pathpool_core::{BufferSize, Dur, Rng, RttConfig};
use pathpool_ndn::{
    FaceId, Forwarder, ForwarderConfig, Labeling, Name, PafConfig, DEFAULT_LIFETIME,
};
use pathpool_proto::mmtp::{ContentId, Metadata};
use pathpool_proto::ndn::{
    AimdConfig, AimdConsumer, AimdLaw, MmtpNdnConfig, MmtpNdnConsumer, PathSetConfig, PtpConfig,
    PtpConsumer, DEFAULT_MAX_ROUTES,
};
use pathpool_topo::{EdgeId, NodeIx};

use super::entry::Entry;
use super::mmtp::subscriber_config;
use super::net::Net;
use super::tcp_params::{element_tcp_spec, resolve_tcp};
use super::{at, child, ix, k, STREAM_NDN_CONSUMER, STREAM_NDN_NODE};
use crate::error::{PathSeg, SpecError};
use crate::ndn_node::{Logic, NdnConsumer, NdnNet, NdnNode, NdnSizes};
use crate::sim::{FlowMeta, Simulation};
use crate::spec::{FlowKind, NdnFlowSpec, NdnRouting, NdnSpec, NdnTransport, PtpSpec, Scenario};

fn ndn_field(parts: &[&str]) -> Vec<PathSeg> {
    let mut p = vec![k("ndn")];
    p.extend(parts.iter().map(|s| k(s)));
    p
}

fn name_at(text: &str, path: Vec<PathSeg>) -> Result<Name, SpecError> {
    Name::parse(text).map_err(|e| SpecError::at(path, e.to_string()))
}

/// Least-cost distance from every node to the nearest of `targets` over `net`'s links, on
/// paths that do not cross `avoid`.
fn distances_to(net: &Net, targets: &[NodeIx], avoid: Option<NodeIx>) -> Vec<f64> {
    let mut incoming: Vec<Vec<EdgeId>> = vec![Vec::new(); net.names.len()];
    for u in 0..net.names.len() as u32 {
        for &e in net.graph.out_edges(NodeIx(u)) {
            incoming[net.graph.ends(e).1 .0 as usize].push(e);
        }
    }
    let mut dist = vec![f64::INFINITY; net.names.len()];
    let mut heap = BinaryHeap::new();
    for &t in targets {
        dist[t.0 as usize] = 0.0;
        heap.push(Reverse((0u64, t.0)));
    }
    while let Some(Reverse((d_bits, v))) = heap.pop() {
        let d = f64::from_bits(d_bits);
        if d > dist[v as usize] {
            continue;
        }
        // Edges into v: u → v costs cost[e].
        for &e in &incoming[v as usize] {
            let u = net.graph.ends(e).0 .0;
            if Some(NodeIx(u)) == avoid {
                continue;
            }
            let nd = d + net.cost[e.0 as usize];
            if nd < dist[u as usize] {
                dist[u as usize] = nd;
                heap.push(Reverse((nd.to_bits(), u)));
            }
        }
    }
    dist
}

/// Adds an NDN node at every node when the scenario has `[ndn]`, with their FIBs, producers
/// and content stores, and the two-hop route of every directed link.
pub(super) fn add_ndn_nodes(
    sim: &mut Simulation,
    net: &Net,
    sc: &Scenario,
    seed: u64,
) -> Result<(), SpecError> {
    let Some(spec) = &sc.ndn else {
        return Ok(());
    };
    let bytes = |b: Option<pathpool_core::ByteSize>, d: u64, name: &str| {
        let v = b.map_or(d, |b| b.0);
        if v == 0 || v > 60_000 {
            return Err(SpecError::at(
                ndn_field(&[name]),
                "must be between 1B and 60000B",
            ));
        }
        Ok(v as u32)
    };
    let sizes = NdnSizes {
        interest: bytes(
            spec.interest_size,
            NdnSpec::DEFAULT_INTEREST_SIZE,
            "interest_size",
        )?,
        data_header: bytes(
            spec.data_header,
            NdnSpec::DEFAULT_DATA_HEADER,
            "data_header",
        )?,
        payload: bytes(spec.payload, NdnSpec::DEFAULT_PAYLOAD, "payload")?,
    };
    // Faces: each node's links in the order of the file, each with a way back.
    let n_nodes = net.names.len();
    let faces: Vec<Vec<EdgeId>> = (0..n_nodes as u32)
        .map(|n| net.graph.out_edges(NodeIx(n)).to_vec())
        .collect();
    let reverse = |e: EdgeId| {
        let (a, b) = net.graph.ends(e);
        net.graph
            .out_edges(b)
            .iter()
            .copied()
            .find(|&r| net.graph.ends(r).1 == a)
    };
    for e in (0..sim.links.len() as u32).map(EdgeId) {
        if reverse(e).is_none() {
            return Err(SpecError::at(
                ndn_field(&[]),
                format!(
                    "link {} has no link back, and NDN Data return on the Interests' faces: \
                     join its nodes with a duplex link (`between`)",
                    sim.links[e.0 as usize].id
                ),
            ));
        }
    }
    let face_of = |node: NodeIx, e: EdgeId| -> FaceId {
        faces[node.0 as usize]
            .iter()
            .position(|&f| f == e)
            .expect("an out-edge of the node") as FaceId
            + 1
    };
    let fab = spec.fab.clone().unwrap_or_default();
    let fab_capacity = fab.capacity.unwrap_or(NdnSpec::DEFAULT_FAB_CAPACITY);
    let fab_key = fab.key.unwrap_or_default();
    let ptp = spec.ptp.clone().unwrap_or_default();
    let fallback = ptp.fallback.unwrap_or_default();
    let labeling = spec.label.unwrap_or_default();
    let mut cs: Vec<Option<(usize, f64)>> = vec![None; n_nodes];
    for (i, c) in spec.cs.iter().enumerate() {
        let here = |f: &str| at(&[k("ndn"), k("cs"), ix(i), k(f)]);
        let node = net.node(&c.node, here("node"))?;
        if c.capacity == 0 {
            return Err(SpecError::at(
                here("capacity"),
                "must be at least 1 (Data packets)",
            ));
        }
        let admit = c.admit.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&admit) {
            return Err(SpecError::at(
                here("admit"),
                format!("{admit} is not a probability in [0, 1]"),
            ));
        }
        if cs[node.0 as usize].is_some() {
            return Err(SpecError::at(
                here("node"),
                format!("node {:?} has a content store already", c.node),
            ));
        }
        cs[node.0 as usize] = Some((c.capacity as usize, admit));
    }
    let mut ndn = NdnNet::new(sizes);
    for n in 0..n_nodes {
        let node_faces = &faces[n];
        let shaping = if spec.fisp.unwrap_or(false) {
            // FISP: one Interest per Data the reverse link can carry.
            let data = u64::from(sizes.data_header + sizes.payload) * 8;
            std::iter::once(None)
                .chain(node_faces.iter().map(|&e| {
                    let back = reverse(e).expect("checked");
                    let rate = net.rate[back.0 as usize];
                    (!rate.is_infinite() && rate.bps() > 0)
                        .then(|| Dur::from_ps(data * 1_000_000_000_000 / rate.bps()))
                }))
                .collect()
        } else {
            Vec::new()
        };
        let config = ForwarderConfig {
            node: n as u32,
            faces: node_faces.len() as u32,
            fab: (fab_capacity as usize, fab_key),
            cs: cs[n],
            paf: PafConfig::default(),
            shaping,
            labeling,
            fallback,
        };
        let mut fwd = Forwarder::new(config, Rng::stream(seed, STREAM_NDN_NODE, n as u64));
        fwd.set_strategy(Name::root(), spec.strategy.unwrap_or_default());
        for (i, s) in spec.strategies.iter().enumerate() {
            let prefix = name_at(
                &s.prefix,
                at(&[k("ndn"), k("strategies"), ix(i), k("prefix")]),
            )?;
            fwd.set_strategy(prefix, s.strategy);
        }
        let elem = sim.elements.add_ndn_node(n as u32);
        ndn.nodes.push(NdnNode {
            name: net.names[n].clone(),
            elem,
            fwd,
            face_route: vec![0; node_faces.len() + 1],
            face_neighbour: std::iter::once(n as u32)
                .chain(node_faces.iter().map(|&e| net.graph.ends(e).1 .0))
                .collect(),
            produces: Vec::new(),
            consumers: FxHashMap::default(),
            produced: 0,
            route_info_bytes: 0,
        });
    }
    // Producers, and their own faces in their FIBs.
    let mut prefixes: Vec<(Name, Vec<NodeIx>)> = Vec::new();
    for (i, p) in spec.producers.iter().enumerate() {
        let here = |f: &str| at(&[k("ndn"), k("producers"), ix(i), k(f)]);
        let node = net.node(&p.node, here("node"))?;
        let prefix = name_at(&p.prefix, here("prefix"))?;
        let nd = &mut ndn.nodes[node.0 as usize];
        nd.produces.push(prefix.clone());
        nd.fwd.fib_mut().add_next_hop(&prefix, 0, 0);
        match prefixes.iter_mut().find(|(q, _)| *q == prefix) {
            Some((_, nodes)) => nodes.push(node),
            None => prefixes.push((prefix, vec![node])),
        }
    }
    match spec.routing {
        NdnRouting::AllPaths | NdnRouting::Shortest => {
            if !spec.fib.is_empty() {
                return Err(SpecError::at(
                    ndn_field(&["fib"]),
                    "explicit FIB entries need ndn.routing = \"explicit\"",
                ));
            }
            for (prefix, producers) in &prefixes {
                let dist = distances_to(net, producers, None);
                for n in 0..n_nodes {
                    // A producer's node answers what it serves itself (face 0 only).
                    if dist[n] == 0.0 || !dist[n].is_finite() {
                        continue;
                    }
                    // All paths (ndnSIM's): every face whose neighbour reaches a producer
                    // without coming back through this node; shortest: the next hop of a
                    // least-cost path.
                    let reach = match spec.routing {
                        NdnRouting::AllPaths => {
                            distances_to(net, producers, Some(NodeIx(n as u32)))
                        }
                        _ => dist.clone(),
                    };
                    let mut hops: Vec<(f64, FaceId)> = faces[n]
                        .iter()
                        .enumerate()
                        .filter_map(|(f, &e)| {
                            let v = net.graph.ends(e).1 .0 as usize;
                            let total = net.cost[e.0 as usize] + reach[v];
                            let usable = match spec.routing {
                                NdnRouting::AllPaths => reach[v].is_finite(),
                                _ => dist[v] < dist[n],
                            };
                            usable.then_some((total, f as FaceId + 1))
                        })
                        .collect();
                    hops.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                    if spec.routing == NdnRouting::Shortest {
                        hops.truncate(1);
                    }
                    let fib = ndn.nodes[n].fwd.fib_mut();
                    for (rank, &(_, face)) in hops.iter().enumerate() {
                        fib.add_next_hop(prefix, face, rank as u32 + 1);
                    }
                }
            }
        }
        NdnRouting::Explicit => {
            for (i, f) in spec.fib.iter().enumerate() {
                let here = |x: &str| at(&[k("ndn"), k("fib"), ix(i), k(x)]);
                let node = net.node(&f.node, here("node"))?;
                let prefix = name_at(&f.prefix, here("prefix"))?;
                if f.next.is_empty() {
                    return Err(SpecError::at(here("next"), "list at least one neighbour"));
                }
                for (r, nb) in f.next.iter().enumerate() {
                    let path = child(&here("next"), &r.to_string());
                    let v = net.node(nb, path.clone())?;
                    let Some(face) = faces[node.0 as usize]
                        .iter()
                        .position(|&e| net.graph.ends(e).1 == v)
                    else {
                        return Err(SpecError::at(
                            path,
                            format!("{nb:?} is not a neighbour of {:?}", f.node),
                        ));
                    };
                    ndn.nodes[node.0 as usize].fwd.fib_mut().add_next_hop(
                        &prefix,
                        face as FaceId + 1,
                        r as u32 + 1,
                    );
                }
            }
        }
    }
    // The two-hop route of every directed link, in link order.
    let mut first = None;
    for e in (0..sim.links.len() as u32).map(EdgeId) {
        let (a, b) = net.graph.ends(e);
        let start = sim
            .routes
            .add(&[net.elem[e.0 as usize], ndn.nodes[b.0 as usize].elem]);
        first.get_or_insert(start);
        let back = reverse(e).expect("checked");
        ndn.nodes[a.0 as usize].face_route[face_of(a, e) as usize] = start;
        ndn.arrival.push((b.0, face_of(b, back)));
        ndn.departure.push((a.0, face_of(a, e)));
    }
    ndn.first_route = first.unwrap_or(0);
    ndn.producers = prefixes;
    sim.elements.ndn = Some(Box::new(ndn));
    Ok(())
}

/// A REM queue marks NDN Data, and would not drop other traffic early: every flow of a
/// scenario with one must be an NDN consumer.
pub(super) fn check_rem(sc: &Scenario) -> Result<(), SpecError> {
    let Some(i) = sc
        .links
        .iter()
        .position(|l| matches!(l.queue, crate::spec::QueueSpec::Rem(_)))
    else {
        return Ok(());
    };
    let other = sc
        .flows
        .iter()
        .position(|f| !matches!(f, crate::spec::FlowSpec::Ndn(_)));
    if sc.ndn.is_none() || other.is_some() || !sc.traffic.is_empty() {
        return Err(SpecError::at(
            at(&[k("links"), ix(i), k("queue"), k("type")]),
            "a \"rem\" queue marks NDN Data instead of dropping them; it is for scenarios \
             with [ndn] whose flows are all kind = \"ndn\" (use \"red\" otherwise)",
        ));
    }
    Ok(())
}

/// PTP's consumer parameters from `spec`, checked (`path`: where `spec`'s fields are).
fn ptp_config(
    spec: &PtpSpec,
    packets: u64,
    path: &dyn Fn(&str) -> Vec<PathSeg>,
) -> Result<PtpConfig, SpecError> {
    let beta = spec.beta.unwrap_or(0.75);
    if !(beta > 0.0 && beta < 1.0) {
        return Err(SpecError::at(
            path("beta"),
            format!("{beta} is not in (0, 1) (MPCCP's decrease factor; the paper's is 0.75)"),
        ));
    }
    let max_paths = spec.max_paths.unwrap_or(10);
    if max_paths == 0 {
        return Err(SpecError::at(
            path("max_paths"),
            "must be at least 1 (N, the most paths in use; the paper's is 10)",
        ));
    }
    let period = spec.period.unwrap_or(Dur::from_secs(10));
    if period == Dur::ZERO {
        return Err(SpecError::at(path("period"), "must be positive"));
    }
    let rate = spec.probe_rate.unwrap_or(10.0);
    if !(rate.is_finite() && rate > 0.0) {
        return Err(SpecError::at(
            path("probe_rate"),
            format!("{rate} is not a positive number of probes a second"),
        ));
    }
    let rtt_ref = spec.rtt_ref.unwrap_or(Dur::from_ms(100));
    if rtt_ref == Dur::ZERO {
        return Err(SpecError::at(path("rtt_ref"), "must be positive"));
    }
    Ok(PtpConfig {
        packets,
        probe_interval: Dur::from_secs_f64(1.0 / rate),
        paths: PathSetConfig {
            max_paths: max_paths as usize,
            period,
            selection: spec.selection.unwrap_or_default(),
        },
        mpccp: MpccpConfig {
            beta,
            rtt_ref,
            rtt_scale: spec.rtt_scale.unwrap_or_default(),
        },
        loss_detection: spec.loss_detection.unwrap_or_default(),
        ..PtpConfig::default()
    })
}

/// What an mmTP consumer is built from.
struct MmtpSetup {
    config: MmtpNdnConfig,
    cc: CcKind,
    window: WindowConfig,
    options: CcOptions,
}

/// An NDN flow's mmTP parameters, checked: `Some` for `transport = "mmtp"` (the content
/// `size_bytes` in chunks of `chunk_bytes`), `None` for the others, which must not have
/// them.
fn mmtp_setup(
    entry: &Entry<'_>,
    f: &NdnFlowSpec,
    transport: NdnTransport,
    size_bytes: u64,
    chunk_bytes: u32,
    rtt: RttConfig,
) -> Result<Option<MmtpSetup>, SpecError> {
    if transport != NdnTransport::Mmtp {
        for (field, given) in [("cc", f.cc.is_some()), ("mmtp", f.mmtp.is_some())] {
            if given {
                return Err(SpecError::at(
                    entry.field(field),
                    format!(
                        "for transport = \"mmtp\" consumers, not {:?} ones",
                        transport.name()
                    ),
                ));
            }
        }
        return Ok(None);
    }
    let labels = entry.sc.ndn.as_ref().and_then(|n| n.label);
    if labels != Some(Labeling::BranchingPostfix) {
        return Err(SpecError::at(
            entry.field("transport"),
            "mmTP over NDN needs the branching routers' route labels: set ndn.label = \
             \"branching-postfix\" (thesis §6.3)",
        ));
    }
    let tcp = element_tcp_spec(entry.sc, None, Some(f.cc.unwrap_or(CcKind::Nmcc)));
    let params = resolve_tcp(&tcp, &[k("tcp")])?;
    let mm = f.mmtp.clone().unwrap_or_default();
    let subscriber = subscriber_config(&mm, rtt, &entry.field("mmtp"))?;
    let mut window = params.window;
    // WindowConfig counts segments: one chunk is one segment.
    window.initial_window = u64::from(subscriber.initial_window_chunks);
    Ok(Some(MmtpSetup {
        config: MmtpNdnConfig {
            subscriber,
            // The simulator carries no payload: the hash is of nothing, and never checked.
            metadata: Metadata::new(size_bytes, chunk_bytes, [0; 32], "simulated content"),
            max_routes: mm.max_routes.map_or(DEFAULT_MAX_ROUTES, |r| r as usize),
        },
        cc: params.cc,
        window,
        options: params.options,
    }))
}

/// Adds an NDN entry's consumers; PTP's retransmission timers have `rtt`'s bounds (the
/// scenario's `[tcp]`).
pub(super) fn add_ndn_flows(
    sim: &mut Simulation,
    entry: &Entry<'_>,
    f: &NdnFlowSpec,
    rtt: RttConfig,
    ids: &mut HashSet<String>,
) -> Result<(), SpecError> {
    let Some(spec) = &entry.sc.ndn else {
        return Err(SpecError::at(
            entry.field("kind"),
            "an NDN consumer needs an NDN network: add an [ndn] table with its producers",
        ));
    };
    let net = entry.net;
    let to = net.node(&f.common.to, entry.field("to"))?;
    entry.starts_in_time(&f.common)?;
    let Some(content) = &f.content else {
        return Err(SpecError::at(
            entry.field("content"),
            "missing: the name of the content to fetch, e.g. content = \"/c/A\"",
        ));
    };
    let content = name_at(content, entry.field("content"))?;
    let ndn = sim.elements.ndn.as_deref().expect("built with [ndn]");
    let Some((_, producers)) = ndn
        .producers
        .iter()
        .filter(|(p, _)| p.is_prefix_of(&content))
        .max_by_key(|(p, _)| p.len())
    else {
        let served: Vec<String> = ndn.producers.iter().map(|(p, _)| p.to_string()).collect();
        return Err(SpecError::at(
            entry.field("content"),
            format!(
                "no producer serves {content}; ndn.producers serve {}",
                if served.is_empty() {
                    "nothing".to_string()
                } else {
                    served.join(", ")
                }
            ),
        ));
    };
    let from = net.names[producers[0].0 as usize].clone();
    let payload = u64::from(ndn.sizes.payload);
    let packets =
        match f.size {
            None => return Err(SpecError::at(
                entry.field("size"),
                "missing: the content's size, e.g. size = \"2000pkts\" (Data packets) or \"2MB\"",
            )),
            Some(BufferSize::Packets(n)) => n,
            Some(BufferSize::Bytes(b)) => b.div_ceil(payload),
        };
    if packets == 0 || packets > 1 << 32 {
        return Err(SpecError::at(
            entry.field("size"),
            "must be between one Data packet and 2^32 of them",
        ));
    }
    let transport = f.transport.unwrap_or_default();
    if let Some(p) = &f.ptp {
        if transport != NdnTransport::Ptp {
            return Err(SpecError::at(
                entry.field("ptp"),
                format!(
                    "PTP parameters for a transport = {:?} consumer",
                    transport.name()
                ),
            ));
        }
        if p.fallback.is_some() {
            return Err(SpecError::at(
                child(&entry.field("ptp"), "fallback"),
                "the fallback is the routers': set it in [ndn.ptp]",
            ));
        }
    }
    let mmtp = mmtp_setup(entry, f, transport, packets * payload, payload as u32, rtt)?;
    let base = spec.ptp.clone().unwrap_or_default();
    let merged = f.ptp.as_ref().map_or(base.clone(), |p| p.or(&base));
    let field_of = |name: &str| {
        if f.ptp.as_ref().is_some_and(|p| {
            serde_json::to_value(p)
                .ok()
                .and_then(|v| v.get(name).cloned())
                .is_some()
        }) {
            child(&entry.field("ptp"), name)
        } else {
            ndn_field(&["ptp", name])
        }
    };
    let ptp = PtpConfig {
        rtt,
        ..ptp_config(&merged, packets, &field_of)?
    };
    entry.each_copy(sim, &f.common, ids, |sim, copy| {
        let ndn = sim.elements.ndn.as_deref_mut().expect("built with [ndn]");
        let c = ndn.consumers.len() as u32;
        let (logic, lifetime) = match (transport, &mmtp) {
            (NdnTransport::Ptp, _) => (
                Logic::Ptp(Box::new(PtpConsumer::new(ptp, copy.start))),
                DEFAULT_LIFETIME,
            ),
            (NdnTransport::Mmtp, Some(m)) => (
                Logic::Mmtp(Box::new(MmtpNdnConsumer::new(
                    ContentId::from_name(&content.to_string()),
                    m.config.clone(),
                    m.cc.build_with(m.window, m.options),
                ))),
                DEFAULT_LIFETIME,
            ),
            (t, _) => {
                let config = match t {
                    NdnTransport::Raaqm => {
                        AimdConfig::raaqm(packets, spec.raaqm.unwrap_or_default())
                    }
                    NdnTransport::Ric => AimdConfig::new(AimdLaw::Ric, packets),
                    _ => AimdConfig::new(AimdLaw::Icp, packets),
                };
                (
                    Logic::Aimd(Box::new(AimdConsumer::new(config))),
                    config.timeout,
                )
            }
        };
        let elem = sim.elements.add_ndn_consumer(c);
        let ndn = sim.elements.ndn.as_deref_mut().expect("built with [ndn]");
        ndn.consumers.push(NdnConsumer {
            elem,
            node: to.0,
            content: content.clone(),
            logic,
            rng: Rng::stream(entry.seed, STREAM_NDN_CONSUMER, u64::from(c)),
            lifetime,
            start: copy.start,
            payload: payload as u32,
            completed_at: None,
            paths: Vec::new(),
        });
        ndn.nodes[to.0 as usize]
            .consumers
            .entry(content.clone())
            .or_default()
            .push(c);
        sim.flows.push(FlowMeta {
            id: copy.id,
            kind: FlowKind::Ndn,
            from: from.clone(),
            to: f.common.to.clone(),
            cc: Some(transport.name().to_string()),
            loss_recovery: None,
            start: copy.start,
            stop: None,
            size: Some(packets * payload),
            source: elem,
            sink: elem,
            path: vec![from.clone(), f.common.to.clone()],
            subflows: Vec::new(),
            payload_fraction: payload as f64 / f64::from(ndn.sizes.payload + ndn.sizes.data_header),
            data_route: None,
        });
        Ok(())
    })
}
