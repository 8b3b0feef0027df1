//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili, Gast, Popovic & Le Boudec,
//! CoNEXT 2012), as in the Linux multipath-tcp.org module `mptcp_olia.c`.
//!
//! Per ACK of one segment on r in congestion avoidance (windows w in packets, τ the smoothed
//! RTT):  w_r += (w_r/τ_r²) / (Σ_p w_p/τ_p)² + ε_r/w_r.
//! * ℓ_r = max(bytes acknowledged between the last two losses, bytes since the last loss);
//! * B = paths maximising ℓ_r/τ_r² (the "best" paths), M = paths with the largest window;
//! * if B \ M is empty every ε_r = 0; otherwise ε_r = 1/(n·|B\M|) for r ∈ B\M,
//!   ε_r = −1/(n·|M|) for r ∈ M and 0 for the rest, with n the paths in the group.
//!
//! Decrease, slow start and timeouts are standard TCP. As in the module, only paths with an
//! RTT sample take part, a path's loss markers shift only when it has made progress since its
//! last loss, and ties count every tied path as best. The increase is applied per byte
//! acknowledged (byte counting) rather than per ACK event.

use crate::path::{group_members, PathState};
use crate::windows::Coupling;

/// Per-path loss bookkeeping, in cumulative bytes acknowledged on the path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Losses {
    acked: u64,
    loss1: u64,
    loss2: u64,
}

impl Losses {
    /// ℓ: the larger of the last inter-loss distance and the distance since the last loss.
    fn interval(&self) -> u64 {
        (self.acked - self.loss2).max(self.loss2 - self.loss1)
    }
}

/// OLIA.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Olia {
    losses: Vec<Losses>,
}

impl Olia {
    /// ε_r of path `i`.
    #[must_use]
    pub fn epsilon(&self, paths: &[PathState], i: usize) -> f64 {
        let members: Vec<usize> = group_members(paths, i)
            .filter(|&j| paths[j].rtt_s().is_some())
            .collect();
        if !members.contains(&i) {
            return 0.0;
        }
        let n = members.len() as f64;
        let max_cwnd = members.iter().map(|&j| paths[j].cwnd).max().unwrap_or(0);
        let quality = |j: usize| {
            let rtt = paths[j].rtt_s().unwrap_or(f64::INFINITY);
            self.losses.get(j).map_or(0, Losses::interval) as f64 / (rtt * rtt)
        };
        let best_quality = members.iter().map(|&j| quality(j)).fold(0.0, f64::max);
        let in_m = |j: usize| paths[j].cwnd == max_cwnd;
        let in_b = |j: usize| quality(j) == best_quality;
        let m = members.iter().filter(|&&j| in_m(j)).count() as f64;
        let b_not_m = members.iter().filter(|&&j| in_b(j) && !in_m(j)).count() as f64;
        if b_not_m == 0.0 {
            0.0
        } else if in_b(i) && !in_m(i) {
            1.0 / (n * b_not_m)
        } else if in_m(i) {
            -1.0 / (n * m)
        } else {
            0.0
        }
    }
}

impl Coupling for Olia {
    fn on_paths_changed(&mut self, paths: &[PathState]) {
        self.losses.resize(paths.len(), Losses::default());
    }

    fn on_ack(&mut self, _paths: &[PathState], i: usize, acked: u64) {
        self.losses[i].acked += acked;
    }

    fn on_loss(&mut self, _paths: &[PathState], i: usize, _timeout: bool) {
        let l = &mut self.losses[i];
        if l.acked != l.loss2 {
            l.loss1 = l.loss2;
            l.loss2 = l.acked;
        }
    }

    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        let p = &paths[i];
        let Some(rtt) = p.rtt_s() else {
            return acked as f64 * p.mss as f64 / p.cwnd as f64;
        };
        let w = p.cwnd as f64 / p.mss as f64;
        let sum: f64 = group_members(paths, i)
            .filter_map(|j| {
                paths[j]
                    .rtt_s()
                    .map(|r| paths[j].cwnd as f64 / paths[j].mss as f64 / r)
            })
            .sum();
        let per_segment = (w / (rtt * rtt)) / (sum * sum) + self.epsilon(paths, i) / w;
        acked as f64 * per_segment
    }

    fn alg_state(&self, paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        Some(("epsilon", self.epsilon(paths, i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::paths;

    fn olia(ps: &[PathState]) -> Olia {
        let mut o = Olia::default();
        o.on_paths_changed(ps);
        o
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn before_any_loss_every_path_is_best_and_the_smaller_window_gains() {
        // ℓ = 0 everywhere, so B = {0, 1}; M = {1} (20 segments); B\M = {0}.
        let ps = paths(&[(10, 0.010), (20, 0.020)]);
        let mut o = olia(&ps);
        assert_eq!(o.epsilon(&ps, 0), 0.5);
        assert_eq!(o.epsilon(&ps, 1), -0.5);
        // Σ w/τ = 2000/s. Path 0: 1e5/4e6 + 0.5/10 = 0.075 segments per segment acknowledged.
        assert!(close(o.ca_increase(&ps, 0, 1000), 75.0));
        // Path 1: 5e4/4e6 − 0.5/20 = −0.0125: the largest window gives way.
        assert!(close(o.ca_increase(&ps, 1, 1000), -12.5));
    }

    #[test]
    fn when_the_best_path_has_the_largest_window_epsilon_is_zero() {
        let ps = paths(&[(10, 0.010), (20, 0.020)]);
        let mut o = olia(&ps);
        // Path 1 sees 1 MB between losses; path 0 100 kB: ℓ/τ² = 2.5e9 vs 1e9.
        o.on_ack(&ps, 1, 1_000_000);
        o.on_loss(&ps, 1, false);
        o.on_ack(&ps, 0, 100_000);
        o.on_loss(&ps, 0, false);
        assert_eq!(o.epsilon(&ps, 0), 0.0);
        assert_eq!(o.epsilon(&ps, 1), 0.0);
        assert!(close(o.ca_increase(&ps, 0, 1000), 25.0));
        assert!(close(o.ca_increase(&ps, 1, 1000), 12.5));
    }

    #[test]
    fn three_paths_best_small_window_borrows_from_the_largest() {
        let ps = paths(&[(10, 0.010), (10, 0.010), (20, 0.010)]);
        let mut o = olia(&ps);
        o.on_ack(&ps, 0, 500_000);
        o.on_loss(&ps, 0, false);
        o.on_ack(&ps, 1, 100_000);
        o.on_loss(&ps, 1, false);
        o.on_ack(&ps, 2, 100_000);
        o.on_loss(&ps, 2, false);
        // B = {0}, M = {2}, n = 3: ε = 1/3, 0, −1/3. Σ w/τ = 4000/s, squared 1.6e7.
        assert!(close(o.epsilon(&ps, 0), 1.0 / 3.0));
        assert_eq!(o.epsilon(&ps, 1), 0.0);
        assert!(close(o.epsilon(&ps, 2), -1.0 / 3.0));
        assert!(close(
            o.ca_increase(&ps, 0, 1000),
            1000.0 * (1e5 / 1.6e7 + 1.0 / 30.0)
        ));
        assert!(close(o.ca_increase(&ps, 1, 1000), 6.25));
        assert!(close(
            o.ca_increase(&ps, 2, 1000),
            1000.0 * (2e5 / 1.6e7 - 1.0 / 60.0)
        ));
    }

    #[test]
    fn loss_markers_shift_only_after_progress() {
        let ps = paths(&[(10, 0.010)]);
        let mut o = olia(&ps);
        o.on_ack(&ps, 0, 3000);
        o.on_loss(&ps, 0, false);
        o.on_loss(&ps, 0, true);
        assert_eq!(
            o.losses[0],
            Losses {
                acked: 3000,
                loss1: 0,
                loss2: 3000
            }
        );
        o.on_ack(&ps, 0, 1000);
        assert_eq!(
            o.losses[0].interval(),
            3000,
            "max(1000 since, 3000 between)"
        );
    }
}
