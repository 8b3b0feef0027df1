//! The simulation engine: elements, routes and the event loop.

use pathpool_core::Time;

use crate::event::EventQueue;
use crate::link::Link;
use crate::packet::{Kind, Packet};
use crate::sampler::Sampler;
use crate::spec::FlowKind;
use crate::tcp_flow::{TcpSink, TcpSource};
use crate::udp_flow::{UdpSink, UdpSource};

/// Something that receives packets or has timed work, with at most one pending event.
#[derive(Clone, Debug)]
pub(crate) enum Element {
    Link(Link),
    TcpSource(Box<TcpSource>),
    TcpSink(Box<TcpSink>),
    UdpSource(Box<UdpSource>),
    UdpSink(UdpSink),
    Sampler,
}

/// Source routes, stored flat: route `r` is `hops[start[r]..start[r+1]]`, a list of element
/// indices ending at the destination endpoint.
#[derive(Clone, Debug, Default)]
pub(crate) struct Routes {
    hops: Vec<u32>,
    start: Vec<u32>,
}

impl Routes {
    pub(crate) fn new() -> Self {
        Routes {
            hops: Vec::new(),
            start: vec![0],
        }
    }
    /// Adds a route and returns its index.
    pub(crate) fn add(&mut self, elements: &[u32]) -> u32 {
        self.hops.extend_from_slice(elements);
        self.start.push(self.hops.len() as u32);
        (self.start.len() - 2) as u32
    }
    #[inline]
    fn hop(&self, route: u32, hop: u16) -> u32 {
        self.hops[self.start[route as usize] as usize + hop as usize]
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
    pub(crate) start: Time,
    pub(crate) stop: Option<Time>,
    /// Size of a finite flow in bytes.
    pub(crate) size: Option<u64>,
    pub(crate) source: u32,
    pub(crate) sink: u32,
    /// Nodes the data path visits.
    pub(crate) path: Vec<String>,
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
    pub(crate) elements: Vec<Element>,
    pub(crate) routes: Routes,
    pub(crate) flows: Vec<FlowMeta>,
    pub(crate) links: Vec<LinkMeta>,
    pub(crate) sampler: Sampler,
    pub(crate) sampler_elem: u32,
    pub(crate) stats: RunStats,
    pub(crate) name: Option<String>,
    /// Packets produced by an endpoint, waiting to enter their first link.
    outbox: Vec<Packet>,
}

impl Simulation {
    pub(crate) fn new(end: Time, seed: u64, sampler: Sampler) -> Self {
        Simulation {
            now: Time::ZERO,
            end,
            seed,
            events: EventQueue::default(),
            elements: Vec::new(),
            routes: Routes::new(),
            flows: Vec::new(),
            links: Vec::new(),
            sampler,
            sampler_elem: u32::MAX,
            stats: RunStats::default(),
            name: None,
            outbox: Vec::new(),
        }
    }

    /// Adds an element and returns its index.
    pub(crate) fn add_element(&mut self, e: Element) -> u32 {
        self.elements.push(e);
        (self.elements.len() - 1) as u32
    }

    /// Schedules every element's first event; called once the scenario is built.
    pub(crate) fn prime(&mut self) {
        self.events = EventQueue::with_elements(self.elements.len());
        self.events.grow(self.elements.len());
        for i in 0..self.elements.len() as u32 {
            let first = match &self.elements[i as usize] {
                Element::TcpSource(s) => s.deadline(),
                Element::UdpSource(s) => s.deadline(),
                Element::Sampler => self.sampler.next_time(),
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
        while let Some((t, e)) = self.events.peek() {
            if t > until {
                break;
            }
            self.now = t;
            self.stats.events += 1;
            self.dispatch(e);
        }
        self.now = self.now.max(until);
    }

    #[inline]
    fn dispatch(&mut self, e: u32) {
        let now = self.now;
        match &mut self.elements[e as usize] {
            Element::Link(link) => {
                let (pkt, next) = link.on_event(now);
                match next {
                    Some(t) => self.events.reschedule_top(t),
                    None => {
                        self.events.pop();
                    }
                }
                if let Some(p) = pkt {
                    self.deliver(p);
                }
            }
            Element::TcpSource(src) => {
                self.events.pop();
                src.on_timer(now, &mut self.outbox);
                if let Some(t) = src.deadline() {
                    self.events.schedule(e, t);
                }
                self.flush_outbox();
            }
            Element::TcpSink(sink) => {
                self.events.pop();
                let ack = sink.on_timer(now);
                if let Some(t) = sink.deadline() {
                    self.events.schedule(e, t);
                }
                if let Some(a) = ack {
                    self.send(a);
                }
            }
            Element::UdpSource(src) => {
                self.events.pop();
                src.on_timer(now, &mut self.outbox);
                if let Some(t) = src.deadline() {
                    self.events.schedule(e, t);
                }
                self.flush_outbox();
            }
            Element::UdpSink(_) => {
                self.events.pop();
            }
            Element::Sampler => {
                self.events.pop();
                self.take_samples();
                if let Some(t) = self.sampler.next_time() {
                    self.events.schedule(e, t);
                }
            }
        }
    }

    /// Hands a packet to the next element of its route.
    #[inline]
    fn deliver(&mut self, mut pkt: Packet) {
        let now = self.now;
        let elem = self.routes.hop(pkt.route, pkt.hop);
        pkt.hop += 1;
        match &mut self.elements[elem as usize] {
            Element::Link(link) => {
                if let Some(t) = link.enqueue(now, pkt) {
                    self.events.schedule(elem, t);
                }
            }
            Element::TcpSink(sink) => {
                debug_assert_eq!(pkt.kind, Kind::TcpData);
                self.stats.data_packets_delivered += 1;
                self.stats.packets_delivered += 1;
                let ack = sink.on_data(now, &pkt);
                let deadline = sink.deadline();
                self.arm_lazily(elem, deadline);
                if let Some(a) = ack {
                    self.send(a);
                }
            }
            Element::TcpSource(src) => {
                debug_assert_eq!(pkt.kind, Kind::TcpAck);
                self.stats.packets_delivered += 1;
                src.on_ack(now, &pkt, &mut self.outbox);
                let deadline = src.deadline();
                self.arm_lazily(elem, deadline);
                self.flush_outbox();
            }
            Element::UdpSink(sink) => {
                self.stats.packets_delivered += 1;
                sink.on_packet(&pkt);
            }
            Element::UdpSource(_) | Element::Sampler => {
                unreachable!("routes end at sinks or TCP sources and only cross links")
            }
        }
    }

    /// Makes sure `elem` will be woken at or before `deadline`. A later deadline is not moved
    /// in the queue: the element wakes early, finds nothing due and re-arms itself (the
    /// retransmission timer is restarted on every ACK, so this saves a heap update per ACK).
    #[inline]
    fn arm_lazily(&mut self, elem: u32, deadline: Option<Time>) {
        if let Some(d) = deadline {
            match self.events.time_of(elem) {
                Some(cur) if cur <= d => {}
                _ => self.events.schedule(elem, d),
            }
        }
    }

    /// Sends a packet from an endpoint into the first link of its route.
    #[inline]
    fn send(&mut self, pkt: Packet) {
        debug_assert_eq!(pkt.hop, 0);
        self.deliver(pkt);
    }

    #[inline]
    fn flush_outbox(&mut self) {
        if self.outbox.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.outbox);
        for &p in &out {
            self.send(p);
        }
        out.clear();
        self.outbox = out;
    }

    fn take_samples(&mut self) {
        let now = self.now;
        for l in &self.links {
            if let Element::Link(link) = &mut self.elements[l.elem as usize] {
                link.advance(now);
            }
        }
        self.sampler
            .sample(now, &self.flows, &self.links, &self.elements);
    }

    pub(crate) fn element(&self, i: u32) -> &Element {
        &self.elements[i as usize]
    }
}

/// Bytes an endpoint has delivered in order to its application.
pub(crate) fn delivered(e: &Element) -> u64 {
    match e {
        Element::TcpSink(s) => s.delivered(),
        Element::UdpSink(s) => s.payload_bytes,
        _ => 0,
    }
}
