//! `tcp.send_overhead`: ns-2's remedy for phase effects (the TCP agent's `overhead_`, Floyd
//! and Jacobson, "On traffic phase effects in packet-switched gateways", 1992). In a
//! simulator without randomness, flows that share a drop-tail queue can lock into the same
//! pattern of drops run after run and seed after seed. With an overhead, a segment the window
//! allows does not leave at once: it waits a uniform random time in `[0, max]`, then leaves,
//! and the next one waits its own time: segments leave one at a time, in order, as in ns-2's
//! `TcpAgent::send_much` with its delayed-send timer. Off (zero) by default, so results
//! without it are unchanged.

use pathpool_core::{Dur, Rng, Time};

/// The delayed-send timer of one TCP source.
#[derive(Clone, Debug)]
pub(crate) struct SendOverhead {
    /// The largest delay, in picoseconds.
    max_ps: u64,
    rng: Rng,
    /// When the next segment leaves, if one is waiting.
    next: Option<Time>,
}

impl SendOverhead {
    /// A timer drawing delays in `[0, max]` from `rng`; `None` for a zero `max` (off).
    pub(crate) fn new(max: Dur, rng: Rng) -> Option<Self> {
        (max > Dur::ZERO).then(|| SendOverhead {
            max_ps: max.as_ps(),
            rng,
            next: None,
        })
    }

    /// When the waiting segment leaves.
    #[inline]
    pub(crate) fn deadline(&self) -> Option<Time> {
        self.next
    }

    /// Whether a segment's wait is over at `now`; the timer is then free for the next one.
    #[inline]
    pub(crate) fn take_due(&mut self, now: Time) -> bool {
        let due = self.next.is_some_and(|t| t <= now);
        if due {
            self.next = None;
        }
        due
    }

    /// A segment may go: start its wait, unless one is already waiting.
    #[inline]
    pub(crate) fn arm(&mut self, now: Time) {
        if self.next.is_none() {
            self.next = Some(now + Dur::from_ps(self.rng.below(self.max_ps + 1)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_off() {
        assert!(SendOverhead::new(Dur::ZERO, Rng::seed_from_u64(1)).is_none());
    }

    #[test]
    fn delays_are_uniform_within_the_bound_and_one_waits_at_a_time() {
        let max = Dur::from_us(100);
        let mut o = SendOverhead::new(max, Rng::seed_from_u64(7)).unwrap();
        let now = Time::from_secs(1);
        let mut sum_ps = 0u128;
        let n = 20_000;
        for _ in 0..n {
            o.arm(now);
            let t = o.deadline().unwrap();
            o.arm(now);
            assert_eq!(
                o.deadline(),
                Some(t),
                "a second arm keeps the waiting one's time"
            );
            assert!(t >= now && t <= now + max);
            assert!(
                !o.take_due(Time::from_ps(t.as_ps() - 1)),
                "not before its time"
            );
            assert!(o.take_due(t) && o.deadline().is_none());
            sum_ps += u128::from(t.saturating_since(now).as_ps());
        }
        let mean_us = sum_ps as f64 / f64::from(n) / 1e6;
        assert!(
            (mean_us - 50.0).abs() < 1.5,
            "mean delay {mean_us} us, expected 50"
        );
    }
}
