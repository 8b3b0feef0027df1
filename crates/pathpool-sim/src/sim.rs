//! The simulation engine: elements, routes and the event loop.

use pathpool_core::Time;

use crate::cache::{CacheHops, CacheRole, SimCache};
use crate::event::{EventQueue, HOT};
use crate::link::Link;
use crate::mmtp_flow::{MmtpConn, MmtpPath};
use crate::mp_flow::MpConn;
use crate::packet::Packet;
use crate::sampler::Sampler;
use crate::spec::FlowKind;
use crate::tcp_flow::{TcpSink, TcpSource};
use crate::tm_control::{PathUpdate, TmControl};
use crate::udp_flow::{UdpSink, UdpSource};

/// Where an element's state is kept: its kind and its index among the elements of that kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    Link(u32),
    /// Link `.0` is a wire ([`Link::is_wire`]): packets cross it without an event. Only route
    /// hops are marked so; the element's own slot stays [`Slot::Link`].
    Wire(u32),
    TcpSource(u32),
    TcpSink(u32),
    UdpSource(u32),
    UdpSink(u32),
    /// The sending end of multipath connection `.0`.
    MpSource(u32),
    /// The receiving end of multipath connection `.0`.
    MpSink(u32),
    /// The subscriber of mmTP download `.0`.
    MmtpSub(u32),
    /// The publishers of mmTP download `.0`.
    MmtpPub(u32),
    /// On-path chunk cache `.0`: a hop of mmTP routes, crossed without an event.
    Cache(u32),
    Sampler,
    /// The topology manager's link-state element (link failures, re-sent FID sets); only in
    /// scenarios with `failures`.
    Tm,
}

/// Every element (something that receives packets or has timed work, with at most one pending
/// event), identified by its index in the order the scenario created them: that index orders
/// simultaneous events. The state is kept in one vector per kind, not in one vector of an enum
/// of boxes, so that endpoints are stored inline and a packet reaches its element with one
/// lookup in the small `slots` table and no pointer to chase.
#[derive(Clone, Debug, Default)]
pub(crate) struct Elements {
    slots: Vec<Slot>,
    pub(crate) links: Vec<Link>,
    pub(crate) tcp_sources: Vec<TcpSource>,
    pub(crate) tcp_sinks: Vec<TcpSink>,
    pub(crate) udp_sources: Vec<UdpSource>,
    pub(crate) udp_sinks: Vec<UdpSink>,
    pub(crate) mp_conns: Vec<MpConn>,
    pub(crate) mmtp_conns: Vec<MmtpConn>,
    pub(crate) caches: Vec<SimCache>,
}

impl Elements {
    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }
    fn push(&mut self, slot: Slot) -> u32 {
        self.slots.push(slot);
        (self.slots.len() - 1) as u32
    }
    /// Adds a link and returns its element index.
    pub(crate) fn add_link(&mut self, link: Link) -> u32 {
        self.links.push(link);
        self.push(Slot::Link(self.links.len() as u32 - 1))
    }
    /// Adds a TCP flow's source and sink and returns their element indices.
    pub(crate) fn add_tcp_flow(&mut self, mut src: TcpSource, sink: TcpSink) -> (u32, u32) {
        // Source and sink share one index, so that a source finds its sink's SACK channel.
        src.sack_channel = sink.sack.is_some();
        self.tcp_sources.push(src);
        self.tcp_sinks.push(sink);
        let i = self.tcp_sources.len() as u32 - 1;
        (self.push(Slot::TcpSource(i)), self.push(Slot::TcpSink(i)))
    }
    /// Adds a UDP source and returns its element index.
    pub(crate) fn add_udp_source(&mut self, src: UdpSource) -> u32 {
        self.udp_sources.push(src);
        self.push(Slot::UdpSource(self.udp_sources.len() as u32 - 1))
    }
    /// Adds a UDP sink and returns its element index.
    pub(crate) fn add_udp_sink(&mut self, sink: UdpSink) -> u32 {
        self.udp_sinks.push(sink);
        self.push(Slot::UdpSink(self.udp_sinks.len() as u32 - 1))
    }
    /// Adds a multipath connection as two elements, its source and its sink; returns their
    /// element indices.
    pub(crate) fn add_mp_conn(&mut self, conn: MpConn) -> (u32, u32) {
        self.mp_conns.push(conn);
        let c = self.mp_conns.len() as u32 - 1;
        (self.push(Slot::MpSource(c)), self.push(Slot::MpSink(c)))
    }
    /// Adds an mmTP download; returns its subscriber's and its publishers' element indices.
    pub(crate) fn add_mmtp_conn(&mut self, conn: MmtpConn) -> (u32, u32) {
        self.mmtp_conns.push(conn);
        let c = self.mmtp_conns.len() as u32 - 1;
        (self.push(Slot::MmtpSub(c)), self.push(Slot::MmtpPub(c)))
    }
    /// Adds a router's chunk cache and returns its element index.
    pub(crate) fn add_cache(&mut self, cache: SimCache) -> u32 {
        self.caches.push(cache);
        self.push(Slot::Cache(self.caches.len() as u32 - 1))
    }
    /// Adds the sampler and returns its element index.
    pub(crate) fn add_sampler(&mut self) -> u32 {
        self.push(Slot::Sampler)
    }
    /// Adds the topology manager's element and returns its index.
    pub(crate) fn add_tm(&mut self) -> u32 {
        self.push(Slot::Tm)
    }

    /// Where element `elem` is kept.
    #[inline]
    pub(crate) fn slot(&self, elem: u32) -> Slot {
        self.slots[elem as usize]
    }
    /// The link that element `elem` is (link metadata always points at a link).
    pub(crate) fn link(&self, elem: u32) -> &Link {
        match self.slot(elem) {
            Slot::Link(i) => &self.links[i as usize],
            s => unreachable!("element {elem} is {s:?}, not a link"),
        }
    }
    /// The TCP source that element `elem` is, if it is one.
    pub(crate) fn tcp_source(&self, elem: u32) -> Option<&TcpSource> {
        match self.slot(elem) {
            Slot::TcpSource(i) => Some(&self.tcp_sources[i as usize]),
            _ => None,
        }
    }
    /// The UDP source that element `elem` is, if it is one.
    pub(crate) fn udp_source(&self, elem: u32) -> Option<&UdpSource> {
        match self.slot(elem) {
            Slot::UdpSource(i) => Some(&self.udp_sources[i as usize]),
            _ => None,
        }
    }
    /// The multipath transfer (MPTCP-like connection or mmTP download) that element `elem`
    /// is an end of, if it is one.
    pub(crate) fn multipath(&self, elem: u32) -> Option<Multi<'_>> {
        match self.slot(elem) {
            Slot::MpSource(i) | Slot::MpSink(i) => Some(Multi::Mp(&self.mp_conns[i as usize])),
            Slot::MmtpSub(i) | Slot::MmtpPub(i) => Some(Multi::Mmtp(&self.mmtp_conns[i as usize])),
            _ => None,
        }
    }
    /// When the sink `elem` of a finite TCP flow received its last byte.
    pub(crate) fn completed_at(&self, elem: u32) -> Option<Time> {
        match self.slot(elem) {
            Slot::TcpSink(i) => self.tcp_sinks[i as usize].completed_at,
            Slot::MpSink(i) => self.mp_conns[i as usize].completed_at,
            Slot::MmtpSub(i) => self.mmtp_conns[i as usize].completed_at,
            _ => None,
        }
    }
    /// Bytes the endpoint `elem` has delivered in order to its application.
    pub(crate) fn delivered(&self, elem: u32) -> u64 {
        match self.slot(elem) {
            Slot::TcpSink(i) => self.tcp_sinks[i as usize].delivered(),
            Slot::MpSink(i) => self.mp_conns[i as usize].delivered(),
            Slot::MmtpSub(i) => self.mmtp_conns[i as usize].delivered(),
            Slot::UdpSink(i) => self.udp_sinks[i as usize].payload_bytes,
            _ => 0,
        }
    }
}

/// Source routes, stored flat: a route is a run of element indices in `hops` that crosses one or
/// more links and ends at the destination endpoint. A packet holds the position in `hops` of
/// the next element it must reach, so forwarding it is one lookup and an increment.
#[derive(Clone, Debug, Default)]
pub(crate) struct Routes {
    /// The element of each hop, and where it is kept (filled in by `resolve` once every
    /// element exists), so that one lookup gives both.
    hops: Vec<(u32, Slot)>,
    /// Where each route starts in `hops`.
    starts: Vec<u32>,
}

impl Routes {
    /// Adds a route (at least one link, then the endpoint) and returns the position of its
    /// first hop, which is what packets sent along it start with.
    pub(crate) fn add(&mut self, elements: &[u32]) -> u32 {
        debug_assert!(elements.len() >= 2, "a route crosses at least one link");
        // The endpoints of a flow are added after its routes: `resolve` fills the slots in.
        let start = self.hops.len() as u32;
        self.hops
            .extend(elements.iter().map(|&e| (e, Slot::Sampler)));
        self.starts.push(start);
        start
    }
    /// Looks up where every hop's element is kept, and marks the hops that are wires. The
    /// first hop of a route is left a plain link when every link of the route is a wire, so
    /// that an endpoint always sends into a link (and the packet takes one event to arrive).
    /// A cache's answer starts after the cache, so the same holds from there; and the wire
    /// into a cache stays a link, so that caches are met only on a link's event.
    fn resolve(&mut self, elements: &Elements) {
        for r in 0..self.starts.len() {
            self.resolve_route(self.starts[r] as usize, elements);
        }
    }
    /// Adds a route while the simulation runs (a path the topology manager sent), resolved
    /// at once; returns the position of its first hop.
    pub(crate) fn add_resolved(&mut self, elements: &[u32], all: &Elements) -> u32 {
        let start = self.add(elements);
        self.resolve_route(start as usize, all);
        start
    }
    /// `resolve` for the route starting at `start`: its links, then its endpoint.
    fn resolve_route(&mut self, start: usize, elements: &Elements) {
        let mut end = start;
        while let Some(hop) = self.hops.get_mut(end) {
            hop.1 = match elements.slot(hop.0) {
                Slot::Link(l) if elements.links[l as usize].is_wire() => Slot::Wire(l),
                slot => slot,
            };
            end += 1;
            if !matches!(hop.1, Slot::Link(_) | Slot::Wire(_) | Slot::Cache(_)) {
                break;
            }
        }
        let route = &mut self.hops[start..end];
        for i in 1..route.len() {
            if let (Slot::Wire(l), Slot::Cache(_)) = (route[i - 1].1, route[i].1) {
                route[i - 1].1 = Slot::Link(l);
            }
        }
        let mut segment = 0;
        loop {
            let rest = &mut route[segment..];
            let wires = rest
                .iter()
                .take_while(|h| matches!(h.1, Slot::Wire(_)))
                .count();
            if wires > 0 && !matches!(rest[wires].1, Slot::Link(_)) {
                if let Slot::Wire(l) = rest[0].1 {
                    rest[0].1 = Slot::Link(l);
                }
            }
            match rest.iter().position(|h| matches!(h.1, Slot::Cache(_))) {
                Some(c) => segment += c + 1,
                None => break,
            }
        }
    }
    /// The element at position `hop`, and where it is kept.
    #[inline]
    fn at(&self, hop: u32) -> (u32, Slot) {
        self.hops[hop as usize]
    }
    /// The element at the packet's next hop, with the packet's hop advanced past it, after
    /// moving the packet across any wires there; `None` if a wire dropped it. Always inlined:
    /// every packet takes it once per hop, and left to itself the compiler makes it a call.
    #[inline(always)]
    fn next_element(&self, links: &mut [Link], pkt: &mut Packet) -> Option<(u32, Slot)> {
        let (elem, slot) = self.at(pkt.hop);
        pkt.hop += 1;
        match slot {
            Slot::Wire(l) => {
                // One wire is crossed here (a packet crosses one on each side of a path
                // through a router in front of a bottleneck, twice per delivered packet, and
                // a call cost about as much as the crossing itself); a second one in a row
                // goes out of line.
                if !links[l as usize].pass(pkt.size()) {
                    return None;
                }
                let (elem, slot) = self.at(pkt.hop);
                pkt.hop += 1;
                match slot {
                    Slot::Wire(l) => self.cross_wires(l, links, pkt),
                    _ => Some((elem, slot)),
                }
            }
            _ => Some((elem, slot)),
        }
    }
    /// Moves `pkt` across wire `first` and any wires after it (kept out of line: routes with
    /// two wires in a row are rare).
    #[inline(never)]
    fn cross_wires(&self, first: u32, links: &mut [Link], pkt: &mut Packet) -> Option<(u32, Slot)> {
        let mut wire = first;
        loop {
            if !links[wire as usize].pass(pkt.size()) {
                return None;
            }
            let (elem, slot) = self.at(pkt.hop);
            pkt.hop += 1;
            match slot {
                Slot::Wire(l) => wire = l,
                _ => return Some((elem, slot)),
            }
        }
    }
}

/// What the engine knows about a flow besides its elements.
#[derive(Clone, Debug)]
pub(crate) struct FlowMeta {
    pub(crate) id: String,
    pub(crate) kind: FlowKind,
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) cc: Option<String>,
    /// How the flow finds and repairs losses (`None` for UDP).
    pub(crate) loss_recovery: Option<&'static str>,
    pub(crate) start: Time,
    pub(crate) stop: Option<Time>,
    /// Size of a finite flow in bytes.
    pub(crate) size: Option<u64>,
    pub(crate) source: u32,
    pub(crate) sink: u32,
    /// Nodes the data path visits (a multipath flow's first subflow's).
    pub(crate) path: Vec<String>,
    /// A multipath flow's subflows in scenario order (empty for other flows).
    pub(crate) subflows: Vec<SubflowMeta>,
}

/// What the engine knows about a subflow of a multipath flow.
#[derive(Clone, Debug)]
pub(crate) struct SubflowMeta {
    /// Nodes its data path visits.
    pub(crate) path: Vec<String>,
    pub(crate) group: u32,
    pub(crate) start: Time,
    pub(crate) stop: Option<Time>,
}

/// What the engine knows about a directed link besides its element.
#[derive(Clone, Debug)]
pub(crate) struct LinkMeta {
    /// Unique id of this direction: `<name>:<from>-><to>`.
    pub(crate) id: String,
    /// The link's name in the scenario.
    pub(crate) name: String,
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) delay_s: f64,
    pub(crate) queue: String,
    pub(crate) elem: u32,
}

/// Work counters of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Events processed.
    pub events: u64,
    /// TCP data packets that reached their sink (retransmissions included).
    pub data_packets_delivered: u64,
    /// Packets of any kind that reached an endpoint.
    pub packets_delivered: u64,
}

/// A compiled scenario, ready to run.
///
/// Build one with [`crate::LoadedScenario::compile`]; advance it with
/// [`run_until`](Simulation::run_until) (in steps, for progress reporting) or
/// [`run`](Simulation::run); collect [`crate::Results`] at the end.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub(crate) now: Time,
    pub(crate) end: Time,
    pub(crate) seed: u64,
    pub(crate) events: EventQueue,
    /// The link of each hot element of `events`, by leaf rank (the hot elements in element
    /// order), so that a link's event finds its link with one lookup.
    pub(crate) hot_links: Vec<u32>,
    pub(crate) elements: Elements,
    pub(crate) routes: Routes,
    pub(crate) flows: Vec<FlowMeta>,
    pub(crate) links: Vec<LinkMeta>,
    pub(crate) sampler: Sampler,
    pub(crate) sampler_elem: u32,
    /// Link failures and the topology manager's reactions (scenarios with `failures`).
    pub(crate) tm: Option<TmControl>,
    /// What each cache hop of the mmTP routes does (scenarios with `caches`).
    pub(crate) cache_hops: CacheHops,
    pub(crate) stats: RunStats,
    pub(crate) name: Option<String>,
}

impl Simulation {
    pub(crate) fn new(end: Time, seed: u64, sampler: Sampler) -> Self {
        Simulation {
            now: Time::ZERO,
            end,
            seed,
            events: EventQueue::default(),
            hot_links: Vec::new(),
            elements: Elements::default(),
            routes: Routes::default(),
            flows: Vec::new(),
            links: Vec::new(),
            sampler,
            sampler_elem: u32::MAX,
            tm: None,
            cache_hops: CacheHops::default(),
            stats: RunStats::default(),
            name: None,
        }
    }

    /// Schedules every element's first event; called once the scenario is built.
    pub(crate) fn prime(&mut self) {
        self.routes.resolve(&self.elements);
        // Links' events move on every packet; every other element's rarely, and a wire's
        // never (packets cross it without one) unless it starts a route of wires only.
        let hot: Vec<bool> = (0..self.elements.len() as u32)
            .map(|e| match self.elements.slot(e) {
                Slot::Link(l) => !self.elements.links[l as usize].is_wire(),
                _ => false,
            })
            .collect();
        self.events = EventQueue::new(&hot);
        self.hot_links = (0..self.elements.len() as u32)
            .filter(|&e| hot[e as usize])
            .map(|e| match self.elements.slot(e) {
                Slot::Link(l) => l,
                _ => unreachable!("only links are hot"),
            })
            .collect();
        for i in 0..self.elements.len() as u32 {
            let first = match self.elements.slot(i) {
                Slot::TcpSource(s) => self.elements.tcp_sources[s as usize].deadline(),
                Slot::UdpSource(s) => self.elements.udp_sources[s as usize].deadline(),
                Slot::MpSource(c) => self.elements.mp_conns[c as usize].source_deadline(),
                Slot::MmtpSub(c) => self.elements.mmtp_conns[c as usize].deadline(),
                Slot::Sampler => self.sampler.next_time(),
                Slot::Tm => self.tm.as_ref().and_then(TmControl::deadline),
                _ => None,
            };
            if let Some(t) = first {
                self.events.schedule(i, t);
            }
        }
    }

    /// Current simulated time.
    #[must_use]
    pub fn now(&self) -> Time {
        self.now
    }
    /// When the run ends.
    #[must_use]
    pub fn end(&self) -> Time {
        self.end
    }
    /// The seed the scenario was compiled with.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Whether the run has reached its end.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.now >= self.end
    }
    /// Work counters so far.
    #[must_use]
    pub fn stats(&self) -> RunStats {
        self.stats
    }
    /// The scenario's name.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    /// Names the run (used in reports).
    pub fn set_name(&mut self, name: Option<String>) {
        self.name = name;
    }
    /// Number of flows (after expanding `count` and generators).
    #[must_use]
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    /// Number of directed links.
    #[must_use]
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    /// Processes every event up to and including `until` (capped at the end of the run).
    pub fn run_until(&mut self, until: Time) {
        let until = until.min(self.end);
        while let Some((t, id)) = self.events.next() {
            if t > until {
                break;
            }
            self.now = t;
            self.stats.events += 1;
            if id & HOT != 0 {
                self.on_link_event(id & !HOT);
            } else {
                self.dispatch(id);
            }
        }
        self.now = self.now.max(until);
    }

    /// The event of the link with leaf rank `rank` in the event queue: its head packet
    /// arrives. What `dispatch` does for a link, found without the element's slot.
    #[inline(always)]
    fn on_link_event(&mut self, rank: u32) {
        let l = self.hot_links[rank as usize];
        let (pkt, next) = self.elements.links[l as usize].on_event(self.now);
        match next {
            Some(t) => self.events.reschedule_hot(rank, t),
            None => self.events.pop_hot(rank),
        }
        if let Some(p) = pkt {
            self.deliver(p);
        }
    }

    #[inline]
    fn dispatch(&mut self, e: u32) {
        let now = self.now;
        let Elements {
            slots,
            links,
            tcp_sources,
            tcp_sinks,
            udp_sources,
            mp_conns,
            mmtp_conns,
            ..
        } = &mut self.elements;
        match slots[e as usize] {
            Slot::Link(l) => {
                let (pkt, next) = links[l as usize].on_event(now);
                match next {
                    Some(t) => self.events.reschedule_top(e, t),
                    None => self.events.pop_top(e),
                }
                if let Some(p) = pkt {
                    self.deliver(p);
                }
            }
            Slot::TcpSource(s) => {
                self.events.pop_top(e);
                let src = &mut tcp_sources[s as usize];
                let mut launcher = Launcher {
                    now,
                    routes: &self.routes,
                    links,
                    events: &mut self.events,
                };
                src.on_timer(now, |p| launcher.send(p));
                if let Some(t) = src.deadline() {
                    self.events.schedule(e, t);
                }
            }
            Slot::TcpSink(s) => {
                self.events.pop_top(e);
                let sink = &mut tcp_sinks[s as usize];
                let ack = sink.on_timer(now);
                if let Some(t) = sink.deadline() {
                    self.events.schedule(e, t);
                }
                if let Some(a) = ack {
                    self.launcher().send(a);
                }
            }
            Slot::UdpSource(s) => {
                self.events.pop_top(e);
                let src = &mut udp_sources[s as usize];
                let pkt = src.on_timer(now);
                if let Some(t) = src.deadline() {
                    self.events.schedule(e, t);
                }
                if let Some(p) = pkt {
                    self.launcher().send(p);
                }
            }
            Slot::UdpSink(_) => {
                self.events.pop_top(e);
            }
            Slot::MpSource(c) => {
                self.events.pop_top(e);
                let conn = &mut mp_conns[c as usize];
                let mut launcher = Launcher {
                    now,
                    routes: &self.routes,
                    links,
                    events: &mut self.events,
                };
                conn.on_source_timer(now, |p| launcher.send(p));
                if let Some(t) = conn.source_deadline() {
                    self.events.schedule(e, t);
                }
            }
            Slot::MpSink(c) => {
                self.events.pop_top(e);
                let conn = &mut mp_conns[c as usize];
                let mut launcher = Launcher {
                    now,
                    routes: &self.routes,
                    links,
                    events: &mut self.events,
                };
                conn.on_sink_timer(now, |p| launcher.send(p));
                if let Some(t) = conn.sink_deadline() {
                    self.events.schedule(e, t);
                }
            }
            Slot::MmtpSub(c) => {
                self.events.pop_top(e);
                let conn = &mut mmtp_conns[c as usize];
                let mut launcher = Launcher {
                    now,
                    routes: &self.routes,
                    links,
                    events: &mut self.events,
                };
                conn.on_timer(now, |p| launcher.send(p));
                if let Some(t) = conn.deadline() {
                    self.events.schedule(e, t);
                }
            }
            Slot::MmtpPub(_) => {
                self.events.pop_top(e);
            }
            Slot::Wire(_) | Slot::Cache(_) => {
                unreachable!("wires and caches are route hops, crossed without events")
            }
            Slot::Sampler => {
                self.events.pop_top(e);
                self.take_samples();
                if let Some(t) = self.sampler.next_time() {
                    self.events.schedule(e, t);
                }
            }
            Slot::Tm => {
                self.events.pop_top(e);
                self.on_tm(e);
            }
        }
    }

    /// The topology manager's element: links fail or are repaired when the scenario says;
    /// `tm_reaction` later the downloads whose paths this changed get their new FID sets.
    #[cold]
    fn on_tm(&mut self, e: u32) {
        let now = self.now;
        let Some(mut tm) = self.tm.take() else {
            return;
        };
        for (edge, up) in tm.take_changes(now) {
            let elem = tm.edge_elem[edge.0 as usize];
            if let Slot::Link(l) = self.elements.slot(elem) {
                self.elements.links[l as usize].set_up(now, up);
            }
        }
        for (d, update) in tm.take_reactions(now) {
            self.resend_fid_set(&tm, d, update);
        }
        if let Some(t) = tm.deadline() {
            self.events.schedule(e, t);
        }
        self.tm = Some(tm);
    }

    /// Download `d` of `tm` receives its new FID set.
    fn resend_fid_set(&mut self, tm: &TmControl, d: usize, update: PathUpdate) {
        let now = self.now;
        let dl = &tm.downloads[d];
        let graph = dl.manager.graph();
        let mut added = Vec::with_capacity(update.added.len());
        for p in update.added {
            let request_route = self.routes.add_resolved(&p.request.hops, &self.elements);
            let reply_route = self.routes.add_resolved(&p.reply.hops, &self.elements);
            self.cache_hops
                .register(dl.conn, &p.request, request_route, &p.reply, reply_route);
            let mut path = vec![tm.node_names[p.key.publisher.0 as usize].clone()];
            path.extend(
                p.key
                    .forward
                    .iter()
                    .map(|&e| tm.node_names[graph.ends(e).1 .0 as usize].clone()),
            );
            self.flows[dl.flow as usize].subflows.push(SubflowMeta {
                path,
                group: p.group,
                start: now,
                stop: None,
            });
            added.push(MmtpPath {
                request_route,
                reply_route,
                source: p.source,
                group: p.group,
                withdrawn: false,
            });
        }
        let meta = &mut self.flows[dl.flow as usize].subflows;
        for &i in &update.removed {
            meta[i].stop = Some(now);
        }
        for &(i, group) in &update.regrouped {
            meta[i].group = group;
        }
        let Elements {
            links, mmtp_conns, ..
        } = &mut self.elements;
        let conn = &mut mmtp_conns[dl.conn as usize];
        let mut launcher = Launcher {
            now,
            routes: &self.routes,
            links,
            events: &mut self.events,
        };
        conn.update_paths(now, &update.removed, &update.regrouped, added, |p| {
            launcher.send(p);
        });
        arm_lazily(&mut self.events, dl.sub_elem, conn.deadline());
    }

    /// Hands a packet that has crossed a link to the next element of its route.
    #[inline]
    fn deliver(&mut self, mut pkt: Packet) {
        let now = self.now;
        let Some((elem, slot)) = self.routes.next_element(&mut self.elements.links, &mut pkt)
        else {
            return;
        };
        let Elements {
            links,
            tcp_sources,
            tcp_sinks,
            udp_sinks,
            mp_conns,
            mmtp_conns,
            ..
        } = &mut self.elements;
        match slot {
            Slot::Link(l) => {
                if let Some(t) = links[l as usize].enqueue(now, pkt) {
                    self.events.schedule(elem, t);
                }
            }
            Slot::TcpSink(s) => {
                self.stats.data_packets_delivered += 1;
                self.stats.packets_delivered += 1;
                let sink = &mut tcp_sinks[s as usize];
                let ack = sink.on_data(now, &pkt);
                arm_lazily(&mut self.events, elem, sink.deadline());
                if let Some(a) = ack {
                    self.launcher().send(a);
                }
            }
            Slot::TcpSource(s) => {
                self.stats.packets_delivered += 1;
                let src = &mut tcp_sources[s as usize];
                let mut launcher = Launcher {
                    now,
                    routes: &self.routes,
                    links,
                    events: &mut self.events,
                };
                // A TCP flow's source and sink share their index (`add_tcp_flow`).
                let sack = if src.sack_channel {
                    tcp_sinks[s as usize].sack.as_deref_mut()
                } else {
                    None
                };
                src.on_ack(now, &pkt, sack, |p| launcher.send(p));
                arm_lazily(&mut self.events, elem, src.deadline());
            }
            Slot::UdpSink(s) => {
                self.stats.packets_delivered += 1;
                udp_sinks[s as usize].on_packet(&pkt);
            }
            Slot::MpSink(c) => {
                self.stats.data_packets_delivered += 1;
                self.stats.packets_delivered += 1;
                let conn = &mut mp_conns[c as usize];
                let ack = conn.on_data(now, &pkt);
                arm_lazily(&mut self.events, elem, conn.sink_deadline());
                if let Some(a) = ack {
                    Launcher {
                        now,
                        routes: &self.routes,
                        links,
                        events: &mut self.events,
                    }
                    .send(a);
                }
            }
            Slot::MpSource(c) => {
                self.stats.packets_delivered += 1;
                let conn = &mut mp_conns[c as usize];
                let mut launcher = Launcher {
                    now,
                    routes: &self.routes,
                    links,
                    events: &mut self.events,
                };
                conn.on_ack(now, &pkt, |p| launcher.send(p));
                // `arm_lazily`, asking the connection only whether its deadline is before
                // the time its timer is set for.
                let due = match self.events.time_of(elem) {
                    Some(armed) => conn.source_deadline_before(armed),
                    None => conn.source_deadline(),
                };
                if let Some(d) = due {
                    self.events.schedule(elem, d);
                }
            }
            Slot::MmtpSub(c) => {
                self.stats.data_packets_delivered += 1;
                self.stats.packets_delivered += 1;
                let conn = &mut mmtp_conns[c as usize];
                let mut launcher = Launcher {
                    now,
                    routes: &self.routes,
                    links,
                    events: &mut self.events,
                };
                conn.on_reply(now, &pkt, |p| launcher.send(p));
                arm_lazily(&mut self.events, elem, conn.deadline());
            }
            Slot::MmtpPub(c) => {
                self.stats.packets_delivered += 1;
                if let Some(reply) = mmtp_conns[c as usize].on_request(now, &pkt) {
                    Launcher {
                        now,
                        routes: &self.routes,
                        links,
                        events: &mut self.events,
                    }
                    .send(reply);
                }
            }
            Slot::Cache(c) => self.through_cache(c, pkt),
            Slot::UdpSource(_) | Slot::Sampler | Slot::Tm | Slot::Wire(_) => {
                unreachable!("routes end at sinks or TCP sources and only cross links")
            }
        }
    }

    /// A packet of an mmTP route at cache `c`: a reply is kept and goes on; a request the
    /// cache can answer goes no further and the answer starts towards the subscriber, else it
    /// goes on to the publisher.
    #[inline(never)]
    fn through_cache(&mut self, c: u32, pkt: Packet) {
        let Some(hop) = self.cache_hops.get(pkt.hop - 1) else {
            return self.deliver(pkt);
        };
        let Elements {
            links,
            mmtp_conns,
            caches,
            ..
        } = &mut self.elements;
        let conn = &mmtp_conns[hop.conn as usize];
        let cache = &mut caches[c as usize].cache;
        match hop.role {
            CacheRole::Store => {
                conn.store_reply(cache, &pkt);
                self.deliver(pkt);
            }
            CacheRole::Answer { reply_from } => match conn.answer(cache, &pkt, reply_from) {
                Some(reply) => Launcher {
                    now: self.now,
                    routes: &self.routes,
                    links,
                    events: &mut self.events,
                }
                .send(reply),
                None => self.deliver(pkt),
            },
        }
    }

    /// What an endpoint of this simulation sends with.
    #[inline]
    fn launcher(&mut self) -> Launcher<'_> {
        Launcher {
            now: self.now,
            routes: &self.routes,
            links: &mut self.elements.links,
            events: &mut self.events,
        }
    }

    fn take_samples(&mut self) {
        let now = self.now;
        for link in &mut self.elements.links {
            link.advance(now);
        }
        self.sampler
            .sample(now, &self.flows, &self.links, &self.elements);
    }
}

/// Makes sure `elem` will be woken at or before `deadline`. A later deadline is not moved in
/// the queue: the element wakes early, finds nothing due and re-arms itself (the
/// retransmission timer is restarted on every ACK, so this saves a heap update per ACK).
#[inline]
fn arm_lazily(events: &mut EventQueue, elem: u32, deadline: Option<Time>) {
    if let Some(d) = deadline {
        match events.time_of(elem) {
            Some(cur) if cur <= d => {}
            _ => events.schedule(elem, d),
        }
    }
}

/// Puts the packets an endpoint sends onto the first link of their route, directly from the
/// endpoint's code: no buffer in between, and the borrow of the endpoint (in its own vector)
/// does not conflict with those of the links and the event queue.
struct Launcher<'a> {
    now: Time,
    routes: &'a Routes,
    links: &'a mut [Link],
    events: &'a mut EventQueue,
}

impl Launcher<'_> {
    // Always inlined: it runs for every packet sent, from inside the endpoints' closures.
    #[inline(always)]
    fn send(&mut self, mut pkt: Packet) {
        let Some((elem, slot)) = self.routes.next_element(self.links, &mut pkt) else {
            return;
        };
        let Slot::Link(l) = slot else {
            unreachable!("a route starts with a link")
        };
        if let Some(t) = self.links[l as usize].enqueue(self.now, pkt) {
            self.events.schedule(elem, t);
        }
    }
}

/// A multipath transfer of either kind, as results and traces see it.
#[derive(Clone, Copy)]
pub(crate) enum Multi<'a> {
    Mp(&'a MpConn),
    Mmtp(&'a MmtpConn),
}

/// A subflow's counters, whichever protocol runs it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SubflowCounters {
    /// MPTCP: bytes cumulatively acknowledged on the subflow; mmTP: chunk payload that
    /// arrived first on it.
    pub(crate) delivered_bytes: u64,
    /// MPTCP: payload bytes sent; mmTP: payload bytes requested.
    pub(crate) sent_bytes: u64,
    pub(crate) retransmissions: u64,
    pub(crate) timeouts: u64,
    pub(crate) fast_recoveries: u64,
}

impl Multi<'_> {
    /// Counters of subflow `j` in scenario order (`None` before it opens).
    pub(crate) fn subflow(&self, j: usize) -> Option<SubflowCounters> {
        match self {
            Multi::Mp(c) => c.subflow_sender(j).map(|tx| {
                let st = tx.stats();
                SubflowCounters {
                    delivered_bytes: tx.snd_una(),
                    sent_bytes: st.bytes_sent,
                    retransmissions: st.retransmissions,
                    timeouts: st.timeouts,
                    fast_recoveries: st.fast_recoveries,
                }
            }),
            Multi::Mmtp(c) => c.subflow_stats(j).map(|st| SubflowCounters {
                delivered_bytes: st.bytes_delivered,
                sent_bytes: st.requests * u64::from(c.chunk_bytes()),
                retransmissions: st.retransmissions,
                timeouts: st.timeouts,
                fast_recoveries: 0,
            }),
        }
    }
    /// The controller's state and smoothed RTT of subflow `j`, for traces.
    pub(crate) fn trace(&self, j: usize) -> Option<(pathpool_cc::CcMetrics, f64)> {
        match self {
            Multi::Mp(c) => c.trace(j),
            Multi::Mmtp(c) => c.trace(j),
        }
    }
    /// Packets sent, retransmissions, timeouts and fast recoveries over every subflow (for
    /// mmTP: requests).
    pub(crate) fn totals(&self) -> (u64, u64, u64, u64) {
        match self {
            Multi::Mp(c) => {
                let st = c.stats();
                (
                    st.segments_sent,
                    st.retransmissions,
                    st.timeouts,
                    st.fast_recoveries,
                )
            }
            Multi::Mmtp(c) => {
                (0..c.paths.len())
                    .filter_map(|j| c.subflow_stats(j))
                    .fold((0, 0, 0, 0), |t, st| {
                        (
                            t.0 + st.requests,
                            t.1 + st.retransmissions,
                            t.2 + st.timeouts,
                            0,
                        )
                    })
            }
        }
    }
}
