//! MPCCP, the PTP paper's multipath congestion control (its §5, eqs. 2–4; spec 004 §4;
//! issue 22): one window per in-use path, in packets, of a receiver-driven NDN consumer.
//!
//! Per path, three TCP-like phases (the paper's Fig. 11):
//! * **Slow start** (the start: cwnd 1, ssthresh ∞): +1 per producer Data, eq. (2) per Data
//!   from an intermediate node (a cache or an aggregating PIT, which arrives early and must
//!   not inflate the window as fast); congestion avoidance at ssthresh.
//! * **Congestion avoidance**: eq. (2) per Data.
//! * A loss in slow start or congestion avoidance: cwnd ← max(β·cwnd, 1) (eq. 4),
//!   ssthresh ← cwnd_bk ← cwnd, n ← 0, **fast recovery**.
//! * **Fast recovery**: eq. (2) and n += 1 per Data; n ≥ cwnd_bk: congestion avoidance. A loss
//!   in fast recovery ("congestion has not finished yet"): cwnd ← cwnd_bk, n ← 0, no further cut.
//! * A retransmission timeout: ssthresh ← max(cwnd/2, 2), cwnd ← 1, slow start; at most once
//!   per RTO however many of the path's packets time out.
//!
//! Eq. (2): cwnd_p += s_p · min(α/Σ_π cwnd_π, 1/cwnd_p), with α by eq. (3) — RFC 6356's LIA
//! alpha ([`crate::lia::alpha_of`]) over the in-use paths' smoothed RTTs — and s_p the RTT
//! scaling of H-TCP: rtt_p/rtt_ref clamped to [0.1, 2], rtt_ref = 100 ms ([`RttScale`] offers
//! the prose's inverse and none; spec 004 §4.7's erratum).

use pathpool_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::lia::alpha_of;

/// How eq. (2) scales the increase by the path's RTT (spec 004 §4.7: the equation and the
/// prose disagree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RttScale {
    /// rtt_p / rtt_ref, as eq. (2) and H-TCP have it (default).
    #[default]
    Equation,
    /// rtt_ref / rtt_p, as the prose says.
    Prose,
    /// No scaling: LIA's increase.
    None,
}

/// MPCCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MpccpConfig {
    /// β of eq. (4), in (0, 1): 0.75 in all the paper's experiments.
    pub beta: f64,
    /// rtt_ref, H-TCP's reference RTT (100 ms; the paper names H-TCP, not the value).
    pub rtt_ref: Dur,
    /// How the increase scales with the path's RTT.
    pub rtt_scale: RttScale,
}

impl Default for MpccpConfig {
    fn default() -> Self {
        MpccpConfig {
            beta: 0.75,
            rtt_ref: Dur::from_ms(100),
            rtt_scale: RttScale::Equation,
        }
    }
}

/// H-TCP's clamp of the RTT scaling factor.
const SCALE_RANGE: (f64, f64) = (0.1, 2.0);
/// The smallest ssthresh a timeout leaves, in packets.
const MIN_SSTHRESH: f64 = 2.0;

/// A path's phase (the paper's Fig. 11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpccpPhase {
    /// Slow start.
    SlowStart,
    /// Congestion avoidance.
    CongestionAvoidance,
    /// Fast recovery.
    FastRecovery,
}

/// One path's window and phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MpccpPath {
    /// The window, packets.
    pub cwnd: f64,
    /// The slow-start threshold, packets.
    pub ssthresh: f64,
    /// The phase.
    pub phase: MpccpPhase,
    /// The window on entering fast recovery.
    pub cwnd_bk: f64,
    /// Data received since entering fast recovery (or since its last loss).
    pub recovered: u64,
    /// Smoothed RTT from producer Data, if any yet.
    pub srtt: Option<Dur>,
    /// Whether the path is in use (it counts in α and Σcwnd).
    pub in_use: bool,
    /// When the last timeout cut the window.
    last_timeout: Option<Time>,
}

impl MpccpPath {
    fn new() -> Self {
        MpccpPath {
            cwnd: 1.0,
            ssthresh: f64::INFINITY,
            phase: MpccpPhase::SlowStart,
            cwnd_bk: 0.0,
            recovered: 0,
            srtt: None,
            in_use: true,
            last_timeout: None,
        }
    }
}

/// The windows of one consumer's paths.
#[derive(Clone, Debug, Default)]
pub struct Mpccp {
    config: MpccpConfig,
    paths: Vec<MpccpPath>,
}

impl Mpccp {
    /// No path yet.
    #[must_use]
    pub fn new(config: MpccpConfig) -> Self {
        Mpccp {
            config,
            paths: Vec::new(),
        }
    }

    /// Adds a path, in use, in slow start with cwnd 1; returns its index.
    pub fn add_path(&mut self) -> usize {
        self.paths.push(MpccpPath::new());
        self.paths.len() - 1
    }

    /// Puts path `p` in or out of use (out of use, it counts in no sum).
    pub fn set_in_use(&mut self, p: usize, in_use: bool) {
        self.paths[p].in_use = in_use;
    }

    /// Path `p`'s smoothed RTT is now `srtt` (from producer Data only, Karn's rule).
    pub fn set_srtt(&mut self, p: usize, srtt: Dur) {
        self.paths[p].srtt = Some(srtt);
    }

    /// Path `p`.
    #[must_use]
    pub fn path(&self, p: usize) -> &MpccpPath {
        &self.paths[p]
    }

    /// Every path.
    #[must_use]
    pub fn paths(&self) -> &[MpccpPath] {
        &self.paths
    }

    /// α of eq. (3) over the in-use paths that have an RTT; 1 (Reno's) if none has.
    #[must_use]
    pub fn alpha(&self) -> f64 {
        alpha_of(
            self.paths
                .iter()
                .filter(|p| p.in_use)
                .filter_map(|p| p.srtt.map(|r| (p.cwnd, r.as_secs_f64()))),
        )
        .unwrap_or(1.0)
    }

    /// Path `p`'s RTT scaling (1 without an RTT yet).
    fn scale(&self, p: usize) -> f64 {
        let Some(rtt) = self.paths[p].srtt.filter(|r| *r > Dur::ZERO) else {
            return 1.0;
        };
        let ratio = rtt.as_secs_f64() / self.config.rtt_ref.as_secs_f64();
        match self.config.rtt_scale {
            RttScale::Equation => ratio.clamp(SCALE_RANGE.0, SCALE_RANGE.1),
            RttScale::Prose => (1.0 / ratio).clamp(SCALE_RANGE.0, SCALE_RANGE.1),
            RttScale::None => 1.0,
        }
    }

    /// Eq. (2)'s increase for path `p` now.
    #[must_use]
    pub fn increase(&self, p: usize) -> f64 {
        let total: f64 = self
            .paths
            .iter()
            .enumerate()
            .filter(|(i, x)| x.in_use || *i == p)
            .map(|(_, x)| x.cwnd)
            .sum();
        self.scale(p) * (self.alpha() / total).min(1.0 / self.paths[p].cwnd)
    }

    /// A Data of path `p` arrived, from the producer or (`from_producer` false) an
    /// intermediate node, and showed no loss.
    pub fn on_data(&mut self, p: usize, from_producer: bool) {
        let inc = self.increase(p);
        let path = &mut self.paths[p];
        match path.phase {
            MpccpPhase::SlowStart => {
                path.cwnd += if from_producer { 1.0 } else { inc };
                if path.cwnd >= path.ssthresh {
                    path.phase = MpccpPhase::CongestionAvoidance;
                }
            }
            MpccpPhase::CongestionAvoidance => path.cwnd += inc,
            MpccpPhase::FastRecovery => {
                path.cwnd += inc;
                path.recovered += 1;
                if path.recovered as f64 >= path.cwnd_bk {
                    path.phase = MpccpPhase::CongestionAvoidance;
                }
            }
        }
    }

    /// Path `p` lost packets (the ordering rule found them; one call per detection).
    pub fn on_loss(&mut self, p: usize) {
        let beta = self.config.beta;
        let path = &mut self.paths[p];
        match path.phase {
            MpccpPhase::SlowStart | MpccpPhase::CongestionAvoidance => {
                path.cwnd = (beta * path.cwnd).max(1.0);
                path.ssthresh = path.cwnd;
                path.cwnd_bk = path.cwnd;
                path.recovered = 0;
                path.phase = MpccpPhase::FastRecovery;
            }
            MpccpPhase::FastRecovery => {
                path.cwnd = path.cwnd_bk;
                path.recovered = 0;
            }
        }
    }

    /// A packet of path `p` timed out at `now`, its RTO being `rto`: the window falls to 1
    /// and slow start begins, unless a timeout did so less than an RTO ago. Returns whether
    /// it did.
    pub fn on_timeout(&mut self, p: usize, now: Time, rto: Dur) -> bool {
        let path = &mut self.paths[p];
        if path.last_timeout.is_some_and(|t| now < t + rto) {
            return false;
        }
        path.last_timeout = Some(now);
        path.ssthresh = (path.cwnd / 2.0).max(MIN_SSTHRESH);
        path.cwnd = 1.0;
        path.recovered = 0;
        path.phase = MpccpPhase::SlowStart;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn with(paths: &[(f64, u64)]) -> Mpccp {
        let mut m = Mpccp::new(MpccpConfig::default());
        for &(cwnd, rtt_ms) in paths {
            let p = m.add_path();
            m.paths[p].cwnd = cwnd;
            m.paths[p].phase = MpccpPhase::CongestionAvoidance;
            m.set_srtt(p, Dur::from_ms(rtt_ms));
        }
        m
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Issue 22, acceptance 1, eq. (2): windows (10, 10) at 100 ms: α = 0.5 and +0.025;
    /// (10, 20) at (100, 200) ms: α = 0.75, +0.025 and +0.05; one path of 8 at 50 ms: α = 1,
    /// +0.0625.
    #[test]
    fn equation_2_worked_values() {
        let m = with(&[(10.0, 100), (10.0, 100)]);
        assert!(close(m.alpha(), 0.5) && close(m.increase(0), 0.025));
        let m = with(&[(10.0, 100), (20.0, 200)]);
        assert!(close(m.alpha(), 0.75), "{}", m.alpha());
        assert!(close(m.increase(0), 0.025) && close(m.increase(1), 0.05));
        let mut m = with(&[(8.0, 50)]);
        assert!(close(m.alpha(), 1.0) && close(m.increase(0), 0.0625));
        m.on_data(0, true);
        assert!(close(m.path(0).cwnd, 8.0625));
    }

    /// Issue 22, acceptance 1, the states: a loss at 20 leaves 15 = cwnd_bk; a loss 5 Data
    /// later goes back to 15; 15 clean Data then reach congestion avoidance; a timeout at 20
    /// leaves ssthresh 10 and cwnd 1.
    #[test]
    fn losses_recovery_and_timeout() {
        let mut m = with(&[(20.0, 100)]);
        m.on_loss(0);
        assert_eq!(m.path(0).phase, MpccpPhase::FastRecovery);
        assert!(close(m.path(0).cwnd, 15.0) && close(m.path(0).cwnd_bk, 15.0));
        assert!(close(m.path(0).ssthresh, 15.0));
        for _ in 0..5 {
            m.on_data(0, true);
        }
        assert!(m.path(0).cwnd > 15.0);
        m.on_loss(0);
        assert!(close(m.path(0).cwnd, 15.0));
        for k in 0..15 {
            assert_eq!(m.path(0).phase, MpccpPhase::FastRecovery, "after {k} Data");
            m.on_data(0, true);
        }
        assert_eq!(m.path(0).phase, MpccpPhase::CongestionAvoidance);
        let mut m = with(&[(20.0, 100)]);
        let now = Time::from_ms(5000);
        assert!(m.on_timeout(0, now, Dur::from_secs(1)));
        assert_eq!(
            (m.path(0).ssthresh, m.path(0).cwnd, m.path(0).phase),
            (10.0, 1.0, MpccpPhase::SlowStart)
        );
        // Another of the path's packets times out within the RTO: nothing more.
        m.paths[0].cwnd = 4.0;
        assert!(!m.on_timeout(0, now + Dur::from_ms(500), Dur::from_secs(1)));
        assert_eq!(m.path(0).cwnd, 4.0);
    }

    #[test]
    fn slow_start_doubles_on_producer_data_and_creeps_on_cached_data() {
        let mut m = Mpccp::new(MpccpConfig::default());
        let p = m.add_path();
        assert_eq!(
            (m.path(p).cwnd, m.path(p).phase),
            (1.0, MpccpPhase::SlowStart)
        );
        m.on_data(p, true);
        assert_eq!(m.path(p).cwnd, 2.0);
        m.on_data(p, false);
        // No RTT yet: scale 1, α 1: min(1/2, 1/2).
        assert_eq!(m.path(p).cwnd, 2.5);
        m.paths[p].ssthresh = 3.0;
        m.on_data(p, true);
        assert_eq!(m.path(p).phase, MpccpPhase::CongestionAvoidance);
        let rtt = |scale, ms| {
            let mut m = Mpccp::new(MpccpConfig {
                rtt_scale: scale,
                ..MpccpConfig::default()
            });
            m.add_path();
            m.set_srtt(0, Dur::from_ms(ms));
            m.scale(0)
        };
        assert_eq!(rtt(RttScale::Equation, 400), 2.0);
        assert_eq!(rtt(RttScale::Equation, 5), 0.1);
        assert_eq!(rtt(RttScale::Prose, 200), 0.5);
        assert_eq!(rtt(RttScale::None, 200), 1.0);
    }

    proptest! {
        /// Issue 22, acceptance 2: cwnd ≥ 1, and each congestion-avoidance increase is at
        /// most the RTT-scaled Reno increase s_p/cwnd_p.
        #[test]
        fn windows_stay_at_least_one_and_grow_no_faster_than_scaled_reno(
            rtts in proptest::collection::vec(10u64..400, 1..4),
            events in proptest::collection::vec((0usize..4, 0u8..4), 0..300),
        ) {
            let mut m = Mpccp::new(MpccpConfig::default());
            for &r in &rtts {
                let p = m.add_path();
                m.set_srtt(p, Dur::from_ms(r));
            }
            let mut now = Time::ZERO;
            for (p, e) in events {
                let p = p % rtts.len();
                now += Dur::from_ms(10);
                let before = *m.path(p);
                match e {
                    0 | 1 => m.on_data(p, e == 0),
                    2 => m.on_loss(p),
                    _ => {
                        m.on_timeout(p, now, Dur::from_ms(200));
                    }
                }
                let after = m.path(p);
                prop_assert!(after.cwnd >= 1.0);
                if e < 2 && before.phase != MpccpPhase::SlowStart {
                    let reno = m.scale(p) / before.cwnd;
                    prop_assert!(after.cwnd - before.cwnd <= reno + 1e-12);
                }
            }
        }
    }
}
