//! The network half of the simulation: the links, the source routes over them and the event
//! queue, with the clock. Endpoints send into it ([`Net`]); it owns everything a packet
//! touches between two endpoints, so that an endpoint, kept in its kind's vector, borrows
//! only it to send.

use pathpool_core::Time;

use crate::element::Net;
use crate::event::{EventQueue, HOT};
use crate::kinds::{Elements, Slot};
use crate::link::Link;
use crate::packet::Packet;
use crate::rcp_link::SimRcpLink;
use crate::seq_trace::SequenceTrace;

/// The links, the routes and the event queue, at time `now`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Network {
    pub(crate) now: Time,
    /// The links, by link index (the order the compiler added them, as `Simulation::links`).
    pub(crate) links: Vec<Link>,
    /// The RCP controllers, by index (each sits before its link on RCP data routes, the
    /// first one at the sender, so sending reaches them).
    pub(crate) rcp_links: Vec<SimRcpLink>,
    /// Per host node, the flows counted as sending from it ([`Net::host_senders`]).
    pub(crate) host_senders: Vec<u32>,
    pub(crate) routes: Routes,
    pub(crate) events: EventQueue,
    /// The sequence trace, with `measure.trace_sequences`.
    pub(crate) seq_trace: Option<Box<SequenceTrace>>,
    /// The event being handled, as the event queue gave it (a hot link's marked [`HOT`]
    /// with its rank).
    pub(crate) current_event: u32,
    /// The element of each hot link, by rank.
    pub(crate) hot_elems: Vec<u32>,
}

impl Net for Network {
    #[inline(always)]
    fn now(&self) -> Time {
        self.now
    }
    /// Puts the packet onto the first link of its route, directly from the endpoint's code.
    // Always inlined: it runs for every packet sent.
    #[inline(always)]
    fn send(&mut self, mut pkt: Packet) {
        let Some((elem, slot)) = self.routes.next_element(&mut self.links, &mut pkt) else {
            return;
        };
        let (elem, l) = match slot {
            Slot::Link(l) => (elem, l),
            Slot::Rcp(r) => match self.through_first_rcp(r, &mut pkt) {
                Some(hop) => hop,
                None => return,
            },
            Slot::Traced(k) => match self.through_traced_start(elem, k, &mut pkt) {
                Some(hop) => hop,
                None => return,
            },
            _ => unreachable!("a route starts with a link, or an RCP controller and its link"),
        };
        if let Some(t) = self.links[l as usize].enqueue(self.now, pkt) {
            self.events.schedule(elem, t);
        }
    }
    fn host_senders(&mut self, host: u32) -> &mut u32 {
        let i = host as usize;
        if self.host_senders.len() <= i {
            self.host_senders.resize(i + 1, 0);
        }
        &mut self.host_senders[i]
    }
}

impl Network {
    /// An RCP packet at the controller of its sender's own link: stamped, then handed to
    /// that link (its element and link index; `None` if a wire dropped it). Out of line, so
    /// that every other send tests one slot.
    #[cold]
    #[inline(never)]
    fn through_first_rcp(&mut self, r: u32, pkt: &mut Packet) -> Option<(u32, u32)> {
        self.stamp_rcp(r, pkt);
        match self.routes.next_element(&mut self.links, pkt)? {
            (elem, Slot::Link(l)) => Some((elem, l)),
            _ => unreachable!("an RCP controller sits before its link"),
        }
    }

    /// An RCP data packet at controller `r`: the controller wakes if it sleeps (D309), then
    /// stamps it.
    #[inline]
    pub(crate) fn stamp_rcp(&mut self, r: u32, pkt: &mut Packet) {
        let current = self.current_elem();
        let rcp = &mut self.rcp_links[r as usize];
        if let Some(t) = rcp.wake(self.now, current) {
            self.events.schedule(rcp.elem, t);
        }
        rcp.stamp(pkt);
    }

    /// The element whose event is being handled.
    fn current_elem(&self) -> u32 {
        if self.current_event & HOT != 0 {
            self.hot_elems[(self.current_event & !HOT) as usize]
        } else {
            self.current_event
        }
    }

    /// A packet sent on a traced flow's data route (`measure.trace_sequences`): recorded,
    /// then handed to the route's first link as [`send`](Net::send) does. Out of line, so
    /// that untraced sends pay nothing.
    #[cold]
    #[inline(never)]
    fn through_traced_start(&mut self, elem: u32, k: u32, pkt: &mut Packet) -> Option<(u32, u32)> {
        let trace = self
            .seq_trace
            .as_mut()
            .expect("a traced route start has a trace");
        match trace.at_start(k, self.now, pkt) {
            Slot::Link(l) => Some((elem, l)),
            Slot::Rcp(r) => self.through_first_rcp(r, pkt),
            _ => unreachable!("a route starts with a link, or an RCP controller and its link"),
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
    pub(crate) fn resolve(&mut self, elements: &Elements, links: &[Link]) {
        for r in 0..self.starts.len() {
            self.resolve_route(self.starts[r] as usize, elements, links);
        }
    }
    /// Adds a route while the simulation runs (a path the topology manager sent), resolved
    /// at once; returns the position of its first hop.
    pub(crate) fn add_resolved(&mut self, elements: &[u32], all: &Elements, links: &[Link]) -> u32 {
        let start = self.add(elements);
        self.resolve_route(start as usize, all, links);
        start
    }
    /// `resolve` for the route starting at `start`: its links, then its endpoint.
    fn resolve_route(&mut self, start: usize, elements: &Elements, links: &[Link]) {
        let mut end = start;
        while let Some(hop) = self.hops.get_mut(end) {
            hop.1 = match elements.slot(hop.0) {
                Slot::Link(l) if links[l as usize].is_wire() => Slot::Wire(l),
                slot => slot,
            };
            end += 1;
            if !matches!(
                hop.1,
                Slot::Link(_) | Slot::Wire(_) | Slot::Cache(_) | Slot::Router(_) | Slot::Rcp(_)
            ) {
                break;
            }
        }
        let route = &mut self.hops[start..end];
        for i in 1..route.len() {
            if let (Slot::Wire(l), Slot::Cache(_) | Slot::Router(_) | Slot::Rcp(_)) =
                (route[i - 1].1, route[i].1)
            {
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
            match rest
                .iter()
                .position(|h| matches!(h.1, Slot::Cache(_) | Slot::Router(_) | Slot::Rcp(_)))
            {
                Some(c) => segment += c + 1,
                None => break,
            }
        }
    }
    /// Whether every route that crosses the link at element `link` reaches it from the
    /// element `before`.
    pub(crate) fn always_entered_from(&self, link: u32, before: u32) -> bool {
        self.starts.iter().enumerate().all(|(r, &s)| {
            let end = self
                .starts
                .get(r + 1)
                .map_or(self.hops.len(), |&e| e as usize);
            let route = &self.hops[s as usize..end];
            route
                .iter()
                .enumerate()
                .all(|(k, h)| h.0 != link || (k > 0 && route[k - 1].0 == before))
        })
    }
    /// Marks the hop at position `hop` (a route's first) with `slot`; returns the slot it had.
    pub(crate) fn replace_slot(&mut self, hop: u32, slot: Slot) -> Slot {
        std::mem::replace(&mut self.hops[hop as usize].1, slot)
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
    pub(crate) fn next_element(&self, links: &mut [Link], pkt: &mut Packet) -> Option<(u32, Slot)> {
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
