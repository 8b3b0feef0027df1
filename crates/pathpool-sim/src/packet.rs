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
