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
//!
//! By default alpha is computed on every ACK from the current windows and RTTs. RFC 6356 §4.1
//! lets an implementation recompute it only after a drop and when some cwnd_i/MSS_i quotient
//! changes, much as Linux's `mptcp_coupled` does; [`AlphaUpdate::OnWindowChange`] does that
//! (D119). htsim's `COUPLED_INC` recomputes on fewer events, only when the acknowledged
//! subflow's own window grows across a segment and after a timeout;
//! [`AlphaUpdate::OnSegmentGrowth`] does that (D138). With either, eq. 1 still runs per ACK
//! with the current cwnd_total.

use pathpool_core::time::PS_PER_S;
use serde::{Deserialize, Serialize};

use crate::path::{small_to_f64, PathState};
use crate::windows::Coupling;

/// When LIA recomputes alpha (scenario files: `tcp.lia.alpha_update`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlphaUpdate {
    /// On every ACK in congestion avoidance, from the current windows and RTTs (RFC 6356 §3
    /// taken literally; the default).
    #[default]
    PerAck,
    /// After a loss on a path of the group and whenever some path's cwnd/MSS quotient has
    /// changed since the last computation (RFC 6356 §4.1; close to Linux's `mptcp_coupled`).
    /// RTT changes alone do not trigger it.
    OnWindowChange,
    /// When the acknowledged path's own window grows across a segment boundary in congestion
    /// avoidance (from the windows and RTTs just after that growth), and at the first ACK in
    /// congestion avoidance after a timeout on a member: htsim's `COUPLED_INC`
    /// (`MultipathTcpSrc::inflate_window`, and `window_changed`, which only `TcpSrc`'s timeout
    /// calls). A fast retransmit, the end of a recovery and a window shrinking do not trigger
    /// it (D138).
    OnSegmentGrowth,
}

/// LIA's parameters (scenario files: `tcp.lia`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LiaConfig {
    /// When alpha is recomputed.
    pub alpha_update: AlphaUpdate,
}

/// LIA (RFC 6356).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lia {
    config: LiaConfig,
    /// With a cached [`AlphaUpdate`], per path: its group's alpha as last computed and the
    /// window range within which that computation still holds (every window for
    /// [`AlphaUpdate::OnSegmentGrowth`]).
    cached: Vec<CachedAlpha>,
}

/// A group's alpha as seen from one member path, valid while the member's window stays in
/// `[lo, hi)` bytes (the segment count it had when alpha was computed).
#[derive(Clone, Copy, Debug, PartialEq)]
struct CachedAlpha {
    alpha: f64,
    lo: u64,
    hi: u64,
}

impl CachedAlpha {
    /// Holds for no window: forces a recomputation.
    const STALE: CachedAlpha = CachedAlpha {
        alpha: 0.0,
        lo: u64::MAX,
        hi: 0,
    };
}

impl Lia {
    /// LIA with the given parameters.
    #[must_use]
    pub fn new(config: LiaConfig) -> Self {
        Lia {
            config,
            cached: Vec::new(),
        }
    }

    /// RFC 6356's alpha for path `i`'s group, or `None` if a member has no RTT sample yet.
    #[must_use]
    pub fn alpha(paths: &[PathState], i: usize) -> Option<f64> {
        let g = GroupSums::of(paths, i)?;
        Some(g.alpha())
    }

    /// Alpha for path `i`'s group as a cached [`AlphaUpdate`] keeps it, recomputed if a
    /// member's cached range no longer holds its window (or was forgotten), and cwnd_total;
    /// `None` if a member has no RTT sample yet.
    fn cached_alpha(&mut self, paths: &[PathState], i: usize) -> Option<(f64, u64)> {
        let any_window = self.config.alpha_update == AlphaUpdate::OnSegmentGrowth;
        if self.cached.len() != paths.len() {
            // Paths never announced through `on_paths_changed` (a caller driving the coupling
            // directly): nothing cached holds for them.
            self.cached.clear();
            self.cached.resize(paths.len(), CachedAlpha::STALE);
        }
        let g = paths[i].group;
        let mut total = 0u64;
        let mut holds = true;
        for (p, c) in paths.iter().zip(&self.cached) {
            if p.active && p.group == g {
                holds &= p.cwnd >= c.lo && p.cwnd < c.hi;
                total += p.cwnd;
            }
        }
        if holds {
            return Some((self.cached[i].alpha, total));
        }
        let alpha = GroupSums::of(paths, i)?.alpha();
        self.store(paths, i, alpha, any_window);
        Some((alpha, total))
    }

    /// Caches `alpha` for path `i`'s group, valid within each member's current segment count,
    /// or for any window if `any_window`.
    fn store(&mut self, paths: &[PathState], i: usize, alpha: f64, any_window: bool) {
        let g = paths[i].group;
        for (p, c) in paths.iter().zip(&mut self.cached) {
            if p.active && p.group == g {
                let lo = p.cwnd / p.mss * p.mss;
                *c = if any_window {
                    CachedAlpha {
                        alpha,
                        lo: 0,
                        hi: u64::MAX,
                    }
                } else {
                    CachedAlpha {
                        alpha,
                        lo,
                        hi: lo + p.mss,
                    }
                };
            }
        }
    }

    /// [`AlphaUpdate::OnSegmentGrowth`]'s congestion avoidance: grows path `i` by `inc` and
    /// recomputes alpha from the windows after the growth if it crossed a segment boundary.
    #[inline(never)]
    fn grow_on_segment_growth(&mut self, paths: &mut [PathState], i: usize, inc: f64) {
        let segments = paths[i].cwnd / paths[i].mss;
        paths[i].add_bytes(inc);
        if paths[i].cwnd / paths[i].mss != segments {
            match GroupSums::of(paths, i) {
                Some(g) => self.store(paths, i, g.alpha(), true),
                None => self.forget(paths, i),
            }
        }
    }

    /// Forgets the alpha cached for path `i`'s group.
    fn forget(&mut self, paths: &[PathState], i: usize) {
        let g = paths[i].group;
        for (p, c) in paths.iter().zip(&mut self.cached) {
            if p.group == g {
                *c = CachedAlpha::STALE;
            }
        }
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

    /// RFC 6356 eq. 2.
    #[inline]
    fn alpha(&self) -> f64 {
        alpha_from_sums(
            self.total_cwnd,
            self.max_cwnd_per_rtt2,
            self.sum_cwnd_per_rtt,
        )
    }
}

/// RFC 6356 eq. 2 from its three sums: cwnd_total, max_i cwnd_i/rtt_i² and Σ_i cwnd_i/rtt_i.
#[inline]
fn alpha_from_sums(total: f64, max_per_rtt2: f64, sum_per_rtt: f64) -> f64 {
    total * max_per_rtt2 / (sum_per_rtt * sum_per_rtt)
}

/// RFC 6356 eq. 2 over paths given as (window, RTT in seconds), the window in any unit (the
/// PTP paper's MPCCP takes it in packets, its eq. 3); `None` without a path, or if a window
/// is not positive or an RTT is not positive.
#[must_use]
pub fn alpha_of(paths: impl IntoIterator<Item = (f64, f64)>) -> Option<f64> {
    let (mut total, mut best, mut sum) = (0.0f64, 0.0f64, 0.0f64);
    for (w, rtt) in paths {
        if !(w > 0.0 && rtt > 0.0) {
            return None;
        }
        best = best.max(w / (rtt * rtt));
        sum += w / rtt;
        total += w;
    }
    (sum > 0.0).then(|| alpha_from_sums(total, best, sum))
}

impl Coupling for Lia {
    #[inline]
    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        let p = &paths[i];
        let bytes = small_to_f64(acked) * small_to_f64(p.mss);
        let reno = bytes / small_to_f64(p.cwnd);
        // RFC 6356 eq. 1: min(alpha·bytes_acked·MSS / cwnd_total, bytes_acked·MSS / cwnd_i).
        match self.config.alpha_update {
            AlphaUpdate::PerAck => match GroupSums::of(paths, i) {
                Some(g) => (g.alpha() * bytes / g.total_cwnd).min(reno),
                None => reno,
            },
            AlphaUpdate::OnWindowChange | AlphaUpdate::OnSegmentGrowth => {
                match self.cached_alpha(paths, i) {
                    Some((alpha, total)) => (alpha * bytes / small_to_f64(total)).min(reno),
                    None => reno,
                }
            }
        }
    }

    #[inline]
    fn congestion_avoidance(&mut self, paths: &mut [PathState], i: usize, acked: u64) {
        let inc = self.ca_increase(paths, i, acked);
        if self.config.alpha_update == AlphaUpdate::OnSegmentGrowth {
            self.grow_on_segment_growth(paths, i, inc);
        } else {
            // The trait's default, as inlined into every ACK of the other variants: the
            // segment count below costs a division they do not need.
            paths[i].add_bytes(inc);
        }
    }

    fn on_loss(&mut self, paths: &[PathState], i: usize, timeout: bool) {
        match self.config.alpha_update {
            AlphaUpdate::PerAck => {}
            // RFC 6356 §4.1: recompute after a drop.
            AlphaUpdate::OnWindowChange => {
                if let Some(c) = self.cached.get_mut(i) {
                    *c = CachedAlpha::STALE;
                }
            }
            AlphaUpdate::OnSegmentGrowth => {
                if timeout && self.cached.len() == paths.len() {
                    self.forget(paths, i);
                }
            }
        }
    }

    fn on_paths_changed(&mut self, paths: &[PathState]) {
        if self.config.alpha_update != AlphaUpdate::PerAck {
            self.cached.clear();
            self.cached.resize(paths.len(), CachedAlpha::STALE);
        }
    }

    fn alg_state(&self, paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        match self.cached.get(i) {
            Some(c) if *c != CachedAlpha::STALE => Some(("alpha", c.alpha)),
            _ => Self::alpha(paths, i).map(|a| ("alpha", a)),
        }
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
        assert!(close(Lia::default().ca_increase(&ps, 0, 1000), 25.0));
        assert!(close(Lia::default().ca_increase(&ps, 1, 1000), 25.0));
    }

    #[test]
    fn two_equal_paths_get_a_quarter_of_reno_each() {
        let ps = paths(&[(10, 0.010), (10, 0.010)]);
        assert!(close(Lia::alpha(&ps, 0).unwrap(), 0.5));
        assert!(close(Lia::default().ca_increase(&ps, 0, 1000), 25.0));
    }

    #[test]
    fn mismatched_paths_40_segments_10_ms_and_5_segments_100_ms() {
        // max cwnd/rtt² = 4e8; Σ cwnd/rtt = 4.05e6; alpha = 45 000 · 4e8 / 1.64025e13.
        let ps = paths(&[(40, 0.010), (5, 0.100)]);
        let alpha = 45_000.0 * 4e8 / 1.64025e13;
        assert!(close(Lia::alpha(&ps, 0).unwrap(), alpha));
        assert!(close(alpha, 1.097_393_689_986_282_6));
        assert!(close(
            Lia::default().ca_increase(&ps, 0, 1000),
            24.386_526_444_139_613
        ));
        assert!(close(
            Lia::default().ca_increase(&ps, 1, 1000),
            24.386_526_444_139_613
        ));
    }

    #[test]
    fn the_reno_cap_binds_on_a_large_window() {
        // 2 segments at 10 ms and 100 segments at 200 ms: alpha = 102 000 · 2e7 / 4.9e11.
        let ps = paths(&[(2, 0.010), (100, 0.200)]);
        let coupled = 102_000.0 * 2e7 / 4.9e11 * 1e6 / 102_000.0;
        assert!(close(Lia::default().ca_increase(&ps, 0, 1000), coupled));
        assert!(close(coupled, 40.816_326_530_612_24));
        assert!(
            close(Lia::default().ca_increase(&ps, 1, 1000), 10.0),
            "capped at 1000·1000/100 000"
        );
    }

    #[test]
    fn single_path_is_reno_and_missing_rtt_falls_back() {
        let ps = paths(&[(10, 0.010)]);
        assert!(close(Lia::alpha(&ps, 0).unwrap(), 1.0));
        assert!(close(Lia::default().ca_increase(&ps, 0, 1000), 100.0));
        let mut ps = paths(&[(10, 0.010), (10, 0.0)]);
        ps[1].srtt = pathpool_core::Dur::ZERO;
        assert_eq!(Lia::alpha(&ps, 0), None);
        assert!(close(Lia::default().ca_increase(&ps, 0, 1000), 100.0));
    }

    fn on_window_change(ps: &[PathState]) -> Lia {
        let mut lia = Lia::new(LiaConfig {
            alpha_update: AlphaUpdate::OnWindowChange,
        });
        lia.on_paths_changed(ps);
        lia
    }

    #[test]
    fn on_window_change_keeps_alpha_until_a_window_crosses_a_segment() {
        let mut ps = paths(&[(10, 0.010), (20, 0.020)]);
        let mut lia = on_window_change(&ps);
        assert!(
            close(lia.ca_increase(&ps, 0, 1000), 25.0),
            "alpha 0.75 as per ACK"
        );
        // An RTT change alone keeps alpha (per ACK it would be 30 000 · 1e8 / 2.25e12 = 4/3).
        ps[1].srtt = pathpool_core::Dur::from_ms(40);
        assert!(close(Lia::alpha(&ps, 0).unwrap(), 4.0 / 3.0));
        assert!(close(lia.ca_increase(&ps, 0, 1000), 25.0));
        assert_eq!(lia.alg_state(&ps, 1), Some(("alpha", 0.75)));
        // Within the same segment count, cwnd_total is the current one: 0.75 · 1e6 / 30 999.
        ps[0].cwnd = 10_999;
        assert!(close(lia.ca_increase(&ps, 1, 1000), 0.75e6 / 30_999.0));
        // Path 0 reaches 11 segments: alpha = 31 000 · 1.1e8 / (1.6e6)² = 1.332 031 25.
        ps[0].cwnd = 11_000;
        let alpha = 31_000.0 * 1.1e8 / 2.56e12;
        assert!(close(alpha, 1.332_031_25));
        assert!(close(lia.ca_increase(&ps, 0, 1000), alpha * 1e6 / 31_000.0));
        assert!(close(lia.ca_increase(&ps, 0, 1000), 42.968_75));
    }

    #[test]
    fn on_window_change_recomputes_after_a_loss_and_a_window_shrinking() {
        let mut ps = paths(&[(10, 0.010), (20, 0.020)]);
        let mut lia = on_window_change(&ps);
        lia.ca_increase(&ps, 0, 1000);
        ps[1].srtt = pathpool_core::Dur::from_ms(40);
        lia.on_loss(&ps, 1, false);
        let exact = Lia::default().ca_increase(&ps, 0, 1000);
        assert!(close(exact, 4.0 / 3.0 * 1e6 / 30_000.0));
        assert!(close(lia.ca_increase(&ps, 0, 1000), exact));
        // A window falling below its segment count is a change too.
        ps[1].srtt = pathpool_core::Dur::from_ms(20);
        ps[1].cwnd = 19_999;
        assert!(close(
            lia.ca_increase(&ps, 0, 1000),
            Lia::default().ca_increase(&ps, 0, 1000)
        ));
    }

    #[test]
    fn on_window_change_without_rtt_samples_grows_as_reno() {
        let mut ps = paths(&[(10, 0.010), (10, 0.0)]);
        ps[1].srtt = pathpool_core::Dur::ZERO;
        let mut lia = on_window_change(&ps);
        assert!(close(lia.ca_increase(&ps, 0, 1000), 100.0));
        assert_eq!(lia.alg_state(&ps, 0), None);
    }

    #[test]
    fn on_window_change_computes_alpha_for_paths_it_was_not_told_about() {
        let ps = paths(&[(10, 0.010), (20, 0.020)]);
        let mut lia = Lia::new(LiaConfig {
            alpha_update: AlphaUpdate::OnWindowChange,
        });
        assert!(close(lia.ca_increase(&ps, 1, 1000), 25.0));
        assert_eq!(lia.alg_state(&ps, 0), Some(("alpha", 0.75)));
    }

    fn on_segment_growth(ps: &[PathState]) -> Lia {
        let mut lia = Lia::new(LiaConfig {
            alpha_update: AlphaUpdate::OnSegmentGrowth,
        });
        lia.on_paths_changed(ps);
        lia
    }

    #[test]
    fn on_segment_growth_keeps_alpha_through_a_fast_retransmit_and_a_shrinking_window() {
        let mut ps = paths(&[(10, 0.010), (20, 0.020)]);
        let mut lia = on_segment_growth(&ps);
        assert!(close(lia.ca_increase(&ps, 0, 1000), 25.0), "alpha 0.75");
        // Path 1's RTT doubles and it halves its window after three duplicate ACKs: alpha
        // stays 0.75 (fresh it would be 20 000 · 1e8 / (1e6 + 2.5e5)² = 1.28), only
        // cwnd_total follows: 0.75 · 1e6 / 20 000.
        ps[1].srtt = pathpool_core::Dur::from_ms(40);
        lia.on_loss(&ps, 1, false);
        ps[1].cwnd = 10_000;
        assert!(close(Lia::alpha(&ps, 0).unwrap(), 1.28));
        assert!(close(lia.ca_increase(&ps, 1, 1000), 37.5));
        assert_eq!(lia.alg_state(&ps, 0), Some(("alpha", 0.75)));
    }

    #[test]
    fn on_segment_growth_recomputes_when_the_acked_window_crosses_a_segment() {
        let mut ps = paths(&[(10, 0.010), (20, 0.020)]);
        let mut lia = on_segment_growth(&ps);
        lia.ca_increase(&ps, 0, 1000);
        ps[1].srtt = pathpool_core::Dur::from_ms(40);
        ps[1].cwnd = 10_000;
        // Growth within segment 10 keeps alpha: 0.75 · 1e6 / 20 000 = 37.5 B, window 10 037.
        lia.congestion_avoidance(&mut ps, 0, 1000);
        assert_eq!(ps[0].cwnd, 10_037);
        assert_eq!(lia.alg_state(&ps, 0), Some(("alpha", 0.75)));
        // From 10 990: 0.75 · 1e6 / 20 990 = 35.73 B and the 0.5 B carried reach 11 026,
        // segment 11: alpha from the windows after the growth, 21 026 · 1.1026e8 /
        // (1.1026e6 + 2.5e5)².
        ps[0].cwnd = 10_990;
        lia.congestion_avoidance(&mut ps, 0, 1000);
        assert_eq!(ps[0].cwnd, 11_026);
        let alpha = 21_026.0 * 1.1026e8 / (1.3526e6 * 1.3526e6);
        assert!(close(alpha, 1.267_172_916_344_771_1));
        match lia.alg_state(&ps, 1) {
            Some(("alpha", a)) => assert!(close(a, alpha)),
            other => panic!("alpha expected, got {other:?}"),
        }
        assert!(close(lia.ca_increase(&ps, 0, 1000), alpha * 1e6 / 21_026.0));
        assert!(close(lia.ca_increase(&ps, 0, 1000), 60.266_951_219_669_515));
    }

    #[test]
    fn on_segment_growth_recomputes_after_a_timeout() {
        let mut ps = paths(&[(10, 0.010), (20, 0.020)]);
        let mut lia = on_segment_growth(&ps);
        lia.ca_increase(&ps, 0, 1000);
        // Path 1 times out (window one segment) with its RTT doubled: the next increase uses
        // alpha = 11 000 · 1e8 / (1e6 + 2.5e4)² from the windows then.
        lia.on_loss(&ps, 1, true);
        ps[1].srtt = pathpool_core::Dur::from_ms(40);
        ps[1].cwnd = 1000;
        let alpha = 11_000.0 * 1e8 / (1.025e6 * 1.025e6);
        assert!(close(lia.ca_increase(&ps, 0, 1000), alpha * 1e6 / 11_000.0));
        assert!(close(lia.ca_increase(&ps, 0, 1000), 95.181_439_619_274_24));
        match lia.alg_state(&ps, 0) {
            Some(("alpha", a)) => assert!(close(a, alpha)),
            other => panic!("alpha expected, got {other:?}"),
        }
    }
}
