//! Compiling a [`Scenario`] into a runnable [`Simulation`]: validation, routing, elements.

use std::collections::{HashMap, HashSet};

use pathpool_cc::{CcKind, CcOptions, MultipathController, WindowConfig};
use pathpool_core::{BufferSize, Dur, Rate, Rng, RttConfig, Time};
use pathpool_proto::mmtp::{
    ChunkCache, ContentId, Subscriber, SubscriberConfig, DEFAULT_BACKOFF_LIMIT,
};
use pathpool_proto::mptcp::{MpReceiver, MpSender, ReceiveWindowConfig};
use pathpool_proto::tcp::{TcpReceiver, TcpReceiverConfig, TcpSender, TcpSenderConfig};
use pathpool_psi::TopologyManager;
use pathpool_topo::{k_shortest_paths, shortest_path, EdgeId, Graph, NodeIx};

use crate::cache::{mmtp_hops, SimCache};
use crate::link::{Discipline, Link};
use crate::load::{format_path, PathSeg, SpecError};
use crate::mmtp_flow::{MmtpConn, MmtpPath, Outage};
use crate::mp_flow::{MpConn, SubflowPlan};
use crate::overhead::SendOverhead;
use crate::packet::MAX_SUBFLOWS;
use crate::random_queue::RandomDrop;
use crate::red::{Red, RedParams};
use crate::sampler::Sampler;
use crate::sim::{FlowMeta, LinkMeta, Simulation, SubflowMeta};
use crate::spec::{
    FlowKind, FlowSpec, LinkSpec, PeriodDist, QueueSpec, RouteMetric, Scenario, SizeDist,
    SubflowSpec, TcpSpec, TmPolicy, TmSpec, TrafficSpec, WindowLimit,
};
use crate::tcp_flow::{TcpSink, TcpSource};
use crate::tm_control::{Download, LinkChange, PathKey, TmControl};
use crate::udp_flow::{Periods, UdpSink, UdpSource, UDP_HEADER_BYTES};

/// Random streams, one family per kind of component (see `pathpool_core::rng`).
const STREAM_LINK: u64 = 1;
const STREAM_START: u64 = 2;
const STREAM_TRAFFIC: u64 = 3;
const STREAM_UDP: u64 = 4;
/// `tcp.send_overhead`'s delays (stream 5 is the domain generator's placement).
const STREAM_OVERHEAD: u64 = 6;

/// Largest number of time-series samples a scenario may ask for.
const MAX_SAMPLES: u64 = 10_000_000;
/// Largest number of flows a scenario may generate.
const MAX_FLOWS: u64 = 5_000_000;
/// Largest segment plus header.
const MAX_PACKET_BYTES: u64 = (1 << 20) - 1;

fn k(s: &str) -> PathSeg {
    PathSeg::Key(s.to_string())
}
fn ix(i: usize) -> PathSeg {
    PathSeg::Index(i)
}
fn at(parts: &[PathSeg]) -> Vec<PathSeg> {
    parts.to_vec()
}
/// The path of field `name` inside the element at `parent`.
fn child(parent: &[PathSeg], name: &str) -> Vec<PathSeg> {
    let mut p = parent.to_vec();
    p.push(k(name));
    p
}

/// The two end hosts of a flow or generator, which must differ.
fn end_hosts(
    net: &Net,
    from: &str,
    to: &str,
    here: &[PathSeg],
) -> Result<(NodeIx, NodeIx), SpecError> {
    let a = net.host(from, child(here, "from"))?;
    let b = net.host(to, child(here, "to"))?;
    if a == b {
        return Err(SpecError::at(
            child(here, "to"),
            "a flow needs two different hosts",
        ));
    }
    Ok((a, b))
}

/// The scenario's `[tcp]` with an element's `tcp` table and `cc` shortcut applied.
fn element_tcp_spec(sc: &Scenario, tcp: Option<&TcpSpec>, cc: Option<CcKind>) -> TcpSpec {
    let mut spec = sc.tcp.merged(tcp.unwrap_or(&TcpSpec::default()));
    if cc.is_some() {
        spec.cc = cc;
    }
    spec
}

/// TCP parameters after merging defaults, the scenario's `[tcp]` and a flow's overrides.
#[derive(Clone, Debug)]
struct TcpParams {
    cc: CcKind,
    /// `tcp.send_overhead` (zero: off).
    send_overhead: Dur,
    options: CcOptions,
    header: u64,
    window: WindowConfig,
    sender: TcpSenderConfig,
    receiver: TcpReceiverConfig,
}

fn resolve_tcp(spec: &TcpSpec, path: &[PathSeg]) -> Result<TcpParams, SpecError> {
    let field = |f: &str| child(path, f);
    let mss = spec.mss.map_or(1460, |b| b.bytes());
    let header = spec.header.map_or(40, |b| b.bytes());
    if mss == 0 {
        return Err(SpecError::at(field("mss"), "must be at least 1B"));
    }
    if mss + header > MAX_PACKET_BYTES {
        return Err(SpecError::at(
            field("mss"),
            "mss + header must be below 1MiB (at most 1048575B)",
        ));
    }
    let defaults = WindowConfig::default();
    let window = WindowConfig {
        initial_window: spec.initial_window.unwrap_or(defaults.initial_window),
        initial_ssthresh: spec.initial_ssthresh.or(defaults.initial_ssthresh),
        abc_limit: spec.abc_limit.unwrap_or(defaults.abc_limit),
        loss_window: defaults.loss_window,
        recovery_exit: spec.recovery_exit.unwrap_or(defaults.recovery_exit),
        ca_increase: spec.ca_increase.unwrap_or(defaults.ca_increase),
    };
    if window.initial_window == 0 {
        return Err(SpecError::at(
            field("initial_window"),
            "must be at least 1 segment",
        ));
    }
    if window.initial_ssthresh == Some(0) {
        return Err(SpecError::at(
            field("initial_ssthresh"),
            "must be at least 1 segment (leave it out for an infinite threshold)",
        ));
    }
    if window.abc_limit == 0 {
        return Err(SpecError::at(
            field("abc_limit"),
            "must be at least 1 segment",
        ));
    }
    let rtt_defaults = RttConfig::default();
    let rtt = RttConfig {
        initial_rto: spec.initial_rto.unwrap_or(rtt_defaults.initial_rto),
        min_rto: spec.min_rto.unwrap_or(rtt_defaults.min_rto),
        max_rto: spec.max_rto.unwrap_or(rtt_defaults.max_rto),
        granularity: rtt_defaults.granularity,
        backoff_limit: None,
    };
    if rtt.initial_rto == Dur::ZERO {
        return Err(SpecError::at(field("initial_rto"), "must be positive"));
    }
    if rtt.min_rto > rtt.max_rto {
        return Err(SpecError::at(
            field("min_rto"),
            format!(
                "min_rto {} is larger than max_rto {}",
                rtt.min_rto, rtt.max_rto
            ),
        ));
    }
    let dupack_threshold = spec.dupack_threshold.unwrap_or(3);
    if dupack_threshold == 0 {
        return Err(SpecError::at(
            field("dupack_threshold"),
            "must be at least 1",
        ));
    }
    let rwnd_bytes = match spec.rwnd {
        None | Some(WindowLimit::Unlimited) => u64::MAX,
        Some(WindowLimit::Bytes(b)) if b.bytes() < mss => {
            return Err(SpecError::at(
                field("rwnd"),
                "must hold at least one segment (mss)",
            ));
        }
        Some(WindowLimit::Bytes(b)) => b.bytes(),
    };
    let receiver_defaults = TcpReceiverConfig::default();
    let sack = spec.sack.unwrap_or(false);
    let receiver = TcpReceiverConfig {
        delayed_ack: spec.delayed_ack.unwrap_or(receiver_defaults.delayed_ack),
        delack_timeout: spec
            .delack_timeout
            .unwrap_or(receiver_defaults.delack_timeout),
        sack,
    };
    if receiver.delayed_ack && receiver.delack_timeout == Dur::ZERO {
        return Err(SpecError::at(field("delack_timeout"), "must be positive"));
    }
    if spec.nmcc.is_some_and(|n| n.window_floor == 0) {
        return Err(SpecError::at(
            child(&field("nmcc"), "window_floor"),
            "must be at least 1 segment",
        ));
    }
    Ok(TcpParams {
        cc: spec.cc.unwrap_or_default(),
        send_overhead: spec.send_overhead.unwrap_or(Dur::ZERO),
        options: CcOptions {
            nmcc: spec.nmcc.unwrap_or_default(),
            lia: spec.lia.unwrap_or_default(),
            wvegas: spec.wvegas.unwrap_or_default(),
        },
        header,
        window,
        sender: TcpSenderConfig {
            mss,
            rtt,
            dupack_threshold,
            rwnd_bytes,
            data_bytes: None,
            limited_transmit: spec.limited_transmit.unwrap_or(false),
            partial_ack_timer: spec.partial_ack_timer.unwrap_or_default(),
            flight_estimate: spec.flight_estimate.unwrap_or_default(),
            timer_granularity: spec.timer_granularity.unwrap_or(Dur::ZERO),
            sack,
        },
        receiver,
    })
}

/// The network being built: nodes, directed links and the routing graph.
struct Net {
    names: Vec<String>,
    index: HashMap<String, NodeIx>,
    is_host: Vec<bool>,
    graph: Graph,
    /// Cost of each directed link (graph edge ids equal link indices).
    cost: Vec<f64>,
    /// Rate of each directed link.
    rate: Vec<Rate>,
    /// Propagation delay of each directed link.
    delay: Vec<Dur>,
    /// Element of each directed link.
    elem: Vec<u32>,
    /// Cache element of each node that has one (`caches`).
    cache: Vec<Option<u32>>,
    metric: RouteMetric,
}

impl Net {
    fn node(&self, name: &str, path: Vec<PathSeg>) -> Result<NodeIx, SpecError> {
        self.index.get(name).copied().ok_or_else(|| {
            let all = self.names.iter().map(String::as_str);
            let meant = pathpool_core::text::closest(name, all.clone())
                .map_or(String::new(), |m| format!(" (did you mean {m:?}?)"));
            let mut known: Vec<&str> = all.take(12).collect();
            if self.names.len() > 12 {
                known.push("...");
            }
            SpecError::at(
                path,
                format!(
                    "unknown node {name:?}{meant}; known nodes: {}",
                    known.join(", ")
                ),
            )
        })
    }

    fn host(&self, name: &str, path: Vec<PathSeg>) -> Result<NodeIx, SpecError> {
        let n = self.node(name, path.clone())?;
        if !self.is_host[n.0 as usize] {
            return Err(SpecError::at(
                path,
                format!("{name:?} is a router; flows start and end at hosts (nodes.hosts)"),
            ));
        }
        Ok(n)
    }

    /// The least-cost path; hosts other than the source never forward.
    fn shortest(&self, from: NodeIx, to: NodeIx) -> Option<Vec<EdgeId>> {
        shortest_path(&self.graph, from, to, |e| {
            let (a, _) = self.graph.ends(e);
            if a != from && self.is_host[a.0 as usize] {
                f64::INFINITY
            } else {
                self.cost[e.0 as usize]
            }
        })
    }

    /// Up to `k` least-cost loopless paths (Yen), under the same rules as `shortest`.
    fn k_shortest(&self, from: NodeIx, to: NodeIx, k: usize) -> Vec<Vec<EdgeId>> {
        k_shortest_paths(&self.graph, from, to, k, |e| {
            let (a, _) = self.graph.ends(e);
            if a != from && self.is_host[a.0 as usize] {
                f64::INFINITY
            } else {
                self.cost[e.0 as usize]
            }
        })
    }

    /// Directed links along an explicit node list.
    fn along(
        &self,
        nodes: &[NodeIx],
        path: &[PathSeg],
        purpose: &str,
    ) -> Result<Vec<EdgeId>, SpecError> {
        let mut edges = Vec::new();
        for (i, w) in nodes.windows(2).enumerate() {
            let e = self
                .graph
                .out_edges(w[0])
                .iter()
                .copied()
                .find(|&e| self.graph.ends(e).1 == w[1]);
            match e {
                Some(e) => edges.push(e),
                None => {
                    let mut p = path.to_vec();
                    p.push(ix(i + 1));
                    return Err(SpecError::at(
                        p,
                        format!(
                            "no link from {:?} to {:?}{purpose}",
                            self.names[w[0].0 as usize], self.names[w[1].0 as usize]
                        ),
                    ));
                }
            }
        }
        Ok(edges)
    }

    fn node_names(&self, from: NodeIx, edges: &[EdgeId]) -> Vec<String> {
        let mut v = vec![self.names[from.0 as usize].clone()];
        v.extend(
            edges
                .iter()
                .map(|&e| self.names[self.graph.ends(e).1 .0 as usize].clone()),
        );
        v
    }
}

/// Data and reverse (ACK) paths of a flow as directed link lists.
#[derive(Clone)]
struct FlowPaths {
    data: Vec<EdgeId>,
    back: Option<Vec<EdgeId>>,
}

fn flow_paths(
    net: &Net,
    from: NodeIx,
    to: NodeIx,
    route: Option<&Vec<String>>,
    path: &[PathSeg],
    route_path: Vec<PathSeg>,
    need_back: bool,
) -> Result<FlowPaths, SpecError> {
    let fname = |f: &str| child(path, f);
    if let Some(route) = route {
        let rpath = route_path;
        if route.len() < 2 {
            return Err(SpecError::at(
                rpath,
                "a route lists at least the two end hosts",
            ));
        }
        let mut nodes = Vec::new();
        for (i, name) in route.iter().enumerate() {
            let mut p = rpath.clone();
            p.push(ix(i));
            let n = net.node(name, p.clone())?;
            let interior = i > 0 && i + 1 < route.len();
            if interior && net.is_host[n.0 as usize] {
                return Err(SpecError::at(
                    p,
                    format!("{name:?} is a host; hosts do not forward"),
                ));
            }
            nodes.push(n);
        }
        if nodes[0] != from || nodes[nodes.len() - 1] != to {
            return Err(SpecError::at(
                rpath,
                "a route must start at `from` and end at `to`",
            ));
        }
        let unique: HashSet<_> = nodes.iter().collect();
        if unique.len() != nodes.len() {
            return Err(SpecError::at(rpath, "a route must not visit a node twice"));
        }
        let data = net.along(&nodes, &rpath, "")?;
        let back = if need_back {
            let rev: Vec<NodeIx> = nodes.iter().rev().copied().collect();
            Some(net.along(
                &rev,
                &rpath,
                " for the ACKs of this route (make the link duplex)",
            )?)
        } else {
            None
        };
        return Ok(FlowPaths { data, back });
    }
    let unreachable = |a: NodeIx, b: NodeIx| {
        SpecError::at(
            fname("to"),
            format!(
                "no path from {:?} to {:?} (hosts do not forward; check the links)",
                net.names[a.0 as usize], net.names[b.0 as usize]
            ),
        )
    };
    let data = net
        .shortest(from, to)
        .ok_or_else(|| unreachable(from, to))?;
    let back = if need_back {
        Some(
            net.shortest(to, from)
                .ok_or_else(|| unreachable(to, from))?,
        )
    } else {
        None
    };
    Ok(FlowPaths { data, back })
}

/// Elements left out of a compilation, to look for the problems after one found in them:
/// flows, traffic generators and caches, which no other element refers to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Skip {
    flows: HashSet<usize>,
    traffic: HashSet<usize>,
    caches: HashSet<usize>,
}

impl Skip {
    /// Leaves out the element a problem at `path` is in; `false` if it is not such an element
    /// (or already left out), so that nothing more can be learnt by compiling again.
    pub(crate) fn add(&mut self, path: &[PathSeg]) -> bool {
        let (Some(PathSeg::Key(list)), Some(&PathSeg::Index(i))) = (path.first(), path.get(1))
        else {
            return false;
        };
        match list.as_str() {
            "flows" => self.flows.insert(i),
            "traffic" => self.traffic.insert(i),
            "caches" => self.caches.insert(i),
            _ => false,
        }
    }
}

/// Compiles a scenario for one seed without the elements of `skip`.
pub(crate) fn compile_skipping(
    sc: &Scenario,
    seed: u64,
    skip: &Skip,
) -> Result<Simulation, SpecError> {
    if let Some(d) = sc.generate.as_ref().and_then(|g| g.domain.as_ref()) {
        let expanded = crate::domain::expand(sc, d, seed)?;
        return compile_skipping(&expanded, seed, skip);
    }
    if sc.duration == Dur::ZERO {
        return Err(SpecError::at(at(&[k("duration")]), "must be positive"));
    }
    let end = Time::ZERO + sc.duration;
    let m = &sc.measure;
    let t0 = Time::ZERO + m.start.unwrap_or(Dur::ZERO);
    let t1 = Time::ZERO + m.end.unwrap_or(sc.duration);
    if t1 > end {
        return Err(SpecError::at(
            at(&[k("measure"), k("end")]),
            format!(
                "{} is after the end of the run ({})",
                t1 - Time::ZERO,
                sc.duration
            ),
        ));
    }
    if t0 >= t1 {
        return Err(SpecError::at(
            at(&[k("measure"), k("start")]),
            "must be before measure.end",
        ));
    }
    if m.interval == Dur::ZERO {
        return Err(SpecError::at(
            at(&[k("measure"), k("interval")]),
            "must be positive",
        ));
    }
    if sc.duration.as_ps() / m.interval.as_ps() > MAX_SAMPLES {
        return Err(SpecError::at(
            at(&[k("measure"), k("interval")]),
            format!(
                "{} would take more than {MAX_SAMPLES} samples; use a longer interval",
                m.interval
            ),
        ));
    }

    let sampler = Sampler::new(m.interval, end, (t0, t1), m.trace_cwnd, m.trace_queues);
    let mut sim = Simulation::new(end, seed, sampler);
    sim.name = sc.name.clone();

    let mut net = build_nodes(sc)?;
    let mut changes = Vec::new();
    for (i, l) in sc.links.iter().enumerate() {
        let first = sim.links.len() as u32;
        add_link(&mut sim, &mut net, l, i, seed)?;
        let edges: Vec<EdgeId> = (first..sim.links.len() as u32).map(EdgeId).collect();
        link_failures(l, i, &edges, sc.duration, &mut changes)?;
    }
    if net.names.is_empty() {
        return Err(SpecError::at(at(&[k("nodes")]), "the network has no nodes"));
    }
    add_caches(&mut sim, &mut net, sc, skip)?;
    if sc.routing.tm_reaction.is_some() && changes.is_empty() {
        return Err(SpecError::at(
            at(&[k("routing"), k("tm_reaction")]),
            "only for scenarios with link failures (links[].failures)",
        ));
    }
    if !changes.is_empty() {
        // Stable: simultaneous changes keep the scenario's link order.
        changes.sort_by_key(|c: &LinkChange| c.at);
        sim.tm = Some(TmControl::new(
            changes,
            sc.routing.tm_reaction.unwrap_or(DEFAULT_TM_REACTION),
            net.elem.clone(),
            net.cache.clone(),
            net.names.clone(),
        ));
    }

    let base_tcp = resolve_tcp(&sc.tcp, &[k("tcp")])?;
    let mut ids = HashSet::new();
    let mut contents = HashMap::new();
    for (j, f) in sc.flows.iter().enumerate() {
        if skip.flows.contains(&j) {
            continue;
        }
        let names = Names {
            ids: &mut ids,
            contents: &mut contents,
        };
        add_flows(&mut sim, &net, sc, f, j, &base_tcp, names, seed)?;
    }
    for (g, t) in sc.traffic.iter().enumerate() {
        if skip.traffic.contains(&g) {
            continue;
        }
        add_traffic(&mut sim, &net, sc, t, g, &mut ids, seed)?;
    }

    sim.sampler_elem = sim.elements.add_sampler();
    // After every other element, so that scenarios without failures keep their indices
    // (which order simultaneous events).
    if sim.tm.is_some() {
        sim.elements.add_tm();
    }
    let flows = sim.flows.clone();
    sim.sampler.init(&flows, sim.links.len());
    sim.prime();
    Ok(sim)
}

/// The names given so far: flow ids, and each mmTP content's size and chunk size with where
/// it was first given.
struct Names<'a> {
    ids: &'a mut HashSet<String>,
    contents: &'a mut HashMap<String, (u64, u32, Vec<PathSeg>)>,
}

/// The routers' chunk caches (`caches`), as elements between the links and the flows (so a
/// scenario without caches keeps its element indices, which order simultaneous events).
fn add_caches(
    sim: &mut Simulation,
    net: &mut Net,
    sc: &Scenario,
    skip: &Skip,
) -> Result<(), SpecError> {
    net.cache = vec![None; net.names.len()];
    for (i, c) in sc.caches.iter().enumerate() {
        if skip.caches.contains(&i) {
            continue;
        }
        let here = at(&[k("caches"), ix(i)]);
        let n = net.node(&c.node, child(&here, "node"))?;
        if net.is_host[n.0 as usize] {
            return Err(SpecError::at(
                child(&here, "node"),
                format!(
                    "{:?} is a host; caches sit at routers, which forward the packets they see",
                    c.node
                ),
            ));
        }
        if net.cache[n.0 as usize].is_some() {
            return Err(SpecError::at(
                child(&here, "node"),
                format!("{:?} has a cache already", c.node),
            ));
        }
        if c.capacity.0 == 0 {
            return Err(SpecError::at(
                child(&here, "capacity"),
                "must be positive, e.g. \"10MB\"",
            ));
        }
        net.cache[n.0 as usize] = Some(sim.elements.add_cache(SimCache {
            node: c.node.clone(),
            cache: ChunkCache::new(c.capacity.0),
        }));
    }
    Ok(())
}

/// When the topology manager hears of a link failure or repair, unless `routing.tm_reaction`
/// says otherwise (D107).
const DEFAULT_TM_REACTION: Dur = Dur::from_ms(100);

/// Checks link `i`'s `failures` and adds each failure and repair of its `edges` to `changes`.
fn link_failures(
    l: &LinkSpec,
    i: usize,
    edges: &[EdgeId],
    duration: Dur,
    changes: &mut Vec<LinkChange>,
) -> Result<(), SpecError> {
    let mut prev_until: Option<Option<Dur>> = None;
    for (j, f) in l.failures.iter().enumerate() {
        let here = at(&[k("links"), ix(i), k("failures"), ix(j)]);
        if f.at >= duration {
            return Err(SpecError::at(
                child(&here, "at"),
                format!("{} is not before the end of the run ({duration})", f.at),
            ));
        }
        match prev_until {
            Some(None) => {
                return Err(SpecError::at(
                    here,
                    "the previous failure is never repaired (give it an until)",
                ))
            }
            Some(Some(u)) if f.at < u => {
                return Err(SpecError::at(
                    child(&here, "at"),
                    format!("{} is before the previous failure's repair ({u}): list failures in time order, without overlap", f.at),
                ))
            }
            _ => {}
        }
        if f.until.is_some_and(|u| u <= f.at) {
            return Err(SpecError::at(child(&here, "until"), "must be after at"));
        }
        changes.push(LinkChange {
            at: Time::ZERO + f.at,
            edges: edges.to_vec(),
            up: false,
        });
        if let Some(u) = f.until.filter(|&u| u < duration) {
            changes.push(LinkChange {
                at: Time::ZERO + u,
                edges: edges.to_vec(),
                up: true,
            });
        }
        prev_until = Some(f.until);
    }
    Ok(())
}

fn build_nodes(sc: &Scenario) -> Result<Net, SpecError> {
    let mut net = Net {
        names: Vec::new(),
        index: HashMap::new(),
        is_host: Vec::new(),
        graph: Graph::default(),
        cost: Vec::new(),
        rate: Vec::new(),
        delay: Vec::new(),
        elem: Vec::new(),
        cache: Vec::new(),
        metric: sc.routing.metric,
    };
    for (kind, list, host) in [
        ("hosts", &sc.nodes.hosts, true),
        ("routers", &sc.nodes.routers, false),
    ] {
        for (i, name) in list.iter().enumerate() {
            let p = at(&[k("nodes"), k(kind), ix(i)]);
            if name.trim().is_empty() {
                return Err(SpecError::at(p, "node names must not be empty"));
            }
            if net.index.contains_key(name) {
                return Err(SpecError::at(p, format!("node {name:?} is declared twice")));
            }
            net.index
                .insert(name.clone(), NodeIx(net.names.len() as u32));
            net.names.push(name.clone());
            net.is_host.push(host);
        }
    }
    net.graph = Graph::with_nodes(net.names.len());
    Ok(net)
}

fn queue_discipline(
    q: &QueueSpec,
    rate: Rate,
    path: &[PathSeg],
) -> Result<(Discipline, String), SpecError> {
    let field = |f: &str| child(path, f);
    match q {
        QueueSpec::Droptail { size } => match *size {
            BufferSize::Packets(0) | BufferSize::Bytes(0) => Err(SpecError::at(
                field("size"),
                "a queue must hold at least one packet",
            )),
            BufferSize::Packets(n) => {
                Ok((Discipline::DropTailPackets(n), format!("droptail {size}")))
            }
            BufferSize::Bytes(n) => Ok((Discipline::DropTailBytes(n), format!("droptail {size}"))),
        },
        QueueSpec::Red {
            size,
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
            mean_packet,
        } => {
            let unit = |b: &BufferSize| matches!(b, BufferSize::Bytes(_));
            if unit(size) != unit(min_th) || unit(size) != unit(max_th) {
                return Err(SpecError::at(
                    field("min_th"),
                    "size, min_th and max_th must all be in packets or all in bytes",
                ));
            }
            let num = |b: &BufferSize| match *b {
                BufferSize::Packets(n) | BufferSize::Bytes(n) => n,
            };
            let (limit, lo, hi) = (num(size), num(min_th), num(max_th));
            if limit == 0 {
                return Err(SpecError::at(
                    field("size"),
                    "a queue must hold at least one packet",
                ));
            }
            if lo >= hi {
                return Err(SpecError::at(
                    field("min_th"),
                    format!("min_th {min_th} must be below max_th {max_th}"),
                ));
            }
            if !(*max_p > 0.0 && *max_p <= 1.0) {
                return Err(SpecError::at(
                    field("max_p"),
                    format!("{max_p} is not in (0, 1]"),
                ));
            }
            if !(*weight > 0.0 && *weight <= 1.0) {
                return Err(SpecError::at(
                    field("weight"),
                    format!("{weight} is not in (0, 1]"),
                ));
            }
            if mean_packet.bytes() == 0 {
                return Err(SpecError::at(field("mean_packet"), "must be positive"));
            }
            let byte_mode = unit(size);
            let params = RedParams {
                byte_mode,
                min_th: lo as f64,
                max_th: hi as f64,
                max_p: *max_p,
                weight: *weight,
                gentle: *gentle,
                mean_packet_bytes: mean_packet.bytes() as f64,
                mean_tx_time: rate.tx_time(mean_packet.bytes()),
            };
            let desc = format!(
                "red {size} th=[{min_th},{max_th}] max_p={max_p} w={weight}{}",
                if *gentle { " gentle" } else { "" }
            );
            Ok((
                Discipline::Red {
                    red: Box::new(Red::new(params)),
                    limit,
                    byte_mode,
                },
                desc,
            ))
        }
        QueueSpec::Random { size, band, p } => {
            let (limit, byte_mode) = match *size {
                BufferSize::Packets(n) => (n, false),
                BufferSize::Bytes(n) => (n, true),
            };
            if limit == 0 {
                return Err(SpecError::at(
                    field("size"),
                    "a queue must hold at least one packet",
                ));
            }
            // htsim's RANDOM_BUFFER: three packets of 1500 bytes.
            let band = band.unwrap_or(if byte_mode {
                BufferSize::Bytes(4500)
            } else {
                BufferSize::Packets(3)
            });
            let width = match (band, byte_mode) {
                (BufferSize::Packets(n), false) | (BufferSize::Bytes(n), true) => n,
                _ => {
                    return Err(SpecError::at(
                        field("band"),
                        format!("band {band} must be in the unit of size {size}"),
                    ))
                }
            };
            if width > limit {
                return Err(SpecError::at(
                    field("band"),
                    format!("band {band} is larger than the queue ({size})"),
                ));
            }
            if !(*p >= 0.0 && *p <= 1.0) {
                return Err(SpecError::at(field("p"), format!("{p} is not in [0, 1]")));
            }
            Ok((
                Discipline::Random(RandomDrop {
                    byte_mode,
                    limit,
                    threshold: limit - width,
                    p: *p,
                }),
                format!("random {size} band={band} p={p}"),
            ))
        }
    }
}

fn add_link(
    sim: &mut Simulation,
    net: &mut Net,
    l: &LinkSpec,
    i: usize,
    seed: u64,
) -> Result<(), SpecError> {
    let here = at(&[k("links"), ix(i)]);
    let field = |f: &str| child(&here, f);
    let (a, b, duplex) = match (&l.between, &l.from, &l.to) {
        (Some(v), None, None) => {
            if v.len() != 2 {
                return Err(SpecError::at(field("between"), "a duplex link joins exactly two nodes: between = [\"a\", \"b\"]"));
            }
            let mut pa = field("between");
            pa.push(ix(0));
            let mut pb = field("between");
            pb.push(ix(1));
            (net.node(&v[0], pa)?, net.node(&v[1], pb)?, true)
        }
        (None, Some(f), Some(t)) => (net.node(f, field("from"))?, net.node(t, field("to"))?, false),
        _ => {
            return Err(SpecError::at(
                here.clone(),
                "give either between = [\"a\", \"b\"] (duplex) or from = \"a\" and to = \"b\" (one-way)",
            ))
        }
    };
    if a == b {
        return Err(SpecError::at(
            here.clone(),
            "a link must join two different nodes",
        ));
    }
    if l.rate.bps() == 0 {
        return Err(SpecError::at(
            field("rate"),
            "must be positive (use \"inf\" for no serialisation delay)",
        ));
    }
    if !(l.loss >= 0.0 && l.loss < 1.0) {
        return Err(SpecError::at(
            field("loss"),
            format!("{} is not a probability in [0, 1)", l.loss),
        ));
    }
    if !(l.weight > 0.0 && l.weight.is_finite()) {
        return Err(SpecError::at(field("weight"), "must be a positive number"));
    }
    let (an, bn) = (
        net.names[a.0 as usize].clone(),
        net.names[b.0 as usize].clone(),
    );
    let name = l.id.clone().unwrap_or_else(|| format!("{an}-{bn}"));
    if sim.links.iter().any(|m| m.name == name) {
        return Err(SpecError::at(
            field("id"),
            format!("link id {name:?} is used twice"),
        ));
    }
    let mut qpath = here.clone();
    qpath.push(k("queue"));
    let dirs = if duplex {
        vec![(a, b), (b, a)]
    } else {
        vec![(a, b)]
    };
    for (from, to) in dirs {
        let (discipline, queue) = queue_discipline(&l.queue, l.rate, &qpath)?;
        let index = sim.links.len() as u64;
        let rng = Rng::stream(seed, STREAM_LINK, index);
        let elem = sim
            .elements
            .add_link(Link::new(l.rate, l.delay, discipline, l.loss, rng));
        let (fname, tname) = (
            net.names[from.0 as usize].clone(),
            net.names[to.0 as usize].clone(),
        );
        sim.links.push(LinkMeta {
            id: format!("{name}:{fname}->{tname}"),
            name: name.clone(),
            from: fname,
            to: tname,
            delay_s: l.delay.as_secs_f64(),
            queue,
            elem,
        });
        net.graph.add_edge(from, to);
        net.cost.push(match net.metric {
            RouteMetric::Hops => 1.0,
            RouteMetric::Weight => l.weight,
            // A tiny per-hop term so equal-delay paths prefer fewer hops.
            RouteMetric::Delay => l.delay.as_secs_f64() + 1e-12,
        });
        net.rate.push(l.rate);
        net.delay.push(l.delay);
        net.elem.push(elem);
    }
    Ok(())
}

fn unique_id(
    ids: &mut HashSet<String>,
    id: String,
    path: Vec<PathSeg>,
) -> Result<String, SpecError> {
    if !ids.insert(id.clone()) {
        return Err(SpecError::at(path, format!("flow id {id:?} is used twice")));
    }
    Ok(id)
}

#[allow(clippy::too_many_arguments)]
fn add_flows(
    sim: &mut Simulation,
    net: &Net,
    sc: &Scenario,
    f: &FlowSpec,
    j: usize,
    base_tcp: &TcpParams,
    names: Names<'_>,
    seed: u64,
) -> Result<(), SpecError> {
    let here = at(&[k("flows"), ix(j)]);
    let field = |name: &str| child(&here, name);
    if f.kind == FlowKind::Mmtp {
        return add_mmtp_flows(sim, net, sc, f, j, names, seed);
    }
    let ids = names.ids;
    for (name, set) in [
        ("sources", f.sources.is_some()),
        ("outages", f.outages.is_some()),
        ("mmtp", f.mmtp.is_some()),
        ("content", f.content.is_some()),
    ] {
        if set {
            return Err(SpecError::at(
                field(name),
                "not allowed here: only for kind = \"mmtp\" flows",
            ));
        }
    }
    if f.from.is_empty() {
        return Err(SpecError::at(field("from"), "missing: the sending host"));
    }
    let (from, to) = end_hosts(net, &f.from, &f.to, &here)?;
    if sim.flows.len() as u64 + u64::from(f.count) > MAX_FLOWS {
        return Err(SpecError::at(
            field("count"),
            format!("the scenario would have more than {MAX_FLOWS} flows"),
        ));
    }
    if f.start >= sc.duration {
        return Err(SpecError::at(
            field("start"),
            format!(
                "{} is not before the end of the run ({})",
                f.start, sc.duration
            ),
        ));
    }
    if let Some(stop) = f.stop {
        if stop <= f.start {
            return Err(SpecError::at(field("stop"), "must be after start"));
        }
    }
    let is_tcp = f.kind == FlowKind::Tcp;
    let forbid = |name: &str, set: bool, why: &str| {
        if set {
            Err(SpecError::at(
                field(name),
                format!("not allowed here: {why}"),
            ))
        } else {
            Ok(())
        }
    };
    if is_tcp {
        forbid(
            "rate",
            f.rate.is_some(),
            "TCP rates are set by congestion control",
        )?;
        forbid(
            "packet_size",
            f.packet_size.is_some(),
            "TCP segments are sized by tcp.mss",
        )?;
        forbid(
            "on",
            f.on.is_some(),
            "on/off periods are for udp-onoff flows",
        )?;
        forbid(
            "off",
            f.off.is_some(),
            "on/off periods are for udp-onoff flows",
        )?;
    } else {
        forbid("size", f.size.is_some(), "UDP flows send until they stop")?;
        forbid("cc", f.cc.is_some(), "congestion control is for TCP flows")?;
        forbid("tcp", f.tcp.is_some(), "TCP parameters are for TCP flows")?;
        if f.kind == FlowKind::UdpCbr {
            forbid(
                "on",
                f.on.is_some(),
                "on/off periods are for udp-onoff flows",
            )?;
            forbid(
                "off",
                f.off.is_some(),
                "on/off periods are for udp-onoff flows",
            )?;
        }
    }
    let tcp = if is_tcp {
        let spec = element_tcp_spec(sc, f.tcp.as_ref(), f.cc);
        Some(if f.tcp.is_some() || f.cc.is_some() {
            resolve_tcp(&spec, &field("tcp"))?
        } else {
            base_tcp.clone()
        })
    } else {
        None
    };
    let subflows = multipath_plan(net, f, from, to, is_tcp, &here, sc.duration)?;
    if let (Some(params), None) = (&tcp, &subflows) {
        single_path_cc(f.cc, f.tcp.as_ref(), params.cc, &here)?;
    }
    let paths = match &subflows {
        Some(sfs) => sfs[0].1.clone(),
        None => flow_paths(
            net,
            from,
            to,
            f.route.as_ref(),
            &here,
            field("route"),
            is_tcp,
        )?,
    };
    let base_id = f.id.clone().unwrap_or_else(|| format!("flow{j}"));
    for copy in 0..f.count {
        let id = if f.count > 1 {
            format!("{base_id}.{copy}")
        } else {
            base_id.clone()
        };
        let id = unique_id(ids, id, field("id"))?;
        let mut start = f.start;
        if f.start_spread > Dur::ZERO {
            let mut rng = Rng::stream(seed, STREAM_START, sim.flows.len() as u64);
            start += Dur::from_ps(rng.below(f.start_spread.as_ps() + 1));
        }
        let start = Time::ZERO + start.min(sc.duration);
        let stop = f.stop.map(|s| Time::ZERO + s);
        match &tcp {
            Some(params) => {
                let size = f.size.map(|s| match s {
                    BufferSize::Packets(n) => n * params.sender.mss,
                    BufferSize::Bytes(b) => b,
                });
                if size == Some(0) {
                    return Err(SpecError::at(
                        field("size"),
                        "a finite flow transfers at least 1 byte",
                    ));
                }
                let overhead = SendOverhead::new(
                    params.send_overhead,
                    Rng::stream(seed, STREAM_OVERHEAD, sim.flows.len() as u64),
                )
                .map(Box::new);
                let ends = FlowEnds {
                    id,
                    from,
                    to,
                    start,
                    stop,
                    size,
                    overhead,
                };
                match &subflows {
                    Some(sfs) => {
                        let window = receive_window(f, params.sender.mss, &here)?;
                        add_mp_flow(sim, net, ends, sfs, f, params, window);
                    }
                    None => add_tcp_flow(sim, net, ends, &paths, params),
                }
            }
            None => {
                let rate = f.rate.ok_or_else(|| {
                    SpecError::at(
                        field("rate"),
                        "a UDP flow needs a rate, e.g. rate = \"5Mbps\"",
                    )
                })?;
                if rate.bps() == 0 || rate.is_infinite() {
                    return Err(SpecError::at(field("rate"), "must be positive and finite"));
                }
                let size = f.packet_size.map_or(1500, |b| b.bytes());
                if size <= u64::from(UDP_HEADER_BYTES) || size > MAX_PACKET_BYTES {
                    return Err(SpecError::at(
                        field("packet_size"),
                        format!("must be between {}B and 1048575B", UDP_HEADER_BYTES + 1),
                    ));
                }
                let periods = if f.kind == FlowKind::UdpOnoff {
                    let on = f.on.ok_or_else(|| {
                        SpecError::at(
                            field("on"),
                            "an on-off flow needs a mean on period, e.g. on = \"1s\"",
                        )
                    })?;
                    let off = f.off.ok_or_else(|| {
                        SpecError::at(
                            field("off"),
                            "an on-off flow needs a mean off period, e.g. off = \"1s\"",
                        )
                    })?;
                    if on == Dur::ZERO {
                        return Err(SpecError::at(field("on"), "must be positive"));
                    }
                    Periods::OnOff {
                        on,
                        off,
                        exponential: f.periods == PeriodDist::Exponential,
                    }
                } else {
                    Periods::AlwaysOn
                };
                add_udp_flow(
                    sim,
                    net,
                    id,
                    f.kind,
                    from,
                    to,
                    &paths.data,
                    rate,
                    size as u32,
                    periods,
                    start,
                    stop.unwrap_or(sim.end),
                    seed,
                );
            }
        }
    }
    Ok(())
}

/// A single-path TCP flow runs NewReno: a multipath controller there (LIA, NMCC, ...) would
/// run with one subflow, where most reduce to Reno, and was most likely meant for a multipath
/// connection. The error names where the controller was set (issue 16: no silent downgrade).
/// `cc_field` and `tcp` are the element's own `cc` and `tcp` table.
fn single_path_cc(
    cc_field: Option<CcKind>,
    tcp: Option<&TcpSpec>,
    cc: CcKind,
    here: &[PathSeg],
) -> Result<(), SpecError> {
    if matches!(cc, CcKind::NewReno | CcKind::Cubic) {
        return Ok(());
    }
    let (place, whence) = if cc_field.is_some() {
        (child(here, "cc"), "")
    } else if tcp.is_some_and(|t| t.cc.is_some()) {
        (child(&child(here, "tcp"), "cc"), "")
    } else {
        (
            at(&[k("tcp"), k("cc")]),
            " (the scenario's tcp.cc, which every TCP flow inherits: set cc on the \
             multipath flows instead)",
        )
    };
    let remedy = if here.first() == Some(&k("traffic")) {
        "traffic flows have one path each: use cc = \"newreno\""
    } else {
        "make it a multipath connection (paths = [[...], [...]], subflows, or \
         tm = { k = 2 }; one subflow is allowed: paths = [[...]]), or use cc = \"newreno\""
    };
    Err(SpecError::at(
        place,
        format!(
            "\"{}\" is a multipath controller, and {} has a single path{whence}; {remedy}",
            cc.name(),
            format_path(here),
        ),
    ))
}

/// What every TCP flow, single- or multipath, has.
struct FlowEnds {
    id: String,
    from: NodeIx,
    to: NodeIx,
    start: Time,
    stop: Option<Time>,
    size: Option<u64>,
    /// `tcp.send_overhead`'s timer, when on.
    overhead: Option<Box<SendOverhead>>,
}

/// The subflows of a multipath flow (`paths` or `subflows`), checked, with their paths;
/// `None` for a single-path flow.
fn multipath_plan(
    net: &Net,
    f: &FlowSpec,
    from: NodeIx,
    to: NodeIx,
    is_tcp: bool,
    here: &[PathSeg],
    duration: Dur,
) -> Result<Option<Vec<(SubflowSpec, FlowPaths)>>, SpecError> {
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
            return k_paths_plan(net, f, from, to, is_tcp, here).map(Some);
        }
        (None, None) if f.tm.is_some() => {
            return tm_plan(net, f, from, to, is_tcp, here).map(Some);
        }
        (None, None) => {
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
    if !is_tcp {
        return Err(SpecError::at(
            field(name),
            "multipath is for TCP flows (kind = \"tcp\")",
        ));
    }
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
        let start = sf.start.unwrap_or(f.start);
        if name == "subflows" {
            if start < f.start || start >= duration {
                return Err(SpecError::at(
                    child(&here, "start"),
                    format!(
                        "must be within the flow's life: from its start ({}) to before the end of the run ({duration})",
                        f.start
                    ),
                ));
            }
            if sf.stop.is_some_and(|s| s <= start) {
                return Err(SpecError::at(child(&here, "stop"), "must be after start"));
            }
        }
        let paths = flow_paths(net, from, to, sf.route.as_ref(), &here, route_path, true)?;
        out.push((sf, paths));
    }
    Ok(Some(out))
}

/// The subflows of a flow with `k_paths = k`: one on each of the k least-cost loopless paths
/// (Yen), ACKs on the reverse node lists.
fn k_paths_plan(
    net: &Net,
    f: &FlowSpec,
    from: NodeIx,
    to: NodeIx,
    is_tcp: bool,
    here: &[PathSeg],
) -> Result<Vec<(SubflowSpec, FlowPaths)>, SpecError> {
    let field = |name: &str| child(here, name);
    let k = f.k_paths.unwrap_or(1);
    if !is_tcp {
        return Err(SpecError::at(
            field("k_paths"),
            "multipath is for TCP flows (kind = \"tcp\")",
        ));
    }
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
            Ok((
                SubflowSpec::default(),
                FlowPaths {
                    data,
                    back: Some(back),
                },
            ))
        })
        .collect()
}

/// The topology manager a `tm` table describes, over the scenario's network (hosts do not
/// transit), and the number of paths it asks for.
fn topology_manager(
    net: &Net,
    tm: &TmSpec,
    here: &[PathSeg],
) -> Result<(TopologyManager, usize), SpecError> {
    let (config, k) = tm
        .config(MAX_SUBFLOWS as usize)
        .map_err(|e| SpecError::at(child(here, e.field), e.message))?;
    let rates = net
        .rate
        .iter()
        .map(|r| {
            if r.is_infinite() {
                f64::INFINITY
            } else {
                r.bps() as f64
            }
        })
        .collect();
    let internal = |e: pathpool_psi::TmError| SpecError::at(here.to_vec(), e.to_string());
    let mut manager = TopologyManager::new(net.graph.clone(), rates, net.delay.clone(), config)
        .map_err(internal)?;
    for (n, &host) in net.is_host.iter().enumerate() {
        manager
            .set_transit(NodeIx(n as u32), !host)
            .map_err(internal)?;
    }
    Ok((manager, k))
}

/// The subflows of a flow with a `tm` table: the topology manager's paths from `from` to
/// `to`, each with its reverse for the ACKs, in the coupling groups it assigns (thesis §5).
fn tm_plan(
    net: &Net,
    f: &FlowSpec,
    from: NodeIx,
    to: NodeIx,
    is_tcp: bool,
    here: &[PathSeg],
) -> Result<Vec<(SubflowSpec, FlowPaths)>, SpecError> {
    let field = |name: &str| child(here, name);
    let Some(tm) = &f.tm else {
        return Ok(Vec::new());
    };
    let tm_field = |name: &str| child(&field("tm"), name);
    if !is_tcp {
        return Err(SpecError::at(
            field("tm"),
            "multipath is for TCP flows (kind = \"tcp\")",
        ));
    }
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
            (
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

/// An mmTP download (`kind = "mmtp"`), or `count` copies: a subscriber at `to` pulling
/// `size` bytes from the publishers (`from` or `sources`) over the topology manager's paths
/// (`tm`, default one shortest path per publisher), one subflow per path in the group the
/// manager assigns (thesis §4.2, §5). Chunks are `tcp.mss` bytes; requests and replies carry
/// `tcp.header` bytes of header.
#[allow(clippy::too_many_arguments)]
fn add_mmtp_flows(
    sim: &mut Simulation,
    net: &Net,
    sc: &Scenario,
    f: &FlowSpec,
    j: usize,
    names: Names<'_>,
    seed: u64,
) -> Result<(), SpecError> {
    let Names { ids, contents } = names;
    let here = at(&[k("flows"), ix(j)]);
    let field = |name: &str| child(&here, name);
    let forbid = |name: &str, set: bool, why: &str| {
        if set {
            Err(SpecError::at(
                field(name),
                format!("not allowed here: {why}"),
            ))
        } else {
            Ok(())
        }
    };
    let routes = "the topology manager chooses an mmTP download's paths (give tm)";
    forbid("route", f.route.is_some(), routes)?;
    forbid("paths", f.paths.is_some(), routes)?;
    forbid("subflows", f.subflows.is_some(), routes)?;
    forbid("k_paths", f.k_paths.is_some(), routes)?;
    forbid(
        "scheduler",
        f.scheduler.is_some(),
        "mmTP subflows pick chunks by Algorithm 1",
    )?;
    let buffer = "an mmTP subscriber requests chunks and keeps no MPTCP receive window";
    forbid("receive_buffer", f.receive_buffer.is_some(), buffer)?;
    forbid(
        "opportunistic_retransmission",
        f.opportunistic_retransmission.is_some(),
        buffer,
    )?;
    forbid("penalisation", f.penalisation.is_some(), buffer)?;
    forbid(
        "rate",
        f.rate.is_some(),
        "mmTP rates are set by congestion control",
    )?;
    forbid(
        "packet_size",
        f.packet_size.is_some(),
        "mmTP chunks are tcp.mss bytes",
    )?;
    forbid(
        "on",
        f.on.is_some(),
        "on/off periods are for udp-onoff flows",
    )?;
    forbid(
        "off",
        f.off.is_some(),
        "on/off periods are for udp-onoff flows",
    )?;
    forbid(
        "stop",
        f.stop.is_some(),
        "a download ends when its content has arrived",
    )?;
    let publishers: Vec<String> = match (&f.sources, f.from.is_empty()) {
        (Some(_), false) => {
            return Err(SpecError::at(
                field("sources"),
                "give either from (one publisher) or sources, not both",
            ))
        }
        (Some(list), true) if list.is_empty() => {
            return Err(SpecError::at(
                field("sources"),
                "give at least one publisher",
            ))
        }
        (Some(list), true) => list.clone(),
        (None, true) => {
            return Err(SpecError::at(
                field("from"),
                "missing: the publisher (or a list in sources)",
            ))
        }
        (None, false) => vec![f.from.clone()],
    };
    let to = net.host(&f.to, field("to"))?;
    let mut sources = Vec::with_capacity(publishers.len());
    for (i, name) in publishers.iter().enumerate() {
        let place = if f.sources.is_some() {
            let mut p = field("sources");
            p.push(ix(i));
            p
        } else {
            field("from")
        };
        // A publisher may be a router: a server at a node inside the network (thesis E7
        // places servers at AS nodes, decision D68); it keeps forwarding others' packets.
        let n = net.node(name, place.clone())?;
        if n == to {
            return Err(SpecError::at(place, "a publisher cannot be the subscriber"));
        }
        if sources.contains(&n) {
            return Err(SpecError::at(place, format!("{name:?} is listed twice")));
        }
        sources.push(n);
    }
    if f.start >= sc.duration {
        return Err(SpecError::at(
            field("start"),
            format!(
                "{} is not before the end of the run ({})",
                f.start, sc.duration
            ),
        ));
    }
    let mut outages = Vec::new();
    for (i, o) in f.outages.iter().flatten().enumerate() {
        let mut place = field("outages");
        place.push(ix(i));
        let Some(src) = publishers.iter().position(|n| *n == o.source) else {
            return Err(SpecError::at(
                child(&place, "source"),
                format!(
                    "{:?} is not a source of this download ({})",
                    o.source,
                    publishers.join(", ")
                ),
            ));
        };
        if o.stop <= o.start {
            return Err(SpecError::at(child(&place, "stop"), "must be after start"));
        }
        outages.push(Outage {
            source: src as u32,
            start: Time::ZERO + o.start,
            stop: Time::ZERO + o.stop,
        });
    }
    let spec = element_tcp_spec(sc, f.tcp.as_ref(), f.cc);
    let mut params = resolve_tcp(&spec, &field("tcp"))?;
    let mm = f.mmtp.clone().unwrap_or_default();
    if mm.gap_threshold == Some(0) {
        return Err(SpecError::at(
            child(&field("mmtp"), "gap_threshold"),
            "must be at least 1 reply",
        ));
    }
    // mmTP's own bound on the backoff (D117): a silent source is probed, not given up on.
    let mut rtt = params.sender.rtt;
    rtt.backoff_limit = Some(mm.backoff_limit.unwrap_or(DEFAULT_BACKOFF_LIMIT));
    let initial_chunks = mm.initial_window_chunks.unwrap_or(1);
    if initial_chunks == 0 {
        return Err(SpecError::at(
            child(&field("mmtp"), "initial_window_chunks"),
            "must be at least 1",
        ));
    }
    let chunk_bytes = params.sender.mss;
    if chunk_bytes > u64::from(u32::MAX) {
        return Err(SpecError::at(
            child(&field("tcp"), "mss"),
            "too large for a chunk",
        ));
    }
    // WindowConfig counts segments: one chunk is one segment.
    params.window.initial_window = u64::from(initial_chunks);
    let size = match f.size {
        None => {
            return Err(SpecError::at(
                field("size"),
                "an mmTP download needs the content's size, e.g. size = \"12MB\"",
            ))
        }
        Some(BufferSize::Packets(n)) => n * chunk_bytes,
        Some(BufferSize::Bytes(b)) => b,
    };
    if size == 0 || size.div_ceil(chunk_bytes) > u64::from(u32::MAX) {
        return Err(SpecError::at(
            field("size"),
            "must be at least 1 byte and at most 2^32 - 1 chunks",
        ));
    }
    // One path per publisher unless told otherwise (thesis E1: "one overlay path to each").
    let tm = f.tm.clone().unwrap_or(TmSpec {
        k: 1,
        ..TmSpec::default()
    });
    let (manager, _) = topology_manager(net, &tm, &field("tm"))?;
    let set = manager.paths(&sources, to).map_err(|e| {
        SpecError::at(
            field("tm"),
            format!("{e} (paths need duplex links, and never cross another host)"),
        )
    })?;
    if set.paths.len() > MAX_SUBFLOWS as usize {
        return Err(SpecError::at(
            child(&field("tm"), "k"),
            format!("at most {MAX_SUBFLOWS} paths per download"),
        ));
    }
    let config = SubscriberConfig {
        rtt,
        initial_window_chunks: initial_chunks,
        first_chunk_with_metadata: mm.first_chunk_with_metadata.unwrap_or(true),
        selection: mm.selection.unwrap_or_default(),
        gap_threshold: mm.gap_threshold,
    };
    let base_id = f.id.clone().unwrap_or_else(|| format!("flow{j}"));
    for copy in 0..f.count {
        let id = if f.count > 1 {
            format!("{base_id}.{copy}")
        } else {
            base_id.clone()
        };
        let id = unique_id(ids, id, field("id"))?;
        let mut start = f.start;
        if f.start_spread > Dur::ZERO {
            let mut rng = Rng::stream(seed, STREAM_START, sim.flows.len() as u64);
            start += Dur::from_ps(rng.below(f.start_spread.as_ps() + 1));
        }
        let start = Time::ZERO + start.min(sc.duration);
        let sub_elem = sim.elements.len() as u32;
        let pub_elem = sub_elem + 1;
        let mut paths = Vec::with_capacity(set.paths.len());
        let mut meta = Vec::with_capacity(set.paths.len());
        let conn_index = sim.elements.mmtp_conns.len() as u32;
        for p in &set.paths {
            let hops = |edges, end| mmtp_hops(edges, &net.graph, &net.elem, &net.cache, end);
            let request = hops(&p.reverse, pub_elem);
            let reply = hops(&p.forward, sub_elem);
            let request_route = sim.routes.add(&request.hops);
            let reply_route = sim.routes.add(&reply.hops);
            sim.cache_hops
                .register(conn_index, &request, request_route, &reply, reply_route);
            paths.push(MmtpPath {
                request_route,
                reply_route,
                source: sources.iter().position(|&s| s == p.publisher).unwrap_or(0) as u32,
                group: p.group_id,
                withdrawn: false,
            });
            meta.push(SubflowMeta {
                path: net.node_names(p.publisher, &p.forward),
                group: p.group_id,
                start,
                stop: None,
            });
        }
        if let Some(tm) = sim.tm.as_mut() {
            tm.downloads.push(Download {
                conn: conn_index,
                flow: sim.flows.len() as u32,
                sub_elem,
                pub_elem,
                sources: sources.clone(),
                subscriber: to,
                manager: manager.clone(),
                paths: set
                    .paths
                    .iter()
                    .map(|p| {
                        Some((
                            PathKey {
                                publisher: p.publisher,
                                forward: p.forward.clone(),
                            },
                            p.group_id,
                        ))
                    })
                    .collect(),
            });
        }
        // Downloads of one content must agree on what it is.
        let name = f.content.clone().unwrap_or_else(|| id.clone());
        let what = (size, chunk_bytes as u32);
        match contents.get(&name) {
            Some((s, c, first)) if (*s, *c) != what => {
                return Err(SpecError::at(
                    field(if f.content.is_some() { "content" } else { "id" }),
                    format!(
                        "content {name:?} is {s} bytes in chunks of {c} (given at {}); this \
                         download says {} bytes in chunks of {}: downloads of one content \
                         must agree on its size and tcp.mss",
                        format_path(first),
                        what.0,
                        what.1
                    ),
                ))
            }
            Some(_) => {}
            None => {
                contents.insert(name.clone(), (what.0, what.1, here.clone()));
            }
        }
        let content = ContentId::from_name(&name);
        let conn = MmtpConn::new(
            Subscriber::new(content, config),
            params.cc.build_with(params.window, params.options),
            size,
            chunk_bytes as u32,
            paths,
            outages.clone(),
            params.header as u32,
            start,
        );
        assert_eq!(sim.elements.add_mmtp_conn(conn), (sub_elem, pub_elem));
        sim.flows.push(FlowMeta {
            id,
            kind: FlowKind::Mmtp,
            from: publishers.join(","),
            to: f.to.clone(),
            cc: Some(params.cc.name().to_string()),
            loss_recovery: Some(if mm.gap_threshold.is_some() {
                "mmtp-gap"
            } else {
                "mmtp-timer"
            }),
            start,
            stop: None,
            size: Some(size),
            source: pub_elem,
            sink: sub_elem,
            path: meta[0].path.clone(),
            subflows: meta,
        });
    }
    Ok(())
}

/// A multipath flow's receive window and its mitigations, checked (`None`: unlimited).
fn receive_window(
    f: &FlowSpec,
    mss: u64,
    here: &[PathSeg],
) -> Result<Option<ReceiveWindowConfig>, SpecError> {
    let field = |name: &str| child(here, name);
    match f.receive_buffer {
        Some(WindowLimit::Bytes(b)) if b.bytes() < mss => Err(SpecError::at(
            field("receive_buffer"),
            format!(
                "{}B holds less than one segment (tcp.mss = {mss}B)",
                b.bytes()
            ),
        )),
        Some(WindowLimit::Bytes(b)) => Ok(Some(ReceiveWindowConfig {
            receive_buffer_bytes: b.bytes(),
            opportunistic_retransmission: f.opportunistic_retransmission.unwrap_or(true),
            penalisation: f.penalisation.unwrap_or(true),
        })),
        None | Some(WindowLimit::Unlimited) => {
            for (name, set) in [
                (
                    "opportunistic_retransmission",
                    f.opportunistic_retransmission.is_some(),
                ),
                ("penalisation", f.penalisation.is_some()),
            ] {
                if set {
                    return Err(SpecError::at(
                        field(name),
                        "applies only with a finite receive_buffer (e.g. receive_buffer = \"200KB\"): \
                         an unlimited buffer never blocks a subflow",
                    ));
                }
            }
            Ok(None)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn add_mp_flow(
    sim: &mut Simulation,
    net: &Net,
    ends: FlowEnds,
    subflows: &[(SubflowSpec, FlowPaths)],
    f: &FlowSpec,
    p: &TcpParams,
    window: Option<ReceiveWindowConfig>,
) {
    let FlowEnds {
        id,
        from,
        to,
        start,
        stop,
        size,
        overhead,
    } = ends;
    let src_elem = sim.elements.len() as u32;
    let sink_elem = src_elem + 1;
    let mut plan = Vec::with_capacity(subflows.len());
    let mut meta = Vec::with_capacity(subflows.len());
    for (sf, paths) in subflows {
        let mut hops: Vec<u32> = paths.data.iter().map(|e| net.elem[e.0 as usize]).collect();
        hops.push(sink_elem);
        let data_route = sim.routes.add(&hops);
        let back = paths.back.as_ref().expect("TCP flows have a reverse path");
        let mut hops: Vec<u32> = back.iter().map(|e| net.elem[e.0 as usize]).collect();
        hops.push(src_elem);
        let ack_route = sim.routes.add(&hops);
        let sf_start = sf.start.map_or(start, |s| Time::ZERO + s);
        let sf_stop = sf.stop.map(|s| Time::ZERO + s);
        plan.push(SubflowPlan {
            data_route,
            ack_route,
            group: sf.group,
            start: sf_start,
            stop: sf_stop,
        });
        meta.push(SubflowMeta {
            path: net.node_names(from, &paths.data),
            group: sf.group,
            start: sf_start,
            stop: sf_stop,
        });
    }
    let cc = p.cc.build_with(p.window, p.options);
    let mut sender = MpSender::new(
        TcpSenderConfig {
            data_bytes: size,
            ..p.sender
        },
        f.scheduler.unwrap_or_default(),
    );
    let mut receiver = MpReceiver::new(p.receiver);
    if let Some(w) = window {
        sender = sender.with_receive_window(w);
        receiver = receiver.with_receive_buffer(w.receive_buffer_bytes);
    }
    let header = p.header as u32;
    let conn = MpConn::new(
        sender, cc, receiver, plan, header, start, stop, size, overhead,
    );
    assert_eq!(sim.elements.add_mp_conn(conn), (src_elem, sink_elem));
    sim.flows.push(FlowMeta {
        id,
        kind: FlowKind::Tcp,
        from: net.names[from.0 as usize].clone(),
        to: net.names[to.0 as usize].clone(),
        cc: Some(p.cc.name().to_string()),
        loss_recovery: Some(p.sender.loss_recovery()),
        start,
        stop,
        size,
        source: src_elem,
        sink: sink_elem,
        path: meta[0].path.clone(),
        subflows: meta,
    });
}

fn add_tcp_flow(sim: &mut Simulation, net: &Net, ends: FlowEnds, paths: &FlowPaths, p: &TcpParams) {
    let FlowEnds {
        id,
        from,
        to,
        start,
        stop,
        size,
        overhead,
    } = ends;
    let src_elem = sim.elements.len() as u32;
    let sink_elem = src_elem + 1;
    let mut hops: Vec<u32> = paths.data.iter().map(|e| net.elem[e.0 as usize]).collect();
    hops.push(sink_elem);
    let data_route = sim.routes.add(&hops);
    let back = paths.back.as_ref().expect("TCP flows have a reverse path");
    let mut hops: Vec<u32> = back.iter().map(|e| net.elem[e.0 as usize]).collect();
    hops.push(src_elem);
    let ack_route = sim.routes.add(&hops);

    let mut cc = p.cc.build_with(p.window, p.options);
    let path = cc.add_path(p.sender.mss);
    let sender = TcpSender::new(
        TcpSenderConfig {
            data_bytes: size,
            ..p.sender
        },
        path,
    );
    let header = p.header as u32;
    let src = TcpSource::new(sender, cc, data_route, header, start, stop, overhead);
    let sink = TcpSink::new(TcpReceiver::new(p.receiver), ack_route, header, size);
    assert_eq!(sim.elements.add_tcp_flow(src, sink), (src_elem, sink_elem));
    sim.flows.push(FlowMeta {
        id,
        kind: FlowKind::Tcp,
        from: net.names[from.0 as usize].clone(),
        to: net.names[to.0 as usize].clone(),
        cc: Some(p.cc.name().to_string()),
        loss_recovery: Some(p.sender.loss_recovery()),
        start,
        stop,
        size,
        source: src_elem,
        sink: sink_elem,
        path: net.node_names(from, &paths.data),
        subflows: Vec::new(),
    });
}

#[allow(clippy::too_many_arguments)]
fn add_udp_flow(
    sim: &mut Simulation,
    net: &Net,
    id: String,
    kind: FlowKind,
    from: NodeIx,
    to: NodeIx,
    data: &[EdgeId],
    rate: Rate,
    size: u32,
    periods: Periods,
    start: Time,
    stop: Time,
    seed: u64,
) {
    let src_elem = sim.elements.len() as u32;
    let sink_elem = src_elem + 1;
    let mut hops: Vec<u32> = data.iter().map(|e| net.elem[e.0 as usize]).collect();
    hops.push(sink_elem);
    let route = sim.routes.add(&hops);
    let rng = Rng::stream(seed, STREAM_UDP, sim.flows.len() as u64);
    let interval = rate.tx_time(u64::from(size));
    let src = UdpSource::new(
        route,
        size,
        interval,
        periods,
        rng,
        start,
        stop.min(sim.end),
    );
    assert_eq!(sim.elements.add_udp_source(src), src_elem);
    assert_eq!(sim.elements.add_udp_sink(UdpSink::default()), sink_elem);
    sim.flows.push(FlowMeta {
        id,
        kind,
        from: net.names[from.0 as usize].clone(),
        to: net.names[to.0 as usize].clone(),
        cc: None,
        loss_recovery: None,
        start,
        stop: Some(stop).filter(|&s| s < sim.end),
        size: None,
        source: src_elem,
        sink: sink_elem,
        path: net.node_names(from, data),
        subflows: Vec::new(),
    });
}

fn add_traffic(
    sim: &mut Simulation,
    net: &Net,
    sc: &Scenario,
    t: &TrafficSpec,
    g: usize,
    ids: &mut HashSet<String>,
    seed: u64,
) -> Result<(), SpecError> {
    let here = at(&[k("traffic"), ix(g)]);
    let field = |name: &str| child(&here, name);
    let (from, to) = end_hosts(net, &t.from, &t.to, &here)?;
    let spec = element_tcp_spec(sc, t.tcp.as_ref(), t.cc);
    let params = resolve_tcp(&spec, &field("tcp"))?;
    single_path_cc(t.cc, t.tcp.as_ref(), params.cc, &here)?;
    let mss = params.sender.mss;
    let bytes = |b: BufferSize| match b {
        BufferSize::Packets(n) => n * mss,
        BufferSize::Bytes(n) => n,
    };
    let (mean, dist) = match &t.size {
        SizeDist::Pareto { mean, shape } => {
            if !(*shape > 1.0 && shape.is_finite()) {
                return Err(SpecError::at(
                    field("size"),
                    format!("Pareto shape {shape} must be above 1 for a finite mean"),
                ));
            }
            (bytes(*mean), SizeDraw::Pareto { shape: *shape })
        }
        SizeDist::Exponential { mean } => (bytes(*mean), SizeDraw::Exponential),
        SizeDist::Constant { value } => (bytes(*value), SizeDraw::Constant),
    };
    if mean == 0 {
        return Err(SpecError::at(
            field("size"),
            "the mean flow size must be positive",
        ));
    }
    let paths = flow_paths(net, from, to, None, &here, child(&here, "route"), true)?;
    let lambda = match (t.arrival_rate, t.load) {
        (Some(r), None) => {
            if !(r > 0.0 && r.is_finite()) {
                return Err(SpecError::at(field("arrival_rate"), "must be a positive number of flows per second"));
            }
            r
        }
        (None, Some(rho)) => {
            if !(rho > 0.0 && rho.is_finite()) {
                return Err(SpecError::at(field("load"), "must be a positive number"));
            }
            let c = paths.data.iter().map(|e| net.rate[e.0 as usize]).filter(|r| !r.is_infinite()).min();
            let c = c.ok_or_else(|| SpecError::at(field("load"), "every link on the route has an infinite rate; give arrival_rate instead"))?;
            rho * c.bps() as f64 / (8.0 * mean as f64)
        }
        _ => return Err(SpecError::at(here.clone(), "give exactly one of arrival_rate (flows/s) or load (fraction of the route's slowest link)")),
    };
    let start = t.start;
    let stop = t.stop.unwrap_or(sc.duration).min(sc.duration);
    if stop <= start {
        return Err(SpecError::at(field("stop"), "must be after start"));
    }
    let expected = lambda * (stop - start).as_secs_f64();
    let cap = t.max_flows.unwrap_or(u64::MAX).min(MAX_FLOWS);
    if expected > MAX_FLOWS as f64 && t.max_flows.is_none_or(|m| m > MAX_FLOWS) {
        return Err(SpecError::at(field("arrival_rate"), format!("about {expected:.0} flows would be generated; the limit is {MAX_FLOWS} (set max_flows)")));
    }
    let mut rng = Rng::stream(seed, STREAM_TRAFFIC, g as u64);
    let prefix = t.id.clone().unwrap_or_else(|| format!("traffic{g}"));
    let mut at_s = start.as_secs_f64();
    let stop_s = stop.as_secs_f64();
    let mut n = 0u64;
    while n < cap {
        at_s += rng.exponential(1.0 / lambda);
        if at_s >= stop_s {
            break;
        }
        let size = dist.draw(&mut rng, mean as f64);
        let id = unique_id(ids, format!("{prefix}.{n}"), field("id"))?;
        let overhead = SendOverhead::new(
            params.send_overhead,
            Rng::stream(seed, STREAM_OVERHEAD, sim.flows.len() as u64),
        )
        .map(Box::new);
        let ends = FlowEnds {
            id,
            from,
            to,
            start: Time::from_secs_f64(at_s),
            stop: None,
            size: Some(size),
            overhead,
        };
        add_tcp_flow(sim, net, ends, &paths, &params);
        n += 1;
    }
    Ok(())
}

/// How a generator draws flow sizes.
#[derive(Clone, Copy)]
enum SizeDraw {
    Pareto { shape: f64 },
    Exponential,
    Constant,
}

impl SizeDraw {
    /// A size in whole bytes (at least 1) with the given mean.
    fn draw(self, rng: &mut Rng, mean: f64) -> u64 {
        let x = match self {
            // Pareto type I with x_min = mean·(α − 1)/α has the requested mean.
            SizeDraw::Pareto { shape } => rng.pareto(shape, mean * (shape - 1.0) / shape),
            SizeDraw::Exponential => rng.exponential(mean),
            SizeDraw::Constant => mean,
        };
        (libm::ceil(x) as u64).max(1)
    }
}
