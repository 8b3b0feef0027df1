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

mod mappings;
mod receiver;
mod scheduler;
mod sender;

use pathpool_core::Time;

pub use mappings::Mapping;
pub use receiver::MpReceiver;
pub use scheduler::Scheduler;
pub use sender::{MpSegment, MpSender, Subflow, SubflowState};

/// The timer deadlines of one end's subflows, with the earliest kept up to date: it is asked
/// for after every packet, and must be recomputed only when the subflow holding it moves its
/// timer later. [`Time::MAX`] stands for "no timer" (a timer at the end of time never fires,
/// so nothing is lost).
#[derive(Clone, Debug)]
struct Deadlines {
    at: Vec<Time>,
    /// The minimum of `at` (`Time::MAX` if empty).
    earliest: Time,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            at: Vec::new(),
            earliest: Time::MAX,
        }
    }
}

impl Deadlines {
    /// Adds a subflow without a timer.
    fn push(&mut self) {
        self.at.push(Time::MAX);
    }

    /// Sets subflow `i`'s deadline.
    #[inline]
    fn set(&mut self, i: usize, deadline: Option<Time>) {
        let d = deadline.unwrap_or(Time::MAX);
        let old = std::mem::replace(&mut self.at[i], d);
        if d <= self.earliest {
            self.earliest = d;
        } else if old == self.earliest {
            // The earliest timer moved later (a retransmission timer restarted by an ACK):
            // only then must the others be looked at. That is most ACKs, since subflows'
            // ACKs tend to take turns, so the scan is on plain integers, which compiles to a
            // short loop of conditional moves.
            let mut earliest = u64::MAX;
            for t in &self.at {
                earliest = earliest.min(t.as_ps());
            }
            self.earliest = Time::from_ps(earliest);
        }
    }

    /// The earliest deadline, if any subflow has one.
    #[inline]
    fn earliest(&self) -> Option<Time> {
        (self.earliest != Time::MAX).then_some(self.earliest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the sequence of changes, the kept minimum is the minimum of the array.
        #[test]
        fn earliest_is_the_minimum(
            n in 1usize..6,
            changes in proptest::collection::vec((0usize..6, proptest::option::of(0u64..50)), 0..80),
        ) {
            let mut d = Deadlines::default();
            let mut plain = vec![None; n];
            for _ in 0..n {
                d.push();
            }
            for (i, t) in changes {
                let i = i % n;
                let t = t.map(Time::from_ps);
                d.set(i, t);
                plain[i] = t;
                prop_assert_eq!(d.earliest(), plain.iter().flatten().min().copied());
            }
        }
    }
}
