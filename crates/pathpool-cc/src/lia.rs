//! LIA, the Linked Increases Algorithm of MPTCP (RFC 6356).
//!
//! alpha = cwnd_total · max_i(cwnd_i/rtt_i²) / (Σ_i cwnd_i/rtt_i)²   (RFC 6356 §3, eq. 2)
//! per ACK on i in congestion avoidance:
//!   cwnd_i += min(alpha · bytes_acked · MSS_i / cwnd_total, bytes_acked · MSS_i / cwnd_i)
//!                                                                   (RFC 6356 §3, eq. 1)
//! Slow start, fast retransmit and timeouts are unchanged from TCP. Sums run over the active
//! paths of the coupling group; `cwnd` equals ssthresh during fast recovery (RFC 6356 §3). A
//! path without an RTT sample grows as Reno (alpha needs every RTT). The increase is computed
//! in floating point and its fraction carried to the next ACK, which is the exact form of
//! eq. 1 (RFC 6356 §4.1's integer scaling approximates it).

use pathpool_core::time::PS_PER_S;

use crate::path::{small_to_f64, PathState};
use crate::windows::Coupling;

/// LIA (RFC 6356).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lia;

impl Lia {
    /// RFC 6356's alpha for path `i`'s group, or `None` if a member has no RTT sample yet.
    #[must_use]
    pub fn alpha(paths: &[PathState], i: usize) -> Option<f64> {
        let g = GroupSums::of(paths, i)?;
        Some(g.total_cwnd * g.max_cwnd_per_rtt2 / (g.sum_cwnd_per_rtt * g.sum_cwnd_per_rtt))
    }
}

/// The three sums of RFC 6356 eq. 2 over path `i`'s group, taken in one pass (this runs on
/// every ACK in congestion avoidance).
struct GroupSums {
    /// cwnd_total in bytes.
    total_cwnd: f64,
    /// max_j cwnd_j / rtt_j².
    max_cwnd_per_rtt2: f64,
    /// Σ_j cwnd_j / rtt_j.
    sum_cwnd_per_rtt: f64,
}

impl GroupSums {
    /// `None` if a member has no RTT sample or the group's window is empty.
    ///
    /// The arithmetic is exactly that of the plain form (`cwnd as f64`, `srtt.as_secs_f64()`,
    /// `f64::max`), only cheaper to execute: the conversions go through
    /// `small_to_f64`, and the quotients compared are never NaN, where a plain comparison
    /// agrees with `f64::max`.
    #[inline]
    fn of(paths: &[PathState], i: usize) -> Option<GroupSums> {
        let g = paths[i].group;
        let mut total = 0u64;
        let mut best = 0.0f64;
        let mut sum = 0.0f64;
        for p in paths.iter().filter(|p| p.active && p.group == g) {
            let ps = p.srtt.as_ps();
            if ps == 0 {
                return None;
            }
            let rtt = small_to_f64(ps) / PS_PER_S as f64;
            let w = small_to_f64(p.cwnd);
            let per_rtt2 = w / (rtt * rtt);
            // A select, not a branch: which path has the largest ratio is unpredictable.
            best = if per_rtt2 > best { per_rtt2 } else { best };
            sum += w / rtt;
            total += p.cwnd;
        }
        (sum > 0.0).then_some(GroupSums {
            total_cwnd: small_to_f64(total),
            max_cwnd_per_rtt2: best,
            sum_cwnd_per_rtt: sum,
        })
    }
}

impl Coupling for Lia {
    #[inline]
    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        let p = &paths[i];
        let bytes = small_to_f64(acked) * small_to_f64(p.mss);
        let reno = bytes / small_to_f64(p.cwnd);
        match GroupSums::of(paths, i) {
            Some(g) => {
                // RFC 6356 eq. 1: min(alpha·bytes_acked·MSS / cwnd_total, bytes_acked·MSS /
                // cwnd_i), with eq. 2's alpha = cwnd_total·max(cwnd/rtt²) / (Σ cwnd/rtt)².
                let alpha =
                    g.total_cwnd * g.max_cwnd_per_rtt2 / (g.sum_cwnd_per_rtt * g.sum_cwnd_per_rtt);
                (alpha * bytes / g.total_cwnd).min(reno)
            }
            None => reno,
        }
    }

    fn alg_state(&self, paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        Self::alpha(paths, i).map(|a| ("alpha", a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::paths;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn two_paths_10_and_20_segments_10_and_20_ms() {
        // cwnd/rtt²: 1e8 and 5e7; Σ cwnd/rtt = 2e6; alpha = 30 000 · 1e8 / 4e12 = 0.75.
        let ps = paths(&[(10, 0.010), (20, 0.020)]);
        assert!(close(Lia::alpha(&ps, 0).unwrap(), 0.75));
        // 0.75 · 1000 · 1000 / 30 000 = 25 B, below the Reno caps of 100 and 50 B.
        assert!(close(Lia.ca_increase(&ps, 0, 1000), 25.0));
        assert!(close(Lia.ca_increase(&ps, 1, 1000), 25.0));
    }

    #[test]
    fn two_equal_paths_get_a_quarter_of_reno_each() {
        let ps = paths(&[(10, 0.010), (10, 0.010)]);
        assert!(close(Lia::alpha(&ps, 0).unwrap(), 0.5));
        assert!(close(Lia.ca_increase(&ps, 0, 1000), 25.0));
    }

    #[test]
    fn mismatched_paths_40_segments_10_ms_and_5_segments_100_ms() {
        // max cwnd/rtt² = 4e8; Σ cwnd/rtt = 4.05e6; alpha = 45 000 · 4e8 / 1.64025e13.
        let ps = paths(&[(40, 0.010), (5, 0.100)]);
        let alpha = 45_000.0 * 4e8 / 1.64025e13;
        assert!(close(Lia::alpha(&ps, 0).unwrap(), alpha));
        assert!(close(alpha, 1.097_393_689_986_282_6));
        assert!(close(Lia.ca_increase(&ps, 0, 1000), 24.386_526_444_139_613));
        assert!(close(Lia.ca_increase(&ps, 1, 1000), 24.386_526_444_139_613));
    }

    #[test]
    fn the_reno_cap_binds_on_a_large_window() {
        // 2 segments at 10 ms and 100 segments at 200 ms: alpha = 102 000 · 2e7 / 4.9e11.
        let ps = paths(&[(2, 0.010), (100, 0.200)]);
        let coupled = 102_000.0 * 2e7 / 4.9e11 * 1e6 / 102_000.0;
        assert!(close(Lia.ca_increase(&ps, 0, 1000), coupled));
        assert!(close(coupled, 40.816_326_530_612_24));
        assert!(
            close(Lia.ca_increase(&ps, 1, 1000), 10.0),
            "capped at 1000·1000/100 000"
        );
    }

    #[test]
    fn single_path_is_reno_and_missing_rtt_falls_back() {
        let ps = paths(&[(10, 0.010)]);
        assert!(close(Lia::alpha(&ps, 0).unwrap(), 1.0));
        assert!(close(Lia.ca_increase(&ps, 0, 1000), 100.0));
        let mut ps = paths(&[(10, 0.010), (10, 0.0)]);
        ps[1].srtt = pathpool_core::Dur::ZERO;
        assert_eq!(Lia::alpha(&ps, 0), None);
        assert!(close(Lia.ca_increase(&ps, 0, 1000), 100.0));
    }
}
