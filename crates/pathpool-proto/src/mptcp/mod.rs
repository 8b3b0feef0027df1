//! A multipath TCP connection (after MPTCP, RFC 8684) at the level of parsed segments.
//!
//! A connection has K ≥ 1 subflows. Each subflow is an ordinary [`TcpSender`] /
//! [`TcpReceiver`] pair with its own sequence space, RTT estimator, loss recovery and
//! retransmission timer, driving its own path of one shared connection-level
//! [`MultipathController`]; coupling between subflows is entirely the controller's business.
//!
//! On top, the connection keeps a *data sequence space*: the [`MpSender`]'s scheduler hands
//! each subflow one segment of connection data at a time, recording the mapping from the
//! subflow's sequence numbers to data sequence numbers (MPTCP's DSS option), and the
//! [`MpReceiver`] reassembles the data stream from whatever arrives on any subflow. A subflow
//! can be added or closed at any time; the data it had in flight unacknowledged when it closed
//! is sent again on the others (reinjection). A finite transfer is complete only when every
//! data byte has arrived.
//!
//! What is not modelled: the connection's handshakes (subflows exist from their creation),
//! the connection-level receive window (the receiving application reads at once) and the
//! DATA_ACK (the sender infers data-level acknowledgement from subflow ACKs, which is
//! equivalent when receive buffers are unlimited). See `docs/decisions.md`.
//!
//! [`TcpSender`]: crate::tcp::TcpSender
//! [`TcpReceiver`]: crate::tcp::TcpReceiver
//! [`MultipathController`]: pathpool_cc::MultipathController

mod receiver;
mod scheduler;
mod sender;

pub use receiver::MpReceiver;
pub use scheduler::Scheduler;
pub use sender::{Mapping, MpSegment, MpSender, Subflow, SubflowState};
