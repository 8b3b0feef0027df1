//! Multipath TFRC (Tse 2006 §3.2, spec 003 §4.3–4.4): one connection whose packets carry a
//! 64-bit connection sequence number and travel on N subflows, each an RFC 3448 TFRC
//! sender/receiver pair (`pathpool-cc`'s [`TfrcSender`](pathpool_cc::TfrcSender) and
//! [`TfrcReceiver`](pathpool_cc::TfrcReceiver)).
//!
//! * [`sender`]: the subflows' senders and the rate rule on top of them, Bilevel TFRC's master
//!   (eqs. 3.1, 3.3) or 1/N TFRC, and which packet each subflow sends next.
//! * [`reliability`]: the master's reliability (Tse §4.3.2): NACKs, resends on another
//!   subflow, the 1.5-RTT NACK expiry and the tail-loss rule.
//! * [`connection_loss`]: the optional loss-interval history over the whole connection.
//! * [`receiver`]: per-subflow TFRC receivers, loss detection for NACKs, and the reassembly
//!   of the connection sequence space (every packet delivered once).
//!
//! Sequence numbers count packets: connection packet g carries the g-th payload unit, so
//! "every byte delivered once" is "every connection packet delivered once".

pub mod connection_loss;
pub mod receiver;
pub mod reliability;
pub mod sender;

use pathpool_cc::{DataHeader, Feedback};

pub use receiver::{FirstInterval, MpTfrcReceiver};
pub use reliability::{Reliability, ResendSubflow};
pub use sender::{MpTfrcConfig, MpTfrcSender, MultipathTfrc};

/// A lost transmission as the receiver names it: subflow `subflow`'s packet `seq`. Only the
/// sender knows which connection packet it carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Nack {
    /// The subflow it was sent on.
    pub subflow: u32,
    /// Its subflow sequence number.
    pub seq: u64,
}

/// What a multipath TFRC data packet carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MpDataHeader {
    /// The subflow it is sent on.
    pub subflow: u32,
    /// The subflow's TFRC header (subflow sequence number, timestamp, RTT estimate, size).
    pub tfrc: DataHeader,
    /// The connection sequence number of the payload.
    pub conn_seq: u64,
    /// Whether the payload is sent for the first time (a resend is not).
    pub new_data: bool,
}

/// What a multipath TFRC feedback packet carries: its subflow's TFRC feedback and the
/// connection-level state every feedback repeats (Tse §4.3.2).
#[derive(Debug, Clone, PartialEq)]
pub struct MpFeedback {
    /// The subflow whose receiver sends it (and whose reverse path it takes).
    pub subflow: u32,
    /// That subflow's RFC 3448 feedback.
    pub tfrc: Feedback,
    /// Every transmission the receiver holds lost and not yet repaired, on any subflow.
    pub nacks: Vec<Nack>,
    /// Every connection packet below it has arrived.
    pub cumulative: u64,
    /// Connection packets received above `cumulative`: sorted, disjoint `[start, end)`.
    pub above_gap: Vec<(u64, u64)>,
    /// The loss event rate of the connection-wide loss history, if the receiver keeps one
    /// (decision D264).
    pub connection_loss_event_rate: Option<f64>,
}

/// Whether connection packet `g` is in what a feedback reports received.
#[must_use]
pub fn reported_received(cumulative: u64, above_gap: &[(u64, u64)], g: u64) -> bool {
    if g < cumulative {
        return true;
    }
    let i = above_gap.partition_point(|r| r.0 <= g);
    i > 0 && g < above_gap[i - 1].1
}
