//! TCP-LP, TCP Low Priority (Kuzmanovic & Knightly, INFOCOM 2003; the background flow of
//! Tse's Multi-Priority TCP, 003-tse-fairness.md §4.2).
//!
//! TCP-LP takes only spare capacity by reacting to one-way delay before TCP reacts to loss:
//! * the smoothed one-way delay `sowd ← (1 − γ)·sowd + γ·sample`, γ = 1/8, with the
//!   extremes d_min and d_max of the samples;
//! * an early congestion indication (CI) when `sowd > d_min + δ·(d_max − d_min)`, δ = 0.15;
//! * on a CI: cwnd ← 1 segment if the last CI-triggered reduction is less than the inference
//!   time-out itt = 3·srtt old, else cwnd ← max(cwnd/2, 1 segment); the reduction's time is
//!   recorded (paper §3.3; Linux `tcp_lp.c`);
//! * no increase at all inside itt, nor on the ACK that shows the CI; otherwise NewReno, and
//!   losses as NewReno. At cwnd = 1 segment the window lets one probe out per round trip and
//!   grows only if its ACK shows no CI.
//! * a CI also lowers ssthresh to the reduced window, so that growth after itt is the
//!   paper's additive increase (D242).
//!
//! The Linux port's (`net/ipv4/tcp_lp.c`) differing rules are options (D265, D266): ssthresh
//! left alone, itt in the latest RTT sample, d_max the second-largest sample, and the
//! extremes reset after each CI.
//!
//! The one-way delay comes from the ACK's timestamps ([`AckSample::one_way_delay`]); an ACK
//! without it leaves TCP-LP behaving as NewReno. A constant offset between the two hosts'
//! clocks cancels from every comparison above, since each is a difference from d_min.
//!
//! [`AckSample::one_way_delay`]: crate::AckSample::one_way_delay

use pathpool_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::path::PathState;
use crate::reno::Reno;
use crate::windows::Coupling;

/// TCP-LP's parameters (scenario files: `tcp.tcp_lp`). Integers, as the Linux port keeps
/// them, so that configurations compare exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpLpConfig {
    /// δ in percent: the CI threshold's place between d_min and d_max (paper: 15).
    pub delta_percent: u32,
    /// 1/γ, the smoothing of the one-way delay: `sowd ← sowd − sowd/n + sample/n`
    /// (paper and Linux: 8).
    pub gamma_inverse: u32,
    /// The inference time-out itt in smoothed RTTs (paper and Linux: 3).
    pub itt_srtts: u32,
    /// Whether a CI resets d_min to sowd and d_max to 2·sowd, as the Linux port does (its
    /// `owd_min = sowd; owd_max = 2·sowd`), instead of keeping the true extremes of all the
    /// samples as the paper does (default false, D241).
    pub reset_extremes_on_ci: bool,
    /// Whether a CI also lowers ssthresh to the reduced window (at least 2 segments), so that
    /// growth after the inference time-out is the additive increase the paper resumes
    /// (default true, D242, D265). false is the Linux and ns-3 ports, which change only
    /// cwnd: before the first loss the reduced window is below ssthresh and slow-starts.
    pub ci_lowers_ssthresh: bool,
    /// Which round-trip time the inference time-out counts in (D266).
    pub itt_rtt: IttRtt,
    /// Whether d_max is the second-largest sample, as the Linux port's "always forget the
    /// max of the max" (`owd_max_rsv` keeps the largest), instead of the largest as in the
    /// paper (default false, D266).
    pub forget_largest_owd: bool,
}

/// The round-trip time that `itt_srtts` multiplies (`tcp.tcp_lp.itt_rtt`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IttRtt {
    /// The smoothed RTT (RFC 6298 SRTT), TCP's own estimate (default).
    #[default]
    Srtt,
    /// The latest RTT sample, as Linux's `inference = 3·(now − rcv_tsecr)`, renewed on
    /// every ACK that carries one.
    Latest,
}

impl Default for TcpLpConfig {
    fn default() -> Self {
        TcpLpConfig {
            delta_percent: 15,
            gamma_inverse: 8,
            itt_srtts: 3,
            reset_extremes_on_ci: false,
            ci_lowers_ssthresh: true,
            itt_rtt: IttRtt::Srtt,
            forget_largest_owd: false,
        }
    }
}

/// One path's delay estimator and inference state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LpPathState {
    /// Smoothed one-way delay, picoseconds (0 before the first sample).
    sowd_ps: u64,
    /// Smallest and largest one-way delay seen (or since the last reset), picoseconds.
    extremes_ps: Option<(u64, u64)>,
    /// The largest sample, when d_max is the second-largest (`forget_largest_owd`).
    reserve_max_ps: u64,
    /// When the last CI-triggered reduction happened.
    last_reduction: Option<Time>,
    /// Whether the latest sample showed a CI (a "slow" ACK in Tse's words).
    last_ack_slow: bool,
    /// Whether the window may not grow on the ACK being processed.
    hold: bool,
    /// The latest RTT sample (for `IttRtt::Latest`).
    latest_rtt: Option<Dur>,
}

impl LpPathState {
    /// The smoothed one-way delay, if a sample has arrived.
    #[must_use]
    pub fn sowd(&self) -> Option<Dur> {
        self.extremes_ps.map(|_| Dur::from_ps(self.sowd_ps))
    }
    /// Whether the window may not grow on the latest ACK: it showed a CI or came inside itt
    /// (what makes a Multi-Priority probe ACK "slow", spec §4.2).
    #[must_use]
    pub fn holds_growth(&self) -> bool {
        self.hold
    }
    /// d_min and d_max, if a sample has arrived.
    #[must_use]
    pub fn extremes(&self) -> Option<(Dur, Dur)> {
        self.extremes_ps
            .map(|(lo, hi)| (Dur::from_ps(lo), Dur::from_ps(hi)))
    }
}

/// TCP-LP on every path of a connection, each independently.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpLp {
    config: TcpLpConfig,
    reno: Reno,
    paths: Vec<LpPathState>,
    /// The arrival time of the ACK being processed.
    now: Time,
}

impl TcpLp {
    /// TCP-LP with `config`, growing outside itt as `reno` does.
    #[must_use]
    pub fn new(config: TcpLpConfig, reno: Reno) -> Self {
        TcpLp {
            config,
            reno,
            paths: Vec::new(),
            now: Time::ZERO,
        }
    }

    /// Path `i`'s delay state.
    #[must_use]
    pub fn path(&self, i: usize) -> LpPathState {
        self.paths.get(i).copied().unwrap_or_default()
    }

    /// Whether path `i` is in probe mode: its window is one segment, so it sends one packet
    /// per round trip (what a Multi-Priority controller borrows for, spec §4.2).
    #[must_use]
    pub fn in_probe_mode(paths: &[PathState], i: usize) -> bool {
        paths[i].cwnd <= paths[i].mss
    }

    /// Whether path `i`'s latest ACK with a one-way delay showed a CI (a "slow ACK": TCP-LP
    /// did not grow on it; Multi-Priority TCP's packet returning, spec §4.2).
    #[must_use]
    pub fn last_ack_slow(&self, i: usize) -> bool {
        self.path(i).last_ack_slow
    }

    /// The CI threshold `d_min + δ·(d_max − d_min)` in picoseconds.
    fn threshold_ps(&self, lo: u64, hi: u64) -> u64 {
        let span = u128::from(hi - lo) * u128::from(self.config.delta_percent) / 100;
        lo.saturating_add(u64::try_from(span).unwrap_or(u64::MAX))
    }

    /// Whether `now` is inside the inference time-out of path `i`'s last reduction.
    fn within_itt(&self, st: &LpPathState, srtt: Dur, now: Time) -> bool {
        let rtt = match self.config.itt_rtt {
            IttRtt::Srtt => srtt,
            IttRtt::Latest => st.latest_rtt.unwrap_or(srtt),
        };
        let itt = rtt.saturating_mul(u64::from(self.config.itt_srtts));
        st.last_reduction
            .is_some_and(|t| now.saturating_since(t) < itt)
    }
}

impl Coupling for TcpLp {
    fn on_paths_changed(&mut self, paths: &[PathState]) {
        self.paths.resize(paths.len(), LpPathState::default());
    }

    fn on_ack_at(&mut self, now: Time) {
        self.now = now;
    }

    fn on_rtt_sample(&mut self, _paths: &[PathState], i: usize, rtt: Dur) {
        if let Some(st) = self.paths.get_mut(i) {
            st.latest_rtt = Some(rtt);
        }
    }

    fn on_ack(&mut self, paths: &[PathState], i: usize, _acked: u64) {
        // An ACK without a one-way delay says nothing about congestion: only itt holds the
        // window then. One with a delay sets `hold` again in `on_one_way_delay`.
        if let Some(&st) = self.paths.get(i) {
            self.paths[i].hold = self.within_itt(&st, paths[i].srtt, self.now);
        }
    }

    fn on_one_way_delay(&mut self, paths: &mut [PathState], i: usize, owd: Dur, now: Time) {
        if i >= self.paths.len() {
            self.paths.resize(i + 1, LpPathState::default());
        }
        let mut st = self.paths[i];
        let sample_ps = owd.as_ps();
        // Paper §3.1: d_min, d_max over the samples; sowd = (1 − γ)·sowd + γ·sample.
        let n = u64::from(self.config.gamma_inverse.max(1));
        st.sowd_ps = match st.extremes_ps {
            None => sample_ps,
            Some(_) => st.sowd_ps - st.sowd_ps / n + sample_ps / n,
        };
        let (lo, hi) = match st.extremes_ps {
            None => {
                st.reserve_max_ps = sample_ps;
                (sample_ps, sample_ps)
            }
            Some((lo, hi)) if self.config.forget_largest_owd => {
                // Linux `tcp_lp_rtt_sample`: a new largest sample becomes the reserve and
                // the old reserve d_max, so one outlier never sets the threshold's span.
                let hi = if sample_ps <= hi {
                    hi
                } else if sample_ps > st.reserve_max_ps {
                    std::mem::replace(&mut st.reserve_max_ps, sample_ps)
                } else {
                    sample_ps
                };
                (lo.min(sample_ps), hi)
            }
            Some((lo, hi)) => (lo.min(sample_ps), hi.max(sample_ps)),
        };
        st.extremes_ps = Some((lo, hi));
        let within_itt = self.within_itt(&st, paths[i].srtt, now);
        let ci = st.sowd_ps > self.threshold_ps(lo, hi);
        st.last_ack_slow = ci;
        st.hold = ci || within_itt;
        // Loss recovery owns the window until it ends; the estimators still learn.
        if ci && !paths[i].in_recovery {
            let p = &mut paths[i];
            // Paper §3.3: a second CI inside itt sends cwnd to 1, else halve it.
            p.cwnd = if within_itt {
                p.mss
            } else {
                (p.cwnd / 2).max(p.mss)
            };
            if self.config.ci_lowers_ssthresh {
                // D242: leave slow start at the reduced window, as a loss would.
                p.ssthresh = p.ssthresh.min(p.cwnd.max(2 * p.mss));
            }
            p.ca_credit = 0;
            p.frac = 0.0;
            st.last_reduction = Some(now);
            if self.config.reset_extremes_on_ci {
                st.extremes_ps = Some((st.sowd_ps, st.sowd_ps.saturating_mul(2)));
                st.reserve_max_ps = st.sowd_ps.saturating_mul(2);
            }
        }
        self.paths[i] = st;
    }

    fn slow_start(&mut self, paths: &mut [PathState], i: usize, acked: u64, abc_limit: u64) {
        if !self.path(i).hold {
            let p = &mut paths[i];
            p.cwnd += acked.min(abc_limit * p.mss);
        }
    }

    fn congestion_avoidance(&mut self, paths: &mut [PathState], i: usize, acked: u64) {
        if !self.path(i).hold {
            self.reno.congestion_avoidance(paths, i, acked);
        }
    }

    fn alg_state(&self, _paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        self.path(i)
            .sowd()
            .map(|d| ("sowd_ms", d.as_secs_f64() * 1e3))
    }
}

#[cfg(test)]
#[path = "tcp_lp_tests.rs"]
mod tests;
