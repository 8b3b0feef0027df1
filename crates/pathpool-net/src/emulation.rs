//! Link emulation inside a node: a rate, a drop-tail queue, random loss and a propagation
//! delay applied to the datagrams a node sends on one overlay link, so a realistic testbed runs
//! on one machine without `netem` (issue 5: "optional link emulation per link (rate, delay,
//! loss, queue size)").
//!
//! The model is the simulator's link: a FIFO served at a constant rate followed by a constant
//! delay. Such a link never reorders, so release times are non-decreasing and a plain FIFO of
//! pending datagrams replaces a timer heap. The queue is not stored as packets: its backlog at
//! any instant follows from when the transmitter becomes idle.

use std::collections::VecDeque;
use std::fmt;

use pathpool_core::{Dur, Rate, Rng, Time};

/// How one direction of an overlay link treats datagrams.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkEmulation {
    /// Serialisation rate; [`Rate::INFINITE`] sends every datagram at once.
    pub rate: Rate,
    /// Propagation delay added after serialisation.
    pub delay: Dur,
    /// Probability that a datagram is lost on entry, before it is queued (as `netem loss`).
    pub loss: f64,
    /// Drop-tail limit on the bytes waiting or being sent.
    pub queue_bytes: u64,
    /// Drop-tail limit on the datagrams waiting or being sent ([`u64::MAX`]: none). A
    /// datagram is dropped when either limit would be passed.
    pub queue_packets: u64,
}

impl LinkEmulation {
    /// A link that passes everything at once: no limit, delay or loss.
    pub const TRANSPARENT: LinkEmulation = LinkEmulation {
        rate: Rate::INFINITE,
        delay: Dur::ZERO,
        loss: 0.0,
        queue_bytes: u64::MAX,
        queue_packets: u64::MAX,
    };

    /// Whether the link passes everything at once: an infinite rate, no delay and no loss.
    /// Its queue limit does not matter then: at an infinite rate nothing ever waits, so
    /// nothing is ever dropped (see [`EmulatedLink::offer`]). An overlay link given no
    /// emulation parameters is such a link, with the default queue limit.
    #[must_use]
    pub fn is_transparent(&self) -> bool {
        self.rate.is_infinite() && self.delay == Dur::ZERO && self.loss == 0.0
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// A loss probability outside [0, 1], a zero rate or a zero queue, naming the field.
    pub fn validate(&self) -> Result<(), EmulationError> {
        if !(0.0..=1.0).contains(&self.loss) {
            return Err(EmulationError {
                field: "loss",
                message: format!("{} is not a probability in [0, 1]", self.loss),
            });
        }
        if self.rate.bps() == 0 {
            return Err(EmulationError {
                field: "rate",
                message: "must be positive (or infinite)".into(),
            });
        }
        if self.queue_bytes == 0 || self.queue_packets == 0 {
            return Err(EmulationError {
                field: "queue",
                message: "must hold at least one byte and one packet".into(),
            });
        }
        Ok(())
    }
}

/// A rejected [`LinkEmulation`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmulationError {
    /// The offending field.
    pub field: &'static str,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for EmulationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "link emulation: {}: {}", self.field, self.message)
    }
}

impl std::error::Error for EmulationError {}

/// What happened to an offered datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Queued; it leaves the link at `at`.
    Queued {
        /// When the datagram has crossed the link.
        at: Time,
    },
    /// Lost at random.
    Lost,
    /// Dropped: the queue had no room for it.
    QueueFull,
}

/// Counters of an emulated link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Datagrams offered.
    pub offered: u64,
    /// Datagrams lost at random.
    pub lost: u64,
    /// Datagrams dropped by the full queue.
    pub queue_drops: u64,
    /// Datagrams that crossed (released by [`EmulatedLink::pop_due`]).
    pub delivered: u64,
    /// Bytes that crossed.
    pub delivered_bytes: u64,
}

/// One direction of an emulated link holding the datagrams (`T`) in transit.
#[derive(Debug)]
pub struct EmulatedLink<T> {
    emulation: LinkEmulation,
    /// When the transmitter finishes the last queued datagram.
    busy_until: Time,
    in_transit: VecDeque<(Time, u64, T)>,
    rng: Rng,
    stats: LinkStats,
}

impl<T> EmulatedLink<T> {
    /// An idle link; `rng` draws its random losses.
    ///
    /// # Errors
    /// An invalid `emulation` (see [`LinkEmulation::validate`]).
    pub fn new(emulation: LinkEmulation, rng: Rng) -> Result<Self, EmulationError> {
        emulation.validate()?;
        Ok(EmulatedLink {
            emulation,
            busy_until: Time::ZERO,
            in_transit: VecDeque::new(),
            rng,
            stats: LinkStats::default(),
        })
    }

    /// Bytes queued or being sent at `now`.
    #[must_use]
    pub fn backlog_bytes(&self, now: Time) -> u64 {
        if self.busy_until <= now {
            return 0;
        }
        // Bytes still to serialise, rounded up: a partly sent datagram occupies the queue.
        let left = self.busy_until - now;
        let bits = u128::from(left.as_ps()) * u128::from(self.emulation.rate.bps());
        let ps_per_byte = 8 * u128::from(pathpool_core::time::PS_PER_S);
        u64::try_from(bits.div_ceil(ps_per_byte)).unwrap_or(u64::MAX)
    }

    /// Datagrams queued or being sent at `now`.
    #[must_use]
    pub fn backlog_packets(&self, now: Time) -> u64 {
        // A datagram's serialisation ends `delay` before its release, and releases are
        // non-decreasing: the ones still serialising are a suffix.
        let horizon = now.saturating_add(self.emulation.delay);
        let serialised = self.in_transit.partition_point(|&(at, _, _)| at <= horizon);
        (self.in_transit.len() - serialised) as u64
    }

    /// Offers a datagram of `len_bytes` at `now`. A lost or dropped datagram is given back
    /// with the verdict so the caller can recycle its buffer.
    pub fn offer(&mut self, now: Time, len_bytes: u64, datagram: T) -> (Verdict, Option<T>) {
        self.stats.offered += 1;
        // The loss draw comes first and happens for every datagram when loss > 0, so the
        // random stream does not depend on the queue's state.
        if self.emulation.loss > 0.0 && self.rng.bernoulli(self.emulation.loss) {
            self.stats.lost += 1;
            return (Verdict::Lost, Some(datagram));
        }
        let backlog = self.backlog_bytes(now);
        // An idle link takes any datagram, even one longer than the queue, as a router's
        // interface does; otherwise drop-tail on bytes and packets.
        if backlog > 0
            && (backlog.saturating_add(len_bytes) > self.emulation.queue_bytes
                || self.backlog_packets(now) >= self.emulation.queue_packets)
        {
            self.stats.queue_drops += 1;
            return (Verdict::QueueFull, Some(datagram));
        }
        let start = self.busy_until.max(now);
        self.busy_until = start + self.emulation.rate.tx_time(len_bytes);
        let at = self.busy_until + self.emulation.delay;
        self.in_transit.push_back((at, len_bytes, datagram));
        (Verdict::Queued { at }, None)
    }

    /// When the next datagram leaves the link, if one is in transit.
    #[must_use]
    pub fn next_due(&self) -> Option<Time> {
        self.in_transit.front().map(|&(at, _, _)| at)
    }

    /// The next datagram that has crossed the link by `now`, oldest first.
    pub fn pop_due(&mut self, now: Time) -> Option<T> {
        if self.next_due()? > now {
            return None;
        }
        let (_, len, datagram) = self.in_transit.pop_front()?;
        self.stats.delivered += 1;
        self.stats.delivered_bytes += len;
        Some(datagram)
    }

    /// Datagrams in transit.
    #[must_use]
    pub fn in_transit(&self) -> usize {
        self.in_transit.len()
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// The link's parameters.
    #[must_use]
    pub fn emulation(&self) -> &LinkEmulation {
        &self.emulation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{prop_assert, prop_assert_eq, proptest};

    fn link(rate_mbps: u64, delay_ms: u64, loss: f64, queue_bytes: u64) -> EmulatedLink<u32> {
        EmulatedLink::new(
            LinkEmulation {
                rate: Rate::from_mbps(rate_mbps),
                delay: Dur::from_ms(delay_ms),
                loss,
                queue_bytes,
                queue_packets: u64::MAX,
            },
            Rng::seed_from_u64(7),
        )
        .unwrap()
    }

    #[test]
    fn serialises_at_the_rate_then_adds_the_delay() {
        // 8 Mb/s: 1000 B take 1 ms.
        let mut l = link(8, 10, 0.0, 1_000_000);
        let t0 = Time::from_ms(5);
        let at: Vec<_> = (0..3).map(|i| l.offer(t0, 1000, i).0).collect();
        assert_eq!(
            at,
            vec![
                Verdict::Queued {
                    at: Time::from_ms(16)
                },
                Verdict::Queued {
                    at: Time::from_ms(17)
                },
                Verdict::Queued {
                    at: Time::from_ms(18)
                },
            ]
        );
        assert_eq!(l.next_due(), Some(Time::from_ms(16)));
        assert_eq!(l.pop_due(Time::from_ms(15)), None);
        assert_eq!(l.pop_due(Time::from_ms(17)), Some(0));
        assert_eq!(l.pop_due(Time::from_ms(17)), Some(1));
        assert_eq!(l.pop_due(Time::from_ms(17)), None);
        assert_eq!(l.pop_due(Time::from_ms(18)), Some(2));
        assert_eq!(l.stats().delivered_bytes, 3000);
    }

    #[test]
    fn drop_tail_counts_the_bytes_not_yet_sent() {
        let mut l = link(8, 0, 0.0, 2500);
        let t0 = Time::ZERO;
        assert!(matches!(l.offer(t0, 1000, 0).0, Verdict::Queued { .. }));
        assert_eq!(l.backlog_bytes(t0), 1000);
        assert!(matches!(l.offer(t0, 1000, 1).0, Verdict::Queued { .. }));
        assert_eq!(l.offer(t0, 1000, 2), (Verdict::QueueFull, Some(2)));
        // Half a millisecond later 500 B of the first datagram have left: 1500 B remain.
        let t = Time::from_ps(500 * pathpool_core::time::PS_PER_US);
        assert_eq!(l.backlog_bytes(t), 1500);
        assert!(matches!(l.offer(t, 1000, 3).0, Verdict::Queued { .. }));
        assert_eq!(l.stats().queue_drops, 1);
    }

    #[test]
    fn an_idle_link_takes_a_datagram_longer_than_its_queue() {
        let mut l = link(8, 0, 0.0, 100);
        assert!(matches!(
            l.offer(Time::ZERO, 1500, 0).0,
            Verdict::Queued { .. }
        ));
        assert_eq!(l.offer(Time::ZERO, 10, 1).0, Verdict::QueueFull);
    }

    #[test]
    fn infinite_rate_only_delays() {
        let mut l = EmulatedLink::new(
            LinkEmulation {
                delay: Dur::from_ms(3),
                ..LinkEmulation::TRANSPARENT
            },
            Rng::seed_from_u64(1),
        )
        .unwrap();
        for i in 0..100 {
            assert_eq!(
                l.offer(Time::from_ms(1), 1200, i).0,
                Verdict::Queued {
                    at: Time::from_ms(4)
                }
            );
        }
        assert_eq!(l.backlog_bytes(Time::from_ms(1)), 0);
    }

    #[test]
    fn random_loss_matches_its_probability() {
        // 1% of 200 000: mean 2000, σ = √(200 000 · 0.01 · 0.99) ≈ 44.5; allow 4σ.
        let mut l = link(1000, 0, 0.01, u64::MAX);
        let n = 200_000u64;
        for i in 0..n {
            let now = Time::from_ms(i);
            l.offer(now, 100, 0);
            while l.pop_due(now).is_some() {}
        }
        while l.pop_due(Time::MAX).is_some() {}
        let lost = l.stats().lost as f64;
        assert!((lost - 2000.0).abs() < 4.0 * 44.5, "lost {lost}");
        assert_eq!(l.stats().delivered + l.stats().lost, n);
    }

    #[test]
    fn drop_tail_in_packets_counts_the_datagrams_not_yet_sent() {
        // 8 Mb/s, 10 ms of delay, at most 2 datagrams waiting or being sent.
        let mut l = EmulatedLink::new(
            LinkEmulation {
                queue_packets: 2,
                ..LinkEmulation {
                    rate: Rate::from_mbps(8),
                    delay: Dur::from_ms(10),
                    ..LinkEmulation::TRANSPARENT
                }
            },
            Rng::seed_from_u64(1),
        )
        .unwrap();
        let t0 = Time::ZERO;
        assert!(matches!(l.offer(t0, 100, 0).0, Verdict::Queued { .. }));
        assert!(matches!(l.offer(t0, 1000, 1).0, Verdict::Queued { .. }));
        assert_eq!(l.backlog_packets(t0), 2);
        assert_eq!(l.offer(t0, 40, 2), (Verdict::QueueFull, Some(2)));
        // The first (100 B, 0.1 ms) is serialised by 0.1 ms, though still propagating: it
        // no longer counts, and a third datagram fits.
        let t = Time::from_ps(100 * pathpool_core::time::PS_PER_US);
        assert_eq!(l.backlog_packets(t), 1);
        assert!(matches!(l.offer(t, 40, 3).0, Verdict::Queued { .. }));
        assert_eq!(l.offer(t, 40, 4), (Verdict::QueueFull, Some(4)));
        assert_eq!(l.in_transit(), 3);
        // Long after, everything has left the queue.
        assert_eq!(l.backlog_packets(Time::from_ms(5)), 0);
    }

    /// At an infinite rate, without delay or loss, the queue limit never matters: every
    /// datagram crosses at once, so the node can send it straight away.
    #[test]
    fn an_infinite_rate_without_delay_or_loss_is_transparent_whatever_the_queue() {
        let e = LinkEmulation {
            queue_bytes: 1_000,
            ..LinkEmulation::TRANSPARENT
        };
        assert!(e.is_transparent());
        let mut l = EmulatedLink::new(e, Rng::seed_from_u64(1)).unwrap();
        let now = Time::from_ms(1);
        for i in 0..1_000 {
            assert_eq!(l.offer(now, 1200, i).0, Verdict::Queued { at: now });
        }
        assert_eq!(l.stats().queue_drops, 0);
        let t = LinkEmulation::TRANSPARENT;
        assert!(!LinkEmulation {
            rate: Rate::from_mbps(100),
            ..t
        }
        .is_transparent());
        assert!(!LinkEmulation {
            delay: Dur::from_us(1),
            ..t
        }
        .is_transparent());
        assert!(!LinkEmulation { loss: 0.001, ..t }.is_transparent());
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let bad = |e: LinkEmulation| EmulatedLink::<()>::new(e, Rng::seed_from_u64(1)).unwrap_err();
        let t = LinkEmulation::TRANSPARENT;
        assert_eq!(bad(LinkEmulation { loss: 1.5, ..t }).field, "loss");
        assert_eq!(
            bad(LinkEmulation {
                loss: f64::NAN,
                ..t
            })
            .field,
            "loss"
        );
        assert_eq!(
            bad(LinkEmulation {
                rate: Rate::from_bps(0),
                ..t
            })
            .field,
            "rate"
        );
        let e = bad(LinkEmulation {
            queue_bytes: 0,
            ..t
        });
        assert_eq!(
            e.to_string(),
            "link emulation: queue: must hold at least one byte and one packet"
        );
        assert_eq!(
            bad(LinkEmulation {
                queue_packets: 0,
                ..t
            })
            .field,
            "queue"
        );
    }

    proptest! {
        /// Whatever the offers, datagrams leave in order, never faster than the rate, never
        /// before delay + their own serialisation, and the queue limit holds at every offer.
        #[test]
        fn fifo_at_most_the_rate(
            offers in proptest::collection::vec((0u64..2_000, 40u64..1500), 1..300),
            queue in 1500u64..20_000,
        ) {
            let mut l = link(10, 2, 0.0, queue);
            let mut now = Time::ZERO;
            let mut last_at = Time::ZERO;
            let mut queued = Vec::new();
            for (i, &(gap_us, len)) in offers.iter().enumerate() {
                now += Dur::from_us(gap_us);
                let before = l.backlog_bytes(now);
                match l.offer(now, len, i as u32).0 {
                    Verdict::Queued { at } => {
                        prop_assert!(before == 0 || before + len <= queue);
                        prop_assert!(at >= last_at);
                        let tx = Rate::from_mbps(10).tx_time(len);
                        prop_assert!(at >= now + tx + Dur::from_ms(2));
                        // Spacing: this one finished serialising at least tx after the last.
                        if last_at > Time::ZERO {
                            prop_assert!(at - last_at >= tx);
                        }
                        last_at = at;
                        queued.push(i as u32);
                    }
                    Verdict::QueueFull => prop_assert!(before > 0 && before + len > queue),
                    Verdict::Lost => prop_assert!(false, "no loss configured"),
                }
            }
            let mut out = Vec::new();
            while let Some(d) = l.pop_due(Time::MAX) {
                out.push(d);
            }
            prop_assert_eq!(out, queued);
        }
    }
}
