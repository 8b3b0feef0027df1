//! What TFRC's data and feedback packets carry (RFC 3448 §3.2.1 and §3.2.2).

use pathpool_core::{Dur, Time};

/// The TFRC fields of a data packet (RFC 3448 §3.2.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataHeader {
    /// Sequence number, +1 per packet sent.
    pub seq: u64,
    /// When the sender sent it (echoed back for the RTT sample).
    pub timestamp: Time,
    /// The sender's current RTT estimate; `None` before its first sample.
    pub rtt_estimate: Option<Dur>,
    /// Packet size in bytes (s).
    pub size_bytes: u64,
}

/// The fields of a feedback packet (RFC 3448 §3.2.2), plus the count of losses in the last
/// RTT that Tse §4.3.1 lists.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feedback {
    /// The timestamp of the last data packet received (t_recvdata).
    pub timestamp_echo: Time,
    /// Time between that packet's arrival and this feedback's sending (t_delay).
    pub echo_delay: Dur,
    /// The rate data was received at since the last feedback, bytes/s (X_recv).
    pub x_recv_bytes_per_s: f64,
    /// The loss event rate p.
    pub loss_event_rate: f64,
    /// Packets detected lost since the last feedback (Tse §4.3.1, "losses within the last
    /// RTT"; decision D233).
    pub losses_last_rtt: u32,
}
