//! Multi-Priority TCP (Tse 2006, 003-tse-fairness.md §3.2 and §4.2): one subflow, `base`,
//! runs NewReno; every other subflow runs TCP-LP and so takes only spare capacity.
//!
//! A TCP-LP subflow at one segment still sends one probe per round trip, so N of them on a
//! bottleneck shared with the base add N packets per RTT. The thesis charges them to the base:
//! * **Packet Borrowing**: "When a background stream has reduced its window size to one, any
//!   packets that it sends are taken from the traditional TCP by decrementing its congestion
//!   window" (`borrow_unit = "slot"`: the probe holds one of the base's window slots until it
//!   is ACKed or lost, spec §4.2 ambiguity 1, D246; `"decrement"`: cwnd_B −= 1 segment, the
//!   literal text);
//! * **Packet Returning**: "if a TCP-LP flow receives a slow ACK and does not increase its own
//!   window because of delay considerations, the base flow's window is increased by
//!   1/cwnd_B" (`accounting = "borrow-return"`, the default);
//! * **Probe rate limit**: "the total number of probe packets sent by the ensemble of
//!   background flows is rate-limited to one packet per RTT of the traditional flow",
//!   taken round-robin among the background subflows waiting to probe (spec §4.2 ambiguity 4).
//!
//! A lost probe frees its slot and counts only against its own TCP-LP (spec §4.2 ambiguity
//! 2). The transport asks [`MultipathController::may_send`] before sending on a path and
//! reports each packet with [`MultipathController::on_sent`]; `accounting = "naive"` uses
//! neither (the thesis's naive aggregation, Figs 3-1, 3-2).

use pathpool_core::{PathId, Time};
use serde::{Deserialize, Serialize};

use crate::event::{AckSample, CongestionEvent, RecoveryAck, SendView};
use crate::path::{small_to_f64, CcMetrics, PathState};
use crate::reno::Reno;
use crate::tcp_lp::{TcpLp, TcpLpConfig};
use crate::windows::{Coupling, WindowConfig, Windows};
use crate::MultipathController;

/// How the background subflows' probes are charged to the base subflow
/// (`tcp.multi_priority.accounting`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Accounting {
    /// The base NewReno and TCP-LP subflows side by side, nothing charged (Figs 3-1, 3-2).
    Naive,
    /// Packet Borrowing and the probe rate limit.
    Borrow,
    /// Packet Borrowing, the probe rate limit and Packet Returning (the thesis's scheme).
    #[default]
    BorrowReturn,
}

/// What a probe takes from the base window (`tcp.multi_priority.borrow_unit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BorrowUnit {
    /// One segment of the base window, held until the probe is ACKed or lost (D246).
    #[default]
    Slot,
    /// cwnd_B −= 1 segment when the probe is sent, never given back (the literal text).
    Decrement,
}

/// Multi-Priority TCP's parameters (scenario files: `tcp.multi_priority`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MultiPriorityConfig {
    /// Index of the subflow that runs NewReno (default 0, the first).
    pub base: u32,
    /// How probes are charged to the base (default `"borrow-return"`).
    pub accounting: Accounting,
    /// What a probe borrows (default `"slot"`).
    pub borrow_unit: BorrowUnit,
}

/// The per-path rules: NewReno on the base path, TCP-LP on the others.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    base: usize,
    reno: Reno,
    lp: TcpLp,
}

impl Split {
    /// The TCP-LP state of the background paths.
    #[must_use]
    pub fn lp(&self) -> &TcpLp {
        &self.lp
    }
}

impl Coupling for Split {
    fn on_paths_changed(&mut self, paths: &[PathState]) {
        self.lp.on_paths_changed(paths);
    }
    fn on_ack_at(&mut self, now: Time) {
        self.lp.on_ack_at(now);
    }
    fn on_rtt_sample(&mut self, paths: &[PathState], i: usize, rtt: pathpool_core::Dur) {
        if i != self.base {
            self.lp.on_rtt_sample(paths, i, rtt);
        }
    }
    fn on_ack(&mut self, paths: &[PathState], i: usize, acked: u64) {
        if i != self.base {
            self.lp.on_ack(paths, i, acked);
        }
    }
    fn on_one_way_delay(
        &mut self,
        paths: &mut [PathState],
        i: usize,
        owd: pathpool_core::Dur,
        now: Time,
    ) {
        if i != self.base {
            self.lp.on_one_way_delay(paths, i, owd, now);
        }
    }
    fn slow_start(&mut self, paths: &mut [PathState], i: usize, acked: u64, abc_limit: u64) {
        if i == self.base {
            self.reno.slow_start(paths, i, acked, abc_limit);
        } else {
            self.lp.slow_start(paths, i, acked, abc_limit);
        }
    }
    fn congestion_avoidance(&mut self, paths: &mut [PathState], i: usize, acked: u64) {
        if i == self.base {
            self.reno.congestion_avoidance(paths, i, acked);
        } else {
            self.lp.congestion_avoidance(paths, i, acked);
        }
    }
    fn alg_state(&self, paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        if i == self.base {
            Some(("borrowing_base", 1.0))
        } else {
            self.lp.alg_state(paths, i)
        }
    }
}

/// Multi-Priority TCP: the per-path windows and the ensemble's probe accounting.
#[derive(Clone, Debug)]
pub struct MultiPriority {
    inner: Windows<Split>,
    config: MultiPriorityConfig,
    /// Per path: a probe is outstanding (sent at one segment, not yet ACKed or lost).
    probe_out: Vec<bool>,
    /// Probes outstanding that hold a base slot (`borrow_unit = "slot"`).
    borrowed: u64,
    /// When the last probe left (the limit of one per base srtt).
    last_probe: Option<Time>,
    /// The background path whose turn to probe comes first (round-robin, D247).
    next_probe: usize,
}

impl MultiPriority {
    /// The scheme with `config`, TCP-LP `lp` on the background paths, and `window` for all.
    #[must_use]
    pub fn new(config: MultiPriorityConfig, lp: TcpLpConfig, window: WindowConfig) -> Self {
        let reno = Reno::new(window.ca_increase);
        let split = Split {
            base: config.base as usize,
            reno,
            lp: TcpLp::new(lp, reno),
        };
        MultiPriority {
            inner: Windows::new(split, window),
            config,
            probe_out: Vec::new(),
            borrowed: 0,
            last_probe: None,
            next_probe: 0,
        }
    }

    /// The per-path windows.
    #[must_use]
    pub fn windows(&self) -> &Windows<Split> {
        &self.inner
    }

    /// Probes outstanding that hold a base slot.
    #[must_use]
    pub fn borrowed(&self) -> u64 {
        self.borrowed
    }

    fn base(&self) -> usize {
        self.config.base as usize
    }

    fn charges(&self) -> bool {
        self.config.accounting != Accounting::Naive
    }

    /// Whether background path `i` is at one segment: what it sends is a probe.
    fn probing(&self, i: usize) -> bool {
        i != self.base()
            && self
                .inner
                .paths()
                .get(i)
                .is_some_and(|p| p.active && TcpLp::in_probe_mode(self.inner.paths(), i))
    }

    /// Whether background path `j` waits to probe: at one segment, nothing in flight, no
    /// probe outstanding, something to send.
    fn waits_to_probe(&self, j: usize, view: &impl Fn(PathId) -> SendView) -> bool {
        let v = view(PathId(j as u32));
        self.probing(j) && !self.probe_out[j] && v.flight_bytes == 0 && v.has_data
    }

    /// The background path that may send a probe at `now`, if one may: at least one base
    /// srtt after the last probe (D247: the base's smoothed RTT when the next probe asks;
    /// none before its first sample), the first waiting path from `next_probe` on
    /// (round-robin), and a base slot free for it (spec §4.2 pseudo-code `inflight_B +
    /// borrowed < cwnd_B`; ambiguity 3: with cwnd_B full the probe waits).
    fn probe_due(&self, now: Time, view: &impl Fn(PathId) -> SendView) -> Option<usize> {
        let b = self.base();
        let base = self.inner.paths().get(b).filter(|p| p.active)?;
        if self
            .last_probe
            .is_some_and(|t| now.saturating_since(t) < base.srtt)
        {
            return None;
        }
        let n = self.probe_out.len();
        let turn = (0..n)
            .map(|k| (self.next_probe + k) % n)
            .find(|&j| self.waits_to_probe(j, view))?;
        let base_id = PathId(b as u32);
        let room = view(base_id).flight_bytes + (self.borrowed + 1) * base.mss
            <= self.inner.window(base_id);
        room.then_some(turn)
    }

    /// Path `i`'s probe has been ACKed or lost: its slot is free.
    fn release(&mut self, i: usize) {
        if let Some(out) = self.probe_out.get_mut(i) {
            if *out {
                *out = false;
                if self.config.borrow_unit == BorrowUnit::Slot {
                    self.borrowed -= 1;
                }
            }
        }
    }
}

impl MultipathController for MultiPriority {
    fn add_path(&mut self, mss_bytes: u64) -> PathId {
        self.probe_out.push(false);
        self.inner.add_path(mss_bytes)
    }

    fn remove_path(&mut self, path: PathId) {
        self.release(path.index());
        self.inner.remove_path(path);
    }

    fn on_ack(&mut self, path: PathId, ack: &AckSample) {
        let i = path.index();
        let probe_acked = ack.acked_bytes > 0 && self.probe_out.get(i).copied().unwrap_or(false);
        self.inner.on_ack(path, ack);
        if !probe_acked {
            return;
        }
        self.release(i);
        // Packet Returning (spec §4.2): a probe ACK on which TCP-LP did not grow adds
        // 1/cwnd_B segment to the base, what the base would have gained had it sent the
        // packet; not while the base is in recovery, where NewReno does not grow (D246).
        let slow = self.inner.coupling().lp.path(i).holds_growth();
        let b = self.base();
        if self.config.accounting == Accounting::BorrowReturn && slow {
            if let Some(p) = self
                .inner
                .paths()
                .get(b)
                .filter(|p| p.active && !p.in_recovery)
            {
                let inc = small_to_f64(p.mss) * small_to_f64(p.mss) / small_to_f64(p.cwnd);
                self.inner.path_mut(PathId(b as u32)).add_bytes(inc);
            }
        }
    }

    fn on_congestion_event(&mut self, path: PathId, event: CongestionEvent) {
        // A lost probe frees its slot and counts only against its own TCP-LP (spec §4.2
        // ambiguity 2): the base is not reduced for a loss on another path.
        self.release(path.index());
        self.inner.on_congestion_event(path, event);
    }

    fn on_recovery_ack(&mut self, path: PathId, ack: RecoveryAck) {
        self.inner.on_recovery_ack(path, ack);
    }

    fn set_group(&mut self, path: PathId, group: u32) {
        self.inner.set_group(path, group);
    }

    // Always inlined: `AnyController::window` is in every TCP sender's transmission path, and
    // a call in one of its arms makes those functions save six registers on every call, for
    // every controller (+20 instructions a packet on dumbbell-n100, 2026-11-27).
    #[inline(always)]
    fn window(&self, path: PathId) -> u64 {
        let w = self.inner.window(path);
        if path.index() == self.base() && self.borrowed > 0 {
            // The slots the outstanding probes hold (spec §4.2 pseudo-code: base_can_send
            // while inflight_B + borrowed < cwnd_B).
            let mss = self.inner.paths()[path.index()].mss;
            return w.saturating_sub(self.borrowed * mss);
        }
        w
    }

    fn limit_window(&mut self, path: PathId, max_bytes: u64) {
        self.inner.limit_window(path, max_bytes);
    }

    fn penalise(&mut self, path: PathId) {
        self.inner.penalise(path);
    }

    fn metrics(&self, path: PathId) -> CcMetrics {
        self.inner.metrics(path)
    }

    fn may_send(&self, path: PathId, now: Time, view: impl Fn(PathId) -> SendView) -> bool {
        let i = path.index();
        if !self.charges() {
            return true;
        }
        if i == self.base() {
            // A due probe goes before the base takes the free slot: a background TCP-LP at
            // one segment sends as soon as its window allows (D247).
            return self.probe_due(now, &view).is_none();
        }
        !self.probing(i) || self.probe_due(now, &view) == Some(i)
    }

    fn on_sent(&mut self, path: PathId, now: Time) {
        let i = path.index();
        if !self.charges() || !self.probing(i) {
            return;
        }
        if !self.probe_out[i] {
            self.probe_out[i] = true;
            if self.config.borrow_unit == BorrowUnit::Slot {
                self.borrowed += 1;
            }
        }
        if self.config.borrow_unit == BorrowUnit::Decrement {
            let b = PathId(self.config.base);
            if let Some(p) = self.inner.paths().get(b.index()) {
                let cwnd = p.cwnd.saturating_sub(p.mss).max(p.mss);
                self.inner.path_mut(b).cwnd = cwnd;
            }
        }
        self.last_probe = Some(now);
        self.next_probe = (i + 1) % self.probe_out.len();
    }

    fn gates_sending(&self) -> bool {
        self.charges()
    }
}

#[cfg(test)]
#[path = "multi_priority_tests.rs"]
mod tests;
