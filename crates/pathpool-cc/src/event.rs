//! What transports report to controllers.

use pathpool_core::{Dur, Time};

/// A cumulative acknowledgement of new data, outside loss recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    /// When the ACK arrived.
    pub now: Time,
    /// Bytes newly acknowledged by this ACK.
    pub acked_bytes: u64,
    /// The RTT measured from this ACK, if it gave a valid sample.
    pub rtt_sample: Option<Dur>,
    /// The forward path's one-way delay from this ACK's timestamps (receiver's TSval − the
    /// echoed send timestamp), if the ACK carried the receiver's. Offset by any difference
    /// of the two clocks, which delay-based rules using only its changes (TCP-LP) ignore.
    pub one_way_delay: Option<Dur>,
    /// The path's smoothed RTT after this ACK.
    pub srtt: Dur,
    /// Bytes still in flight after this ACK.
    pub flight_bytes: u64,
}

/// A loss detected on a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionEvent {
    /// Three duplicate ACKs started fast retransmit / fast recovery (RFC 5681 §3.2 step 2).
    FastRetransmit {
        /// Bytes outstanding when the loss was detected (RFC 5681's FlightSize).
        flight_bytes: u64,
    },
    /// Loss recovery entered with SACK (RFC 6675 §5 step 4): ssthresh as for
    /// [`FastRetransmit`](Self::FastRetransmit), but `cwnd = ssthresh` without inflation,
    /// since the sender counts what left the network in its pipe instead (step 4.2).
    SackRecovery {
        /// Bytes outstanding when the loss was detected (RFC 5681's FlightSize).
        flight_bytes: u64,
    },
    /// The retransmission timer expired (RFC 6298 §5.4).
    Timeout {
        /// Bytes outstanding when the timer fired.
        flight_bytes: u64,
        /// Whether the segment had already been retransmitted by the timer: RFC 5681 §3.1
        /// then holds ssthresh constant.
        repeated: bool,
    },
}

/// An ACK received while the path is in NewReno fast recovery (RFC 6582 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryAck {
    /// A further duplicate ACK: one more segment has left the network (RFC 5681 §3.2 step 4).
    Duplicate,
    /// A partial ACK: new data acknowledged, but not everything up to `recover`.
    Partial {
        /// Bytes newly acknowledged.
        acked_bytes: u64,
    },
    /// A full ACK: everything up to `recover` is acknowledged; recovery ends.
    Full {
        /// Bytes still in flight after this ACK.
        flight_bytes: u64,
    },
}

/// What a transport tells a send gate about one path
/// ([`MultipathController::may_send`](crate::MultipathController::may_send)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendView {
    /// Bytes in flight on the path.
    pub flight_bytes: u64,
    /// Whether the path has something to send if allowed: a retransmission, or new data the
    /// connection could give it.
    pub has_data: bool,
}
