//! RCP's routers in the simulator (issue 21; spec 001 §4): one [`RcpLink`] controller for
//! each finite-rate link that an RCP flow's data cross, driven between that link and the
//! element before it.
//!
//! As an INRPP router is, the controller is a hop of the RCP flows' data routes, placed just
//! before its link and crossed inside the event that brought the packet there (or inside
//! the sender's send, for the sender's own link; the network keeps the controllers): it counts
//! the packet's RTT field and lowers its rate field to R (D294: at arrival, where the RCP
//! authors' code stamps at departure; the two differ by the packet's queueing delay). The
//! input rate y is what the link itself accepted, from every flow, RCP or not, and q what
//! waits behind the packet being serialised (a router's queue, as in the RCP authors' code;
//! counting the packet in service would be worth q/(α·d) of rate, 2.3 Mb/s at 1500 bytes,
//! α = 0.1 and d = 52 ms). Its periodic update is the element's one timer.
//!
//! A controller sleeps while its link is empty, if every packet that enters the link passes
//! it first (D309): no event is scheduled, and the packet that wakes it first replays the
//! periods that ended meanwhile, each with no input and no queue, exactly as their timers
//! would have run them. A host's own link, idle after its flow, then costs nothing for the
//! rest of the run where it cost an event every 10 ms.

use pathpool_core::Time;
use pathpool_proto::rcp::RcpLink;

use crate::packet::Packet;
use crate::sim::Simulation;

/// One link's RCP controller.
#[derive(Clone, Debug)]
pub(crate) struct SimRcpLink {
    /// The controller's element (its timer).
    pub(crate) elem: u32,
    /// The link it controls.
    pub(crate) link_elem: u32,
    pub(crate) ctl: RcpLink,
    /// Whether every route into the link passes this controller first, so that it may sleep
    /// (set when the run starts).
    pub(crate) exclusive: bool,
    /// Asleep: its link was empty at its last period's end and no timer is scheduled; the
    /// link's accepted bytes then.
    asleep: Option<u64>,
}

impl SimRcpLink {
    /// The controller of the link at element `link_elem`.
    pub(crate) fn new(link_elem: u32, ctl: RcpLink) -> Self {
        SimRcpLink {
            elem: 0,
            link_elem,
            ctl,
            exclusive: false,
            asleep: None,
        }
    }

    /// Wakes the controller if it sleeps, at `now`, during the event of element `current`:
    /// the periods that ended meanwhile run as their timers would have (a period ending at
    /// `now` only if its timer came before `current`'s event, which ties between events at
    /// one instant are broken by element). Returns when its timer must now fire.
    #[cold]
    #[inline(never)]
    pub(crate) fn wake(&mut self, now: Time, current: u32) -> Option<Time> {
        let accepted = self.asleep.take()?;
        loop {
            let end = self.ctl.poll_timeout();
            if end > now || (end == now && self.elem > current) {
                return Some(end);
            }
            self.ctl.handle_timeout(end, accepted, 0);
        }
    }

    /// An RCP data packet about to enter the link: its RTT counts, its rate field is
    /// lowered to R.
    #[inline]
    pub(crate) fn stamp(&mut self, pkt: &mut Packet) {
        self.ctl.on_packet(pkt.size(), Some(pkt.rcp_rtt()));
        let field = pkt.rcp_rate_bps().map(|b| b as f64);
        pkt.set_rcp_rate(Some(self.ctl.stamp(field) as u64));
    }
}

impl Simulation {
    /// An RCP data packet about to enter controller `r`'s link.
    #[inline(never)]
    pub(crate) fn through_rcp(&mut self, r: u32, mut pkt: Packet) {
        self.net.stamp_rcp(r, &mut pkt);
        self.deliver(pkt);
    }

    /// Controller `r`'s period ends: R and d are updated from what its link accepted and
    /// holds; returns when the next period ends, or `None` if the controller goes to sleep
    /// (D309).
    pub(crate) fn on_rcp_timer(&mut self, r: u32) -> Option<Time> {
        let now = self.net.now;
        let link_elem = self.net.rcp_links[r as usize].link_elem;
        let link = &mut self.net.links[self.elements.link_index(link_elem)];
        link.advance(now);
        let accepted = link.counters().tx_bytes + link.queued_bytes();
        let queued = link.waiting_bytes(now);
        let empty = link.queued_bytes() == 0;
        let rcp = &mut self.net.rcp_links[r as usize];
        rcp.ctl.handle_timeout(now, accepted, queued);
        if rcp.exclusive && empty {
            rcp.asleep = Some(accepted);
            return None;
        }
        Some(rcp.ctl.poll_timeout())
    }
}

#[cfg(test)]
mod tests {
    use crate::build::testing::{compile, line};

    /// D309: controllers that sleep while their links are empty give the run their timers
    /// would have given, with fewer events. Three RCP flows of 1 MB from a to b, from 0.5 s,
    /// 3.25 s and 6 s, so that every controller sleeps and wakes again, and a packet meets a
    /// period's end at the same instant (the flows start on 10-ms boundaries of the
    /// controllers' first periods). The ACKs take the other direction, which has no
    /// controller.
    #[test]
    fn sleeping_controllers_run_as_their_timers_would() {
        let flow = |id: &str, from: &str, to: &str, start: &str| {
            format!(
                "[[flows]]\nid = \"{id}\"\nfrom = \"{from}\"\nto = \"{to}\"\ncc = \"rcp\"\n\
                 size = \"1MB\"\nstart = \"{start}\"\n"
            )
        };
        let text = line(&format!(
            "{}{}{}",
            flow("x", "a", "b", "0.5s"),
            flow("y", "a", "b", "3.25s"),
            flow("z", "a", "b", "6s")
        ));
        let mut sleeping = compile(&text);
        assert!(sleeping.net.rcp_links.iter().all(|r| r.exclusive));
        let mut ticking = compile(&text);
        for r in &mut ticking.net.rcp_links {
            r.exclusive = false;
        }
        sleeping.run();
        ticking.run();
        let (s, t) = (sleeping.results(), ticking.results());
        assert_eq!(s.flows, t.flows);
        assert_eq!(s.links, t.links);
        assert!(
            s.flows.iter().all(|f| f.completed == Some(true)),
            "{:?}",
            s.flows
        );
        assert!(
            s.stats.events + 500 < t.stats.events,
            "{} events sleeping, {} ticking",
            s.stats.events,
            t.stats.events
        );
        for (a, b) in sleeping.net.rcp_links.iter().zip(&ticking.net.rcp_links) {
            assert_eq!(a.ctl.rate_bps(), b.ctl.rate_bps());
        }
    }

    /// A link that another flow enters without passing the controller keeps its timer.
    #[test]
    fn a_link_shared_with_other_traffic_keeps_its_timer() {
        let text = line(
            "[[flows]]\nid = \"x\"\nfrom = \"a\"\nto = \"b\"\ncc = \"rcp\"\n\
             [[flows]]\nid = \"t\"\nfrom = \"a\"\nto = \"b\"\ncc = \"newreno\"\n",
        );
        let sim = compile(&text);
        assert!(!sim.net.rcp_links.is_empty());
        assert!(sim.net.rcp_links.iter().all(|r| !r.exclusive));
    }
}
