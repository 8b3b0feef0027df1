//! The window framework shared by every loss-based controller.
//!
//! [`Windows`] owns the per-path [`PathState`]s and applies the rules every loss-based TCP
//! controller shares; a [`Coupling`] supplies the rest. This follows the split of neqo's
//! `ClassicCongestionController<S, T>`: the framework is written and tested once, and each
//! algorithm is one short file.

use pathpool_core::{Dur, PathId, Time};
use serde::{Deserialize, Serialize};

use crate::event::{AckSample, CongestionEvent, RecoveryAck};
use crate::path::{CcMetrics, PathState};
use crate::MultipathController;

/// What the window becomes when a full ACK ends fast recovery (RFC 6582 §3.2 step 3 offers
/// both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryExit {
    /// `cwnd = ssthresh` (option 2; the classic choice, ns-2's NewReno by default; htsim uses
    /// option 1, D16).
    #[default]
    Ssthresh,
    /// `cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)` (option 1; avoids a burst).
    FlightSize,
}

/// How Reno's congestion avoidance turns acknowledged bytes into window (scenario files:
/// `tcp.ca_increase`). It is defined here, beside the [`WindowConfig`] that carries it, and
/// read by [`Reno`](crate::Reno): the framework imports no algorithm (issue 19 broke the
/// `reno.rs ↔ windows.rs` cycle so).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaIncrease {
    /// RFC 3465 §2.1: count acknowledged bytes and add one SMSS when they reach cwnd. The
    /// extra packet of a round then leaves at the ACK that completes a window, which in an
    /// exactly ACK-clocked flow is the last of its burst.
    #[default]
    ByteCounting,
    /// RFC 5681 §3.1 eq. 3: add `bytes_acked · SMSS / cwnd` on every ACK, the fraction carried
    /// to the next (htsim's `TcpSrc`, ns-3's `TcpNewReno`).
    PerAck,
}

/// The unit a window keeps across a loss (scenario files: `tcp.window_unit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowUnit {
    /// Bytes: a loss's rule sees the window with its fraction of a segment and leaves one
    /// (`ssthresh` may be 2.5 segments). The simulator's own model.
    #[default]
    Byte,
    /// Whole segments, as Linux keeps `snd_cwnd` and `snd_ssthresh`: the fraction a window
    /// had grown is dropped before the loss's rule sees it (the kernel resets its
    /// congestion-avoidance counter on entering recovery), and the new threshold is rounded
    /// down to whole segments, at least one (D348).
    Segment,
}

/// Window parameters common to all loss-based controllers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowConfig {
    /// Initial window in segments (RFC 6928: 10).
    #[serde(default = "WindowConfig::default_initial_window")]
    pub initial_window: u64,
    /// Initial slow-start threshold in segments; `None` is infinite (RFC 5681 §3.1: "SHOULD
    /// be set arbitrarily high"). htsim's `TcpSrc` starts at 100 segments.
    #[serde(default)]
    pub initial_ssthresh: Option<u64>,
    /// Appropriate byte counting limit L in segments for slow start: `cwnd += min(N, L·SMSS)`
    /// per ACK (RFC 5681 §3.1 uses L = 1; RFC 3465 allows up to 2).
    #[serde(default = "WindowConfig::default_abc_limit")]
    pub abc_limit: u64,
    /// Window after a retransmission timeout in segments (RFC 5681 §3.1 loss window: 1).
    #[serde(default = "WindowConfig::default_loss_window")]
    pub loss_window: u64,
    /// Window after a full ACK ends fast recovery.
    #[serde(default)]
    pub recovery_exit: RecoveryExit,
    /// How the Reno rule (NewReno, Uncoupled, and NMCC on a path alone in its group) grows a
    /// window in congestion avoidance.
    #[serde(default)]
    pub ca_increase: CaIncrease,
    /// What a loss leaves of a fraction of a segment.
    #[serde(default)]
    pub window_unit: WindowUnit,
}

impl WindowConfig {
    fn default_initial_window() -> u64 {
        10
    }
    fn default_abc_limit() -> u64 {
        1
    }
    fn default_loss_window() -> u64 {
        1
    }
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            initial_window: Self::default_initial_window(),
            initial_ssthresh: None,
            abc_limit: Self::default_abc_limit(),
            loss_window: Self::default_loss_window(),
            recovery_exit: RecoveryExit::default(),
            ca_increase: CaIncrease::default(),
            window_unit: WindowUnit::default(),
        }
    }
}

/// What distinguishes one loss-based algorithm from another. Every method sees all paths of
/// the connection so coupled algorithms can read them; paths with `active == false` must be
/// ignored in sums over the connection.
pub trait Coupling {
    /// Whether path `i` is in slow start (`cwnd < ssthresh` unless the algorithm says
    /// otherwise).
    fn in_slow_start(&self, paths: &[PathState], i: usize) -> bool {
        paths[i].cwnd < paths[i].ssthresh
    }
    /// Grows path `i` in slow start for `acked` new bytes (RFC 5681 §3.1 with the byte
    /// counting limit of RFC 3465 §2.2).
    fn slow_start(&mut self, paths: &mut [PathState], i: usize, acked: u64, abc_limit: u64) {
        let p = &mut paths[i];
        p.cwnd += acked.min(abc_limit * p.mss);
    }
    /// Bytes (fractional, possibly negative) path `i` gains in congestion avoidance for
    /// `acked` newly acknowledged bytes. The default is Reno's `acked·SMSS/cwnd`
    /// (RFC 5681 eq. 3 scaled by byte counting).
    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        let p = &paths[i];
        acked as f64 * p.mss as f64 / p.cwnd as f64
    }
    /// Grows path `i` in congestion avoidance for `acked` new bytes.
    fn congestion_avoidance(&mut self, paths: &mut [PathState], i: usize, acked: u64) {
        let inc = self.ca_increase(paths, i, acked);
        paths[i].add_bytes(inc);
    }
    /// Sees the RTT sample of every ACK of new data on path `i` that carries one (in recovery
    /// too), just before [`Coupling::on_ack`]. Delay-based algorithms ([`Wvegas`]) build their
    /// estimates from these; the smoothed RTT is in [`PathState::srtt`] already.
    ///
    /// [`Wvegas`]: crate::Wvegas
    fn on_rtt_sample(&mut self, _paths: &[PathState], _i: usize, _rtt: Dur) {}
    /// Sees the arrival time of every ACK of new data, before anything else of it.
    /// Time-based algorithms ([`Cubic`]) read their clock from it.
    ///
    /// [`Cubic`]: crate::Cubic
    fn on_ack_at(&mut self, _now: Time) {}
    /// Sees the one-way delay of every ACK of new data on path `i` that carries one (in
    /// recovery too), after [`Coupling::on_ack`] and before the window grows. Delay-based
    /// low-priority algorithms ([`TcpLp`]) may shrink the window here; the sample includes an
    /// unknown constant clock offset, so only its changes mean anything.
    ///
    /// [`TcpLp`]: crate::TcpLp
    fn on_one_way_delay(&mut self, _paths: &mut [PathState], _i: usize, _owd: Dur, _now: Time) {}
    /// Sees every ACK of new data on path `i` (in recovery too), before the window grows.
    fn on_ack(&mut self, _paths: &[PathState], _i: usize, _acked: u64) {}
    /// Sees every loss on path `i` before `ssthresh_after_loss` (`timeout` for an RTO).
    fn on_loss(&mut self, _paths: &[PathState], _i: usize, _timeout: bool) {}
    /// The new ssthresh of path `i` after a loss with `flight` bytes outstanding
    /// (RFC 5681 eq. 4: `max(FlightSize/2, 2·SMSS)`).
    fn ssthresh_after_loss(&mut self, paths: &[PathState], i: usize, flight: u64) -> u64 {
        (flight / 2).max(2 * paths[i].mss)
    }
    /// Path `i`'s window was capped at `max_bytes` because the sender cannot use more
    /// ([`MultipathController::limit_window`]), after its `cwnd` was lowered to it. An
    /// algorithm that derives `cwnd` from state of its own ([`BilevelTcp`]) caps that state
    /// here, so that it does not grow past what can be used and write a larger `cwnd` back.
    ///
    /// [`BilevelTcp`]: crate::BilevelTcp
    fn on_window_limited(&mut self, _paths: &mut [PathState], _i: usize, _max_bytes: u64) {}
    /// Called whenever a path is added or removed.
    fn on_paths_changed(&mut self, _paths: &[PathState]) {}
    /// One algorithm-specific quantity for traces, if any.
    fn alg_state(&self, _paths: &[PathState], _i: usize) -> Option<(&'static str, f64)> {
        None
    }
}

/// The connection-level controller: per-path windows driven by a [`Coupling`].
#[derive(Clone, Debug)]
pub struct Windows<A> {
    paths: Vec<PathState>,
    alg: A,
    config: WindowConfig,
}

impl<A: Coupling> Windows<A> {
    /// A controller with no paths yet.
    #[must_use]
    pub fn new(alg: A, config: WindowConfig) -> Self {
        Windows {
            paths: Vec::new(),
            alg,
            config,
        }
    }
    /// Every path's state, indexed by `PathId`.
    #[must_use]
    pub fn paths(&self) -> &[PathState] {
        &self.paths
    }
    /// Mutable access to one path's state, for tests that set up a situation directly.
    pub fn path_mut(&mut self, path: PathId) -> &mut PathState {
        &mut self.paths[path.index()]
    }
    /// The algorithm.
    #[must_use]
    pub fn coupling(&self) -> &A {
        &self.alg
    }
    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &WindowConfig {
        &self.config
    }

    /// Path `i`'s new ssthresh after a loss with `flight_bytes` outstanding, in the
    /// configured [`WindowUnit`].
    fn loss_ssthresh(&mut self, i: usize, flight_bytes: u64) -> u64 {
        if self.config.window_unit == WindowUnit::Segment {
            // Linux's `snd_cwnd` holds whole segments; the growth toward the next one sits in
            // a counter that entering recovery clears (`tcp_enter_recovery`, `tcp_enter_loss`).
            let p = &mut self.paths[i];
            p.cwnd = (p.cwnd / p.mss * p.mss).max(p.mss);
            p.frac = 0.0;
        }
        let ssthresh = self.alg.ssthresh_after_loss(&self.paths, i, flight_bytes);
        match self.config.window_unit {
            WindowUnit::Byte => ssthresh,
            WindowUnit::Segment => {
                let mss = self.paths[i].mss;
                (ssthresh / mss * mss).max(mss)
            }
        }
    }
}

impl<A: Coupling> MultipathController for Windows<A> {
    fn add_path(&mut self, mss_bytes: u64) -> PathId {
        let id = PathId(self.paths.len() as u32);
        let mut path = PathState::new(mss_bytes, self.config.initial_window * mss_bytes);
        if let Some(segments) = self.config.initial_ssthresh {
            path.ssthresh = segments.saturating_mul(mss_bytes);
        }
        self.paths.push(path);
        self.alg.on_paths_changed(&self.paths);
        id
    }

    fn remove_path(&mut self, path: PathId) {
        self.paths[path.index()].active = false;
        self.alg.on_paths_changed(&self.paths);
    }

    fn on_ack(&mut self, path: PathId, ack: &AckSample) {
        let i = path.index();
        self.alg.on_ack_at(ack.now);
        let p = &mut self.paths[i];
        p.srtt = ack.srtt;
        if !p.active || ack.acked_bytes == 0 {
            return;
        }
        if let Some(rtt) = ack.rtt_sample {
            self.alg.on_rtt_sample(&self.paths, i, rtt);
        }
        self.alg.on_ack(&self.paths, i, ack.acked_bytes);
        if let Some(owd) = ack.one_way_delay {
            self.alg.on_one_way_delay(&mut self.paths, i, owd, ack.now);
        }
        if self.paths[i].in_recovery {
            return;
        }
        if self.alg.in_slow_start(&self.paths, i) {
            self.alg
                .slow_start(&mut self.paths, i, ack.acked_bytes, self.config.abc_limit);
        } else {
            self.alg
                .congestion_avoidance(&mut self.paths, i, ack.acked_bytes);
        }
    }

    fn on_congestion_event(&mut self, path: PathId, event: CongestionEvent) {
        let i = path.index();
        match event {
            CongestionEvent::FastRetransmit { flight_bytes }
            | CongestionEvent::SackRecovery { flight_bytes } => {
                self.alg.on_loss(&self.paths, i, false);
                // RFC 5681 §3.2 steps 2-3: ssthresh from the flight size, cwnd = ssthresh +
                // 3·SMSS (the three segments that left the network with the dup ACKs); with
                // SACK cwnd = ssthresh (RFC 6675 §5 step 4.2).
                let ssthresh = self.loss_ssthresh(i, flight_bytes);
                let p = &mut self.paths[i];
                p.ssthresh = ssthresh;
                p.cwnd = ssthresh.max(p.mss);
                p.inflation = match event {
                    CongestionEvent::FastRetransmit { .. } => 3 * p.mss as i64,
                    _ => 0,
                };
                p.in_recovery = true;
                p.ca_credit = 0;
            }
            CongestionEvent::Timeout {
                flight_bytes,
                repeated,
            } => {
                self.alg.on_loss(&self.paths, i, true);
                // RFC 5681 §3.1: ssthresh from eq. 4 unless the segment had already been
                // retransmitted by the timer, then cwnd = loss window. A timeout during fast
                // recovery ends the same loss event, whose reduction is already made: the
                // flight then includes what window inflation sent, and halving it would raise
                // ssthresh above what the loss allowed (Linux `tcp_enter_loss` likewise
                // "reduce[s] ssthresh if it has not yet been made inside this window").
                if !repeated && !self.paths[i].in_recovery {
                    self.paths[i].ssthresh = self.loss_ssthresh(i, flight_bytes);
                }
                let p = &mut self.paths[i];
                p.cwnd = self.config.loss_window.max(1) * p.mss;
                p.inflation = 0;
                p.in_recovery = false;
                p.ca_credit = 0;
            }
        }
    }

    fn on_recovery_ack(&mut self, path: PathId, ack: RecoveryAck) {
        let exit = self.config.recovery_exit;
        let p = &mut self.paths[path.index()];
        if !p.in_recovery {
            return;
        }
        match ack {
            // RFC 5681 §3.2 step 4: inflate by one segment per further duplicate ACK.
            RecoveryAck::Duplicate => p.inflation += p.mss as i64,
            // RFC 6582 §3.2 step 3 (partial): deflate by the newly acknowledged data and add
            // back one SMSS if at least one SMSS was acknowledged.
            RecoveryAck::Partial { acked_bytes } => {
                p.inflation -= acked_bytes as i64;
                if acked_bytes >= p.mss {
                    p.inflation += p.mss as i64;
                }
            }
            // RFC 6582 §3.2 step 3 (full): deflate and leave recovery.
            RecoveryAck::Full { flight_bytes } => {
                p.inflation = 0;
                p.in_recovery = false;
                p.cwnd = match exit {
                    RecoveryExit::Ssthresh => p.ssthresh,
                    RecoveryExit::FlightSize => p.ssthresh.min(flight_bytes.max(p.mss) + p.mss),
                }
                .max(p.mss);
            }
        }
    }

    fn set_group(&mut self, path: PathId, group: u32) {
        self.paths[path.index()].group = group;
        self.alg.on_paths_changed(&self.paths);
    }

    fn window(&self, path: PathId) -> u64 {
        self.paths[path.index()].send_window()
    }

    fn limit_window(&mut self, path: PathId, max_bytes: u64) {
        let p = &mut self.paths[path.index()];
        let max = max_bytes.max(p.mss);
        p.cwnd = p.cwnd.min(max);
        self.alg
            .on_window_limited(&mut self.paths, path.index(), max);
    }

    fn penalise(&mut self, path: PathId) {
        let p = &mut self.paths[path.index()];
        if p.in_recovery {
            return;
        }
        p.cwnd = (p.cwnd / 2).max(p.mss);
        p.ssthresh = p.cwnd;
        p.ca_credit = 0;
        p.frac = 0.0;
    }

    fn metrics(&self, path: PathId) -> CcMetrics {
        let p = &self.paths[path.index()];
        CcMetrics {
            cwnd: p.cwnd,
            ssthresh: p.ssthresh,
            in_recovery: p.in_recovery,
            alg_state: self.alg.alg_state(&self.paths, path.index()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Balia, Reno};

    const MSS: u64 = 1000;

    fn two_balia_paths(unit: WindowUnit) -> Windows<Balia> {
        let config = WindowConfig {
            window_unit: unit,
            ..WindowConfig::default()
        };
        let mut w = Windows::new(Balia, config);
        for (k, cwnd) in [10_700, 10_000].into_iter().enumerate() {
            let id = w.add_path(MSS);
            let p = w.path_mut(id);
            p.cwnd = cwnd;
            p.ssthresh = 5 * MSS;
            p.srtt = Dur::from_ms(10);
            assert_eq!(id.index(), k);
        }
        w
    }

    fn loss(w: &mut impl MultipathController, path: u32, flight_bytes: u64) {
        w.on_congestion_event(PathId(path), CongestionEvent::SackRecovery { flight_bytes });
    }

    #[test]
    fn whole_segments_drop_the_fraction_before_the_rule_and_round_its_result_down() {
        // BALIA, equal RTTs. Path 1 first: the slower, its cut is 1.07 halves (max x / x =
        // 10 700 / 10 000), 4 650 B left; then path 0, now the faster (α = 1), halves.
        let mut bytes = two_balia_paths(WindowUnit::Byte);
        loss(&mut bytes, 1, 0);
        loss(&mut bytes, 0, 0);
        assert_eq!(bytes.paths()[1].ssthresh, 4650);
        assert_eq!(bytes.paths()[0].ssthresh, 5350);
        // In whole segments path 1's 4 650 B is 4 segments, and path 0's 10 700 B is 10
        // segments to the rule: 5 left.
        let mut segments = two_balia_paths(WindowUnit::Segment);
        loss(&mut segments, 1, 0);
        loss(&mut segments, 0, 0);
        assert_eq!(segments.paths()[1].ssthresh, 4 * MSS);
        assert_eq!(segments.paths()[0].ssthresh, 5 * MSS);
        assert_eq!(segments.window(PathId(0)), 5 * MSS);
    }

    #[test]
    fn whole_segments_round_reno_and_a_timeout_down_and_keep_one_segment() {
        for (unit, half_of_five) in [(WindowUnit::Byte, 2500), (WindowUnit::Segment, 2000)] {
            let config = WindowConfig {
                window_unit: unit,
                ..WindowConfig::default()
            };
            let mut w = Windows::new(Reno::default(), config);
            w.add_path(MSS);
            loss(&mut w, 0, 5 * MSS);
            assert_eq!(w.paths()[0].ssthresh, half_of_five, "{unit:?}");
            let mut t = Windows::new(Reno::default(), config);
            t.add_path(MSS);
            t.on_congestion_event(
                PathId(0),
                CongestionEvent::Timeout {
                    flight_bytes: 5 * MSS,
                    repeated: false,
                },
            );
            assert_eq!(t.paths()[0].ssthresh, half_of_five, "{unit:?}");
            assert_eq!(t.window(PathId(0)), MSS, "{unit:?}: the loss window");
        }
        // A window below one segment (only a test can make one) still leaves one.
        let mut w = two_balia_paths(WindowUnit::Segment);
        w.path_mut(PathId(1)).cwnd = 600;
        loss(&mut w, 1, 0);
        assert_eq!(w.paths()[1].ssthresh, MSS);
    }
}
