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

/// Bit of `Packet::wire` that flags a retransmitted data segment (sizes are at most 1 MiB).
const RETX: u32 = 1 << 31;

/// A packet in flight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packet {
    /// Data: first sequence number; ACK: cumulative acknowledgement.
    pub(crate) seq: u64,
    /// Data: timestamp value; ACK: timestamp echo.
    pub(crate) ts: Time,
    /// Position in the simulation's route table of the next element on the packet's route.
    pub(crate) hop: u32,
    /// Bytes on the wire (headers included), and the retransmission flag in bit 31.
    wire: u32,
}

impl Packet {
    /// A packet of `size` bytes on the wire; `retx` marks a retransmitted data segment.
    #[inline]
    pub(crate) fn new(seq: u64, ts: Time, hop: u32, size: u32, retx: bool) -> Self {
        debug_assert!(size < RETX, "packet sizes are at most 1 MiB");
        Packet {
            seq,
            ts,
            hop,
            wire: size | if retx { RETX } else { 0 },
        }
    }
    /// Bytes on the wire (headers included).
    #[inline]
    pub(crate) fn size(&self) -> u32 {
        self.wire & !RETX
    }
    /// Whether a data segment is a retransmission.
    #[inline]
    pub(crate) fn retx(&self) -> bool {
        self.wire & RETX != 0
    }
}
