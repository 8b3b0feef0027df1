//! INRPP routers in the simulator (issue 21): the driver of `pathpool_proto`'s sans-IO
//! [`Router`] between the links into and out of a node.
//!
//! Packets follow flat source routes, so, as a chunk cache is (`cache.rs`), a router is a hop
//! of the routes of INRPP flows, placed after each link into its node and crossed inside the
//! event that brought a packet to it. What it does with a packet depends on the route
//! position ([`RouterHops`]): on a data route the packet is its flow's data, leaving on the
//! interface of the route's next link; on an ACK route an ACK of the flow, arriving on the
//! interface towards the hop it came from; on a detour route (built for every data hop and
//! every detour of its interface) the detour node forwards the packet to the node its tag
//! names (the route's next link) and meters it. A packet the router sends on a detour jumps
//! to the position of that detour route, which rejoins the data route after the detoured link.
//!
//! Unlike a cache, a router has timed work (draining its cache at link rate, detour pacing,
//! the DB and nonce timers, advertisements), so it is also an element with one pending event.

use pathpool_core::hash::FxHashMap;
use pathpool_core::{Dur, Time};
use pathpool_proto::inrpp::router::{DataOutcome, Out, Router};
use pathpool_proto::inrpp::signalling::AckSignal;

use crate::packet::Packet;
use crate::rate_flow::{notification, notification_code};
use crate::seq_trace::Event;
use crate::sim::Simulation;

/// One INRPP router and what the driver needs to feed it.
#[derive(Clone, Debug)]
pub(crate) struct SimRouter {
    /// The node's name (for results).
    pub(crate) node: String,
    /// The router's element (its timer).
    pub(crate) elem: u32,
    pub(crate) router: Router<Packet>,
    /// The link element of each interface, in interface order.
    pub(crate) out_elems: Vec<u32>,
    /// For each interface whose neighbour is an INRPP router: that router's index (to
    /// address advertisements).
    pub(crate) peers: Vec<Option<u32>>,
    /// The neighbour node of each interface, and its name.
    pub(crate) neighbours: Vec<u32>,
    pub(crate) neighbour_names: Vec<String>,
    /// Each interface's detour interfaces (the router's Table 4).
    pub(crate) detour_ifaces: Vec<Vec<usize>>,
    pub(crate) advert_interval: Dur,
    pub(crate) next_advert: Time,
    /// Data packets the full cache dropped.
    pub(crate) dropped: u64,
    /// Bytes the router sent on detours.
    pub(crate) detoured_bytes: u64,
}

impl SimRouter {
    /// This router's interface towards node `n`, if it has one.
    fn iface_towards(&self, n: u32) -> Option<usize> {
        self.neighbours.iter().position(|&m| m == n)
    }
}

/// What a router does with the packets of one route position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RouterRole {
    /// Data of `flow`, leaving on interface `primary`.
    Data { flow: u64, primary: usize },
    /// A detoured packet arriving on interface `from`, for the neighbour of interface `to`.
    Detoured { from: usize, to: usize },
    /// An ACK of `flow` arriving on interface `arrival`.
    Ack { flow: u64, arrival: usize },
}

/// The router hops of the route table, by position, and the detour routes.
#[derive(Clone, Debug, Default)]
pub(crate) struct RouterHops {
    roles: FxHashMap<u32, (u32, RouterRole)>,
    /// (position after a data hop, detour interface) → start of the detour route.
    detours: FxHashMap<(u32, u32), u32>,
}

impl RouterHops {
    pub(crate) fn add_role(&mut self, at: u32, router: u32, role: RouterRole) {
        self.roles.insert(at, (router, role));
    }
    pub(crate) fn add_detour(&mut self, after: u32, via: usize, start: u32) {
        self.detours.insert((after, via as u32), start);
    }
}

impl Simulation {
    /// The bytes queued at each of router `r`'s interfaces now, in the simulation's reused
    /// buffer (taken: give it back with [`Simulation::return_queues`]), so that a packet at
    /// a router allocates nothing.
    fn router_queues(&mut self, r: u32) -> Vec<u64> {
        let now = self.net.now;
        let router = &self.elements.routers[r as usize];
        let mut queues = std::mem::take(&mut self.router_queue_buf);
        queues.clear();
        queues.extend(router.out_elems.iter().map(|&e| {
            let l = &mut self.net.links[self.elements.link_index(e)];
            l.advance(now);
            l.queued_bytes()
        }));
        queues
    }

    fn return_queues(&mut self, queues: Vec<u64>) {
        self.router_queue_buf = queues;
    }

    /// A packet of an INRPP route at router `r`'s hop.
    #[inline(never)]
    pub(crate) fn through_router(&mut self, r: u32, mut pkt: Packet) {
        let Some(&(_, role)) = self.router_hops.roles.get(&(pkt.hop - 1)) else {
            return self.deliver(pkt);
        };
        let now = self.net.now;
        let router = &mut self.elements.routers[r as usize];
        match role {
            RouterRole::Data { flow, primary } => {
                let (nonce, size) = (pkt.inrpp_nonce(), pkt.size());
                let outcome = router.router.on_data(primary, flow, nonce, pkt, size);
                if let Some(trace) = &mut self.net.seq_trace {
                    let event = match outcome {
                        DataOutcome::Forward(_) => Event::Forwarded,
                        DataOutcome::Cached => Event::Cached,
                        DataOutcome::Dropped(_) => Event::Dropped,
                    };
                    trace.at_router(r, flow, now, &pkt, event);
                }
                match outcome {
                    DataOutcome::Forward(p) => self.deliver(p),
                    DataOutcome::Cached => {}
                    DataOutcome::Dropped(_) => self.elements.routers[r as usize].dropped += 1,
                }
            }
            RouterRole::Detoured { from, to } => {
                router.router.on_detoured(from, to, pkt.size());
                self.deliver(pkt);
            }
            RouterRole::Ack { flow, arrival } => {
                let mut signal = AckSignal {
                    notification: notification(pkt.inrpp_notification()),
                    nonce: pkt.inrpp_nonce(),
                };
                let released = router.router.on_ack(now, arrival, flow, &mut signal);
                pkt.set_inrpp_signal(signal.nonce, notification_code(signal.notification));
                if let Some((p, _)) = released {
                    self.deliver(p);
                }
                self.deliver(pkt);
            }
        }
        self.service_router(r);
    }

    /// Router `r`'s timer: its DB and nonce timers, advertisements, and what its cache may
    /// release now.
    pub(crate) fn on_router_timer(&mut self, r: u32) {
        let now = self.net.now;
        let queues = self.router_queues(r);
        self.elements.routers[r as usize]
            .router
            .handle_timeout(now, &queues);
        self.return_queues(queues);
        if now >= self.elements.routers[r as usize].next_advert {
            self.advertise(r);
        }
        self.service_router(r);
    }

    /// Router `r`'s advertisements reach its neighbours at once (D283).
    fn advertise(&mut self, r: u32) {
        let now = self.net.now;
        let me = &mut self.elements.routers[r as usize];
        me.next_advert = now + me.advert_interval;
        let ads = me.router.advertise(now);
        let (neighbours, peers) = (me.neighbours.clone(), me.peers.clone());
        for (to_iface, about_iface, value) in ads {
            let Some(peer) = peers[to_iface] else {
                continue;
            };
            // The peer detours its traffic for our interface's neighbour through us: its
            // primary interface is the one towards that node, its detour the one towards us.
            let other = &mut self.elements.routers[peer as usize];
            let via = other.peers.iter().position(|&p| p == Some(r));
            if let (Some(primary), Some(via)) = (other.iface_towards(neighbours[about_iface]), via)
            {
                other.router.on_advert(primary, via, value);
            }
        }
    }

    /// Re-evaluates router `r`, sends what its cache releases and sets its timer.
    fn service_router(&mut self, r: u32) {
        let now = self.net.now;
        let mut queues = self.router_queues(r);
        let mut out = std::mem::take(&mut self.router_out);
        let mut detoured = 0;
        {
            let router = &mut self.elements.routers[r as usize].router;
            router.evaluate(now, &queues);
            while let Some((to, p, bytes)) = router.poll_transmit(now, &queues) {
                let i = match to {
                    Out::Primary(i) => i,
                    Out::Detour { via, .. } => {
                        detoured += u64::from(bytes);
                        via
                    }
                };
                queues[i] += u64::from(bytes);
                out.push((to, p));
                router.evaluate(now, &queues);
            }
        }
        self.elements.routers[r as usize].detoured_bytes += detoured;
        self.return_queues(queues);
        for (to, mut p) in out.drain(..) {
            if let Out::Detour { via, .. } = to {
                if let Some(&start) = self.router_hops.detours.get(&(p.hop, via as u32)) {
                    p.hop = start;
                }
            }
            self.deliver(p);
        }
        self.router_out = out;
        let queues = self.router_queues(r);
        let router = &self.elements.routers[r as usize];
        let next = router
            .router
            .poll_timeout(now, &queues)
            .map_or(router.next_advert, |t| t.min(router.next_advert));
        let elem = router.elem;
        self.return_queues(queues);
        match self.net.events.time_of(elem) {
            Some(t) if t <= next && t > now => {}
            _ => self.net.events.schedule(elem, next.max(now)),
        }
    }
}
