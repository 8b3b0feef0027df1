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
}

impl SimRcpLink {
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
        self.net.rcp_links[r as usize].stamp(&mut pkt);
        self.deliver(pkt);
    }

    /// Controller `r`'s period ends: R and d are updated from what its link accepted and
    /// holds; returns when the next period ends.
    pub(crate) fn on_rcp_timer(&mut self, r: u32) -> pathpool_core::Time {
        let now = self.net.now;
        let link_elem = self.net.rcp_links[r as usize].link_elem;
        let link = &mut self.net.links[self.elements.link_index(link_elem)];
        link.advance(now);
        let accepted = link.counters().tx_bytes + link.queued_bytes();
        let queued = link.waiting_bytes(now);
        let rcp = &mut self.net.rcp_links[r as usize];
        rcp.ctl.handle_timeout(now, accepted, queued);
        rcp.ctl.poll_timeout()
    }
}
