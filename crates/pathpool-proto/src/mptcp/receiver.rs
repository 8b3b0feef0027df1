//! The receiving end of a multipath connection: one TCP receiver per subflow, and the
//! reassembly of the data stream from all of them.

use pathpool_core::Time;

use super::window::DataAck;
use super::Deadlines;
use crate::reassembly::{Inserted, Reassembly};
use crate::tcp::{AckSegment, DataSegment, SackBlocks, TcpReceiver, TcpReceiverConfig};

/// The receiving end of a multipath connection.
///
/// A segment is handled in two steps, as MPTCP's receiver does: [`handle_segment`] at the
/// subflow level (cumulative ACK, delayed ACKs, timestamps), then [`handle_mapping`] for each
/// data range its DSS mapping says it carries.
///
/// [`handle_segment`]: MpReceiver::handle_segment
/// [`handle_mapping`]: MpReceiver::handle_mapping
#[derive(Clone, Debug)]
pub struct MpReceiver {
    config: TcpReceiverConfig,
    subflows: Vec<TcpReceiver>,
    data: Reassembly,
    /// Data bytes that arrived more than once (on the same or different subflows).
    duplicate_data_bytes: u64,
    /// Each subflow's delayed-ACK deadline, refreshed whenever its receiver is touched (read
    /// after every segment by `poll_timeout`).
    deadlines: Deadlines,
    /// The connection-level receive buffer (`u64::MAX`: unlimited).
    receive_buffer_bytes: u64,
}

impl MpReceiver {
    /// A receiver with no subflow yet; every subflow uses `config`.
    #[must_use]
    pub fn new(config: TcpReceiverConfig) -> Self {
        MpReceiver {
            config,
            subflows: Vec::new(),
            data: Reassembly::new(),
            duplicate_data_bytes: 0,
            deadlines: Deadlines::default(),
            receive_buffer_bytes: u64::MAX,
        }
    }

    /// The receiver with a connection-level receive buffer of `bytes` (`docs/decisions.md`
    /// D175).
    #[must_use]
    pub fn with_receive_buffer(mut self, bytes: u64) -> Self {
        self.receive_buffer_bytes = bytes;
        self
    }

    /// The data-level acknowledgement to send with a subflow ACK now: DATA_ACK (the data
    /// delivered in order, which the application reads at once) and the receive window
    /// relative to it, the buffer less what it holds above a gap (RFC 8684 §3.3.4: the window
    /// is shared by every subflow and relative to DATA_ACK).
    #[must_use]
    pub fn data_ack(&self) -> DataAck {
        DataAck {
            data_ack: self.data.cumulative(),
            window: self
                .receive_buffer_bytes
                .saturating_sub(self.held_out_of_order_bytes()),
        }
    }

    /// Data bytes held above a gap (in the receive buffer, waiting for earlier data).
    #[must_use]
    pub fn held_out_of_order_bytes(&self) -> u64 {
        self.data.above_gap().iter().map(|(a, b)| b - a).sum()
    }

    /// The connection-level receive buffer in bytes (`u64::MAX`: unlimited).
    #[must_use]
    pub fn receive_buffer_bytes(&self) -> u64 {
        self.receive_buffer_bytes
    }

    /// Adds the receiving end of a subflow; returns its index (the sender's, if both sides add
    /// subflows in the same order).
    pub fn add_subflow(&mut self) -> usize {
        self.subflows.push(TcpReceiver::new(self.config));
        self.deadlines.push();
        self.subflows.len() - 1
    }

    /// A data segment arrived on subflow `i`; returns the subflow ACK to send now, if due.
    #[inline]
    pub fn handle_segment(&mut self, now: Time, i: usize, seg: &DataSegment) -> Option<AckSegment> {
        let rx = self.subflows.get_mut(i)?;
        let ack = rx.handle_segment(now, seg);
        self.deadlines.set(i, rx.poll_timeout());
        ack
    }

    /// The data bytes `[start, end)` arrived (one DSS mapping of a received segment).
    #[inline]
    pub fn handle_mapping(&mut self, start: u64, end: u64) {
        // `insert` reports a duplicate exactly when `contains` would have: one search, not two.
        if self.data.insert(start, end) == Inserted::Duplicate {
            self.duplicate_data_bytes += end - start;
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if ever.
    #[must_use]
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.deadlines.earliest()
    }

    /// Sends the delayed ACKs whose timers expired: `send(subflow, ack, its SACK option)`
    /// for each.
    pub fn handle_timeout(
        &mut self,
        now: Time,
        mut send: impl FnMut(usize, AckSegment, &SackBlocks),
    ) {
        for (i, rx) in self.subflows.iter_mut().enumerate() {
            if let Some(a) = rx.handle_timeout(now) {
                send(i, a, rx.sack_blocks());
            }
            self.deadlines.set(i, rx.poll_timeout());
        }
    }

    /// Data bytes delivered in order to the application.
    #[must_use]
    pub fn delivered_bytes(&self) -> u64 {
        self.data.cumulative()
    }
    /// Data ranges held above a gap.
    #[must_use]
    pub fn out_of_order_ranges(&self) -> &[(u64, u64)] {
        self.data.above_gap()
    }
    /// Data bytes that arrived more than once (reinjections and spurious retransmissions).
    #[must_use]
    pub fn duplicate_data_bytes(&self) -> u64 {
        self.duplicate_data_bytes
    }
    /// The subflows' receivers.
    #[must_use]
    pub fn subflows(&self) -> &[TcpReceiver] {
        &self.subflows
    }
}
