//! Parsed TCP segments (the "Repr" level: no bytes on a wire).

use pathpool_core::Time;

/// A data segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataSegment {
    /// Sequence number of the first payload byte.
    pub seq: u64,
    /// Payload length in bytes.
    pub len: u32,
    /// Timestamp value (RFC 7323 TSval): when the sender sent it.
    pub ts: Time,
    /// Whether this is a retransmission (for statistics only; the receiver cannot tell).
    pub retransmission: bool,
}

impl DataSegment {
    /// One past the last payload byte.
    #[must_use]
    pub fn end(&self) -> u64 {
        self.seq + u64::from(self.len)
    }
}

/// A pure acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSegment {
    /// Cumulative acknowledgement: the next byte expected.
    pub ack: u64,
    /// Timestamp echo reply (RFC 7323 TSecr).
    pub ts_echo: Time,
}
