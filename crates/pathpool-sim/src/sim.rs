//! The simulation engine: the event loop, handing each event to the network or to the
//! element it is for.

use pathpool_core::hash::FxHashMap;
use pathpool_core::Time;

use crate::cache::{CacheHops, CacheRole};
use crate::element::Element;
use crate::element::End;
use crate::event::{EventQueue, HOT};
use crate::inrpp_router::RouterHops;
use crate::interarrival::Interarrival;
use crate::kinds::{dispatch, Elements, Slot};
use crate::link::Link;
use crate::mmtp_flow::MmtpPath;
use crate::network::{Network, Routes};
use crate::packet::Packet;
use crate::sampler::Sampler;
use crate::seq_trace::SequenceTrace;
use crate::spec::FlowKind;
use crate::spec::MpFairnessMode;
use crate::tm_control::{PathUpdate, TmControl};
use pathpool_proto::inrpp::router::Out;

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
    /// Payload bytes per byte on the wire of a full data packet (TCP: mss / (mss + header)):
    /// what turns a link's rate into the goodput one flow could get from it.
    pub(crate) payload_fraction: f64,
    /// The start of the route its sender sends data on: single-path TCP, INRPP and RCP
    /// flows, whose sequence numbers `measure.trace_sequences` can trace.
    pub(crate) data_route: Option<u32>,
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
    /// Packets of any kind that reached an endpoint (an NDN packet: each node it reaches).
    pub packets_delivered: u64,
}

/// A compiled scenario, ready to run.
///
/// Build one with [`crate::LoadedScenario::compile`]; advance it with
/// [`run_until`](Simulation::run_until) (in steps, for progress reporting) or
/// [`run`](Simulation::run); collect [`crate::Results`] at the end.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub(crate) end: Time,
    pub(crate) seed: u64,
    /// The links, the routes over them and the event queue, with the clock: what the
    /// endpoints send into.
    pub(crate) net: Network,
    /// The link of each hot element of the event queue, by leaf rank (the hot elements in
    /// element order), so that a link's event finds its link with one lookup.
    pub(crate) hot_links: Vec<u32>,
    pub(crate) elements: Elements,
    /// The routes as the compiler adds them; [`prime`](Simulation::prime) hands them to the
    /// network.
    pub(crate) routes: Routes,
    pub(crate) flows: Vec<FlowMeta>,
    pub(crate) links: Vec<LinkMeta>,
    pub(crate) sampler: Sampler,
    pub(crate) sampler_elem: u32,
    /// Link failures and the topology manager's reactions (scenarios with `failures`).
    pub(crate) tm: Option<TmControl>,
    /// What each cache hop of the mmTP routes does (scenarios with `caches`).
    pub(crate) cache_hops: CacheHops,
    /// What each INRPP router hop does, and the detour routes (scenarios with `[inrpp]`).
    pub(crate) router_hops: RouterHops,
    /// The RCP controller of each controlled link, by the link's element (while building).
    pub(crate) rcp_of_link: FxHashMap<u32, u32>,
    /// The packets a router releases in one event (reused).
    pub(crate) router_out: Vec<(Out, Packet)>,
    /// The queue lengths of a router's interfaces (reused).
    pub(crate) router_queue_buf: Vec<u64>,
    pub(crate) stats: RunStats,
    pub(crate) name: Option<String>,
    /// `measure.mp_fairness` with its tolerance, if asked for.
    pub(crate) mp_fairness: Option<(MpFairnessMode, f64)>,
    /// `measure.afct_bins_per_decade`, if asked for.
    pub(crate) afct_bins_per_decade: Option<u32>,
    /// The receivers' inter-arrival histograms, with `measure.interarrival`.
    pub(crate) interarrival: Option<Interarrival>,
    /// Whether `measure.interarrival` asked for them (they are made when the run starts).
    pub(crate) want_interarrival: bool,
    /// The flows `measure.trace_sequences` asked to trace (the trace is made when the run
    /// starts).
    pub(crate) want_seq_trace: Vec<u32>,
    /// Whether deliveries to endpoints are measured (inter-arrival times or a sequence
    /// trace).
    measure_deliveries: bool,
}

impl Simulation {
    pub(crate) fn new(end: Time, seed: u64, sampler: Sampler) -> Self {
        Simulation {
            end,
            seed,
            net: Network::default(),
            hot_links: Vec::new(),
            elements: Elements::default(),
            routes: Routes::default(),
            flows: Vec::new(),
            links: Vec::new(),
            sampler,
            sampler_elem: u32::MAX,
            tm: None,
            cache_hops: CacheHops::default(),
            router_hops: RouterHops::default(),
            rcp_of_link: FxHashMap::default(),
            router_out: Vec::new(),
            router_queue_buf: Vec::new(),
            stats: RunStats::default(),
            name: None,
            mp_fairness: None,
            afct_bins_per_decade: None,
            interarrival: None,
            want_interarrival: false,
            want_seq_trace: Vec::new(),
            measure_deliveries: false,
        }
    }

    /// Hands the links and routes to the network and schedules every element's first event;
    /// called once the scenario is built.
    pub(crate) fn prime(&mut self) {
        self.net.links = self.elements.take_links();
        self.net.rcp_links = self.elements.take_rcp_links();
        if self.want_interarrival {
            self.interarrival = Some(Interarrival::new(&self.flows, self.elements.len()));
        }
        self.net.routes = std::mem::take(&mut self.routes);
        self.net.routes.resolve(&self.elements, &self.net.links);
        if !self.want_seq_trace.is_empty() {
            let mut trace =
                SequenceTrace::new(&self.flows, &self.want_seq_trace, self.elements.len());
            for &f in &self.want_seq_trace {
                let start = self.flows[f as usize]
                    .data_route
                    .expect("only flows with a data route are traced");
                let slot = self
                    .net
                    .routes
                    .replace_slot(start, Slot::Traced(trace.next_start()));
                trace.add_start(f, slot);
            }
            self.net.seq_trace = Some(Box::new(trace));
        }
        self.measure_deliveries = self.interarrival.is_some() || self.net.seq_trace.is_some();
        // Links' events move on every packet; every other element's rarely, and a wire's
        // never (packets cross it without one) unless it starts a route of wires only.
        let hot: Vec<bool> = (0..self.elements.len() as u32)
            .map(|e| match self.elements.slot(e) {
                Slot::Link(l) => !self.net.links[l as usize].is_wire(),
                _ => false,
            })
            .collect();
        self.net.events = EventQueue::new(&hot);
        self.hot_links = (0..self.elements.len() as u32)
            .filter(|&e| hot[e as usize])
            .map(|e| self.elements.link_index(e) as u32)
            .collect();
        self.net.hot_elems = (0..self.elements.len() as u32)
            .filter(|&e| hot[e as usize])
            .collect();
        // A controller sleeps only if every packet into its link passes it first; routes
        // the topology manager adds during the run are not known yet (D309).
        for r in 0..self.net.rcp_links.len() {
            let (elem, link) = (self.net.rcp_links[r].elem, self.net.rcp_links[r].link_elem);
            self.net.rcp_links[r].exclusive =
                self.tm.is_none() && self.net.routes.always_entered_from(link, elem);
        }
        for i in 0..self.elements.len() as u32 {
            let first = match self.elements.slot(i) {
                Slot::Sampler => self.sampler.next_time(),
                Slot::Tm => self.tm.as_ref().and_then(TmControl::deadline),
                Slot::Router(r) => Some(self.elements.routers[r as usize].next_advert),
                Slot::Rcp(r) => Some(self.net.rcp_links[r as usize].ctl.poll_timeout()),
                Slot::NdnApp(c) => self
                    .elements
                    .ndn
                    .as_ref()
                    .map(|n| n.consumers[c as usize].start),
                _ => self.elements.first_deadline(i),
            };
            if let Some(t) = first {
                self.net.events.schedule(i, t);
            }
        }
    }

    /// Current simulated time.
    #[must_use]
    pub fn now(&self) -> Time {
        self.net.now
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
        self.net.now >= self.end
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
    /// The link that element `elem` is (link metadata always points at a link).
    pub(crate) fn link(&self, elem: u32) -> &Link {
        &self.net.links[self.elements.link_index(elem)]
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    /// Processes every event up to and including `until` (capped at the end of the run).
    pub fn run_until(&mut self, until: Time) {
        let until = until.min(self.end);
        while let Some((t, id)) = self.net.events.next() {
            if t > until {
                break;
            }
            self.net.now = t;
            self.net.current_event = id;
            self.stats.events += 1;
            if id & HOT != 0 {
                self.on_link_event(id & !HOT);
            } else {
                self.dispatch(id);
            }
        }
        self.net.now = self.net.now.max(until);
    }

    /// The event of the link with leaf rank `rank` in the event queue: its head packet
    /// arrives. What `dispatch` does for a link, found without the element's slot.
    #[inline(always)]
    fn on_link_event(&mut self, rank: u32) {
        let l = self.hot_links[rank as usize];
        let (pkt, next) = self.net.links[l as usize].on_event(self.net.now);
        match next {
            Some(t) => self.net.events.reschedule_hot(rank, t),
            None => self.net.events.pop_hot(rank),
        }
        if let Some(p) = pkt {
            self.deliver(p);
        }
    }

    /// The event of element `e` (not a hot link's): an endpoint's timer, or the engine's.
    /// Never inlined: it is rare next to the links' events, and inlined into `run_until`
    /// (with every endpoint's timer and the sampler) it made the loop that runs every link
    /// event cost 10 instructions a packet more (callgrind, dumbbell-n100, 2026-11-27).
    #[inline(never)]
    fn dispatch(&mut self, e: u32) {
        dispatch!(self.elements.slot(e), &mut self.elements, |el, end| {
            self.net.events.pop_top(e);
            el.on_timer(end, &mut self.net);
            if let Some(t) = el.deadline(end) {
                self.net.events.schedule(e, t);
            }
        }, other => self.on_engine_event(e, other))
    }

    /// The event of element `e` kept at `slot`, which is not an endpoint.
    fn on_engine_event(&mut self, e: u32, slot: Slot) {
        match slot {
            Slot::Link(l) => {
                let (pkt, next) = self.net.links[l as usize].on_event(self.net.now);
                match next {
                    Some(t) => self.net.events.reschedule_top(e, t),
                    None => self.net.events.pop_top(e),
                }
                if let Some(p) = pkt {
                    self.deliver(p);
                }
            }
            Slot::Sampler => {
                self.net.events.pop_top(e);
                self.take_samples();
                if let Some(t) = self.sampler.next_time() {
                    self.net.events.schedule(e, t);
                }
            }
            Slot::Tm => {
                self.net.events.pop_top(e);
                self.on_tm(e);
            }
            Slot::Router(r) => {
                self.net.events.pop_top(e);
                self.on_router_timer(r);
            }
            Slot::Ndn(n) => {
                self.net.events.pop_top(e);
                self.on_ndn_node_timer(n);
            }
            Slot::NdnApp(c) => {
                self.net.events.pop_top(e);
                self.on_ndn_consumer_timer(c);
            }
            Slot::Rcp(r) => match self.on_rcp_timer(r) {
                Some(t) => self.net.events.reschedule_top(e, t),
                None => self.net.events.pop_top(e),
            },
            _ => unreachable!("wires and caches are route hops, crossed without events"),
        }
    }

    /// The topology manager's element: links fail or are repaired when the scenario says;
    /// `tm_reaction` later the downloads whose paths this changed get their new FID sets.
    #[cold]
    fn on_tm(&mut self, e: u32) {
        let now = self.net.now;
        let Some(mut tm) = self.tm.take() else {
            return;
        };
        for (edge, up) in tm.take_changes(now) {
            let elem = tm.edge_elem[edge.0 as usize];
            if let Slot::Link(l) = self.elements.slot(elem) {
                self.net.links[l as usize].set_up(now, up);
            }
            self.ndn_link_state(edge.0 as usize, up);
        }
        for (d, update) in tm.take_reactions(now) {
            self.resend_fid_set(&tm, d, update);
        }
        if let Some(t) = tm.deadline() {
            self.net.events.schedule(e, t);
        }
        self.tm = Some(tm);
    }

    /// Download `d` of `tm` receives its new FID set.
    fn resend_fid_set(&mut self, tm: &TmControl, d: usize, update: PathUpdate) {
        let now = self.net.now;
        let dl = &tm.downloads[d];
        let graph = dl.manager.graph();
        let mut added = Vec::with_capacity(update.added.len());
        for p in update.added {
            let (elements, links) = (&self.elements, &self.net.links);
            let request_route = self
                .net
                .routes
                .add_resolved(&p.request.hops, elements, links);
            let reply_route = self.net.routes.add_resolved(&p.reply.hops, elements, links);
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
        let conn = &mut self.elements.mmtp_conns[dl.conn as usize];
        conn.update_paths(&update.removed, &update.regrouped, added, &mut self.net);
        let events = &self.net.events;
        if let Some(t) = conn.rearm(End::Sink, || events.time_of(dl.sub_elem)) {
            self.net.events.schedule(dl.sub_elem, t);
        }
    }

    /// Hands a packet that has crossed a link to the next element of its route.
    #[inline]
    pub(crate) fn deliver(&mut self, mut pkt: Packet) {
        let Some((elem, slot)) = self.net.routes.next_element(&mut self.net.links, &mut pkt) else {
            return;
        };
        if self.measure_deliveries {
            return self.deliver_measured(elem, slot, pkt);
        }
        self.deliver_to(elem, slot, pkt);
    }

    /// [`deliver`](Self::deliver) with `measure.interarrival` or `measure.trace_sequences`:
    /// notes when the packet makes a receiver deliver new bytes in order, and traces it if
    /// its endpoint is a traced flow's. Out of line, so that runs without them pay one test
    /// per packet.
    #[cold]
    #[inline(never)]
    fn deliver_measured(&mut self, elem: u32, slot: Slot, pkt: Packet) {
        let before = self.elements.delivered(elem);
        self.deliver_to(elem, slot, pkt);
        let delivered = self.elements.delivered(elem) > before;
        if delivered {
            if let Some(ia) = &mut self.interarrival {
                ia.record(elem, self.net.now);
            }
        }
        if let Some(trace) = &mut self.net.seq_trace {
            trace.at_endpoint(elem, self.net.now, &pkt, delivered);
        }
    }

    /// Hands `pkt` to element `elem`, kept at `slot`.
    #[inline(always)]
    fn deliver_to(&mut self, elem: u32, slot: Slot, pkt: Packet) {
        dispatch!(slot, &mut self.elements, |el, end| {
            self.stats.packets_delivered += 1;
            if el.receives_data(end) {
                self.stats.data_packets_delivered += 1;
            }
            el.on_packet(end, &pkt, &mut self.net);
            let events = &self.net.events;
            if let Some(t) = el.rearm(end, || events.time_of(elem)) {
                self.net.events.schedule(elem, t);
            }
        }, other => match other {
            Slot::Link(l) => {
                if let Some(t) = self.net.links[l as usize].enqueue(self.net.now, pkt) {
                    self.net.events.schedule(elem, t);
                }
            }
            Slot::Cache(c) => self.through_cache(c, pkt),
            Slot::Router(r) => self.through_router(r, pkt),
            Slot::Rcp(r) => self.through_rcp(r, pkt),
            Slot::Ndn(n) => self.through_ndn(n, pkt),
            _ => unreachable!(
                "routes end at endpoints and cross only links, caches, routers and RCP controllers"
            ),
        })
    }

    /// A packet of an mmTP route at cache `c`: a reply is kept and goes on; a request the
    /// cache can answer goes no further and the answer starts towards the subscriber, else it
    /// goes on to the publisher.
    #[inline(never)]
    fn through_cache(&mut self, c: u32, pkt: Packet) {
        let Some(hop) = self.cache_hops.get(pkt.hop - 1) else {
            return self.deliver(pkt);
        };
        let conn = &self.elements.mmtp_conns[hop.conn as usize];
        let cache = &mut self.elements.caches[c as usize].cache;
        match hop.role {
            CacheRole::Store => {
                conn.store_reply(cache, &pkt);
                self.deliver(pkt);
            }
            CacheRole::Answer { reply_from } => {
                if !conn.answer(cache, &pkt, reply_from, &mut self.net) {
                    self.deliver(pkt);
                }
            }
        }
    }

    fn take_samples(&mut self) {
        let now = self.net.now;
        // A fairness sample alone reads no link: leave them as a run without it would.
        if self.sampler.reads_links_at(now) {
            for link in &mut self.net.links {
                link.advance(now);
            }
        }
        self.sampler.sample(
            now,
            &self.flows,
            &self.links,
            &self.elements,
            &self.net.links,
        );
    }
}
