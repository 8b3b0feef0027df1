//! What a simulator endpoint is: the [`Element`] trait (a packet in, a timer, the next
//! deadline) and the one way it sends, [`Net`].
//!
//! An element kind is a type that implements [`Element`] and has a line in the list of kinds
//! (`kinds.rs`); `docs/architecture.md` walks through adding one. The engine calls the trait's
//! methods through the `dispatch!` macro that list generates (one `match` over the kinds, as
//! `pathpool-cc`'s `AnyController` dispatches over controllers), so every call is static and
//! inlines: no virtual call per packet.
//!
//! Sending is the same in every method: the element hands the packet to [`Net::send`], which
//! puts it on the first link of its route at once (no buffer in between). The simulator's
//! [`Network`](crate::network::Network) is the implementation; an element borrows only it, so
//! the borrow of the element (in its kind's vector) never conflicts with the links and the
//! event queue it sends into. Unit tests may implement [`Net`] to collect what is sent.

use pathpool_core::Time;

use crate::packet::Packet;

/// Which end of a flow an element is. The state of one kind may serve both ends of a flow
/// (a TCP flow's sender and receiver share its SACK channel; a multipath connection reads
/// its DSS mappings from the sender's table), so every method says which end it is called
/// for; a kind with one end per value ignores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The end that sends the flow's data (a TCP or UDP source, an mmTP publisher).
    Source,
    /// The end that receives it (a sink, an mmTP subscriber).
    Sink,
}

/// What an element sees of the network while it runs: the clock, and where it sends.
pub(crate) trait Net {
    /// The current simulated time.
    fn now(&self) -> Time;
    /// Sends `pkt` along its route (`pkt.hop` is the first hop's position).
    fn send(&mut self, pkt: Packet);
    /// The number of flows sending from `host` that elements keep for sharing its access
    /// link (INRPP's hosts split their rate among their active flows, D303); 0 until one
    /// counts itself.
    fn host_senders(&mut self, host: u32) -> &mut u32;
}

/// A simulator endpoint: receives the packets whose route ends at it and has at most one
/// pending timer. Every method that may send takes the [`Net`] to send into.
pub(crate) trait Element {
    /// Whether a packet reaching `end` counts in
    /// [`RunStats::data_packets_delivered`](crate::RunStats::data_packets_delivered) (TCP-like
    /// data at its receiver); every packet counts in `packets_delivered`.
    fn receives_data(&self, end: End) -> bool;

    /// A packet whose route ends at `end` arrived.
    fn on_packet(&mut self, end: End, pkt: &Packet, net: &mut impl Net);

    /// The timer of `end` fired (at `net.now()`, the time [`deadline`](Self::deadline) gave,
    /// or later if the timer was left set when the deadline moved away).
    fn on_timer(&mut self, end: End, net: &mut impl Net);

    /// When `end` next needs [`on_timer`](Self::on_timer), if ever. Asked after each of its
    /// timers and, through [`rearm`](Self::rearm), after each packet it receives.
    fn deadline(&self, end: End) -> Option<Time>;

    /// After a packet: the time to set `end`'s timer to, or `None` to leave it as it is.
    /// `armed()` tells when the timer is set for (asked only when needed). A deadline later
    /// than the armed time does not move the timer: the element wakes early, finds nothing
    /// due and sets it again (a retransmission timer restarts on every ACK, so this saves an
    /// update of the event queue per ACK). A kind may override this with a cheaper test that
    /// gives the same answer.
    #[inline(always)]
    fn rearm(&self, end: End, armed: impl FnOnce() -> Option<Time>) -> Option<Time> {
        let d = self.deadline(end)?;
        match armed() {
            Some(cur) if cur <= d => None,
            _ => Some(d),
        }
    }

    /// Bytes `end` has delivered in order to its application (results and samples).
    fn delivered(&self, _end: End) -> u64 {
        0
    }

    /// When `end`, the receiver of a finite transfer, received its last byte.
    fn completed_at(&self, _end: End) -> Option<Time> {
        None
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A [`Net`] for unit tests of elements: a clock that the test sets and a list of what was
    //! sent.

    use super::*;

    /// Collects the packets an element sends.
    #[derive(Debug, Default)]
    pub(crate) struct Collect {
        pub(crate) now: Time,
        pub(crate) sent: Vec<Packet>,
        pub(crate) host_senders: Vec<u32>,
    }

    impl Net for Collect {
        fn now(&self) -> Time {
            self.now
        }
        fn send(&mut self, pkt: Packet) {
            self.sent.push(pkt);
        }
        fn host_senders(&mut self, host: u32) -> &mut u32 {
            let i = host as usize;
            if self.host_senders.len() <= i {
                self.host_senders.resize(i + 1, 0);
            }
            &mut self.host_senders[i]
        }
    }
}
