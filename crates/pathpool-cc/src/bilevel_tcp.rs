//! Bilevel TCP (Tse 2006, thesis §2.3 eq. 2.2; 003-tse-fairness.md §3.3), `cc = "bilevel-tcp"`:
//! a master window cwnd_M over the connection and one child window cwnd_i per subflow, all
//! fractional. Subflow i may have
//! `actualcwnd_i = cwnd_M · cwnd_i / Σ_j cwnd_j` in flight; a loss on i halves both cwnd_i
//! and cwnd_M; an ACK on i adds 1/cwnd_i to cwnd_i and 1/cwnd_M to cwnd_M (each grows as a
//! TCP window would). The master reacts to congestion as one TCP, so the connection is fair
//! on a shared bottleneck; the children set the split, moving traffic off lossy paths.
//!
//! The thesis states only these rules (it built the idea on TFRC instead). What a running TCP
//! needs beyond them is chosen in `docs/decisions.md` D259: both windows slow-start together
//! while cwnd_M is below the master's ssthresh; a retransmission timeout is a loss like any
//! other but a repeated one (no ACK on the path since its last timeout) halves only the child;
//! children may fall to `child_floor_millisegments`, while each path keeps at least one
//! segment in flight (a window-based sender cannot send a fraction of a packet per round
//! trip without pacing); every path is one connection, whatever its coupling group.
//!
//! The windows are kept in bytes; the path's `cwnd` follows its actual window after every
//! change of the master or a child: down at once on every path not in fast recovery (a path
//! in recovery keeps the window its loss set until recovery ends, as NewReno's does), up only
//! on the path an ACK arrived on and by no more than that ACK could grow a TCP window.

use serde::{Deserialize, Serialize};

use crate::path::{small_to_f64, PathState};
use crate::windows::Coupling;

/// Bilevel TCP's parameters (scenario files: `tcp.bilevel_tcp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BilevelTcpConfig {
    /// Smallest child window, in thousandths of a segment (default 10: 0.01 segment). The
    /// thesis lets children fall below one segment "so that excessively poor links do not
    /// excessively penalize the ensemble" but gives no floor (D259).
    pub child_floor_millisegments: u32,
}

impl Default for BilevelTcpConfig {
    fn default() -> Self {
        BilevelTcpConfig {
            child_floor_millisegments: 10,
        }
    }
}

/// The master and child windows of one connection, in any one unit (segments in the
/// thesis's example; bytes in [`BilevelTcp`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BilevelWindows {
    master: f64,
    children: Vec<f64>,
}

impl BilevelWindows {
    /// Master window `master` and the given child windows.
    #[must_use]
    pub fn new(master: f64, children: &[f64]) -> Self {
        BilevelWindows {
            master,
            children: children.to_vec(),
        }
    }

    /// cwnd_M.
    #[must_use]
    pub fn master(&self) -> f64 {
        self.master
    }

    /// cwnd_i of subflow `i`.
    #[must_use]
    pub fn child(&self, i: usize) -> f64 {
        self.children[i]
    }

    /// What subflow `i` may have in flight: `cwnd_M · cwnd_i / Σ_j cwnd_j` over the subflows
    /// `counted` says take part (eq. 2.2).
    #[must_use]
    pub fn actual(&self, i: usize, counted: impl Fn(usize) -> bool) -> f64 {
        let total: f64 = (0..self.children.len())
            .filter(|&j| counted(j))
            .map(|j| self.children[j])
            .sum();
        if total > 0.0 {
            self.master * self.children[i] / total
        } else {
            0.0
        }
    }

    /// An ACK on subflow `i` in congestion avoidance: cwnd_i += unit²/cwnd_i and
    /// cwnd_M += unit²/cwnd_M for `unit` acknowledged (1/cwnd per segment in segments).
    pub fn on_ack(&mut self, i: usize, acked: f64, unit: f64) {
        let c = &mut self.children[i];
        *c += acked * unit / *c;
        self.master += acked * unit / self.master;
    }

    /// A loss on subflow `i`: cwnd_i halved (not below `child_floor`) and, if `master_too`,
    /// cwnd_M halved (not below `master_floor`).
    pub fn on_loss(&mut self, i: usize, master_too: bool, child_floor: f64, master_floor: f64) {
        let c = &mut self.children[i];
        *c = (*c / 2.0).max(child_floor);
        if master_too {
            self.master = (self.master / 2.0).max(master_floor);
        }
    }
}

/// Bilevel TCP as a [`Coupling`] of the window framework.
#[derive(Clone, Debug, PartialEq)]
pub struct BilevelTcp {
    config: BilevelTcpConfig,
    windows: BilevelWindows,
    /// The master's slow-start threshold in bytes (infinite before the first loss unless the
    /// scenario sets `initial_ssthresh`).
    master_ssthresh: f64,
    /// Per path: whether it has timed out with no ACK of new data since (its next timeout is a
    /// repeated one).
    timed_out: Vec<bool>,
}

impl BilevelTcp {
    /// A connection with no paths yet.
    #[must_use]
    pub fn new(config: BilevelTcpConfig) -> Self {
        BilevelTcp {
            config,
            windows: BilevelWindows::new(0.0, &[]),
            master_ssthresh: f64::INFINITY,
            timed_out: Vec::new(),
        }
    }

    /// The master and child windows, in bytes.
    #[must_use]
    pub fn windows(&self) -> &BilevelWindows {
        &self.windows
    }

    fn child_floor(&self, mss: u64) -> f64 {
        small_to_f64(mss) * f64::from(self.config.child_floor_millisegments) / 1000.0
    }

    /// Brings every active path's `cwnd` to its actual window (at least one segment), except
    /// those in fast recovery: down at once, up only on the path that was just acknowledged,
    /// `grown` (path, bytes) at most, as slow start or congestion avoidance lets one ACK
    /// grow a window. A path below its share (after a timeout, or while the master grew on
    /// other paths' ACKs) so regains it with its own ACKs instead of in one burst.
    fn apply(&self, paths: &mut [PathState], grown: Option<(usize, u64)>) {
        for j in 0..paths.len() {
            if !paths[j].active || paths[j].in_recovery {
                continue;
            }
            let actual = self.windows.actual(j, |k| paths[k].active);
            let share = to_bytes(actual).max(paths[j].mss);
            let room = match grown {
                Some((i, bytes)) if i == j => paths[j].cwnd.saturating_add(bytes),
                _ => paths[j].cwnd,
            };
            paths[j].cwnd = share.min(room).max(paths[j].mss);
        }
    }
}

/// A window in bytes, rounded down (finite and non-negative by construction).
fn to_bytes(w: f64) -> u64 {
    if w.is_finite() && w > 0.0 {
        w as u64
    } else {
        0
    }
}

impl Coupling for BilevelTcp {
    fn in_slow_start(&self, _paths: &[PathState], _i: usize) -> bool {
        self.windows.master < self.master_ssthresh
    }

    fn slow_start(&mut self, paths: &mut [PathState], i: usize, acked: u64, abc_limit: u64) {
        // D259: both windows grow by what was acknowledged (RFC 3465's limit L per ACK), so
        // the master doubles per round trip as one TCP's window would.
        let inc = acked.min(abc_limit * paths[i].mss);
        self.windows.master += small_to_f64(inc);
        self.windows.children[i] += small_to_f64(inc);
        self.apply(paths, Some((i, inc)));
    }

    fn congestion_avoidance(&mut self, paths: &mut [PathState], i: usize, acked: u64) {
        let (acked_f, mss) = (small_to_f64(acked), small_to_f64(paths[i].mss));
        self.windows.on_ack(i, acked_f, mss);
        // The path itself grows by at most Reno's acked·SMSS/cwnd (RFC 5681 eq. 3).
        let reno = to_bytes(acked_f * mss / small_to_f64(paths[i].cwnd));
        self.apply(paths, Some((i, reno)));
    }

    fn on_ack(&mut self, _paths: &[PathState], i: usize, _acked: u64) {
        self.timed_out[i] = false;
    }

    fn on_loss(&mut self, paths: &[PathState], i: usize, timeout: bool) {
        // A timeout during fast recovery ends the loss event whose halving is made, and a
        // repeated timeout is the same loss again (RFC 5681 §3.1 holds ssthresh then): the
        // child still halves, so traffic keeps moving off a dead path, but not the master.
        let repeated = timeout && (paths[i].in_recovery || self.timed_out[i]);
        if timeout {
            self.timed_out[i] = true;
        }
        let mss = paths[i].mss;
        self.windows
            .on_loss(i, !repeated, self.child_floor(mss), small_to_f64(mss));
        if !repeated {
            self.master_ssthresh = self.windows.master;
        }
    }

    fn ssthresh_after_loss(&mut self, paths: &[PathState], i: usize, flight: u64) -> u64 {
        // The path's actual window after the halving of `on_loss`: the framework makes it the
        // path's cwnd (NewReno recovery then runs on it); the other paths take their new
        // windows at the next ACK of any path. A path still below its share (regrowing after
        // a timeout) is not given more than Reno's max(FlightSize/2, 2·SMSS) (RFC 5681
        // eq. 4): a loss never sets a window that was never in flight.
        let mss = paths[i].mss;
        let share = to_bytes(self.windows.actual(i, |k| paths[k].active));
        share.min((flight / 2).max(2 * mss)).max(mss)
    }

    fn on_window_limited(&mut self, paths: &mut [PathState], i: usize, max_bytes: u64) {
        // A sender that cannot use its share (the receive window) caps the master so that
        // the share is what it can use (RFC 7661's concern, as `limit_window` does for one
        // window): the master then does not grow on ACKs it cannot turn into packets.
        let actual = self.windows.actual(i, |k| paths[k].active);
        let max = small_to_f64(max_bytes);
        if actual > max {
            self.windows.master =
                (self.windows.master * max / actual).max(small_to_f64(paths[i].mss));
            self.apply(paths, None);
            // The share is now the limit, up to the rounding of the division.
            if !paths[i].in_recovery {
                paths[i].cwnd = max_bytes;
            }
        }
    }

    fn on_paths_changed(&mut self, paths: &[PathState]) {
        if self.windows.children.is_empty() {
            if let Some(first) = paths.first() {
                // The connection starts as one TCP: the master at the first path's initial
                // window, split among the children.
                self.windows.master = small_to_f64(first.cwnd);
                if first.ssthresh != u64::MAX {
                    self.master_ssthresh = small_to_f64(first.ssthresh);
                }
            }
        }
        // Until its first ACK a new path sends its initial window, as every MPTCP subflow
        // does; its child starts there.
        for p in paths.iter().skip(self.windows.children.len()) {
            self.windows.children.push(small_to_f64(p.cwnd));
        }
        self.timed_out.resize(self.windows.children.len(), false);
    }

    fn alg_state(&self, paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        Some((
            "master_segments",
            self.windows.master / small_to_f64(paths[i].mss),
        ))
    }
}

#[cfg(test)]
mod tests {
    use pathpool_core::{Dur, PathId, Time};

    use super::*;
    use crate::event::{AckSample, CongestionEvent, RecoveryAck};
    use crate::windows::{WindowConfig, Windows};
    use crate::MultipathController;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-3
    }

    #[test]
    fn master_twelve_over_children_six_two_two() {
        // Spec §3.3 worked example: 12·6/10, 12·2/10, 12·2/10.
        let mut b = BilevelWindows::new(12.0, &[6.0, 2.0, 2.0]);
        let all = |_| true;
        assert!(close(b.actual(0, all), 7.2));
        assert!(close(b.actual(1, all), 2.4));
        assert!(close(b.actual(2, all), 2.4));
        // A loss on the first: cwnd_1 = 3, cwnd_M = 6, so 6·3/7, 6·2/7, 6·2/7.
        b.on_loss(0, true, 0.01, 1.0);
        assert!(close(b.actual(0, all), 2.571), "{}", b.actual(0, all));
        assert!(close(b.actual(1, all), 1.714));
        assert!(close(b.actual(2, all), 1.714));
        assert_eq!(b.master(), 6.0);
        assert_eq!(b.child(0), 3.0);
    }

    #[test]
    fn an_ack_adds_one_over_each_window() {
        let mut b = BilevelWindows::new(4.0, &[2.0, 5.0]);
        b.on_ack(0, 1.0, 1.0);
        assert_eq!(b.child(0), 2.5);
        assert_eq!(b.child(1), 5.0);
        assert_eq!(b.master(), 4.25);
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

    /// A controller of three 1000-byte paths in congestion avoidance with master 12 and
    /// children 6, 2, 2 segments.
    fn worked_example() -> Windows<BilevelTcp> {
        let alg = BilevelTcp {
            config: BilevelTcpConfig::default(),
            windows: BilevelWindows::new(12_000.0, &[6000.0, 2000.0, 2000.0]),
            master_ssthresh: 0.0,
            timed_out: vec![false; 3],
        };
        let mut c = Windows::new(alg, WindowConfig::default());
        for _ in 0..3 {
            c.add_path(1000);
        }
        c
    }

    #[test]
    fn the_controller_gives_each_path_its_share_and_halves_on_a_loss() {
        let mut c = worked_example();
        // One ACK of nothing new would not move the windows; an ACK of one segment on path 1
        // applies the shares and grows child 1 and the master by 1/cwnd each.
        c.on_ack(PathId(1), &ack(1000));
        let b = c.coupling().windows();
        assert!(close(b.child(1), 2500.0) && close(b.master(), 12_000.0 + 1000.0 / 12.0));
        let share = |i: usize| b.master() * b.child(i) / (6000.0 + 2500.0 + 2000.0);
        for i in 0..3 {
            assert_eq!(c.window(PathId(i as u32)), share(i) as u64, "path {i}");
        }
        // Fast retransmit on path 0: child 0 and the master halve; path 0's window is its new
        // share plus NewReno's three segments of inflation.
        c.on_congestion_event(
            PathId(0),
            CongestionEvent::FastRetransmit { flight_bytes: 7000 },
        );
        let b = c.coupling().windows();
        assert!(close(b.child(0), 3000.0));
        assert!(close(b.master(), (12_000.0 + 1000.0 / 12.0) / 2.0));
        let new_share = b.master() * 3000.0 / (3000.0 + 2500.0 + 2000.0);
        assert_eq!(c.window(PathId(0)), new_share as u64 + 3000);
        // An ACK on path 2 applies the halved master to the paths not in recovery.
        c.on_ack(PathId(2), &ack(1000));
        let b = c.coupling().windows();
        let total = b.child(0) + b.child(1) + b.child(2);
        assert_eq!(
            c.window(PathId(1)),
            (b.master() * b.child(1) / total) as u64
        );
        c.on_recovery_ack(PathId(0), RecoveryAck::Full { flight_bytes: 3000 });
        assert_eq!(c.window(PathId(0)), new_share as u64);
    }

    #[test]
    fn a_repeated_timeout_halves_the_child_only() {
        let mut c = worked_example();
        let timeout = |repeated| CongestionEvent::Timeout {
            flight_bytes: 7000,
            repeated,
        };
        c.on_congestion_event(PathId(0), timeout(false));
        let master = c.coupling().windows().master();
        assert!(close(master, 6000.0));
        assert_eq!(c.window(PathId(0)), 1000, "one segment after a timeout");
        c.on_congestion_event(PathId(0), timeout(true));
        assert!(close(c.coupling().windows().master(), 6000.0));
        assert!(close(c.coupling().windows().child(0), 1500.0));
        // An ACK on the path ends the run of timeouts: the next one halves the master again.
        c.on_ack(PathId(0), &ack(1000));
        c.on_congestion_event(PathId(0), timeout(false));
        assert!(c.coupling().windows().master() < 3100.0);
    }

    #[test]
    fn children_fall_below_a_segment_but_paths_keep_one() {
        let mut c = worked_example();
        for _ in 0..20 {
            c.on_congestion_event(
                PathId(2),
                CongestionEvent::Timeout {
                    flight_bytes: 1000,
                    repeated: true,
                },
            );
        }
        assert!(
            close(c.coupling().windows().child(2), 10.0),
            "the 0.01-segment floor"
        );
        c.on_ack(PathId(0), &ack(1000));
        assert_eq!(c.window(PathId(2)), 1000);
    }

    #[test]
    fn a_window_limit_caps_the_master() {
        let mut c = worked_example();
        c.on_ack(PathId(0), &ack(1000));
        c.limit_window(PathId(0), 3000);
        assert_eq!(c.window(PathId(0)), 3000);
        // The master is scaled so that path 0's share is the limit.
        let b = c.coupling().windows();
        assert!(
            close(b.actual(0, |_| true), 3000.0),
            "{}",
            b.actual(0, |_| true)
        );
        assert!(b.master() < 6000.0);
        c.on_ack(PathId(1), &ack(1000));
        assert!(c.window(PathId(0)) <= 3100, "{}", c.window(PathId(0)));
    }

    #[test]
    fn slow_start_doubles_the_master_and_splits_it() {
        let mut c = Windows::new(
            BilevelTcp::new(BilevelTcpConfig::default()),
            WindowConfig::default(),
        );
        let (p, q) = (c.add_path(1000), c.add_path(1000));
        // The master starts at one initial window (10 segments), shared by the children.
        c.on_ack(p, &ack(1000));
        let total = c.window(p) + c.window(q);
        assert!(
            (10_998..=11_000).contains(&total),
            "{total}: 11 segments, rounded down"
        );
        for _ in 0..10 {
            c.on_ack(q, &ack(1000));
        }
        assert!(close(c.coupling().windows().master(), 21_000.0));
        assert!(close(c.coupling().windows().child(q.index()), 20_000.0));
    }
}
