//! BALIA, the Balanced Linked Adaptation algorithm (Peng, Walid, Hwang & Low, IEEE/ACM ToN
//! 2016), as in the Linux multipath-tcp.org module `mptcp_balia.c`.
//!
//! With x_k = w_k/τ_k (packets per second) and α_r = max_k x_k / x_r:
//! * per ACK of one segment on r in congestion avoidance:
//!   w_r += (x_r/τ_r)/(Σ_k x_k)² · ((1+α_r)/2) · ((4+α_r)/5)
//!   (the module's equivalent form (x_r + x_max)(4x_r + x_max) / (10 w_r (Σ x)²));
//! * per loss on r: w_r ← w_r − (w_r/2)·min(α_r, 1.5), at least one segment.
//!
//! A path alone in its group (or the only one with an RTT sample) behaves as Reno, as the
//! module does with one established subflow. α is real-valued as in the paper; the module's
//! integer division floors it in the decrease (decisions log).

use crate::path::{group_members, PathState};
use crate::windows::Coupling;

/// BALIA.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Balia;

/// (x_r, max x, Σ x) in packets per second over the group, if more than one path has an RTT.
fn rates(paths: &[PathState], i: usize) -> Option<(f64, f64, f64)> {
    let rate = |j: usize| {
        let p = &paths[j];
        p.rtt_s().map(|r| p.cwnd as f64 / p.mss as f64 / r)
    };
    let x_r = rate(i)?;
    let (mut max, mut sum, mut n) = (0.0f64, 0.0f64, 0);
    for j in group_members(paths, i) {
        if let Some(x) = rate(j) {
            max = max.max(x);
            sum += x;
            n += 1;
        }
    }
    (n > 1).then_some((x_r, max, sum))
}

impl Balia {
    /// α_r = max_k x_k / x_r for path `i` (1 when it is uncoupled).
    #[must_use]
    pub fn alpha(paths: &[PathState], i: usize) -> f64 {
        rates(paths, i).map_or(1.0, |(x, max, _)| max / x)
    }
}

impl Coupling for Balia {
    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        let p = &paths[i];
        let reno = acked as f64 * p.mss as f64 / p.cwnd as f64;
        let Some((x, max, sum)) = rates(paths, i) else {
            return reno;
        };
        let w = p.cwnd as f64 / p.mss as f64;
        acked as f64 * (x + max) * (4.0 * x + max) / (10.0 * w * sum * sum)
    }

    fn ssthresh_after_loss(&mut self, paths: &[PathState], i: usize, flight: u64) -> u64 {
        let p = &paths[i];
        match rates(paths, i) {
            None => (flight / 2).max(2 * p.mss),
            Some((x, max, _)) => {
                let cut = p.cwnd as f64 / 2.0 * (max / x).min(1.5);
                ((p.cwnd as f64 - cut) as u64).max(p.mss)
            }
        }
    }

    fn alg_state(&self, paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        Some(("alpha", Self::alpha(paths, i)))
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
    fn two_paths_with_rates_1000_and_500_per_second() {
        // x = 10/0.01 = 1000 and 20/0.04 = 500; Σ x = 1500; α = 1 and 2.
        let ps = paths(&[(10, 0.010), (20, 0.040)]);
        assert_eq!(Balia::alpha(&ps, 1), 2.0);
        // Path 0: 2000·5000/(10·10·2.25e6) = 0.0444 segments per segment.
        assert!(close(Balia.ca_increase(&ps, 0, 1000), 1e10 / 2.25e8));
        // Path 1: 1500·3000/(10·20·2.25e6) = 0.01.
        assert!(close(Balia.ca_increase(&ps, 1, 1000), 10.0));
        // Decrease: path 0 halves; path 1 loses (20 000/2)·min(2, 1.5) = 15 000 B.
        assert_eq!(Balia.ssthresh_after_loss(&ps, 0, 0), 5000);
        assert_eq!(Balia.ssthresh_after_loss(&ps, 1, 0), 5000);
    }

    #[test]
    fn equal_paths_get_a_quarter_of_reno() {
        let ps = paths(&[(10, 0.010), (10, 0.010)]);
        assert!(close(Balia.ca_increase(&ps, 0, 1000), 25.0));
    }

    #[test]
    fn three_paths() {
        // x = 2000, 1000, 250 (20/0.01, 10/0.01, 5/0.02); Σ = 3250, max = 2000.
        let ps = paths(&[(20, 0.010), (10, 0.010), (5, 0.020)]);
        let s2 = 3250.0f64 * 3250.0;
        assert!(close(
            Balia.ca_increase(&ps, 1, 1000),
            1000.0 * 3000.0 * 6000.0 / (100.0 * s2)
        ));
        assert!(close(
            Balia.ca_increase(&ps, 2, 1000),
            1000.0 * 2250.0 * 3000.0 / (50.0 * s2)
        ));
        // α of path 2 is 8: the cut is capped at 1.5 halves.
        assert_eq!(Balia.ssthresh_after_loss(&ps, 2, 0), 1250);
    }

    #[test]
    fn a_path_alone_is_reno() {
        let ps = paths(&[(10, 0.010)]);
        assert!(close(Balia.ca_increase(&ps, 0, 1000), 100.0));
        assert_eq!(Balia.ssthresh_after_loss(&ps, 0, 10_000), 5000);
    }
}
