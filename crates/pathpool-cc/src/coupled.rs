//! Fully coupled congestion control (Kelly & Voice 2005; Han et al. 2006), "COUPLED" in
//! Wischik et al. (NSDI 2011).
//!
//! Per ACK on r the window grows by 1/w_total packets; a loss on r cuts w_r by half of the
//! group's total window, w_r ← max(w_r − w_total/2, 1 packet). At equilibrium only the least
//! congested paths carry traffic (002-nmcc-paper.md Appendix V.4). Slow start and timeouts are
//! standard TCP, with the coupled ssthresh.

use crate::path::{group_members, PathState};
use crate::windows::Coupling;

/// Fully coupled increase and decrease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coupled;

/// Sum of the windows of path `i`'s group, in bytes. `cwnd` already equals ssthresh during
/// fast recovery (the inflation is kept apart), as RFC 6356 asks for totals.
pub(crate) fn total_window(paths: &[PathState], i: usize) -> u64 {
    group_members(paths, i).map(|j| paths[j].cwnd).sum()
}

impl Coupling for Coupled {
    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        acked as f64 * paths[i].mss as f64 / total_window(paths, i) as f64
    }

    fn ssthresh_after_loss(&mut self, paths: &[PathState], i: usize, _flight: u64) -> u64 {
        let p = &paths[i];
        p.cwnd.saturating_sub(total_window(paths, i) / 2).max(p.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::paths;

    #[test]
    fn increase_uses_the_total_window() {
        let ps = paths(&[(10, 0.01), (30, 0.05)]);
        // 1000 B acknowledged, total window 40 000 B: 1000·1000/40 000 = 25 B on either path.
        assert_eq!(Coupled.ca_increase(&ps, 0, 1000), 25.0);
        assert_eq!(Coupled.ca_increase(&ps, 1, 1000), 25.0);
    }

    #[test]
    fn a_loss_removes_half_the_total() {
        let ps = paths(&[(10, 0.01), (30, 0.05)]);
        assert_eq!(
            Coupled.ssthresh_after_loss(&ps, 1, 0),
            10_000,
            "30 000 - 40 000/2"
        );
        assert_eq!(
            Coupled.ssthresh_after_loss(&ps, 0, 0),
            1000,
            "floored at one segment"
        );
    }
}
