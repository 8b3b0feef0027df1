//! Reassembly of a byte stream from ranges that arrive in any order, any number of times.
//!
//! Used twice by a multipath connection: each subflow's receiver reassembles its own sequence
//! space (to acknowledge cumulatively), and the connection reassembles the data sequence
//! space from every subflow (to deliver in order).

/// Which bytes of a stream starting at 0 have arrived.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reassembly {
    /// Every byte below it has arrived.
    cumulative: u64,
    /// Ranges above `cumulative`, sorted, disjoint and not adjacent, `[start, end)`.
    above_gap: Vec<(u64, u64)>,
}

/// What one [`Reassembly::insert`] changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inserted {
    /// Every byte of the range had arrived before.
    Duplicate,
    /// The range lies above a gap and was stored.
    AboveGap,
    /// The range extended the in-order prefix; `filled_gap` if stored ranges were waiting.
    InOrder {
        /// Whether ranges above a gap were waiting for it.
        filled_gap: bool,
    },
}

impl Reassembly {
    /// Nothing arrived yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that bytes `[start, end)` arrived.
    #[inline]
    pub fn insert(&mut self, start: u64, end: u64) -> Inserted {
        // The common case, new bytes in order with nothing held above a gap, where it is
        // called; the rest out of line.
        if start <= self.cumulative && self.cumulative < end && self.above_gap.is_empty() {
            self.cumulative = end;
            return Inserted::InOrder { filled_gap: false };
        }
        self.insert_general(start, end)
    }

    /// [`insert`](Self::insert) in every case.
    #[inline(never)]
    fn insert_general(&mut self, start: u64, end: u64) -> Inserted {
        if end <= self.cumulative {
            return Inserted::Duplicate;
        }
        if start > self.cumulative {
            if self.covered(start, end) {
                return Inserted::Duplicate;
            }
            self.store(start, end);
            return Inserted::AboveGap;
        }
        let filled_gap = !self.above_gap.is_empty();
        self.cumulative = end;
        let absorbed = self
            .above_gap
            .iter()
            .take_while(|r| r.0 <= self.cumulative)
            .count();
        if absorbed > 0 {
            self.cumulative = self.cumulative.max(self.above_gap[absorbed - 1].1);
            self.above_gap.drain(..absorbed);
        }
        Inserted::InOrder { filled_gap }
    }

    fn store(&mut self, start: u64, end: u64) {
        merge_range(&mut self.above_gap, start, end);
    }

    /// Length of the in-order prefix: every byte below it has arrived.
    #[must_use]
    pub fn cumulative(&self) -> u64 {
        self.cumulative
    }
    /// Ranges held above a gap.
    #[must_use]
    pub fn above_gap(&self) -> &[(u64, u64)] {
        &self.above_gap
    }
    /// Whether bytes `[start, end)` have all arrived.
    #[must_use]
    pub fn contains(&self, start: u64, end: u64) -> bool {
        end <= self.cumulative || self.covered(start.max(self.cumulative), end)
    }

    /// The stored range above the gap that holds byte `seq`, if one does.
    #[must_use]
    pub fn range_containing(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.above_gap.partition_point(|r| r.0 <= seq);
        (i > 0 && seq < self.above_gap[i - 1].1).then(|| self.above_gap[i - 1])
    }

    /// Whether one stored range holds all of `[start, end)` (ranges are disjoint and not
    /// adjacent, so only the last one starting at or before `start` can).
    fn covered(&self, start: u64, end: u64) -> bool {
        let i = self.above_gap.partition_point(|r| r.0 <= start);
        i > 0 && end <= self.above_gap[i - 1].1
    }
}

/// Adds `[start, end)` to `ranges` (sorted, disjoint and not adjacent, and kept so, merging
/// what it meets) and returns how many of its bytes were not in them before. Always inlined:
/// a caller that ignores the count does not pay for it.
#[inline(always)]
pub(crate) fn merge_range(ranges: &mut Vec<(u64, u64)>, start: u64, end: u64) -> u64 {
    // First range that ends at or after `start` (could merge with the new one).
    let i = ranges.partition_point(|r| r.1 < start);
    let mut j = i;
    let (mut s, mut e) = (start, end);
    let mut covered = 0;
    while j < ranges.len() && ranges[j].0 <= e {
        let (a, b) = ranges[j];
        covered += b.min(end).saturating_sub(a.max(start));
        s = s.min(a);
        e = e.max(b);
        j += 1;
    }
    if i == j {
        ranges.insert(i, (s, e));
    } else {
        ranges[i] = (s, e);
        ranges.drain(i + 1..j);
    }
    (end - start) - covered
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn in_order_duplicate_and_gap() {
        let mut r = Reassembly::new();
        assert_eq!(r.insert(0, 10), Inserted::InOrder { filled_gap: false });
        assert_eq!(r.insert(20, 30), Inserted::AboveGap);
        assert_eq!(r.insert(22, 25), Inserted::Duplicate);
        assert_eq!(r.insert(0, 5), Inserted::Duplicate);
        assert!(r.contains(20, 30));
        assert!(!r.contains(10, 21));
        assert_eq!(r.insert(5, 20), Inserted::InOrder { filled_gap: true });
        assert_eq!(r.cumulative(), 30);
        assert!(r.above_gap().is_empty());
    }

    proptest! {
        /// Whatever the order and repetition, the prefix is exactly the longest run of bytes
        /// from 0 covered by the inserted ranges, and stored ranges stay sorted and disjoint.
        #[test]
        fn prefix_matches_a_bitmap(ranges in proptest::collection::vec((0u64..200, 1u64..30), 1..60)) {
            let mut r = Reassembly::new();
            let mut have = [false; 240];
            for (s, l) in ranges {
                r.insert(s, s + l);
                for b in &mut have[s as usize..(s + l) as usize] {
                    *b = true;
                }
                let prefix = have.iter().take_while(|&&b| b).count() as u64;
                prop_assert_eq!(r.cumulative(), prefix);
                for (a, b) in [(0, 5), (s, s + l), (prefix, prefix + 1), (s / 2, s + l + 3)] {
                    let all = (a..b).all(|x| have.get(x as usize).copied().unwrap_or(false));
                    prop_assert_eq!(r.contains(a, b), all, "contains({}, {})", a, b);
                }
                let g = r.above_gap();
                for &(a, b) in g {
                    prop_assert_eq!(r.range_containing(a), Some((a, b)));
                    prop_assert_eq!(r.range_containing(b - 1), Some((a, b)));
                    prop_assert_eq!(r.range_containing(b), None);
                }
                prop_assert!(g.windows(2).all(|w| w[0].1 < w[1].0));
                prop_assert!(g.iter().all(|&(s, e)| s > prefix && s < e));
                for &(s, e) in g {
                    prop_assert!(have[s as usize..e as usize].iter().all(|&b| b));
                }
            }
        }
    }
}
