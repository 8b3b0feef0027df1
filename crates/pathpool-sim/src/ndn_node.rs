//! NDN in the simulator (issue 22): one node element per node, driving `pathpool-ndn`'s
//! sans-IO [`Forwarder`], and one element per consumer, driving `pathpool-proto`'s
//! [`PtpConsumer`] or [`AimdConsumer`].
//!
//! * **Packets carry their next link, not a source route.** An NDN packet (names, tags) lives
//!   in a slab of the simulation while it crosses a link; the 24-byte simulator packet carries
//!   its slab index and its size on the wire. Every directed link has a two-hop route: the
//!   link, then the NDN node at its far end. The route's position tells the node which face
//!   the packet arrived on. A packet a link drops gives its slab entry back at once (the
//!   link's drop counters tell); one a failing link loses keeps it (rare, bounded by the
//!   link's ring).
//! * **Links hand packets to the node in the same event**, as they do to caches and INRPP
//!   routers; the forwarder's output goes out at once: to the links of its faces, to the
//!   node's producer (face 0, an Interest it serves: the Data goes back into the forwarder at
//!   face 0) or to the node's consumers (face 0, a Data or NACK of their content).
//! * **Timers.** A node's one timer is its forwarder's (PIT expiry, FISP's shapers); a
//!   consumer's is its own (probes, retransmission timers, path reviews).

use pathpool_cc::AnyController;
use pathpool_core::hash::FxHashMap;
use pathpool_core::{Dur, Rng, Time};
use pathpool_ndn::{Data, FaceId, Forwarder, Interest, Name, Packet as NdnPacket};
use pathpool_proto::mmtp::{Part, SubflowState, METADATA_SUFFIX};
use pathpool_proto::ndn::{AimdConsumer, MmtpNdnConsumer, PtpConsumer, PtpRequest};

use crate::packet::Packet;
use crate::sim::Simulation;

/// The sizes NDN packets have on the wire.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NdnSizes {
    /// An Interest without its tag (a NACK has this size too).
    pub(crate) interest: u32,
    /// A Data's headers.
    pub(crate) data_header: u32,
    /// A Data's payload.
    pub(crate) payload: u32,
}

/// Bytes a face id takes in a tag on the wire.
const TAG_ENTRY_BYTES: u32 = 2;

impl NdnSizes {
    /// `p`'s size on the wire, and the bytes of it that say which path it takes or took:
    /// PTP's tag, mmTP's route labels.
    fn of(&self, p: &NdnPacket) -> (u32, u32) {
        let (base, route) = match p {
            NdnPacket::Interest(i) => (
                self.interest,
                TAG_ENTRY_BYTES * i.tag.len() as u32 + i.name.label_bytes(),
            ),
            NdnPacket::Data(d) => (
                self.data_header + d.payload_bytes,
                TAG_ENTRY_BYTES * d.tag.as_ref().map_or(0, |t| t.len() as u32)
                    + d.name.label_bytes(),
            ),
            NdnPacket::Nack(k) => (self.interest, k.name.label_bytes()),
        };
        (base + route, route)
    }
}

/// One NDN node: its forwarder, what it produces and who consumes at it.
#[derive(Clone, Debug)]
pub(crate) struct NdnNode {
    /// The node's name (for results).
    pub(crate) name: String,
    /// The node's element (the forwarder's timer).
    pub(crate) elem: u32,
    pub(crate) fwd: Forwarder,
    /// The route of each face (index = face id; 0 unused): its link, then the far node.
    pub(crate) face_route: Vec<u32>,
    /// The neighbour node of each face (index = face id; 0: the node itself).
    pub(crate) face_neighbour: Vec<u32>,
    /// The prefixes its producer serves.
    pub(crate) produces: Vec<Name>,
    /// Its consumers, by content name.
    pub(crate) consumers: FxHashMap<Name, Vec<u32>>,
    /// Data its producer made.
    pub(crate) produced: u64,
    /// Bytes of tags and route labels in the packets it sent on its links.
    pub(crate) route_info_bytes: u64,
}

impl NdnNode {
    fn serves(&self, name: &Name) -> bool {
        self.produces.iter().any(|p| p.is_prefix_of(name))
    }
}

/// A consumer's state machine.
#[derive(Clone, Debug)]
pub(crate) enum Logic {
    Ptp(Box<PtpConsumer>),
    Aimd(Box<AimdConsumer>),
    Mmtp(Box<MmtpNdnConsumer<AnyController>>),
}

/// What the simulator keeps of one PTP path or mmTP subflow.
#[derive(Clone, Debug, Default)]
pub(crate) struct PathRecord {
    /// Payload bytes its tagged Interests brought.
    pub(crate) bytes: u64,
    /// When it last went into use, while it is.
    pub(crate) since: Option<Time>,
    /// Its intervals in use, closed ones.
    pub(crate) intervals: Vec<(Time, Time)>,
}

/// An in-use path's (or active mmTP subflow's) state at a sample, for `ndn_path_timeseries`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PathSample {
    pub(crate) path: u32,
    /// The window, Interests (PTP's MPCCP) or chunks (mmTP's controller).
    pub(crate) cwnd: f64,
    /// Infinite before the first loss.
    pub(crate) ssthresh: f64,
    /// NaN before the first sample.
    pub(crate) srtt_s: f64,
    /// Payload bytes it brought so far.
    pub(crate) bytes: u64,
}

/// One consumer.
#[derive(Clone, Debug)]
pub(crate) struct NdnConsumer {
    pub(crate) elem: u32,
    /// Its node.
    pub(crate) node: u32,
    /// The content's name.
    pub(crate) content: Name,
    pub(crate) logic: Logic,
    pub(crate) rng: Rng,
    /// Its Interests' lifetime.
    pub(crate) lifetime: Dur,
    pub(crate) start: Time,
    pub(crate) payload: u32,
    pub(crate) completed_at: Option<Time>,
    /// PTP's paths or mmTP's subflows, as the simulator saw them.
    pub(crate) paths: Vec<PathRecord>,
}

impl NdnConsumer {
    /// Payload bytes received.
    pub(crate) fn delivered(&self) -> u64 {
        let n = match &self.logic {
            Logic::Ptp(c) => c.received(),
            Logic::Aimd(c) => c.received(),
            Logic::Mmtp(c) => return c.subscriber().progress().bytes_done,
        };
        n * u64::from(self.payload)
    }

    /// Interests sent (probes included), resends (an AIMD consumer's: its timeouts and
    /// NACKs) and timeouts, as the flows table's packets_sent, retransmissions and timeouts;
    /// no fast recoveries.
    pub(crate) fn totals(&self) -> (u64, u64, u64, u64) {
        match &self.logic {
            Logic::Ptp(c) => {
                let s = c.stats();
                (s.probes + s.interests, s.resends, s.timeouts, 0)
            }
            Logic::Aimd(c) => {
                let s = c.stats();
                (s.interests, s.timeouts + s.nacks, s.timeouts, 0)
            }
            Logic::Mmtp(c) => {
                let s = c.stats();
                let timeouts = c.subscriber().subflows().iter().map(|f| f.stats().timeouts);
                (s.interests, s.resends, timeouts.sum(), 0)
            }
        }
    }

    fn is_complete(&self) -> bool {
        match &self.logic {
            Logic::Ptp(c) => c.is_complete(),
            Logic::Aimd(c) => c.is_complete(),
            Logic::Mmtp(c) => c.is_complete(),
        }
    }

    /// When its timer is next due.
    pub(crate) fn deadline(&self) -> Option<Time> {
        match &self.logic {
            Logic::Ptp(c) => c.poll_timeout(),
            Logic::Aimd(c) => c.poll_timeout(),
            Logic::Mmtp(c) => c.poll_timeout(),
        }
        .map(|t| t.max(self.start))
    }

    /// The Interests it may send now.
    fn poll_interests(&mut self, now: Time, out: &mut Vec<Interest>) {
        loop {
            let (seq, probe, tag) = match &mut self.logic {
                Logic::Ptp(c) => match c.poll_transmit(now) {
                    Some(PtpRequest::Probe { seq }) => (seq, true, Vec::new()),
                    Some(PtpRequest::Tagged { seq, tag, .. }) => (seq, false, tag),
                    None => break,
                },
                Logic::Aimd(c) => match c.poll_transmit(now) {
                    Some(seq) => (seq, false, Vec::new()),
                    None => break,
                },
                Logic::Mmtp(c) => {
                    let Some(m) = c.poll_transmit(now) else { break };
                    let name = match m.part {
                        Part::Metadata => self.content.child(METADATA_SUFFIX),
                        Part::Chunk(k) => self.content.child(&k.to_string()),
                    };
                    let mut i =
                        Interest::new(name.with_labels(&m.labels), self.rng.next_u64() as u32);
                    i.lifetime = self.lifetime;
                    out.push(i);
                    continue;
                }
            };
            let mut i = Interest::new(
                self.content.child(&seq.to_string()),
                self.rng.next_u64() as u32,
            );
            i.lifetime = self.lifetime;
            i.probe = probe;
            i.tag = tag;
            out.push(i);
        }
    }

    /// The state of its paths in use now (none for a single-window consumer), in path order.
    pub(crate) fn sample_paths(&self, out: &mut Vec<PathSample>) {
        let srtt = |d: Option<Dur>| d.map_or(f64::NAN, |d| d.as_secs_f64());
        match &self.logic {
            Logic::Ptp(c) => {
                for (p, info) in c.paths().paths().iter().enumerate() {
                    if !info.in_use {
                        continue;
                    }
                    let m = c.mpccp().path(p);
                    out.push(PathSample {
                        path: p as u32,
                        cwnd: m.cwnd,
                        ssthresh: m.ssthresh,
                        srtt_s: srtt(m.srtt),
                        bytes: self.paths.get(p).map_or(0, |r| r.bytes),
                    });
                }
            }
            Logic::Mmtp(c) => {
                use pathpool_cc::MultipathController;
                let sub = c.subscriber();
                let chunk = sub
                    .metadata()
                    .map_or(1.0, |m| f64::from(m.chunk_bytes.max(1)));
                for (j, sf) in sub.subflows().iter().enumerate() {
                    let (SubflowState::Active, Some(path)) = (sf.state(), sf.controller_path())
                    else {
                        continue;
                    };
                    let m = c.controller().metrics(path);
                    out.push(PathSample {
                        path: j as u32,
                        cwnd: m.cwnd as f64 / chunk,
                        ssthresh: if m.ssthresh == u64::MAX {
                            f64::INFINITY
                        } else {
                            m.ssthresh as f64 / chunk
                        },
                        srtt_s: srtt(sf.srtt()),
                        bytes: sf.stats().bytes_delivered,
                    });
                }
            }
            Logic::Aimd(_) => {}
        }
    }

    /// Keeps the in-use intervals of PTP's paths (mmTP's subflows) up to date at `now`.
    fn note_paths(&mut self, now: Time) {
        let in_use: Vec<bool> = match &self.logic {
            Logic::Ptp(c) => c.paths().paths().iter().map(|p| p.in_use).collect(),
            Logic::Mmtp(c) if !c.is_complete() => c
                .subscriber()
                .subflows()
                .iter()
                .map(|f| f.state() == SubflowState::Active)
                .collect(),
            Logic::Mmtp(c) => vec![false; c.subscriber().subflows().len()],
            Logic::Aimd(_) => return,
        };
        if self.paths.len() < in_use.len() {
            self.paths.resize_with(in_use.len(), PathRecord::default);
        }
        for (p, used) in in_use.into_iter().enumerate() {
            let rec = &mut self.paths[p];
            match (used, rec.since) {
                (true, None) => rec.since = Some(now),
                (false, Some(t)) => {
                    rec.intervals.push((t, now));
                    rec.since = None;
                }
                _ => {}
            }
        }
    }

    /// A packet for it arrived at `now`.
    fn on_packet(&mut self, now: Time, pkt: NdnPacket) {
        let seq = |name: &Name| name.components().last().and_then(|c| c.parse::<u64>().ok());
        match (&mut self.logic, pkt) {
            (Logic::Ptp(c), NdnPacket::Data(d)) => {
                let Some(s) = seq(&d.name) else { return };
                if let Some(p) = c.pending_path(s) {
                    if self.paths.len() <= p {
                        self.paths.resize_with(p + 1, PathRecord::default);
                    }
                    self.paths[p].bytes += u64::from(d.payload_bytes);
                }
                c.on_data(
                    now,
                    s,
                    u64::from(d.payload_bytes),
                    d.intermediate,
                    d.tag.as_deref(),
                );
            }
            (Logic::Ptp(c), NdnPacket::Nack(n)) => {
                if let Some(s) = seq(&n.name) {
                    c.on_nack(now, s, &mut self.rng);
                }
            }
            (Logic::Aimd(c), NdnPacket::Data(d)) => {
                if let Some(s) = seq(&d.name) {
                    c.on_data(now, s, d.route_label, d.ce, &mut self.rng);
                }
            }
            (Logic::Aimd(c), NdnPacket::Nack(n)) => {
                if let Some(s) = seq(&n.name) {
                    c.on_nack(now, s);
                }
            }
            (Logic::Mmtp(c), NdnPacket::Data(d)) => {
                if let Some(part) = part_of(&d.name) {
                    c.on_data(now, part, &d.name.route_labels());
                }
            }
            (Logic::Mmtp(c), NdnPacket::Nack(n)) => {
                if let Some(part) = part_of(&n.name) {
                    let duplicate = n.reason == pathpool_ndn::NackReason::Duplicate;
                    c.on_nack(part, &n.name.route_labels(), duplicate);
                }
            }
            (_, NdnPacket::Interest(_)) => {}
        }
    }

    fn on_timer(&mut self, now: Time) {
        match &mut self.logic {
            Logic::Ptp(c) => c.handle_timeout(now, &mut self.rng),
            Logic::Aimd(c) => c.handle_timeout(now),
            Logic::Mmtp(c) => c.handle_timeout(now),
        }
    }
}

/// The mmTP part a name asks for: its last component before the route labels, `mm` or a
/// chunk index.
fn part_of(name: &Name) -> Option<Part> {
    let bare = name.without_labels();
    match bare.components().last()?.as_ref() {
        METADATA_SUFFIX => Some(Part::Metadata),
        k => k.parse().ok().map(Part::Chunk),
    }
}

/// Every NDN node and consumer, and the packets on the links.
#[derive(Clone, Debug)]
pub(crate) struct NdnNet {
    pub(crate) nodes: Vec<NdnNode>,
    pub(crate) consumers: Vec<NdnConsumer>,
    pub(crate) sizes: NdnSizes,
    /// The first route position of the two-hop routes, and the (node, face) each route's
    /// packets arrive at, in route order.
    pub(crate) first_route: u32,
    pub(crate) arrival: Vec<(u32, FaceId)>,
    /// The (node, face) each directed link leaves from, by link index.
    pub(crate) departure: Vec<(u32, FaceId)>,
    /// The packets on the links, by index; free indices are reused.
    slab: Vec<Option<NdnPacket>>,
    free: Vec<u32>,
    /// Work of one event (reused): packets for local applications, Interests to send.
    local: Vec<(u32, NdnPacket)>,
    interests: Vec<Interest>,
    /// The most packets on the links at once.
    pub(crate) slab_peak: usize,
    /// Each prefix a producer serves, with the nodes that serve it.
    pub(crate) producers: Vec<(Name, Vec<pathpool_topo::NodeIx>)>,
}

impl NdnNet {
    pub(crate) fn new(sizes: NdnSizes) -> Self {
        NdnNet {
            nodes: Vec::new(),
            consumers: Vec::new(),
            sizes,
            first_route: 0,
            arrival: Vec::new(),
            departure: Vec::new(),
            slab: Vec::new(),
            free: Vec::new(),
            local: Vec::new(),
            interests: Vec::new(),
            slab_peak: 0,
            producers: Vec::new(),
        }
    }

    fn store(&mut self, p: NdnPacket) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = Some(p);
                i
            }
            None => {
                self.slab.push(Some(p));
                self.slab_peak = self.slab.len();
                (self.slab.len() - 1) as u32
            }
        }
    }

    fn take(&mut self, i: u32) -> Option<NdnPacket> {
        let p = self.slab.get_mut(i as usize)?.take();
        if p.is_some() {
            self.free.push(i);
        }
        p
    }
}

impl Simulation {
    fn ndn(&mut self) -> &mut NdnNet {
        self.elements
            .ndn
            .as_deref_mut()
            .expect("NDN elements exist only with [ndn]")
    }

    /// A packet crossed a link into NDN node `n`'s hop.
    #[inline(never)]
    pub(crate) fn through_ndn(&mut self, n: u32, pkt: Packet) {
        let now = self.net.now;
        // The node is the end of the packet's route: it counts as delivered.
        self.stats.packets_delivered += 1;
        let ndn = self.ndn();
        let route = (pkt.hop - 2 - ndn.first_route) / 2;
        let (node, face) = ndn.arrival[route as usize];
        debug_assert_eq!(node, n);
        let Some(p) = ndn.take(pkt.seq as u32) else {
            return;
        };
        let fwd = &mut ndn.nodes[n as usize].fwd;
        match p {
            NdnPacket::Interest(i) => fwd.on_interest(now, face, i),
            NdnPacket::Data(mut d) => {
                // A REM queue's mark on the way, never cleared (CHoPCoP).
                d.ce |= pkt.ce();
                fwd.on_data(now, face, d);
            }
            NdnPacket::Nack(k) => fwd.on_nack(now, face, k),
        }
        self.ndn_flush(n);
    }

    /// Directed link `link` failed or was repaired: the face it leaves from goes down or up.
    pub(crate) fn ndn_link_state(&mut self, link: usize, up: bool) {
        let Some(ndn) = self.elements.ndn.as_deref_mut() else {
            return;
        };
        if let Some(&(n, face)) = ndn.departure.get(link) {
            ndn.nodes[n as usize].fwd.set_face_up(face, up);
        }
    }

    /// Node `n`'s timer.
    pub(crate) fn on_ndn_node_timer(&mut self, n: u32) {
        let now = self.net.now;
        self.ndn().nodes[n as usize].fwd.handle_timeout(now);
        self.ndn_flush(n);
    }

    /// Consumer `c`'s timer.
    pub(crate) fn on_ndn_consumer_timer(&mut self, c: u32) {
        let now = self.net.now;
        let ndn = self.ndn();
        let consumer = &mut ndn.consumers[c as usize];
        if now >= consumer.start {
            consumer.on_timer(now);
        }
        let n = consumer.node;
        self.ndn_pump(c);
        self.ndn_flush(n);
    }

    /// Consumer `c` hands what it may send now to its node's forwarder, and its timer is set.
    fn ndn_pump(&mut self, c: u32) {
        let now = self.net.now;
        let ndn = self.elements.ndn.as_deref_mut().expect("NDN");
        let consumer = &mut ndn.consumers[c as usize];
        if now >= consumer.start {
            let mut out = std::mem::take(&mut ndn.interests);
            consumer.poll_interests(now, &mut out);
            consumer.note_paths(now);
            if consumer.completed_at.is_none() && consumer.is_complete() {
                consumer.completed_at = Some(now);
            }
            let fwd = &mut ndn.nodes[consumer.node as usize].fwd;
            for i in out.drain(..) {
                fwd.on_interest(now, 0, i);
            }
            ndn.interests = out;
        }
        let consumer = &ndn.consumers[c as usize];
        if let Some(t) = consumer.deadline() {
            self.net.events.schedule(consumer.elem, t.max(now));
        }
    }

    /// Sends what node `n`'s forwarder has to send, to its links and its applications, until
    /// it has nothing left; then sets its timer.
    fn ndn_flush(&mut self, n: u32) {
        let now = self.net.now;
        loop {
            let mut local = std::mem::take(&mut self.ndn().local);
            loop {
                let ndn = self.elements.ndn.as_deref_mut().expect("NDN");
                let Some((face, p)) = ndn.nodes[n as usize].fwd.poll_transmit() else {
                    break;
                };
                if face != 0 {
                    let (size, route) = ndn.sizes.of(&p);
                    ndn.nodes[n as usize].route_info_bytes += u64::from(route);
                    let hop = ndn.nodes[n as usize].face_route[face as usize];
                    let ect = matches!(p, NdnPacket::Data(_));
                    let slot = ndn.store(p);
                    self.ndn_send(Packet::ndn(slot, size, hop, ect));
                    continue;
                }
                let node = &mut ndn.nodes[n as usize];
                match p {
                    NdnPacket::Interest(i) if node.serves(&i.name) => {
                        let mut d = Data::new(i.name, ndn.sizes.payload);
                        if i.probe {
                            d.tag = Some(Vec::new());
                        }
                        node.produced += 1;
                        node.fwd.on_data(now, 0, d);
                    }
                    NdnPacket::Interest(_) => {}
                    other => local.push((n, other)),
                }
            }
            let ndn = self.elements.ndn.as_deref_mut().expect("NDN");
            if local.is_empty() {
                ndn.local = local;
                break;
            }
            let mut touched = Vec::new();
            for (_, p) in local.drain(..) {
                let name = match &p {
                    NdnPacket::Data(d) => &d.name,
                    NdnPacket::Nack(k) => &k.name,
                    NdnPacket::Interest(i) => &i.name,
                };
                let flow = name.without_labels().flow_name();
                let Some(cs) = ndn.nodes[n as usize].consumers.get(&flow) else {
                    continue;
                };
                for &c in cs {
                    ndn.consumers[c as usize].on_packet(now, p.clone());
                    touched.push(c);
                }
            }
            ndn.local = local;
            for c in touched {
                self.ndn_pump(c);
            }
        }
        let ndn = self.elements.ndn.as_deref().expect("NDN");
        let node = &ndn.nodes[n as usize];
        if let Some(t) = node.fwd.poll_timeout() {
            let elem = node.elem;
            match self.net.events.time_of(elem) {
                Some(cur) if cur <= t && cur > now => {}
                _ => self.net.events.schedule(elem, t.max(now)),
            }
        }
    }

    /// Puts an NDN packet on the link of its route; a packet the link drops gives its slab
    /// entry back.
    fn ndn_send(&mut self, mut pkt: Packet) {
        let Some((elem, slot)) = self.net.routes.next_element(&mut self.net.links, &mut pkt) else {
            self.ndn().take(pkt.seq as u32);
            return;
        };
        let crate::kinds::Slot::Link(l) = slot else {
            unreachable!("an NDN route starts with its link")
        };
        let link = &mut self.net.links[l as usize];
        let lost = |c: &crate::link::LinkCounters| c.drops + c.failure_losses;
        let before = lost(link.counters());
        let next = link.enqueue(self.net.now, pkt);
        let dropped = lost(link.counters()) > before;
        if let Some(t) = next {
            self.net.events.schedule(elem, t);
        }
        if dropped {
            self.ndn().take(pkt.seq as u32);
        }
    }
}
