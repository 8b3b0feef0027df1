//! The multipath "Hacker scheme" as Tse simulated it (003-tse-fairness.md §2.2 and §4;
//! thesis §2.2, after Hacker et al.): one subflow, `base`, runs standard NewReno; every other
//! subflow runs Reno with an additive increase of 1/N segment per round trip ("RTT × N",
//! applied to the increase only), N = `divisor`.
//!
//! The decrease is Reno's on each subflow alone, so with N subflows of equal windows one
//! loss removes half of one window: the total falls to ((N − 1) + ½)/N of itself, 7/8 for
//! N = 4 (spec §6 table).

use serde::{Deserialize, Serialize};

use crate::path::{group_members, small_to_f64, PathState};
use crate::reno::Reno;
use crate::windows::Coupling;

/// The Hacker scheme's parameters (scenario files: `tcp.hacker`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HackerConfig {
    /// Index of the subflow that runs standard NewReno (default 0, the first).
    pub base: u32,
    /// N, the divisor of the other subflows' increase; `None` (the default) is the number of
    /// active subflows in the path's coupling group, as the thesis uses one subflow per path.
    pub divisor: Option<u32>,
}

/// NewReno on the base subflow, Reno with 1/N of its increase on the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hacker {
    config: HackerConfig,
    reno: Reno,
}

impl Hacker {
    /// The scheme with `config`, its base subflow growing as `reno` does.
    #[must_use]
    pub fn new(config: HackerConfig, reno: Reno) -> Self {
        Hacker { config, reno }
    }

    /// N for path `i`: the configured divisor, else the active subflows of its group (at
    /// least 1).
    #[must_use]
    pub fn divisor(&self, paths: &[PathState], i: usize) -> u32 {
        self.config
            .divisor
            .unwrap_or_else(|| u32::try_from(group_members(paths, i).count()).unwrap_or(u32::MAX))
            .max(1)
    }

    fn is_base(&self, i: usize) -> bool {
        usize::try_from(self.config.base).is_ok_and(|b| b == i)
    }
}

impl Coupling for Hacker {
    fn ca_increase(&mut self, paths: &[PathState], i: usize, acked: u64) -> f64 {
        // Reno's acked·SMSS/cwnd divided by N: one segment per N round trips, the "RTT × N"
        // of the thesis applied to the increase alone.
        let p = &paths[i];
        small_to_f64(acked) * small_to_f64(p.mss)
            / small_to_f64(p.cwnd)
            / f64::from(self.divisor(paths, i))
    }

    fn congestion_avoidance(&mut self, paths: &mut [PathState], i: usize, acked: u64) {
        if self.is_base(i) {
            self.reno.congestion_avoidance(paths, i, acked);
        } else {
            let inc = self.ca_increase(paths, i, acked);
            paths[i].add_bytes(inc);
        }
    }

    fn alg_state(&self, paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        let n = if self.is_base(i) {
            1
        } else {
            self.divisor(paths, i)
        };
        Some(("divisor", f64::from(n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::paths;
    use crate::windows::CaIncrease;

    fn hacker(divisor: Option<u32>) -> Hacker {
        Hacker::new(
            HackerConfig { base: 0, divisor },
            Reno::new(CaIncrease::PerAck),
        )
    }

    #[test]
    fn one_loss_of_four_equal_subflows_keeps_seven_eighths() {
        // Spec §6: N = 4, windows 4 × 8 segments; a loss halves one subflow only.
        let ps = paths(&[(8, 0.1), (8, 0.1), (8, 0.1), (8, 0.1)]);
        let mut h = hacker(None);
        let after = h.ssthresh_after_loss(&ps, 2, ps[2].cwnd);
        let total: u64 = ps.iter().map(|p| p.cwnd).sum::<u64>() - ps[2].cwnd + after;
        assert_eq!(after, 4000);
        assert_eq!(total, 28_000, "7/8 of 32 segments");
    }

    #[test]
    fn others_grow_one_nth_of_the_base() {
        let mut ps = paths(&[(10, 0.1), (10, 0.1), (10, 0.1), (10, 0.1)]);
        let mut h = hacker(None);
        assert_eq!(h.divisor(&ps, 1), 4);
        // A whole window acknowledged: the base gains one segment, another subflow a quarter.
        h.congestion_avoidance(&mut ps, 0, 10_000);
        h.congestion_avoidance(&mut ps, 1, 10_000);
        assert_eq!(ps[0].cwnd, 11_000);
        assert_eq!(ps[1].cwnd, 10_250);
    }

    #[test]
    fn explicit_divisor_and_base() {
        let mut ps = paths(&[(10, 0.1), (10, 0.1)]);
        let mut h = Hacker::new(
            HackerConfig {
                base: 1,
                divisor: Some(5),
            },
            Reno::new(CaIncrease::PerAck),
        );
        h.congestion_avoidance(&mut ps, 0, 10_000);
        h.congestion_avoidance(&mut ps, 1, 10_000);
        assert_eq!(ps[0].cwnd, 10_200, "one fifth of a segment");
        assert_eq!(ps[1].cwnd, 11_000, "subflow 1 is the base");
    }
}
