//! TCP Reno's window rule, applied to each path independently.
//!
//! With one path this is the congestion control of TCP NewReno (RFC 5681 slow start and
//! congestion avoidance; the NewReno recovery arithmetic of RFC 6582 lives in
//! [`Windows`](crate::Windows)). With several paths it is the "Uncoupled" multipath baseline:
//! every subflow behaves as an independent Reno flow.
//!
//! Congestion avoidance grows the window by about one segment per round trip, in one of the
//! two forms RFC 5681 §3.1 allows ([`CaIncrease`]): appropriate byte counting (RFC 3465, the
//! default, as Linux counts segments) or a fraction of a segment on every ACK (eq. 3, as htsim
//! and ns-3 do, and as every coupled controller here grows). Over a round trip both add one
//! segment; they differ in *which* ACK sends the extra packet, which matters in a simulation
//! whose flows are exactly ACK-clocked (D121).

use crate::path::{small_to_f64, PathState};
use crate::windows::{CaIncrease, Coupling};

/// Reno congestion avoidance: one SMSS per window of acknowledged bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reno {
    increase: CaIncrease,
}

impl Reno {
    /// Reno growing its window in congestion avoidance as `increase` says.
    #[must_use]
    pub fn new(increase: CaIncrease) -> Self {
        Reno { increase }
    }
}

impl Coupling for Reno {
    fn congestion_avoidance(&mut self, paths: &mut [PathState], i: usize, acked: u64) {
        let p = &mut paths[i];
        match self.increase {
            CaIncrease::ByteCounting => {
                // RFC 3465 §2.1: when bytes_acked reaches cwnd, subtract cwnd from it and grow
                // cwnd by one SMSS, i.e. about one segment per round trip.
                p.ca_credit += acked;
                if p.ca_credit >= p.cwnd {
                    p.ca_credit -= p.cwnd;
                    p.cwnd += p.mss;
                }
            }
            CaIncrease::PerAck => {
                // RFC 5681 eq. 3, scaled by the bytes this ACK covers.
                let inc = small_to_f64(acked) * small_to_f64(p.mss) / small_to_f64(p.cwnd);
                p.add_bytes(inc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{AckSample, CongestionEvent, RecoveryAck};
    use crate::windows::{RecoveryExit, WindowConfig, Windows};
    use crate::MultipathController;
    use pathpool_core::{Dur, PathId, Time};
    use proptest::prelude::*;

    const MSS: u64 = 1000;
    const P: PathId = PathId(0);

    fn reno() -> Windows<Reno> {
        let mut w = Windows::new(Reno::default(), WindowConfig::default());
        w.add_path(MSS);
        w
    }

    fn ack(bytes: u64) -> AckSample {
        AckSample {
            now: Time::ZERO,
            acked_bytes: bytes,
            rtt_sample: None,
            one_way_delay: None,
            srtt: Dur::from_ms(100),
            flight_bytes: 0,
        }
    }

    #[test]
    fn starts_with_initial_window_and_infinite_ssthresh() {
        let w = reno();
        assert_eq!(w.window(P), 10 * MSS);
        assert_eq!(w.metrics(P).ssthresh, u64::MAX);
    }

    #[test]
    fn slow_start_grows_one_mss_per_full_ack() {
        let mut w = reno();
        for _ in 0..10 {
            w.on_ack(P, &ack(MSS));
        }
        assert_eq!(w.window(P), 20 * MSS, "doubles in one window of ACKs");
        // A stretch ACK for 3 segments grows by at most L·SMSS = 1 SMSS (RFC 3465, L = 1).
        w.on_ack(P, &ack(3 * MSS));
        assert_eq!(w.window(P), 21 * MSS);
        // A small ACK grows by the bytes it acknowledges.
        w.on_ack(P, &ack(100));
        assert_eq!(w.window(P), 21 * MSS + 100);
    }

    #[test]
    fn abc_limit_two_allows_two_segments_per_ack() {
        let cfg = WindowConfig {
            abc_limit: 2,
            ..WindowConfig::default()
        };
        let mut w = Windows::new(Reno::default(), cfg);
        w.add_path(MSS);
        w.on_ack(P, &ack(3 * MSS));
        assert_eq!(w.window(P), 12 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window_of_bytes() {
        let mut w = reno();
        w.path_mut(P).ssthresh = 10 * MSS;
        for _ in 0..9 {
            w.on_ack(P, &ack(MSS));
        }
        assert_eq!(
            w.window(P),
            10 * MSS,
            "9 of 10 segments acknowledged: no growth yet"
        );
        w.on_ack(P, &ack(MSS));
        assert_eq!(w.window(P), 11 * MSS, "the 10th completes one window");
        assert_eq!(w.paths()[0].ca_credit, 0);
        for _ in 0..11 {
            w.on_ack(P, &ack(MSS));
        }
        assert_eq!(w.window(P), 12 * MSS);
    }

    #[test]
    fn per_ack_increase_adds_smss_squared_over_cwnd_on_every_ack() {
        let cfg = WindowConfig {
            ca_increase: CaIncrease::PerAck,
            ..WindowConfig::default()
        };
        let mut w = Windows::new(Reno::new(CaIncrease::PerAck), cfg);
        w.add_path(MSS);
        w.path_mut(P).ssthresh = 10 * MSS;
        // RFC 5681 eq. 3: 1000·1000/10 000 = 100 B, then 1e6/10 100 = 99.0099… B (the
        // fraction carried), and so on: hand-computed windows after each of 10 ACKs.
        let expected = [
            10_100, 10_199, 10_297, 10_394, 10_490, 10_585, 10_680, 10_773, 10_866, 10_958,
        ];
        for want in expected {
            w.on_ack(P, &ack(MSS));
            assert_eq!(w.window(P), want);
        }
        assert_eq!(w.paths()[0].ca_credit, 0, "no byte counting");
    }

    #[test]
    fn a_finite_initial_ssthresh_ends_slow_start_there() {
        let cfg = WindowConfig {
            initial_ssthresh: Some(12),
            ..WindowConfig::default()
        };
        let mut w = Windows::new(Reno::default(), cfg);
        w.add_path(MSS);
        assert_eq!(w.metrics(P).ssthresh, 12 * MSS);
        // Slow start from 10 to 12 segments, then one segment per window of 12.
        w.on_ack(P, &ack(MSS));
        w.on_ack(P, &ack(MSS));
        assert_eq!(w.window(P), 12 * MSS);
        w.on_ack(P, &ack(MSS));
        assert_eq!(w.window(P), 12 * MSS, "congestion avoidance from here");
    }

    #[test]
    fn both_increases_add_about_one_segment_per_window() {
        for increase in [CaIncrease::ByteCounting, CaIncrease::PerAck] {
            let mut w = Windows::new(Reno::new(increase), WindowConfig::default());
            w.add_path(MSS);
            w.path_mut(P).cwnd = 50 * MSS;
            w.path_mut(P).ssthresh = 50 * MSS;
            // Ten round trips of one ACK per segment in flight.
            for _ in 0..10 {
                let segments = w.window(P) / MSS;
                for _ in 0..segments {
                    w.on_ack(P, &ack(MSS));
                }
            }
            let grown = w.window(P) as f64 / MSS as f64 - 50.0;
            assert!((9.5..=10.0).contains(&grown), "{increase:?}: {grown}");
        }
    }

    #[test]
    fn fast_retransmit_halves_flight_and_inflates_by_three() {
        let mut w = reno();
        w.path_mut(P).cwnd = 20 * MSS;
        w.on_congestion_event(
            P,
            CongestionEvent::FastRetransmit {
                flight_bytes: 20 * MSS,
            },
        );
        let m = w.metrics(P);
        assert_eq!(m.ssthresh, 10 * MSS);
        assert_eq!(m.cwnd, 10 * MSS);
        assert!(m.in_recovery);
        assert_eq!(w.window(P), 13 * MSS, "ssthresh + 3 SMSS");
        w.on_recovery_ack(P, RecoveryAck::Duplicate);
        w.on_recovery_ack(P, RecoveryAck::Duplicate);
        assert_eq!(w.window(P), 15 * MSS);
        // ACKs in recovery do not grow cwnd.
        w.on_ack(P, &ack(MSS));
        assert_eq!(w.metrics(P).cwnd, 10 * MSS);
    }

    #[test]
    fn penalising_halves_cwnd_and_sets_ssthresh_outside_recovery_only() {
        let mut w = reno();
        w.path_mut(P).cwnd = 21 * MSS;
        w.penalise(P);
        let m = w.metrics(P);
        assert_eq!((m.cwnd, m.ssthresh), (10_500, 10_500));
        // Never below one segment.
        w.path_mut(P).cwnd = MSS + 1;
        w.penalise(P);
        assert_eq!(w.metrics(P).cwnd, MSS);
        // In fast recovery the loss has already reduced the window: nothing changes.
        w.path_mut(P).cwnd = 20 * MSS;
        w.on_congestion_event(
            P,
            CongestionEvent::FastRetransmit {
                flight_bytes: 20 * MSS,
            },
        );
        let before = w.metrics(P);
        w.penalise(P);
        assert_eq!(w.metrics(P), before);
    }

    #[test]
    fn sack_recovery_halves_flight_without_inflation() {
        let mut w = reno();
        w.path_mut(P).cwnd = 20 * MSS;
        w.on_congestion_event(
            P,
            CongestionEvent::SackRecovery {
                flight_bytes: 20 * MSS,
            },
        );
        let m = w.metrics(P);
        assert_eq!((m.ssthresh, m.cwnd), (10 * MSS, 10 * MSS));
        assert!(m.in_recovery);
        assert_eq!(w.window(P), 10 * MSS, "RFC 6675 step 4.2: cwnd = ssthresh");
        w.on_recovery_ack(P, RecoveryAck::Full { flight_bytes: 0 });
        assert!(!w.metrics(P).in_recovery);
        assert_eq!(w.window(P), 10 * MSS);
    }

    #[test]
    fn partial_ack_deflates_and_adds_back_one_mss() {
        let mut w = reno();
        w.path_mut(P).cwnd = 20 * MSS;
        w.on_congestion_event(
            P,
            CongestionEvent::FastRetransmit {
                flight_bytes: 20 * MSS,
            },
        );
        for _ in 0..5 {
            w.on_recovery_ack(P, RecoveryAck::Duplicate);
        }
        assert_eq!(w.window(P), 18 * MSS);
        w.on_recovery_ack(
            P,
            RecoveryAck::Partial {
                acked_bytes: 4 * MSS,
            },
        );
        assert_eq!(w.window(P), 15 * MSS, "18 - 4 + 1");
        w.on_recovery_ack(P, RecoveryAck::Partial { acked_bytes: 500 });
        assert_eq!(
            w.window(P),
            14 * MSS + 500,
            "less than one SMSS: nothing added back"
        );
        w.on_recovery_ack(
            P,
            RecoveryAck::Full {
                flight_bytes: 3 * MSS,
            },
        );
        assert_eq!(w.window(P), 10 * MSS, "full ACK: cwnd = ssthresh");
        assert!(!w.metrics(P).in_recovery);
    }

    #[test]
    fn recovery_exit_flight_size_avoids_burst() {
        let cfg = WindowConfig {
            recovery_exit: RecoveryExit::FlightSize,
            ..Default::default()
        };
        let mut w = Windows::new(Reno::default(), cfg);
        w.add_path(MSS);
        w.path_mut(P).cwnd = 20 * MSS;
        w.on_congestion_event(
            P,
            CongestionEvent::FastRetransmit {
                flight_bytes: 20 * MSS,
            },
        );
        w.on_recovery_ack(
            P,
            RecoveryAck::Full {
                flight_bytes: 2 * MSS,
            },
        );
        assert_eq!(
            w.window(P),
            3 * MSS,
            "min(ssthresh, max(flight, SMSS) + SMSS)"
        );
    }

    #[test]
    fn ssthresh_never_below_two_segments() {
        let mut w = reno();
        w.on_congestion_event(
            P,
            CongestionEvent::FastRetransmit {
                flight_bytes: 2 * MSS,
            },
        );
        assert_eq!(w.metrics(P).ssthresh, 2 * MSS);
    }

    #[test]
    fn timeout_sets_loss_window_and_holds_ssthresh_when_repeated() {
        let mut w = reno();
        w.path_mut(P).cwnd = 40 * MSS;
        w.on_congestion_event(
            P,
            CongestionEvent::Timeout {
                flight_bytes: 40 * MSS,
                repeated: false,
            },
        );
        assert_eq!(w.metrics(P).ssthresh, 20 * MSS);
        assert_eq!(w.window(P), MSS);
        // The same segment times out again: ssthresh is held (RFC 5681 §3.1).
        w.on_congestion_event(
            P,
            CongestionEvent::Timeout {
                flight_bytes: MSS,
                repeated: true,
            },
        );
        assert_eq!(w.metrics(P).ssthresh, 20 * MSS);
        assert_eq!(w.window(P), MSS);
        // Slow start again up to ssthresh.
        w.on_ack(P, &ack(MSS));
        assert_eq!(w.window(P), 2 * MSS);
    }

    #[test]
    fn timeout_during_recovery_leaves_recovery_and_keeps_that_loss_events_ssthresh() {
        let mut w = reno();
        w.path_mut(P).cwnd = 20 * MSS;
        w.on_congestion_event(
            P,
            CongestionEvent::FastRetransmit {
                flight_bytes: 20 * MSS,
            },
        );
        // Window inflation sent new data during recovery: the flight is now 40 segments.
        w.on_congestion_event(
            P,
            CongestionEvent::Timeout {
                flight_bytes: 40 * MSS,
                repeated: false,
            },
        );
        assert!(!w.metrics(P).in_recovery);
        assert_eq!(w.window(P), MSS);
        assert_eq!(w.metrics(P).ssthresh, 10 * MSS, "not 40/2 segments");
    }

    #[derive(Clone, Debug)]
    enum Op {
        Ack(u64),
        Fr(u64),
        Rto(u64, bool),
        Dup,
        Partial(u64),
        Full(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1u64..5_000).prop_map(Op::Ack),
            (0u64..100_000).prop_map(Op::Fr),
            (0u64..100_000, any::<bool>()).prop_map(|(f, r)| Op::Rto(f, r)),
            Just(Op::Dup),
            (1u64..5_000).prop_map(Op::Partial),
            (0u64..100_000).prop_map(Op::Full),
        ]
    }

    proptest! {
        /// Whatever happens, the send window stays at least one segment and cwnd at least one
        /// segment, and ssthresh at least two segments once set.
        #[test]
        fn windows_never_fall_below_the_minimum(ops in proptest::collection::vec(op(), 1..200)) {
            let mut w = reno();
            for o in ops {
                match o {
                    Op::Ack(b) => w.on_ack(P, &ack(b)),
                    Op::Fr(f) => w.on_congestion_event(P, CongestionEvent::FastRetransmit { flight_bytes: f }),
                    Op::Rto(f, r) => w.on_congestion_event(P, CongestionEvent::Timeout { flight_bytes: f, repeated: r }),
                    Op::Dup => w.on_recovery_ack(P, RecoveryAck::Duplicate),
                    Op::Partial(b) => w.on_recovery_ack(P, RecoveryAck::Partial { acked_bytes: b }),
                    Op::Full(f) => w.on_recovery_ack(P, RecoveryAck::Full { flight_bytes: f }),
                }
                let m = w.metrics(P);
                prop_assert!(w.window(P) >= MSS);
                prop_assert!(m.cwnd >= MSS);
                prop_assert!(m.ssthresh >= 2 * MSS);
            }
        }
    }
}
