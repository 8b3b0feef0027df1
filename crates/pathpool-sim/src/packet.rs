//! Simulated packets.
//!
//! A packet is a 24-byte `Copy` value carrying its place on its source route (`hop`), its size
//! on the wire and the parsed transport header. Packets are moved by value between the
//! preallocated rings of links and the endpoints; the rings grow to their peak occupancy and
//! are then reused, so a run in steady state performs no heap allocation per packet (the
//! `no_allocation_in_steady_state` test checks this with a counting allocator). This plays
//! the role of htsim's packet free list without an indirection per access.
//!
//! Only what cannot be derived is carried, since every packet in flight sits in a link's ring:
//! what a packet carries follows from the endpoint its route ends at (TCP sinks receive data
//! segments, TCP sources ACKs, UDP sinks datagrams), and the payload length from its size and
//! that flow's header size.

use pathpool_core::Time;

/// Bit of `Packet::wire` that flags a retransmitted data segment.
const RETX: u32 = 1 << 31;
/// Bits of `Packet::wire` holding the size (sizes are below 1 MiB).
const SIZE_BITS: u32 = 20;
const SIZE_MASK: u32 = (1 << SIZE_BITS) - 1;
/// Subflows a multipath connection may have: their index sits in bits 20..31 of `wire`.
pub(crate) const MAX_SUBFLOWS: u32 = 1 << (31 - SIZE_BITS);

/// A packet in flight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packet {
    /// Data: first sequence number; ACK: cumulative acknowledgement.
    pub(crate) seq: u64,
    /// Data: timestamp value; ACK: timestamp echo.
    pub(crate) ts: Time,
    /// Position in the simulation's route table of the next element on the packet's route.
    pub(crate) hop: u32,
    /// Bytes on the wire (headers included) in bits 0..20, the subflow of a multipath
    /// connection in bits 20..31 and the retransmission flag in bit 31.
    wire: u32,
}

impl Packet {
    /// A packet of `size` bytes on the wire; `retx` marks a retransmitted data segment.
    #[inline]
    pub(crate) fn new(seq: u64, ts: Time, hop: u32, size: u32, retx: bool) -> Self {
        Self::with_subflow(seq, ts, hop, size, retx, 0)
    }
    /// A packet of subflow `subflow` of a multipath connection.
    #[inline]
    pub(crate) fn with_subflow(
        seq: u64,
        ts: Time,
        hop: u32,
        size: u32,
        retx: bool,
        subflow: u32,
    ) -> Self {
        debug_assert!(size <= SIZE_MASK, "packet sizes are below 1 MiB");
        debug_assert!(subflow < MAX_SUBFLOWS, "at most {MAX_SUBFLOWS} subflows");
        Packet {
            seq,
            ts,
            hop,
            wire: size | subflow << SIZE_BITS | if retx { RETX } else { 0 },
        }
    }
    /// Bytes on the wire (headers included).
    #[inline]
    pub(crate) fn size(&self) -> u32 {
        self.wire & SIZE_MASK
    }
    /// The subflow of a multipath connection's packet (0 for other packets).
    #[inline]
    pub(crate) fn subflow(&self) -> u32 {
        (self.wire & !RETX) >> SIZE_BITS
    }
    /// Whether a data segment is a retransmission.
    #[inline]
    pub(crate) fn retx(&self) -> bool {
        self.wire & RETX != 0
    }
}

/// Bits of an INRPP packet's `seq` that hold the sequence or acknowledgement number; the
/// bits above hold the nonce (D282).
const INRPP_SEQ_BITS: u32 = 40;
const INRPP_SEQ_MASK: u64 = (1 << INRPP_SEQ_BITS) - 1;
/// Largest nonce an INRPP packet carries (24 bits; routers number theirs below it).
pub(crate) const INRPP_MAX_NONCE: u32 = (1 << (64 - INRPP_SEQ_BITS)) - 1;
/// Largest byte count an INRPP flow may send (its sequence numbers take 40 bits).
pub(crate) const INRPP_MAX_BYTES: u64 = INRPP_SEQ_MASK;

/// The INRPP header of a packet of an INRPP flow (issue 21): a single-path flow, so the
/// subflow bits of `wire` are free for the ACK's notification, and its sequence numbers fit
/// in 40 bits, so the nonce takes the top 24 of `seq`. Other flows never call these, and the
/// packet stays 24 bytes (D282).
impl Packet {
    /// A packet of an INRPP flow: `seq` the sequence (data) or acknowledgement (ACK) number,
    /// `nonce` 0 for none, `notification` 0 none, 1 SLOW-DOWN, 2 CANCEL.
    #[inline]
    pub(crate) fn inrpp(
        seq: u64,
        ts: Time,
        hop: u32,
        size: u32,
        retx: bool,
        nonce: u32,
        notification: u32,
    ) -> Self {
        debug_assert!(seq <= INRPP_SEQ_MASK && nonce <= INRPP_MAX_NONCE && notification < 3);
        let mut p = Packet::with_subflow(seq & INRPP_SEQ_MASK, ts, hop, size, retx, notification);
        p.seq |= u64::from(nonce) << INRPP_SEQ_BITS;
        p
    }
    /// An INRPP packet's sequence or acknowledgement number.
    #[inline]
    pub(crate) fn inrpp_seq(&self) -> u64 {
        self.seq & INRPP_SEQ_MASK
    }
    /// An INRPP packet's nonce (0: none).
    #[inline]
    pub(crate) fn inrpp_nonce(&self) -> u32 {
        (self.seq >> INRPP_SEQ_BITS) as u32
    }
    /// An INRPP ACK's notification (0 none, 1 SLOW-DOWN, 2 CANCEL).
    #[inline]
    pub(crate) fn inrpp_notification(&self) -> u32 {
        self.subflow()
    }
    /// Rewrites an INRPP packet's nonce and notification (a router on the way does).
    #[inline]
    pub(crate) fn set_inrpp_signal(&mut self, nonce: u32, notification: u32) {
        *self = Packet::inrpp(
            self.inrpp_seq(),
            self.ts,
            self.hop,
            self.size(),
            self.retx(),
            nonce,
            notification,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inrpp_header_round_trips_and_stays_24_bytes() {
        assert_eq!(std::mem::size_of::<Packet>(), 24);
        let mut p = Packet::inrpp(INRPP_MAX_BYTES, Time::from_ms(3), 9, 1500, true, 77, 1);
        assert_eq!(
            (p.inrpp_seq(), p.inrpp_nonce(), p.inrpp_notification()),
            (INRPP_MAX_BYTES, 77, 1)
        );
        assert_eq!(
            (p.size(), p.retx(), p.hop, p.ts),
            (1500, true, 9, Time::from_ms(3))
        );
        p.set_inrpp_signal(INRPP_MAX_NONCE, 2);
        assert_eq!(
            (p.inrpp_seq(), p.inrpp_nonce(), p.inrpp_notification()),
            (INRPP_MAX_BYTES, INRPP_MAX_NONCE, 2)
        );
        p.set_inrpp_signal(0, 0);
        assert_eq!(
            (p.inrpp_nonce(), p.inrpp_notification(), p.size()),
            (0, 0, 1500)
        );
    }
}
