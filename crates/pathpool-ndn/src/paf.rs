//! PAF, probability-based adaptive forwarding (Qian, Ravindran, Wang, Medhi, IM 2013; the
//! PTP paper's [3] and its baseline Sol. 4; spec 004 §5), in an ant-colony form of our own:
//! neither the paper's update nor its constants could be found (docs/ndn.md, "Sources"),
//! only that each (prefix, face) has a selection probability that probes' feedback updates
//! (D320).
//!
//! Per FIB entry, the next hops' probabilities P start equal and sum to 1. An Interest goes
//! to one face: with probability `probe_share` a face other than the most probable, drawn
//! evenly (an ant exploring), else a face drawn by P. A Data from face f after an RTT R
//! reinforces f (AntNet's rule): r = η·min(1, R_best/R), where R_best is the least smoothed
//! RTT among the entry's faces; P_f ← P_f + r·(1 − P_f) and every other P_g ← P_g·(1 − r).
//! An Interest that expires or is refused on f evaporates its face: P_f ← P_f·(1 − ρ), the
//! rest shared by the others in proportion. No P falls below `floor` (then renormalised).

use pathpool_core::hash::FxHashMap;
use pathpool_core::{Dur, Rng};

use crate::fib::FibEntryId;
use crate::packet::FaceId;

/// PAF's constants, all ours (D320).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PafConfig {
    /// The share of Interests sent to explore a face other than the most probable.
    pub probe_share: f64,
    /// η, the reinforcement of a face whose Data came back as fast as the best.
    pub eta: f64,
    /// ρ, the evaporation of a face whose Interest expired or was refused.
    pub rho: f64,
    /// The least probability a face keeps.
    pub floor: f64,
    /// The gain of the smoothed RTT per sample (TCP's 1/8).
    pub srtt_gain: f64,
}

impl Default for PafConfig {
    fn default() -> Self {
        PafConfig {
            probe_share: 0.1,
            eta: 0.3,
            rho: 0.1,
            floor: 0.01,
            srtt_gain: 0.125,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Entry {
    /// (face, probability, smoothed RTT in seconds if sampled), in next-hop order.
    faces: Vec<(FaceId, f64, Option<f64>)>,
}

/// The PAF state of one forwarder.
#[derive(Clone, Debug, Default)]
pub struct Paf {
    config: PafConfig,
    entries: FxHashMap<FibEntryId, Entry>,
    fib_version: Option<u64>,
}

impl Paf {
    /// PAF with `config`.
    #[must_use]
    pub fn new(config: PafConfig) -> Self {
        Paf {
            config,
            ..Paf::default()
        }
    }

    /// Forgets everything if the FIB is no longer at `version`.
    pub fn sync(&mut self, version: u64) {
        if self.fib_version != Some(version) {
            self.entries.clear();
            self.fib_version = Some(version);
        }
    }

    /// `entry`'s state over `hops` (its next hops), made with equal probabilities if new or
    /// if the faces changed.
    fn entry(&mut self, entry: FibEntryId, hops: &[FaceId]) -> &mut Entry {
        let e = self.entries.entry(entry).or_default();
        if e.faces.len() != hops.len() || e.faces.iter().zip(hops).any(|(x, &f)| x.0 != f) {
            let p = 1.0 / hops.len() as f64;
            e.faces = hops.iter().map(|&f| (f, p, None)).collect();
        }
        e
    }

    /// The probability of `face` for `entry` (`None` before `entry` was used).
    #[must_use]
    pub fn probability(&self, entry: FibEntryId, face: FaceId) -> Option<f64> {
        let e = self.entries.get(&entry)?;
        e.faces.iter().find(|x| x.0 == face).map(|x| x.1)
    }

    /// One of `candidates` (not empty; the up next hops but the in-face) for an Interest
    /// of `entry`, whose next hops are `hops`.
    pub fn pick(
        &mut self,
        entry: FibEntryId,
        hops: &[FaceId],
        candidates: &[FaceId],
        rng: &mut Rng,
    ) -> FaceId {
        let share = self.config.probe_share;
        let e = self.entry(entry, hops);
        let probs: Vec<f64> = candidates
            .iter()
            .map(|&f| e.faces.iter().find(|x| x.0 == f).map_or(0.0, |x| x.1))
            .collect();
        if candidates.len() > 1 && rng.bernoulli(share) {
            let best = (0..candidates.len())
                .max_by(|&a, &b| probs[a].total_cmp(&probs[b]).then(b.cmp(&a)))
                .unwrap_or(0);
            let others: Vec<FaceId> = (0..candidates.len())
                .filter(|&i| i != best)
                .map(|i| candidates[i])
                .collect();
            return others[rng.below(others.len() as u64) as usize];
        }
        let total: f64 = probs.iter().sum();
        let mut x = rng.uniform() * total;
        for (&f, p) in candidates.iter().zip(&probs) {
            if x < *p {
                return f;
            }
            x -= p;
        }
        candidates[candidates.len() - 1]
    }

    /// A Data for an Interest of `entry` came back from `face` after `rtt`.
    pub fn reinforce(&mut self, entry: FibEntryId, face: FaceId, rtt: Dur) {
        let c = self.config;
        let Some(e) = self.entries.get_mut(&entry) else {
            return;
        };
        let sample = rtt.as_secs_f64().max(1e-9);
        let Some(i) = e.faces.iter().position(|x| x.0 == face) else {
            return;
        };
        let s = e.faces[i]
            .2
            .map_or(sample, |s| s + c.srtt_gain * (sample - s));
        e.faces[i].2 = Some(s);
        let best = e
            .faces
            .iter()
            .filter_map(|x| x.2)
            .fold(f64::INFINITY, f64::min);
        let r = c.eta * (best / sample).min(1.0);
        for (k, x) in e.faces.iter_mut().enumerate() {
            x.1 = if k == i {
                x.1 + r * (1.0 - x.1)
            } else {
                x.1 * (1.0 - r)
            };
        }
        Self::floor(e, c.floor);
    }

    /// An Interest of `entry` sent on `face` expired or was refused.
    pub fn evaporate(&mut self, entry: FibEntryId, face: FaceId) {
        let c = self.config;
        let Some(e) = self.entries.get_mut(&entry) else {
            return;
        };
        let Some(i) = e.faces.iter().position(|x| x.0 == face) else {
            return;
        };
        let freed = e.faces[i].1 * c.rho;
        let others: f64 = e
            .faces
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .map(|(_, x)| x.1)
            .sum();
        if others <= 0.0 {
            return;
        }
        for (k, x) in e.faces.iter_mut().enumerate() {
            if k == i {
                x.1 -= freed;
            } else {
                x.1 += freed * x.1 / others;
            }
        }
        Self::floor(e, c.floor);
    }

    /// Raises every probability to at least `floor` and renormalises.
    fn floor(e: &mut Entry, floor: f64) {
        let n = e.faces.len() as f64;
        let floor = floor.min(1.0 / n);
        for x in &mut e.faces {
            x.1 = x.1.max(floor);
        }
        let total: f64 = e.faces.iter().map(|x| x.1).sum();
        let above: f64 = e.faces.iter().map(|x| x.1 - floor).sum();
        if total > 1.0 && above > 0.0 {
            // Take the excess from what lies above the floor, in proportion.
            let excess = total - 1.0;
            for x in &mut e.faces {
                x.1 -= excess * (x.1 - floor) / above;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert, proptest};

    const E: FibEntryId = FibEntryId(0);

    fn total(p: &Paf, faces: &[FaceId]) -> f64 {
        faces.iter().map(|&f| p.probability(E, f).unwrap()).sum()
    }

    #[test]
    fn the_faster_face_gains_and_a_timeout_evaporates() {
        let mut paf = Paf::new(PafConfig::default());
        let mut rng = Rng::seed_from_u64(1);
        let hops = [2, 3];
        paf.pick(E, &hops, &hops, &mut rng);
        assert_eq!(paf.probability(E, 2), Some(0.5));
        for _ in 0..20 {
            paf.reinforce(E, 2, Dur::from_ms(10));
            paf.reinforce(E, 3, Dur::from_ms(40));
        }
        let (p2, p3) = (
            paf.probability(E, 2).unwrap(),
            paf.probability(E, 3).unwrap(),
        );
        assert!(p2 > 0.7 && p3 < 0.3, "{p2} {p3}");
        assert!((total(&paf, &hops) - 1.0).abs() < 1e-12);
        paf.evaporate(E, 2);
        assert!((paf.probability(E, 2).unwrap() - 0.9 * p2).abs() < 1e-12);
        assert!((total(&paf, &hops) - 1.0).abs() < 1e-12);
        // Draws follow the probabilities, with a tenth spent exploring the other face.
        let p2 = paf.probability(E, 2).unwrap();
        let to_2 = (0..20_000)
            .filter(|_| paf.pick(E, &hops, &hops, &mut rng) == 2)
            .count() as f64
            / 20_000.0;
        assert!(
            (to_2 - 0.9 * p2).abs() < 0.015,
            "{to_2} against {}",
            0.9 * p2
        );
    }

    proptest! {
        /// Probabilities stay at least the floor and sum to 1, whatever the feedback.
        #[test]
        fn probabilities_stay_a_distribution_above_the_floor(
            events in proptest::collection::vec((0u32..3, any::<bool>(), 1u64..500), 0..200),
        ) {
            let mut paf = Paf::new(PafConfig::default());
            let hops = [1, 2, 3];
            paf.pick(E, &hops, &hops, &mut Rng::seed_from_u64(1));
            for (f, good, ms) in events {
                if good {
                    paf.reinforce(E, hops[f as usize], Dur::from_ms(ms));
                } else {
                    paf.evaporate(E, hops[f as usize]);
                }
                prop_assert!((total(&paf, &hops) - 1.0).abs() < 1e-9);
                for &h in &hops {
                    prop_assert!(paf.probability(E, h).unwrap() >= 0.01 - 1e-12);
                }
            }
        }
    }
}
