//! Parsed TCP segments (the "Repr" level: no bytes on a wire).

use pathpool_core::{Dur, Time};

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
    /// The receiver's own timestamp when it sent the ACK (RFC 7323 TSval), if carried. With
    /// `ts_echo` it gives the one-way delay of the forward path that TCP-LP reads
    /// (Kuzmanovic & Knightly 2003 §3.1; Linux `tcp_lp.c` uses `rcv_tsval − rcv_tsecr`).
    pub ts_val: Option<Time>,
}

impl AckSegment {
    /// An acknowledgement without the receiver's timestamp.
    #[must_use]
    pub fn new(ack: u64, ts_echo: Time) -> Self {
        AckSegment {
            ack,
            ts_echo,
            ts_val: None,
        }
    }

    /// This acknowledgement carrying the receiver's timestamp `ts_val`.
    #[must_use]
    pub fn with_ts_val(self, ts_val: Time) -> Self {
        AckSegment {
            ts_val: Some(ts_val),
            ..self
        }
    }

    /// The one-way delay of the forward path: the receiver's timestamp minus the echoed
    /// send timestamp (RFC 7323 TSval − TSecr), if the ACK carries the former and it is not
    /// earlier. A real receiver's clock has an unknown offset from the sender's; TCP-LP uses
    /// only differences of these samples from their minimum and maximum, which the offset
    /// cancels from (Kuzmanovic & Knightly 2003 §3.1), so the simulator's common clock loses
    /// nothing. With delayed ACKs the sample includes the ACK's delay, as in Linux.
    #[must_use]
    pub fn one_way_delay(&self) -> Option<Dur> {
        self.ts_val
            .and_then(|v| (self.ts_echo <= v).then(|| v - self.ts_echo))
    }
}

/// The SACK option of one ACK: up to [`SackBlocks::MAX`] blocks `[start, end)` of data held
/// above the cumulative acknowledgement, the first the most recently changed (RFC 2018 §4).
/// It travels beside its [`AckSegment`] rather than in it: most connections have no SACK,
/// and an ACK without it stays two words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    len: u8,
    blocks: [(u64, u64); SackBlocks::MAX],
}

impl SackBlocks {
    /// Blocks that fit in the option space beside the timestamp option: 40 bytes of options,
    /// 10 for timestamps (with 2 of padding), 2 + 8 per block (RFC 2018 §3).
    pub const MAX: usize = 3;

    /// No blocks.
    pub const EMPTY: SackBlocks = SackBlocks {
        len: 0,
        blocks: [(0, 0); SackBlocks::MAX],
    };

    /// The blocks given, at most [`SackBlocks::MAX`] of them (the rest are dropped, as a
    /// receiver drops what does not fit in its option space).
    #[must_use]
    pub fn from_blocks(blocks: &[(u64, u64)]) -> Self {
        let mut s = SackBlocks::EMPTY;
        for &b in blocks.iter().take(Self::MAX) {
            s.blocks[s.len as usize] = b;
            s.len += 1;
        }
        s
    }

    /// The blocks, most recent first.
    #[must_use]
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }

    /// Whether there are no blocks.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
