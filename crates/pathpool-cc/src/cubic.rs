//! CUBIC (RFC 9438), Linux's default congestion control, as a single-path competitor (on a
//! multipath connection every subflow runs it on its own, like Uncoupled).
//!
//! In congestion avoidance the window follows a cubic function of the time since the last
//! reduction, W_cubic(t) = C·(t − K)³ + W_max (§4.2, eq. 1), concave up to the window at the
//! last loss and convex beyond it; K = ∛((W_max − cwnd_epoch)/C) (eq. 2). Each ACK moves
//! cwnd towards W_cubic(t + RTT), bounded to [cwnd, 1.5·cwnd] (§4.2). A Reno-friendly
//! estimate W_est grows by α_cubic = 3(1 − β)/(1 + β) segments per window acknowledged (§4.3;
//! 1 once it reaches the window of the last reduction) and cwnd is at least W_est. A loss
//! sets ssthresh = β·FlightSize with β = 0.7 (§4.6), W_max with fast convergence (§4.7), and
//! starts a new epoch at the next ACK in congestion avoidance. Slow start is RFC 5681's
//! (HyStart++ is not modelled). Windows are in bytes here; C is in segments per second³ as
//! the RFC has it.

use pathpool_core::Time;

use crate::path::PathState;
use crate::windows::Coupling;

/// C (RFC 9438 §5: 0.4 segments/s³).
pub const CUBIC_C: f64 = 0.4;
/// β_cubic (RFC 9438 §4.6: 0.7).
pub const CUBIC_BETA: f64 = 0.7;

/// One path's CUBIC state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct CubicPath {
    /// W_max in bytes: the window just before the last reduction (less with fast
    /// convergence); 0 before the first loss.
    w_max: f64,
    /// cwnd just before the last reduction (cwnd_prior, §4.6), bytes.
    cwnd_prior: f64,
    /// When the current congestion-avoidance epoch began (`None`: at the next ACK there).
    epoch_start: Option<Time>,
    /// K of the current epoch, seconds.
    k_s: f64,
    /// The Reno-friendly estimate W_est, bytes.
    w_est: f64,
}

/// CUBIC windows ([`Coupling`] for [`Windows`](crate::Windows)).
#[derive(Clone, Debug, Default)]
pub struct Cubic {
    per_path: Vec<CubicPath>,
    /// The time of the ACK being processed ([`Coupling::on_ack_at`]).
    now: Time,
}

impl Cubic {
    /// W_cubic(t) in bytes for path state `s`, `t_s` seconds after its epoch began (eq. 1).
    fn w_cubic(s: &CubicPath, mss: f64, t_s: f64) -> f64 {
        let d = t_s - s.k_s;
        CUBIC_C * d * d * d * mss + s.w_max
    }

    /// Starts an epoch at `now` with the window `cwnd` (§4.2, §4.3).
    fn start_epoch(s: &mut CubicPath, now: Time, cwnd: f64, mss: f64) {
        s.epoch_start = Some(now);
        if s.w_max < cwnd {
            // No loss yet, or the window already passed W_max (after slow start beyond it):
            // the plateau is here.
            s.w_max = cwnd;
        }
        s.k_s = ((s.w_max - cwnd) / mss / CUBIC_C).cbrt();
        s.w_est = cwnd;
    }
}

impl Coupling for Cubic {
    fn on_paths_changed(&mut self, paths: &[PathState]) {
        self.per_path.resize(paths.len(), CubicPath::default());
    }

    fn on_ack_at(&mut self, now: Time) {
        self.now = now;
    }

    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        let p = &paths[i];
        let (cwnd, mss) = (p.cwnd as f64, p.mss as f64);
        let now = self.now;
        let s = &mut self.per_path[i];
        let epoch = match s.epoch_start {
            Some(t) => t,
            None => {
                Self::start_epoch(s, now, cwnd, mss);
                now
            }
        };
        let t_s = (now - epoch).as_secs_f64();
        // §4.3: W_est += α·acked/cwnd (segments), α = 1 once W_est reached cwnd_prior.
        let alpha = if s.w_est >= s.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA)
        };
        s.w_est += alpha * acked as f64 * mss / cwnd;
        if Self::w_cubic(s, mss, t_s) < s.w_est {
            // Reno-friendly region: cwnd = W_est.
            return (s.w_est - cwnd).max(0.0);
        }
        // §4.2: towards W_cubic(t + RTT), at most 1.5·cwnd, never down.
        let rtt_s = p.rtt_s().unwrap_or(0.0);
        let target = Self::w_cubic(s, mss, t_s + rtt_s).clamp(cwnd, 1.5 * cwnd);
        (target - cwnd) / cwnd * acked as f64
    }

    fn on_loss(&mut self, _paths: &[PathState], i: usize, _timeout: bool) {
        // §4.8: after a timeout too, a new epoch starts once slow start ends.
        self.per_path[i].epoch_start = None;
    }

    fn ssthresh_after_loss(&mut self, paths: &[PathState], i: usize, flight: u64) -> u64 {
        let p = &paths[i];
        let cwnd = p.cwnd as f64;
        let s = &mut self.per_path[i];
        // §4.7 fast convergence: a window that stopped short of the last W_max releases
        // bandwidth for new flows.
        s.w_max = if cwnd < s.w_max {
            cwnd * (1.0 + CUBIC_BETA) / 2.0
        } else {
            cwnd
        };
        s.cwnd_prior = cwnd;
        // §4.6: ssthresh = FlightSize·β (at most the window in use, D124), at least 2·SMSS.
        ((flight as f64 * CUBIC_BETA).round() as u64).max(2 * p.mss)
    }

    fn alg_state(&self, _paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        Some(("w_max_bytes", self.per_path[i].w_max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Windows;
    use crate::{AckSample, CongestionEvent, MultipathController, RecoveryAck, WindowConfig};
    use pathpool_core::{Dur, PathId};

    const MSS: u64 = 1000;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// A path in congestion avoidance that lost at `w_max_segments`: returns the controller
    /// after the reduction and its recovery.
    fn after_loss(w_max_segments: u64) -> Windows<Cubic> {
        let mut w = Windows::new(Cubic::default(), WindowConfig::default());
        let p = w.add_path(MSS);
        w.path_mut(p).cwnd = w_max_segments * MSS;
        w.path_mut(p).ssthresh = MSS;
        w.on_congestion_event(
            p,
            CongestionEvent::FastRetransmit {
                flight_bytes: w_max_segments * MSS,
            },
        );
        w.on_recovery_ack(p, RecoveryAck::Full { flight_bytes: 0 });
        w
    }

    /// Acknowledges one window of segments, one ACK per segment, spread evenly over `rtt`
    /// starting at `*now`; advances `*now` by `rtt`.
    fn one_round(w: &mut Windows<Cubic>, now: &mut Time, rtt: Dur) {
        let p = PathId(0);
        let segments = w.metrics(p).cwnd / MSS;
        for k in 0..segments {
            let at = *now + Dur::from_ps(rtt.as_ps() * k / segments);
            w.on_ack(
                p,
                &AckSample {
                    now: at,
                    acked_bytes: MSS,
                    rtt_sample: Some(rtt),
                    one_way_delay: None,
                    srtt: rtt,
                    flight_bytes: 0,
                },
            );
        }
        *now += rtt;
    }

    #[test]
    fn a_loss_reduces_by_beta_and_sets_w_max() {
        let w = after_loss(100);
        let p = &w.paths()[0];
        assert_eq!(p.ssthresh, 70 * MSS, "β = 0.7 (RFC 9438 §4.6)");
        assert_eq!(p.cwnd, 70 * MSS);
        assert_eq!(w.coupling().per_path[0].w_max, 100_000.0);
    }

    #[test]
    fn k_is_the_cube_root_of_the_reduction_over_c() {
        // RFC 9438 eq. 2: K = ∛((W_max − cwnd_epoch)/C) = ∛(30/0.4) = 4.217 s.
        let mut s = CubicPath {
            w_max: 100_000.0,
            ..CubicPath::default()
        };
        Cubic::start_epoch(&mut s, Time::ZERO, 70_000.0, MSS as f64);
        assert!(close(s.k_s, 75f64.cbrt(), 1e-12), "{}", s.k_s);
        let m = MSS as f64;
        assert!(close(Cubic::w_cubic(&s, m, 0.0), 70_000.0, 1e-6));
        assert!(close(Cubic::w_cubic(&s, m, s.k_s), 100_000.0, 1e-6));
        // Concave before K, convex after, symmetric about the plateau (eq. 1).
        for x in [0.5, 1.0, 2.0, 4.0] {
            let before = Cubic::w_cubic(&s, m, s.k_s - x) - 100_000.0;
            let after = Cubic::w_cubic(&s, m, s.k_s + x) - 100_000.0;
            assert!(close(before, -after, 1e-6));
            assert!(close(after, CUBIC_C * x * x * x * m, 1e-6));
        }
    }

    #[test]
    fn the_window_follows_the_cubic_curve_through_its_plateau() {
        // Large window, long RTT: the cubic region (W_est stays below W_cubic).
        let mut w = after_loss(1000);
        let rtt = Dur::from_ms(100);
        let mut now = Time::from_secs(1);
        let s0 = {
            let mut s = CubicPath {
                w_max: 1_000_000.0,
                ..CubicPath::default()
            };
            Cubic::start_epoch(&mut s, now, 700_000.0, MSS as f64);
            s
        };
        // K = ∛(300/0.4) = 9.09 s; check every second for 14 s against W_cubic(t + RTT),
        // which each round's ACKs aim at (the window lags it by at most a round's growth).
        for second in 1..=14 {
            for _ in 0..10 {
                one_round(&mut w, &mut now, rtt);
            }
            let t = (now - Time::from_secs(1)).as_secs_f64();
            let cwnd = w.metrics(PathId(0)).cwnd as f64 / MSS as f64;
            let curve = Cubic::w_cubic(&s0, MSS as f64, t) / MSS as f64;
            assert!(
                (cwnd - curve).abs() <= 0.02 * curve + 2.0,
                "{second} s: cwnd {cwnd:.1} segments, W_cubic {curve:.1}"
            );
        }
        let k = w.coupling().per_path[0].k_s;
        assert!(close(k, 750f64.cbrt(), 1e-9), "K {k}");
    }

    #[test]
    fn fast_convergence_lowers_w_max_after_a_loss_short_of_it() {
        let mut w = after_loss(100);
        let p = PathId(0);
        w.path_mut(p).cwnd = 80 * MSS;
        w.on_congestion_event(
            p,
            CongestionEvent::FastRetransmit {
                flight_bytes: 80 * MSS,
            },
        );
        // RFC 9438 §4.7: W_max = cwnd·(1 + β)/2 = 80·0.85.
        assert!(close(w.coupling().per_path[0].w_max, 68_000.0, 1e-6));
        assert_eq!(w.paths()[0].ssthresh, 56 * MSS);
    }

    #[test]
    fn on_a_short_path_the_reno_friendly_estimate_sets_the_pace() {
        // Loss at 10 segments, 10 ms RTT: K = ∛(3/0.4) = 1.96 s and W_cubic stays near 10
        // segments for two seconds, while W_est grows α = 0.53 segments per round until it
        // reaches cwnd_prior (10, about 6 rounds) and one per round after (§4.3): about
        // 10 + 194 = 204 segments after 200 rounds, and cwnd follows it.
        let mut w = after_loss(10);
        let mut now = Time::from_secs(1);
        for _ in 0..200 {
            one_round(&mut w, &mut now, Dur::from_ms(10));
        }
        let s = w.coupling().per_path[0];
        let cwnd = w.metrics(PathId(0)).cwnd as f64;
        assert!(
            Cubic::w_cubic(&s, MSS as f64, 2.0) < 11_000.0,
            "the cubic curve is still at its plateau"
        );
        assert!(
            (s.w_est - 204_000.0).abs() < 3_000.0,
            "W_est {} segments",
            s.w_est / 1000.0
        );
        assert!(
            (cwnd - s.w_est).abs() <= 1_000.0,
            "cwnd {cwnd}, W_est {}",
            s.w_est
        );
    }

    #[test]
    fn slow_start_is_reno_s_and_a_timeout_keeps_the_reduction() {
        let mut w = Windows::new(Cubic::default(), WindowConfig::default());
        let p = w.add_path(MSS);
        w.on_ack(
            p,
            &AckSample {
                now: Time::from_ms(10),
                acked_bytes: 5 * MSS,
                rtt_sample: Some(Dur::from_ms(10)),
                one_way_delay: None,
                srtt: Dur::from_ms(10),
                flight_bytes: 0,
            },
        );
        assert_eq!(
            w.metrics(p).cwnd,
            11 * MSS,
            "abc_limit 1: one segment per ACK"
        );
        w.on_congestion_event(
            p,
            CongestionEvent::Timeout {
                flight_bytes: 11 * MSS,
                repeated: false,
            },
        );
        assert_eq!(w.metrics(p).cwnd, MSS);
        assert_eq!(w.metrics(p).ssthresh, 7700);
    }
}
