//! Simulated packets.
//!
//! A packet is a 32-byte `Copy` value carrying its place on its source route (`hop`), its size
//! on the wire and the parsed transport header. Packets are moved by value between the
//! preallocated rings of links and the endpoints; the rings grow to their peak occupancy and
//! are then reused, so a run in steady state performs no heap allocation per packet (the
//! `no_allocation_in_steady_state` test checks this with a counting allocator). This plays
//! the role of htsim's packet free list without an indirection per access.

use pathpool_core::Time;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// A TCP data segment: `seq`, `len`, `ts` = TSval.
    TcpData,
    /// A TCP acknowledgement: `seq` = cumulative ACK, `ts` = TSecr.
    TcpAck,
    /// A UDP datagram.
    Udp,
}

/// A packet in flight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packet {
    /// Data: first sequence number; ACK: cumulative acknowledgement.
    pub(crate) seq: u64,
    /// Data: timestamp value; ACK: timestamp echo.
    pub(crate) ts: Time,
    /// Bytes on the wire (headers included).
    pub(crate) size: u32,
    /// Payload bytes (data segments).
    pub(crate) len: u32,
    /// Position in the simulation's route table of the next element on the packet's route.
    pub(crate) hop: u32,
    /// What the packet carries.
    pub(crate) kind: Kind,
    /// Whether a data segment is a retransmission.
    pub(crate) retx: bool,
}
