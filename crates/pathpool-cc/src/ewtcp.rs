//! EWTCP, equally weighted TCP (Honda et al. 2009; the weighting of Wischik et al., NSDI 2011).
//!
//! Each of the n subflows of a group runs Reno with its increase scaled by a = 1/n²
//! (`a/w` per ACK in packets), so its equilibrium window is √a = 1/n of a Reno flow's and the
//! n subflows together take about one Reno share of a shared bottleneck. Slow start, the
//! decrease and timeouts are standard TCP (002-nmcc-paper.md Appendix V.3).

use crate::path::{group_members, PathState};
use crate::windows::Coupling;

/// EWTCP with a = 1/n², n = active subflows in the group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ewtcp;

impl Ewtcp {
    /// The weight a = 1/n² of path `i`'s group.
    #[must_use]
    pub fn weight(paths: &[PathState], i: usize) -> f64 {
        let n = group_members(paths, i).count().max(1) as f64;
        1.0 / (n * n)
    }
}

impl Coupling for Ewtcp {
    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        let p = &paths[i];
        Self::weight(paths, i) * acked as f64 * p.mss as f64 / p.cwnd as f64
    }

    fn alg_state(&self, paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        Some(("a", Self::weight(paths, i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::paths;

    #[test]
    fn two_subflows_grow_a_quarter_of_reno() {
        // Windows of 10 and 20 segments of 1000 B, one full segment acknowledged.
        let ps = paths(&[(10, 0.010), (20, 0.020)]);
        assert_eq!(Ewtcp::weight(&ps, 0), 0.25);
        assert_eq!(
            Ewtcp.ca_increase(&ps, 0, 1000),
            25.0,
            "0.25 · 1000·1000/10000"
        );
        assert_eq!(Ewtcp.ca_increase(&ps, 1, 1000), 12.5);
    }

    #[test]
    fn three_subflows_and_a_path_alone_in_its_group() {
        let mut ps = paths(&[(10, 0.01), (10, 0.01), (10, 0.01), (10, 0.01)]);
        ps[3].group = 1;
        assert_eq!(Ewtcp::weight(&ps, 0), 1.0 / 9.0);
        assert_eq!(Ewtcp::weight(&ps, 3), 1.0, "alone in its group: Reno");
        assert!((Ewtcp.ca_increase(&ps, 0, 1000) - 100.0 / 9.0).abs() < 1e-12);
    }
}
