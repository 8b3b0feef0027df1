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
//! The connection-level receive buffer is unlimited by default; then the sender infers
//! data-level acknowledgement from subflow ACKs, which is equivalent. With a finite buffer
//! ([`MpSender::with_receive_window`], [`MpReceiver::with_receive_buffer`]) the receiver
//! acknowledges data explicitly ([`DataAck`]: DATA_ACK and a window shared by all subflows),
//! the sender keeps new data within it, and a slow subflow can block the others (head-of-line
//! blocking), with the mitigations of Raiciu et al. (NSDI 2012) as options (module `window`).
//! What is not modelled: the connection's handshakes (subflows exist from their creation).
//! See `docs/decisions.md` (D32, D175–D179).
//!
//! [`TcpSender`]: crate::tcp::TcpSender
//! [`TcpReceiver`]: crate::tcp::TcpReceiver
//! [`MultipathController`]: pathpool_cc::MultipathController

mod mappings;
mod receiver;
mod scheduler;
mod sender;
mod window;
#[cfg(test)]
mod window_tests;

use pathpool_core::Time;

pub use mappings::Mapping;
pub use receiver::MpReceiver;
pub use scheduler::Scheduler;
pub use sender::{MpSegment, MpSender, Subflow, SubflowState};
pub use window::{DataAck, ReceiveWindowConfig, ReceiveWindowStats};

/// The timer deadlines of one end's subflows, with a lower bound of the earliest that is
/// exact whenever it can be kept so without looking at every subflow.
///
/// The earliest deadline is asked for after every packet, but a driver that sleeps until a
/// known time only needs it when it is earlier than that time (`earliest_before`): when the
/// subflow holding the earliest moves its timer later (a retransmission timer restarted by
/// an ACK, most ACKs since subflows' ACKs take turns), the old earliest stays as the bound
/// and nothing is scanned; the minimum is taken over all subflows only when it is asked for
/// exactly. [`Time::MAX`] stands for "no timer" (a timer at the end of time never fires, so
/// nothing is lost).
#[derive(Clone, Debug)]
struct Deadlines {
    at: Vec<Time>,
    /// At most the minimum of `at` (`Time::MAX` if empty), and equal to it when `exact`.
    bound: Time,
    exact: bool,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            at: Vec::new(),
            bound: Time::MAX,
            exact: true,
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
        if d <= self.bound {
            // Every other deadline is at least the bound, so this one is the earliest.
            self.bound = d;
            self.exact = true;
        } else if old == self.bound {
            // The earliest may have moved later: the old value is still a lower bound.
            self.exact = false;
        }
    }

    /// The minimum of `at` (`Time::MAX` if empty).
    fn minimum(&self) -> Time {
        if self.exact {
            return self.bound;
        }
        // A short loop of conditional moves on plain integers.
        let mut earliest = u64::MAX;
        for t in &self.at {
            earliest = earliest.min(t.as_ps());
        }
        Time::from_ps(earliest)
    }

    /// Makes the bound exact again.
    fn refresh(&mut self) {
        self.bound = self.minimum();
        self.exact = true;
    }

    /// The earliest deadline, if any subflow has one.
    #[inline]
    fn earliest(&self) -> Option<Time> {
        let e = self.minimum();
        (e != Time::MAX).then_some(e)
    }

    /// The earliest deadline if it is before `t`.
    #[inline]
    fn earliest_before(&self, t: Time) -> Option<Time> {
        if self.bound >= t {
            return None;
        }
        self.earliest().filter(|&e| e < t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the sequence of changes, the earliest deadline (before any time) is the
        /// minimum of the array.
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
                let earliest = plain.iter().flatten().min().copied();
                prop_assert_eq!(d.earliest(), earliest);
                for before in [0, 10, 25, 49, 50, u64::MAX].map(Time::from_ps) {
                    prop_assert_eq!(d.earliest_before(before), earliest.filter(|&e| e < before));
                }
                if i == 0 {
                    d.refresh();
                    prop_assert!(d.exact);
                    prop_assert_eq!(d.earliest(), earliest);
                }
            }
        }
    }
}
