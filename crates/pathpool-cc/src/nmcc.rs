//! NMCC, Normalized Multiflow Congestion Control (Thomas, thesis §6 / Algorithm 2; journal
//! paper §4.2 / Algorithm 1), with the loss-time factor m_t (thesis eq. 4.17).
//!
//! NMCC couples the subflows of one group (a shared friendliness bottleneck) by inflating
//! their RTTs by a factor m so that the group's throughput *growth rate* equals that of the
//! best single path:
//!
//! * Ω_i = MSS/RTT_i² in congestion avoidance, cwnd_i/RTT_i² in slow start (eq. 4.5/7);
//!   m² = Σ Ω_i / Ω_max (eq. 9), so 1 ≤ m² ≤ N;
//! * a subflow is in slow start while cwnd < ssthresh/m² (Alg. 1 l.2);
//! * slow start (friendly): cwnd += cwnd_sp·MSS/(cwnd·m²) per ACK of one segment, where
//!   cwnd_sp is a shadow single-path window (eq. 4.11, Alg. 1 l.3);
//! * congestion avoidance: cwnd += MSS²/(cwnd·m²) per ACK (Alg. 1 l.5);
//! * on a loss: cwnd − (cwnd/2)·m_t with m_t = p_max (Σ w_i/r_i)² / Σ p_i w_i²/r_i²
//!   (eq. 4.17), p_max being the loss rate of the subflow with Ω_max;
//! * a subflow whose retransmission timer expired is inactive (left out of m) until it
//!   receives an ACK again (paper §4.2, is-active flag).
//!
//! A path alone in its group runs uncoupled Reno (hybrid dispatch, paper §4.2). Every choice
//! the documents leave open is a field of [`NmccConfig`], documented in docs/decisions.md.

use serde::{Deserialize, Serialize};

use crate::path::{group_members, PathState};
use crate::reno::Reno;
use crate::windows::Coupling;

/// How m is initialised before RTT samples exist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NmccInitialM {
    /// m² = N, the paper's footnote 6 (all RTTs assumed equal).
    #[default]
    MSquaredIsN,
    /// m = N (m² = N²), the literal reading of the thesis ("initial m = |G|").
    MIsN,
}

/// When the shadow single-path window grows (thesis Alg. 2 l.4/l.7 give per-RTT amounts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShadowUpdate {
    /// Per ACK: +cwnd_sp·acked/cwnd in slow start, +MSS·acked/cwnd in congestion avoidance
    /// (the per-ACK equivalents of doubling and +1 MSS per round trip).
    #[default]
    PerAck,
    /// Once per round trip (a window's worth of acknowledged bytes): ×2 or +1 MSS.
    PerRtt,
}

/// How the per-path loss rate p_i of eq. 4.17 is estimated (the thesis does not say).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossEstimator {
    /// OLIA-style: p = MSS/ℓ, ℓ = max(bytes between the last two losses, bytes since the last).
    #[default]
    InterLoss,
    /// Congestion events per segment acknowledged since the path started.
    Cumulative,
}

/// NMCC parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NmccConfig {
    /// Friendly slow start (shadow window and the ssthresh/m² test). `false` is the paper's
    /// "unfriendly SS" ablation: standard slow start, coupled congestion avoidance.
    #[serde(default = "yes")]
    pub friendly_slow_start: bool,
    /// Use the loss-time factor m_t (thesis §6.6); `false` halves like TCP.
    #[serde(default = "yes")]
    pub loss_time_factor: bool,
    /// Initial m before RTT samples.
    #[serde(default)]
    pub initial_m: NmccInitialM,
    /// Shadow window update.
    #[serde(default)]
    pub shadow_update: ShadowUpdate,
    /// Loss-rate estimator for m_t.
    #[serde(default)]
    pub loss_estimator: LossEstimator,
    /// Clamp m_t to [1, |group|] (eq. 4.17 can leave that range; thesis asserts it).
    #[serde(default = "yes")]
    pub clamp_mt: bool,
    /// Smallest ssthresh after an m_t reduction, in segments (the literal rule can reach 0).
    #[serde(default = "two")]
    pub window_floor: u64,
}

fn yes() -> bool {
    true
}
fn two() -> u64 {
    2
}

impl Default for NmccConfig {
    fn default() -> Self {
        NmccConfig {
            friendly_slow_start: true,
            loss_time_factor: true,
            initial_m: NmccInitialM::default(),
            shadow_update: ShadowUpdate::default(),
            loss_estimator: LossEstimator::default(),
            clamp_mt: true,
            window_floor: 2,
        }
    }
}

/// NMCC's state of one path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct PathNmcc {
    /// Shadow single-path window in bytes (0 until initialised from cwnd).
    shadow: f64,
    /// Reset the shadow window to cwnd at the next ACK (after a loss).
    reset_shadow: bool,
    /// The is-active flag: false from a timeout until the next ACK.
    inactive: bool,
    /// Bytes acknowledged in the current round (per-RTT shadow updates).
    round_acked: u64,
    /// Cumulative bytes acknowledged, and at the last two losses.
    acked: u64,
    loss1: u64,
    loss2: u64,
    /// Congestion events so far.
    losses: u64,
}

/// NMCC.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Nmcc {
    config: NmccConfig,
    /// The rule of a path alone in its group (and of slow start when it is not friendly).
    reno: Reno,
    per_path: Vec<PathNmcc>,
    /// m² of each coupling group: (group, m²).
    m2: Vec<(u32, f64)>,
}

impl Nmcc {
    /// NMCC with the given parameters.
    #[must_use]
    pub fn new(config: NmccConfig) -> Self {
        Nmcc {
            config,
            reno: Reno::default(),
            per_path: Vec::new(),
            m2: Vec::new(),
        }
    }

    /// `self` with the Reno rule for paths alone in their group (the connection's
    /// `tcp.ca_increase`).
    #[must_use]
    pub fn with_reno(mut self, reno: Reno) -> Self {
        self.reno = reno;
        self
    }

    /// The parameters.
    #[must_use]
    pub fn config(&self) -> &NmccConfig {
        &self.config
    }

    fn initial_m2(&self, n: usize) -> f64 {
        let n = n.max(1) as f64;
        match self.config.initial_m {
            NmccInitialM::MSquaredIsN => n,
            NmccInitialM::MIsN => n * n,
        }
    }

    /// The current m² of path `i`'s group.
    #[must_use]
    pub fn m2(&self, paths: &[PathState], i: usize) -> f64 {
        let g = paths[i].group;
        self.m2
            .iter()
            .find(|e| e.0 == g)
            .map_or_else(|| self.initial_m2(group_members(paths, i).count()), |e| e.1)
    }

    fn set_m2(&mut self, group: u32, m2: f64) {
        match self.m2.iter_mut().find(|e| e.0 == group) {
            Some(e) => e.1 = m2,
            None => self.m2.push((group, m2)),
        }
    }

    /// The active members of path `i`'s group (an iterator: this runs on every ACK, which
    /// must not allocate).
    fn members<'a>(&'a self, paths: &'a [PathState], i: usize) -> impl Iterator<Item = usize> + 'a {
        group_members(paths, i).filter(|&j| !self.per_path[j].inactive)
    }

    /// Whether path `j` is in (friendly) slow start given the group's m².
    fn in_ss(&self, p: &PathState, m2: f64) -> bool {
        if self.config.friendly_slow_start {
            (p.cwnd as f64) < p.ssthresh as f64 / m2
        } else {
            p.cwnd < p.ssthresh
        }
    }

    /// Ω_j: cwnd/RTT² in slow start, MSS/RTT² in congestion avoidance (bytes/s²).
    fn omega(&self, p: &PathState, m2: f64) -> Option<f64> {
        let r = p.rtt_s()?;
        let x = if self.in_ss(p, m2) {
            p.cwnd as f64
        } else {
            p.mss as f64
        };
        Some(x / (r * r))
    }

    /// ESTIMATE_M (Alg. 1): m² = Σ Ω / Ω_max over the active members, with the phase test
    /// using the previous m². Until every active member has an RTT sample, m² stays as it is
    /// (initially N, footnote 6). An empty pool gives 1.
    #[must_use]
    pub fn estimate_m2(&self, paths: &[PathState], i: usize) -> f64 {
        let prev = self.m2(paths, i);
        let mut any = false;
        let mut total = 0.0;
        let mut max = 0.0f64;
        for j in self.members(paths, i) {
            any = true;
            let Some(rate) = self.omega(&paths[j], prev) else {
                return prev;
            };
            total += rate;
            max = max.max(rate);
        }
        if !any {
            return 1.0;
        }
        if max > 0.0 {
            total / max
        } else {
            1.0
        }
    }

    /// p_i, the loss-rate estimate of path `j` (None before any data).
    fn loss_rate(&self, p: &PathState, j: usize) -> Option<f64> {
        let s = &self.per_path[j];
        match self.config.loss_estimator {
            LossEstimator::InterLoss => {
                let l = (s.acked - s.loss2).max(s.loss2 - s.loss1);
                (l > 0).then(|| p.mss as f64 / l as f64)
            }
            LossEstimator::Cumulative => {
                (s.acked > 0).then(|| s.losses as f64 * p.mss as f64 / s.acked as f64)
            }
        }
    }

    /// m_t of eq. 4.17 for path `i`'s group: p_max (Σ w/r)² / Σ p w²/r², with p_max the loss
    /// rate of the path with Ω_max; clamped to [1, n] when configured. 1 when undefined.
    #[must_use]
    pub fn loss_time_factor(&self, paths: &[PathState], i: usize) -> f64 {
        let m2 = self.m2(paths, i);
        let mut n = 0;
        let (mut sum_rate, mut sum_weighted) = (0.0, 0.0);
        let mut best: Option<(f64, Option<f64>)> = None;
        for j in self.members(paths, i) {
            n += 1;
            let p = &paths[j];
            let (Some(r), Some(omega)) = (p.rtt_s(), self.omega(p, m2)) else {
                return 1.0;
            };
            let pj = self.loss_rate(p, j);
            let w = p.cwnd as f64;
            sum_rate += w / r;
            if let Some(pj) = pj {
                sum_weighted += pj * w * w / (r * r);
            }
            if best.is_none_or(|(o, _)| omega > o) {
                best = Some((omega, pj));
            }
        }
        let Some((_, Some(p_max))) = best else {
            return 1.0;
        };
        if sum_weighted <= 0.0 {
            return 1.0;
        }
        let mt = p_max * sum_rate * sum_rate / sum_weighted;
        if self.config.clamp_mt {
            mt.clamp(1.0, n.max(1) as f64)
        } else {
            mt
        }
    }

    fn alone(paths: &[PathState], i: usize) -> bool {
        group_members(paths, i).count() <= 1
    }

    fn grow_shadow(&mut self, paths: &[PathState], i: usize, acked: u64, slow_start: bool) {
        let p = &paths[i];
        let s = &mut self.per_path[i];
        match self.config.shadow_update {
            ShadowUpdate::PerAck => {
                let base = if slow_start { s.shadow } else { p.mss as f64 };
                s.shadow += base * acked as f64 / p.cwnd as f64;
            }
            ShadowUpdate::PerRtt => {
                s.round_acked += acked;
                if s.round_acked >= p.cwnd {
                    s.round_acked = 0;
                    s.shadow = if slow_start {
                        2.0 * s.shadow
                    } else {
                        s.shadow + p.mss as f64
                    };
                }
            }
        }
    }
}

impl Coupling for Nmcc {
    fn on_paths_changed(&mut self, paths: &[PathState]) {
        self.per_path.resize(paths.len(), PathNmcc::default());
        // A change of membership restarts every group from its initial m².
        self.m2.clear();
    }

    fn on_ack(&mut self, paths: &[PathState], i: usize, acked: u64) {
        let s = &mut self.per_path[i];
        s.acked += acked;
        s.inactive = false;
        if s.reset_shadow || s.shadow == 0.0 {
            s.shadow = paths[i].cwnd as f64;
            s.reset_shadow = false;
        }
        let m2 = self.estimate_m2(paths, i);
        self.set_m2(paths[i].group, m2);
    }

    fn on_loss(&mut self, _paths: &[PathState], i: usize, timeout: bool) {
        let s = &mut self.per_path[i];
        s.losses += 1;
        if s.acked != s.loss2 {
            s.loss1 = s.loss2;
            s.loss2 = s.acked;
        }
        s.reset_shadow = true;
        s.round_acked = 0;
        if timeout {
            s.inactive = true;
        }
    }

    fn in_slow_start(&self, paths: &[PathState], i: usize) -> bool {
        if Self::alone(paths, i) {
            return paths[i].cwnd < paths[i].ssthresh;
        }
        self.in_ss(&paths[i], self.m2(paths, i))
    }

    fn slow_start(&mut self, paths: &mut [PathState], i: usize, acked: u64, abc_limit: u64) {
        if Self::alone(paths, i) || !self.config.friendly_slow_start {
            self.grow_shadow(paths, i, acked, true);
            self.reno.slow_start(paths, i, acked, abc_limit);
            return;
        }
        let m2 = self.m2(paths, i);
        let shadow = self.per_path[i].shadow;
        let p = &paths[i];
        // Alg. 2 l.3 grows the window towards the shadow window, one ACK's worth at a time:
        // like every slow start here, at most abc_limit·SMSS per ACK (RFC 3465 §2.2) and not
        // past ssthresh. Unbounded, one cumulative ACK after a timeout's go-back-N (hundreds
        // of kilobytes the receiver held) raised cwnd from 2 segments to 160 (issue 17).
        let limit = (abc_limit * p.mss).min(p.ssthresh.saturating_sub(p.cwnd).max(1));
        let inc = (shadow * acked as f64 / (p.cwnd as f64 * m2)).min(limit as f64);
        self.grow_shadow(paths, i, acked, true);
        paths[i].add_bytes(inc);
    }

    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        let p = &paths[i];
        acked as f64 * p.mss as f64 / (p.cwnd as f64 * self.m2(paths, i))
    }

    fn congestion_avoidance(&mut self, paths: &mut [PathState], i: usize, acked: u64) {
        self.grow_shadow(paths, i, acked, false);
        if Self::alone(paths, i) {
            self.reno.congestion_avoidance(paths, i, acked);
            return;
        }
        let inc = self.ca_increase(paths, i, acked);
        paths[i].add_bytes(inc);
    }

    fn ssthresh_after_loss(&mut self, paths: &[PathState], i: usize, flight: u64) -> u64 {
        let p = &paths[i];
        let floor = self.config.window_floor.max(1) * p.mss;
        if Self::alone(paths, i) {
            return (flight / 2).max(2 * p.mss);
        }
        // The reduction rule engages only after the group's first loss (thesis §6.6).
        let earlier: u64 = group_members(paths, i)
            .map(|j| self.per_path[j].losses)
            .sum();
        let mt = if self.config.loss_time_factor && earlier > 1 {
            self.loss_time_factor(paths, i)
        } else {
            1.0
        };
        let w = p.cwnd as f64;
        let target = w - w / 2.0 * mt;
        (if target <= 0.0 { 0 } else { target as u64 }).max(floor)
    }

    fn alg_state(&self, paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        Some(("m", libm::sqrt(self.m2(paths, i))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::paths;

    fn nmcc(ps: &[PathState]) -> Nmcc {
        let mut n = Nmcc::new(NmccConfig::default());
        n.on_paths_changed(ps);
        n
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn paper_example_rtts_5_and_10_ms() {
        // Paper §4.2.1: m = √(5²·(1/5² + 1/10²)) = 1.118; RTT' = 5.59 and 11.18 ms.
        let ps = paths(&[(10, 0.005), (10, 0.010)]);
        let n = nmcc(&ps);
        assert_eq!(n.m2(&ps, 0), 2.0, "initial m² = N");
        let m2 = n.estimate_m2(&ps, 0);
        assert!(close(m2, 1.25, 1e-12));
        let m = m2.sqrt();
        assert!(close(m, 1.118, 5e-4));
        assert!(close(5.0 * m, 5.59, 5e-3) && close(10.0 * m, 11.18, 5e-3));
        // The friendly throughput growth equals the best single path's: 0.04 MSS/ms².
        let growth = 1.0 / (5.0 * m).powi(2) + 1.0 / (10.0 * m).powi(2);
        assert!(close(growth, 0.04, 1e-12));
    }

    #[test]
    fn paper_example_terrestrial_and_satellite() {
        let ps = paths(&[(10, 0.010), (10, 0.250)]);
        let m = nmcc(&ps).estimate_m2(&ps, 0).sqrt();
        assert!(close(m, 1.0008, 5e-5), "m = {m}");
    }

    #[test]
    fn paper_example_mixed_phases() {
        // A: slow start, 100 MSS, 10 ms; B: slow start, 20 MSS, 5 ms; C: congestion
        // avoidance, 5 ms. Ω = 1, 0.8, 0.04 MSS/ms²; m² = 1.84; m = 1.356.
        let mut ps = paths(&[(100, 0.010), (20, 0.005), (10, 0.005)]);
        ps[0].ssthresh = u64::MAX;
        ps[1].ssthresh = u64::MAX;
        let n = nmcc(&ps);
        let m2 = n.estimate_m2(&ps, 0);
        assert!(close(m2, 1.84, 1e-12));
        assert!(close(m2.sqrt(), 1.356, 5e-4));
        let inflated: Vec<f64> = [10.0, 5.0, 5.0].iter().map(|r| r * m2.sqrt()).collect();
        assert!(close(inflated[0], 13.56, 0.01) && close(inflated[1], 6.78, 0.01));
        let friendly = [1.0 / m2, 0.8 / m2, 0.04 / m2];
        for (got, want) in friendly.iter().zip([0.543, 0.435, 0.022]) {
            assert!(close(*got, want, 5e-4), "{got} vs {want}");
        }
        assert!(close(friendly.iter().sum::<f64>(), 1.0, 1e-12));
    }

    #[test]
    fn initial_m_can_be_n() {
        let ps = paths(&[(10, 0.0), (10, 0.0), (10, 0.0)]);
        let cfg = NmccConfig {
            initial_m: NmccInitialM::MIsN,
            ..NmccConfig::default()
        };
        let mut n = Nmcc::new(cfg);
        n.on_paths_changed(&ps);
        assert_eq!(n.m2(&ps, 0), 9.0);
    }

    #[test]
    fn loss_time_factor_of_identical_subflows_is_their_number() {
        let ps = paths(&[(10, 0.010), (10, 0.010), (10, 0.010)]);
        let mut n = nmcc(&ps);
        for j in 0..3 {
            n.on_ack(&ps, j, 100_000);
            n.on_loss(&ps, j, false);
            n.on_ack(&ps, j, 50_000);
        }
        assert!(close(n.loss_time_factor(&ps, 0), 3.0, 1e-12));
        let single = paths(&[(10, 0.010)]);
        let mut n1 = nmcc(&single);
        n1.on_ack(&single, 0, 10_000);
        n1.on_loss(&single, 0, false);
        assert!(close(n1.loss_time_factor(&single, 0), 1.0, 1e-12));
    }

    #[test]
    fn increases_divide_by_m_squared() {
        let ps = paths(&[(10, 0.010), (10, 0.010)]);
        let mut n = nmcc(&ps);
        n.on_ack(&ps, 0, 1000);
        // Two equal paths in congestion avoidance: m² = 2, half of Reno's 100 B.
        assert!(close(n.ca_increase(&ps, 0, 1000), 50.0, 1e-12));
    }

    #[test]
    fn timeout_makes_a_path_inactive_until_its_next_ack() {
        let ps = paths(&[(10, 0.005), (10, 0.010)]);
        let mut n = nmcc(&ps);
        n.on_loss(&ps, 0, true);
        assert_eq!(n.estimate_m2(&ps, 1), 1.0, "only path 1 counts");
        n.on_ack(&ps, 0, 1000);
        assert!(close(n.m2(&ps, 0), 1.25, 1e-12));
    }

    #[test]
    fn a_retransmission_timeout_reaches_the_coupling_and_resets_the_shadow_window() {
        use crate::{CongestionEvent, MultipathController, WindowConfig, Windows};
        let mut w = Windows::new(Nmcc::new(NmccConfig::default()), WindowConfig::default());
        let a = w.add_path(1000);
        let _b = w.add_path(1000);
        w.on_congestion_event(
            a,
            CongestionEvent::Timeout {
                flight_bytes: 50_000,
                repeated: false,
            },
        );
        let s = &w.coupling().per_path[0];
        assert!(s.inactive, "the is-active rule sees the timeout");
        assert!(
            s.reset_shadow,
            "the shadow window restarts from cwnd at the next ACK"
        );
        assert_eq!(s.losses, 1);
    }

    #[test]
    fn one_cumulative_ack_after_a_timeout_grows_slow_start_by_one_segment_at_most() {
        use crate::{AckSample, CongestionEvent, MultipathController, WindowConfig, Windows};
        use pathpool_core::{Dur, Time};
        let mut w = Windows::new(Nmcc::new(NmccConfig::default()), WindowConfig::default());
        let a = w.add_path(1460);
        let b = w.add_path(1460);
        let ack = |w: &mut Windows<Nmcc>, path, acked_bytes| {
            w.on_ack(
                path,
                &AckSample {
                    now: Time::from_ms(10),
                    acked_bytes,
                    rtt_sample: Some(Dur::from_ms(20)),
                    one_way_delay: None,
                    srtt: Dur::from_ms(20),
                    flight_bytes: 0,
                },
            );
        };
        ack(&mut w, a, 1460);
        ack(&mut w, b, 1460);
        w.on_congestion_event(
            a,
            CongestionEvent::Timeout {
                flight_bytes: 4 * 1460,
                repeated: false,
            },
        );
        w.path_mut(a).ssthresh = 200 * 1460;
        // The retransmission fills the hole below 160 segments the receiver held: one ACK.
        ack(&mut w, a, 160 * 1460);
        assert_eq!(
            w.metrics(a).cwnd,
            2 * 1460,
            "slow start adds abc_limit·SMSS per ACK, not the 160 segments acknowledged"
        );
    }
}
