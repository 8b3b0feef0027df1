//! Per-path window state, owned by the connection-level controller.

use pathpool_core::Dur;

/// The congestion state of one path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathState {
    /// Maximum segment size in bytes (SMSS).
    pub mss: u64,
    /// Congestion window in bytes, without fast-recovery inflation.
    pub cwnd: u64,
    /// Slow-start threshold in bytes.
    pub ssthresh: u64,
    /// Fast-recovery window adjustment in bytes (RFC 6582: `ssthresh + 3·SMSS`, `+SMSS` per
    /// duplicate ACK, deflated by partial ACKs); zero outside recovery. Kept apart from `cwnd`
    /// so coupled algorithms always see the real window.
    pub inflation: i64,
    /// Whether the path is in fast recovery.
    pub in_recovery: bool,
    /// Bytes acknowledged in congestion avoidance not yet turned into window (RFC 3465).
    pub ca_credit: u64,
    /// The latest smoothed RTT reported by the transport (zero before the first sample).
    pub srtt: Dur,
    /// Whether the path takes part in the connection (removed paths do not).
    pub active: bool,
    /// Coupling group: coupled algorithms couple only paths with equal groups; a path alone in
    /// its group behaves as an uncoupled TCP (NMCC's hybrid dispatch; default 0 = one group).
    pub group: u32,
    /// Fraction of a byte of window gained but not yet added to `cwnd` (coupled increases are
    /// fractional; keeping the remainder makes them exact over many ACKs).
    pub frac: f64,
}

impl PathState {
    /// A fresh path in slow start with the given initial window and an infinite ssthresh
    /// (RFC 5681 §3.1: "the initial value of ssthresh SHOULD be set arbitrarily high").
    #[must_use]
    pub fn new(mss: u64, initial_window_bytes: u64) -> Self {
        PathState {
            mss,
            cwnd: initial_window_bytes,
            ssthresh: u64::MAX,
            inflation: 0,
            in_recovery: false,
            ca_credit: 0,
            srtt: Dur::ZERO,
            active: true,
            group: 0,
            frac: 0.0,
        }
    }

    /// Smoothed RTT in seconds, if the path has an RTT sample.
    #[must_use]
    pub fn rtt_s(&self) -> Option<f64> {
        (self.srtt.as_ps() > 0).then(|| self.srtt.as_secs_f64())
    }

    /// Adds `bytes` (possibly fractional, possibly negative) to the window, carrying the
    /// fraction to the next call; the window never falls below one segment.
    #[inline]
    pub fn add_bytes(&mut self, bytes: f64) {
        self.frac += bytes;
        let whole = floor(self.frac);
        self.frac -= whole;
        let cwnd = small_to_f64(self.cwnd) + whole;
        self.cwnd = if cwnd < small_to_f64(self.mss) {
            self.mss
        } else if cwnd < TWO_POW_63 {
            // Positive and below 2^63: the signed conversion gives the same integer.
            cwnd as i64 as u64
        } else {
            cwnd as u64
        };
    }

    /// The window the path may have in flight: `cwnd` plus any recovery inflation, at least
    /// one segment.
    #[must_use]
    pub fn send_window(&self) -> u64 {
        let w = self.cwnd as i64 + self.inflation;
        (w.max(self.mss as i64)) as u64
    }
}

/// 2^63 as a double.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// `x as f64` for `x < 2^63` (a window, a segment size or a duration in picoseconds), where
/// the signed conversion gives the same double in one instruction (x86-64 before AVX-512 has
/// no unsigned one). Controllers run these conversions on every ACK.
#[inline]
pub(crate) fn small_to_f64(x: u64) -> f64 {
    debug_assert!(i64::try_from(x).is_ok());
    x as i64 as f64
}

/// `libm::floor(x)`, exactly, with the common case of a positive `x` below 2^63 done by
/// truncation (equal to the floor there) instead of libm's bit manipulation: the window
/// increase of coupled controllers takes one per ACK.
#[inline]
fn floor(x: f64) -> f64 {
    if x > 0.0 && x < TWO_POW_63 {
        x as i64 as f64
    } else {
        libm::floor(x)
    }
}

/// A snapshot of a path's controller state, for traces.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct CcMetrics {
    /// Congestion window in bytes (without recovery inflation).
    pub cwnd: u64,
    /// Slow-start threshold in bytes (`u64::MAX` before the first loss).
    pub ssthresh: u64,
    /// Whether the path is in fast recovery.
    pub in_recovery: bool,
    /// One algorithm-specific quantity (LIA's alpha, NMCC's m, …), if the algorithm has one.
    pub alg_state: Option<(&'static str, f64)>,
}

/// The active paths in path `i`'s coupling group (`i` included when active), in path order.
pub fn group_members(paths: &[PathState], i: usize) -> impl Iterator<Item = usize> + '_ {
    let g = paths[i].group;
    paths
        .iter()
        .enumerate()
        .filter(move |(_, p)| p.active && p.group == g)
        .map(|(j, _)| j)
}
