//! TFRC, TCP-Friendly Rate Control (RFC 3448, 2003), and the rate rules of the multipath
//! TFRC variants of Tse (2006): Bilevel TFRC (§3.2) and 1/N ("fractional") TFRC.
//!
//! Everything here is sans-IO: the sender and the receiver are state machines that take the
//! current time and the packets as arguments and return what to send or when to be called.
//!
//! * [`equation`]: the throughput equation, its inverse and the simple bound.
//! * [`loss_intervals`]: the weighted loss-interval history and p.
//! * [`history`]: the per-packet arrival history, wrap-safe or with ns-2's wrap bug.
//! * [`packets`]: what data and feedback packets carry.
//! * [`receiver`]: loss detection, loss events, X_recv and feedback.
//! * [`sender`]: the allowed rate X, RTT estimate, pacing and the nofeedback timer.
//! * [`bilevel`]: the master rules of Bilevel TFRC and the 1/N rule.

pub mod bilevel;
pub mod equation;
pub mod history;
pub mod loss_intervals;
pub mod packets;
pub mod receiver;
pub mod sender;
