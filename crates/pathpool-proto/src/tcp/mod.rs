//! TCP with NewReno or SACK loss recovery, at the level of parsed segments.
//!
//! The model is the data-transfer phase of one TCP connection: the connection is established
//! when the sender is created (no SYN exchange), sequence numbers count bytes from 0 in a
//! `u64` (no wrap-around), and every segment carries the RFC 7323 timestamp option, which
//! gives an RTT sample on every acknowledgement of new data, retransmitted or not. Loss
//! recovery is NewReno's (RFC 6582) unless both ends use SACK (`sack`: RFC 2018 blocks from
//! the receiver, RFC 6675 recovery at the sender). The receiving application consumes data
//! as soon as it is in order, so the advertised receive window is constant and known to the
//! sender as [`TcpSenderConfig::rwnd_bytes`].

mod pipe;
mod receiver;
mod scoreboard;
mod segment;
mod sender;

pub use pipe::FlightEstimate;
pub use receiver::{ReceiverStats, TcpReceiver, TcpReceiverConfig};
pub use segment::{AckSegment, DataSegment, SackBlocks};
pub use sender::{PartialAckTimer, SenderStats, TcpSender, TcpSenderConfig};
