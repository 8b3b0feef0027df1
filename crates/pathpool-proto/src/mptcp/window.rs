//! The connection-level receive window of a multipath connection and the mitigations of the
//! head-of-line blocking it causes (`docs/decisions.md` D175–D179).
//!
//! An MPTCP receiver has one receive buffer for the whole connection. It acknowledges data at
//! the connection level (DATA_ACK, RFC 8684 §3.3.2) and advertises one receive window that is
//! relative to that DATA_ACK and shared by every subflow (§3.3.4, §3.3.5): the sender may
//! send no data sequence number at or beyond DATA_ACK + window, whichever subflow would carry
//! it, and it moves its idea of that right edge only forwards (§3.3.5: it "MUST update its
//! local receive window values when the largest sequence number allowed ... increases").
//!
//! The receiving application here reads at once, so data delivered in order leaves the buffer
//! immediately and what fills it is data held above a gap: the window advertised is the
//! buffer less those bytes. A slow subflow that carries the lowest undelivered data then
//! holds the window's left edge while the fast ones fill it: head-of-line blocking. Raiciu et
//! al. ("How Hard Can It Be? Designing and Implementing a Deployable Multipath TCP", NSDI
//! 2012, §4.2) give two mitigations, each an option here:
//!
//! * **opportunistic retransmission**: a subflow that has congestion window to spare but is
//!   stopped by the receive window sends again the data at the window's left edge, held by a
//!   slower subflow;
//! * **penalisation**: the subflow holding the left edge has its congestion window halved
//!   (and ssthresh set to the result), at most once per its smoothed RTT.

use pathpool_core::Time;

/// What the receiving end reports at the data level with an acknowledgement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataAck {
    /// DATA_ACK: the first data byte not yet delivered in order.
    pub data_ack: u64,
    /// Receive window in bytes, relative to `data_ack`.
    pub window: u64,
}

impl DataAck {
    /// The first data sequence number beyond what this acknowledgement allows.
    #[must_use]
    pub fn right_edge(&self) -> u64 {
        self.data_ack.saturating_add(self.window)
    }
}

/// A finite connection-level receive buffer and the mitigations of head-of-line blocking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiveWindowConfig {
    /// Bytes of the receiver's connection-level buffer.
    pub receive_buffer_bytes: u64,
    /// Opportunistic retransmission (Raiciu et al. NSDI 2012 §4.2).
    pub opportunistic_retransmission: bool,
    /// Penalisation of the subflow holding up the window (Raiciu et al. NSDI 2012 §4.2).
    pub penalisation: bool,
}

impl ReceiveWindowConfig {
    /// A buffer of `bytes` with both mitigations on, as Linux MPTCP runs.
    #[must_use]
    pub fn with_mitigations(bytes: u64) -> Self {
        ReceiveWindowConfig {
            receive_buffer_bytes: bytes,
            opportunistic_retransmission: true,
            penalisation: true,
        }
    }
}

/// Counters of the sending end's window handling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiveWindowStats {
    /// Times a subflow with congestion window to spare found new data beyond the right edge.
    pub blocked: u64,
    /// Segments sent again by opportunistic retransmission.
    pub opportunistic_retransmissions: u64,
    /// Congestion windows halved by penalisation.
    pub penalisations: u64,
}

/// The sending end's view of the receive window.
#[derive(Clone, Debug)]
pub(crate) struct SendWindow {
    pub(crate) config: ReceiveWindowConfig,
    /// The highest DATA_ACK received.
    pub(crate) data_ack: u64,
    /// The highest right edge received (before any: the initial window, the whole buffer,
    /// as the handshake advertises it).
    pub(crate) right_edge: u64,
    /// Opportunistic retransmission has sent the data below this again: the same data is
    /// not sent a third time while it still holds up the window.
    pub(crate) retransmitted_up_to: u64,
    /// When each subflow was last penalised.
    penalised_at: Vec<Option<Time>>,
    pub(crate) stats: ReceiveWindowStats,
}

impl SendWindow {
    pub(crate) fn new(config: ReceiveWindowConfig) -> Self {
        SendWindow {
            config,
            data_ack: 0,
            right_edge: config.receive_buffer_bytes,
            retransmitted_up_to: 0,
            penalised_at: Vec::new(),
            stats: ReceiveWindowStats::default(),
        }
    }

    /// Takes in an acknowledgement (which may arrive late, on a slow subflow, behind newer
    /// ones); returns whether the right edge moved forwards.
    pub(crate) fn update(&mut self, d: DataAck) -> bool {
        self.data_ack = self.data_ack.max(d.data_ack);
        let edge = d.right_edge();
        if edge > self.right_edge {
            self.right_edge = edge;
            true
        } else {
            false
        }
    }

    /// Whether subflow `k` may be penalised at `now`, given its smoothed RTT: at most once per
    /// that RTT.
    pub(crate) fn may_penalise(&self, k: usize, now: Time, srtt: pathpool_core::Dur) -> bool {
        self.penalised_at
            .get(k)
            .copied()
            .flatten()
            .is_none_or(|t| now >= t + srtt)
    }

    /// Records that subflow `k` was penalised at `now`.
    pub(crate) fn penalised(&mut self, k: usize, now: Time) {
        if self.penalised_at.len() <= k {
            self.penalised_at.resize(k + 1, None);
        }
        self.penalised_at[k] = Some(now);
        self.stats.penalisations += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathpool_core::Dur;

    #[test]
    fn the_right_edge_only_moves_forwards_and_data_ack_is_the_highest_seen() {
        let mut w = SendWindow::new(ReceiveWindowConfig::with_mitigations(10_000));
        assert_eq!(
            w.right_edge, 10_000,
            "the initial window is the whole buffer"
        );
        // Data above a gap fills the buffer: the window shrinks, the edge does not.
        assert!(!w.update(DataAck {
            data_ack: 0,
            window: 4_000
        }));
        assert_eq!(w.right_edge, 10_000);
        assert!(w.update(DataAck {
            data_ack: 8_000,
            window: 10_000
        }));
        assert_eq!((w.data_ack, w.right_edge), (8_000, 18_000));
        // A late acknowledgement from a slow subflow changes nothing.
        assert!(!w.update(DataAck {
            data_ack: 5_000,
            window: 10_000
        }));
        assert_eq!((w.data_ack, w.right_edge), (8_000, 18_000));
    }

    #[test]
    fn a_subflow_is_penalised_at_most_once_per_its_rtt() {
        let mut w = SendWindow::new(ReceiveWindowConfig::with_mitigations(10_000));
        let rtt = Dur::from_ms(150);
        assert!(w.may_penalise(1, Time::from_ms(0), rtt));
        w.penalised(1, Time::from_ms(100));
        assert!(!w.may_penalise(1, Time::from_ms(249), rtt));
        assert!(w.may_penalise(1, Time::from_ms(250), rtt));
        assert!(w.may_penalise(0, Time::from_ms(101), rtt), "per subflow");
        assert_eq!(w.stats.penalisations, 1);
    }
}
