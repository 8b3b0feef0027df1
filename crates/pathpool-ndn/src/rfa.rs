//! RFA, the Request Forwarding Algorithm of OMCC-RF (Carofiglio et al., ICNP 2013; the PTP
//! paper's [2] and its baselines Sol. 2 and 3; spec 004 §5): per (prefix, face), the
//! Interests pending on the face, PI, smoothed at every change; each Interest goes to one
//! face drawn with probability proportional to the inverse of the smoothed PI, so that the
//! faces that answer faster, holding fewer Interests, get more (D319).

use pathpool_core::hash::FxHashMap;
use pathpool_core::Rng;

use crate::fib::FibEntryId;
use crate::packet::FaceId;

/// Weight of the old value in the smoothing avg ← α·avg + (1 − α)·PI (0.9: Cisco's Metis
/// forwarder and the ndnSIM port "as defined in OMCCRF paper").
pub const RFA_ALPHA: f64 = 0.9;
/// The least smoothed PI a weight is computed from (weights are at most 10).
pub const RFA_AVG_FLOOR: f64 = 0.1;

#[derive(Clone, Copy, Debug, Default)]
struct FaceState {
    pi: u32,
    avg: f64,
}

/// The RFA state of one forwarder.
#[derive(Clone, Debug, Default)]
pub struct Rfa {
    faces: FxHashMap<(FibEntryId, FaceId), FaceState>,
    /// The FIB version the state is for: a change of next hops starts it again.
    fib_version: Option<u64>,
}

impl Rfa {
    /// Forgets everything if the FIB is no longer at `version`.
    pub fn sync(&mut self, version: u64) {
        if self.fib_version != Some(version) {
            self.faces.clear();
            self.fib_version = Some(version);
        }
    }

    /// Face `face`'s weight for `entry`: 1/max(avg PI, [`RFA_AVG_FLOOR`]).
    #[must_use]
    pub fn weight(&self, entry: FibEntryId, face: FaceId) -> f64 {
        let avg = self.faces.get(&(entry, face)).map_or(0.0, |s| s.avg);
        1.0 / avg.max(RFA_AVG_FLOOR)
    }

    /// The smoothed PI of `face` for `entry`.
    #[must_use]
    pub fn avg_pi(&self, entry: FibEntryId, face: FaceId) -> f64 {
        self.faces.get(&(entry, face)).map_or(0.0, |s| s.avg)
    }

    /// One of `faces` (not empty) drawn with probability proportional to its weight.
    pub fn pick(&self, entry: FibEntryId, faces: &[FaceId], rng: &mut Rng) -> FaceId {
        let weights: Vec<f64> = faces.iter().map(|&f| self.weight(entry, f)).collect();
        let total: f64 = weights.iter().sum();
        let mut x = rng.uniform() * total;
        for (&f, w) in faces.iter().zip(&weights) {
            if x < *w {
                return f;
            }
            x -= w;
        }
        faces[faces.len() - 1]
    }

    fn update(&mut self, entry: FibEntryId, face: FaceId, change: impl FnOnce(u32) -> u32) {
        let s = self.faces.entry((entry, face)).or_default();
        s.pi = change(s.pi);
        s.avg = RFA_ALPHA * s.avg + (1.0 - RFA_ALPHA) * f64::from(s.pi);
    }

    /// An Interest of `entry` went out on `face`.
    pub fn sent(&mut self, entry: FibEntryId, face: FaceId) {
        self.update(entry, face, |pi| pi + 1);
    }

    /// An Interest of `entry` sent on `face` is no longer pending there (its Data came, or
    /// it expired or was refused).
    pub fn settled(&mut self, entry: FibEntryId, face: FaceId) {
        self.update(entry, face, |pi| pi.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_interests_lower_a_faces_weight_and_answers_raise_it() {
        let mut rfa = Rfa::default();
        let e = FibEntryId(0);
        assert_eq!(rfa.weight(e, 2), 10.0);
        for _ in 0..5 {
            rfa.sent(e, 2);
        }
        // avg after PI 1..5: 0.1, 0.29, 0.561, 0.9049, 1.31441.
        assert!(
            (rfa.avg_pi(e, 2) - 1.31441).abs() < 1e-12,
            "{}",
            rfa.avg_pi(e, 2)
        );
        assert!((rfa.weight(e, 2) - 1.0 / 1.31441).abs() < 1e-12);
        rfa.settled(e, 2);
        assert!((rfa.avg_pi(e, 2) - (0.9 * 1.31441 + 0.4)).abs() < 1e-12);
        let mut rng = Rng::seed_from_u64(5);
        let to_3 = (0..10_000)
            .filter(|_| rfa.pick(e, &[2, 3], &mut rng) == 3)
            .count();
        // Face 3 weighs 10, face 2 1/1.582969: 94.05% to face 3.
        assert!((9_300..=9_500).contains(&to_3), "{to_3}");
        rfa.sync(1);
        rfa.sync(2);
        assert_eq!(rfa.avg_pi(e, 2), 0.0);
    }
}
