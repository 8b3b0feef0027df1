//! A loss-interval history over a whole multipath TFRC connection (decision D264): RFC 3448
//! §5.4's average loss interval, with intervals counted in the packets of every subflow and
//! a loss event begun by any subflow's, so that f^M follows the connection's packets rather
//! than each subflow's n-times-rarer events.

use pathpool_cc::{loss_event_rate_for_rate, BadIntervalCount, LossIntervals};
use pathpool_core::{Dur, Time};

/// The connection's loss history at the receiver.
#[derive(Debug, Clone)]
pub struct ConnectionLoss {
    intervals: LossIntervals,
    /// Data packets received on all subflows.
    received_pkts: u64,
    /// The current loss event: the packet count and the time at which it began.
    event: Option<(u64, Time)>,
}

impl ConnectionLoss {
    /// An empty history of `n` intervals (n even, ≥ 2).
    pub fn new(n: usize) -> Result<ConnectionLoss, BadIntervalCount> {
        Ok(ConnectionLoss {
            intervals: LossIntervals::new(n)?,
            received_pkts: 0,
            event: None,
        })
    }

    /// A data packet arrived at `now`; `new_event` says whether its subflow's receiver began
    /// a loss event on it. A subflow's event begins a connection event unless the current one
    /// began less than `rtt` earlier (RFC 3448 §5.2's one-RTT grouping, with the subflow's
    /// RTT); the first is seeded as RFC 3448 §6.3.1 at the connection's receive rate
    /// `seed_rate_bytes_per_s` for packets of `size_bytes`.
    pub fn on_packet(
        &mut self,
        now: Time,
        new_event: bool,
        rtt: Dur,
        size_bytes: u64,
        seed_rate_bytes_per_s: impl FnOnce() -> f64,
    ) {
        self.received_pkts += 1;
        if new_event {
            match self.event {
                Some((_, at)) if now <= at.saturating_add(rtt) => {}
                Some((start, _)) => self.begin(now, (self.received_pkts - start) as f64),
                None => {
                    let p = loss_event_rate_for_rate(size_bytes, rtt, seed_rate_bytes_per_s());
                    self.begin(now, 1.0 / p);
                }
            }
        }
        if let Some((start, _)) = self.event {
            self.intervals
                .set_open((self.received_pkts + 1 - start) as f64);
        }
    }

    fn begin(&mut self, now: Time, closed_pkts: f64) {
        self.intervals.close_interval(closed_pkts);
        self.event = Some((self.received_pkts, now));
    }

    /// The connection's loss event rate; 0 before its first loss event.
    #[must_use]
    pub fn loss_event_rate(&self) -> f64 {
        self.intervals.loss_event_rate()
    }

    /// The closed intervals, newest first.
    pub fn closed(&self) -> impl Iterator<Item = f64> + '_ {
        self.intervals.closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two events 1000 packets apart (counted over every subflow) make a closed interval of
    /// 1000; an event within one RTT of the last joins it.
    #[test]
    fn intervals_count_every_subflows_packets() {
        let rtt = Dur::from_ms(100);
        let mut c = ConnectionLoss::new(8).unwrap();
        for k in 0..10 {
            c.on_packet(Time::from_ms(k), false, rtt, 1000, || unreachable!());
        }
        assert_eq!(c.loss_event_rate(), 0.0);
        // The first event at packet 10, seeded at 1 MB/s.
        c.on_packet(Time::from_ms(10), true, rtt, 1000, || 1e6);
        let seed = 1.0 / loss_event_rate_for_rate(1000, rtt, 1e6);
        assert_eq!(c.closed().collect::<Vec<_>>(), vec![seed]);
        // Another subflow's event 50 ms later joins it.
        c.on_packet(Time::from_ms(60), true, rtt, 1000, || unreachable!());
        for k in 0..998 {
            c.on_packet(Time::from_ms(61 + k), false, rtt, 1000, || unreachable!());
        }
        // The 1000th packet after the first event's begins the next.
        c.on_packet(Time::from_ms(2000), true, rtt, 1000, || unreachable!());
        assert_eq!(c.closed().collect::<Vec<_>>(), vec![1000.0, seed]);
        // I_0 = 1 (the event's own packet): I_mean = max(1 + seed, 1000 + seed)/2.
        let want = 2.0 / (1000.0 + seed);
        assert!((c.loss_event_rate() - want).abs() < 1e-12 * want);
    }
}
