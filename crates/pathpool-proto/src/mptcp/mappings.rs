//! The DSS mappings of one subflow (RFC 8684 §3.3.1): which data sequence numbers the bytes
//! given to the subflow carry, from its oldest unacknowledged byte on.
//!
//! The sender appends a mapping for every segment of data it gives the subflow, drops them as
//! the subflow acknowledges them, and the receiver looks up the mapping of every arriving
//! segment (`docs/decisions.md` D31), so all three run once per packet. The queue is a ring
//! whose capacity is a power of two, so a position wraps with a mask, and a segment's mapping
//! is found by its distance from the oldest one in whole segments, a multiplication rather
//! than a search.

/// One DSS mapping: `len` bytes at subflow sequence number `subflow_seq` carry the data
/// bytes starting at `data_seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// First subflow sequence number.
    pub subflow_seq: u64,
    /// First data sequence number.
    pub data_seq: u64,
    /// Length in bytes.
    pub len: u64,
}

impl Mapping {
    /// One past the last subflow sequence number.
    fn subflow_end(&self) -> u64 {
        self.subflow_seq + self.len
    }
}

/// `bytes / mss` for the distances of a mapping queue, by a multiplication with a reciprocal
/// of the segment size instead of a 64-bit division, which takes tens of cycles.
///
/// With the reciprocal rounded up, the quotient is exact for every segment size above one
/// byte (for one byte the reciprocal saturates) and every distance below 2^64 / mss², far
/// beyond any window; it is only ever a guess that the caller checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SegmentIndex {
    /// ⌈2^64 / mss⌉ (saturated for a segment size of 1).
    reciprocal: u64,
}

impl SegmentIndex {
    /// The index for segments of `mss` > 0 bytes.
    pub(crate) fn new(mss: u64) -> Self {
        SegmentIndex {
            reciprocal: (u64::MAX / mss.max(1)).saturating_add(1),
        }
    }

    /// About `bytes / mss`.
    #[inline]
    fn of(self, bytes: u64) -> u64 {
        ((u128::from(bytes) * u128::from(self.reciprocal)) >> 64) as u64
    }
}

/// The mappings of one subflow not yet acknowledged on it, in subflow sequence order and
/// contiguous.
#[derive(Clone, Debug, Default)]
pub(crate) struct MappingQueue {
    /// The ring; its length is zero or a power of two.
    buf: Vec<Mapping>,
    /// Position in `buf` of the oldest mapping.
    head: usize,
    /// Number of mappings.
    len: usize,
}

impl MappingQueue {
    /// The `i`-th mapping from the oldest.
    #[inline]
    fn get(&self, i: usize) -> Option<&Mapping> {
        (i < self.len).then(|| &self.buf[(self.head + i) & (self.buf.len() - 1)])
    }

    /// Appends the mapping of the next bytes given to the subflow.
    #[inline]
    pub(crate) fn push(&mut self, m: Mapping) {
        debug_assert!(
            self.get(self.len.wrapping_sub(1))
                .is_none_or(|last| last.subflow_end() == m.subflow_seq),
            "mappings are contiguous"
        );
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.buf.len() - 1);
        self.buf[i] = m;
        self.len += 1;
    }

    #[cold]
    fn grow(&mut self) {
        let capacity = (2 * self.buf.len()).max(8);
        let mut buf = Vec::with_capacity(capacity);
        buf.extend(self.iter().copied());
        buf.resize(
            capacity,
            Mapping {
                subflow_seq: 0,
                data_seq: 0,
                len: 0,
            },
        );
        self.buf = buf;
        self.head = 0;
    }

    /// The subflow acknowledged every byte below `una`: drops the mappings it covers, and
    /// the part it covers of the one it ends in. Returns the number of data bytes dropped.
    #[inline]
    pub(crate) fn acknowledge(&mut self, una: u64) -> u64 {
        let mut dropped = 0;
        let mask = self.buf.len().wrapping_sub(1);
        while self.len > 0 {
            let m = &mut self.buf[self.head];
            if m.subflow_seq >= una {
                break;
            }
            let covered = (una - m.subflow_seq).min(m.len);
            dropped += covered;
            if covered < m.len {
                m.subflow_seq += covered;
                m.data_seq += covered;
                m.len -= covered;
                break;
            }
            self.head = (self.head + 1) & mask;
            self.len -= 1;
        }
        dropped
    }

    /// The mappings, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Mapping> + '_ {
        (0..self.len).filter_map(|i| self.get(i))
    }

    /// Removes every mapping and returns them, oldest first.
    pub(crate) fn take_all(&mut self) -> Vec<Mapping> {
        let all = self.iter().copied().collect();
        self.head = 0;
        self.len = 0;
        all
    }

    /// Calls `f(start, end)` for each range of data carried by the `len` bytes at subflow
    /// sequence number `seq`, in order; bytes below the oldest mapping map to nothing.
    /// `index` is of the connection's segment size.
    #[inline]
    pub(crate) fn for_each_in(
        &self,
        seq: u64,
        len: u64,
        index: SegmentIndex,
        mut f: impl FnMut(u64, u64),
    ) {
        let Some(oldest) = self.get(0) else {
            return;
        };
        let end = seq + len;
        // Mappings are nearly all one segment long: try the one that gives, and search only
        // if it is wrong (a short segment was given out before). Bytes below the oldest
        // mapping wrap to a distance no mapping has, which sends them to the search.
        let guess = index.of(seq.wrapping_sub(oldest.subflow_seq));
        let guess = usize::try_from(guess).unwrap_or(usize::MAX);
        let first = match self.get(guess) {
            Some(g) if g.subflow_seq <= seq && seq < end && end <= g.subflow_end() => {
                // The whole segment in one mapping, as nearly every segment is.
                f(
                    g.data_seq + (seq - g.subflow_seq),
                    g.data_seq + (end - g.subflow_seq),
                );
                return;
            }
            Some(g) if g.subflow_seq <= seq && seq < g.subflow_end() => guess,
            _ => self.first_ending_after(seq),
        };
        for m in (first..self.len).filter_map(|i| self.get(i)) {
            if m.subflow_seq >= end {
                break;
            }
            let lo = seq.max(m.subflow_seq);
            let hi = end.min(m.subflow_end());
            f(
                m.data_seq + (lo - m.subflow_seq),
                m.data_seq + (hi - m.subflow_seq),
            );
        }
    }

    /// The index of the first mapping that ends after `seq` (`len` if none does), by binary
    /// search: mappings are in order.
    fn first_ending_after(&self, seq: u64) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid).is_some_and(|m| m.subflow_end() <= seq) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[test]
    fn the_segment_index_divides_exactly_within_a_window() {
        for mss in [2, 536, 1000, 1024, 1460, 8960, 65_535] {
            let index = SegmentIndex::new(mss);
            for k in [0, 1, 2, 7, 1000, 1_000_000] {
                for j in [0, 1, mss / 2, mss - 1] {
                    let bytes = k * mss + j;
                    assert_eq!(index.of(bytes), bytes / mss, "{bytes} / {mss}");
                }
            }
        }
    }

    /// The plain form: a deque, and a linear scan for the mappings of a segment.
    fn plain_lookup(q: &VecDeque<Mapping>, seq: u64, len: u64) -> Vec<(u64, u64)> {
        let end = seq + len;
        q.iter()
            .filter(|m| m.subflow_seq < end && seq < m.subflow_end())
            .map(|m| {
                let lo = seq.max(m.subflow_seq);
                let hi = end.min(m.subflow_end());
                (
                    m.data_seq + lo - m.subflow_seq,
                    m.data_seq + hi - m.subflow_seq,
                )
            })
            .collect()
    }

    proptest! {
        /// Whatever the lengths of the mappings (short ones included), pushes, ACKs and
        /// lookups of segments (also straddling mappings or below the oldest) agree with a
        /// deque searched linearly.
        #[test]
        fn agrees_with_a_searched_deque(
            ops in proptest::collection::vec((0u8..4, 1u64..40, 0u64..200, 1u64..60), 1..200),
        ) {
            const MSS: u64 = 10;
            let index = SegmentIndex::new(MSS);
            let mut q = MappingQueue::default();
            let mut plain: VecDeque<Mapping> = VecDeque::new();
            let (mut next_seq, mut next_data, mut una) = (0u64, 0u64, 0u64);
            for (op, a, b, c) in ops {
                match op {
                    0 | 1 => {
                        // Mostly whole segments, sometimes a short one.
                        let len = if a % 5 == 0 { a % MSS + 1 } else { MSS };
                        let m = Mapping { subflow_seq: next_seq, data_seq: next_data, len };
                        q.push(m);
                        plain.push_back(m);
                        next_seq += len;
                        next_data += len + b % 3 * MSS;
                    }
                    2 => {
                        una = (una + a).min(next_seq);
                        let mut dropped = 0;
                        while let Some(m) = plain.front_mut() {
                            if m.subflow_seq >= una {
                                break;
                            }
                            let covered = (una - m.subflow_seq).min(m.len);
                            dropped += covered;
                            if covered < m.len {
                                m.subflow_seq += covered;
                                m.data_seq += covered;
                                m.len -= covered;
                                break;
                            }
                            plain.pop_front();
                        }
                        prop_assert_eq!(q.acknowledge(una), dropped);
                    }
                    _ => {
                        let seq = b.min(next_seq + 5);
                        let mut got = Vec::new();
                        q.for_each_in(seq, c, index, |s, e| got.push((s, e)));
                        prop_assert_eq!(got, plain_lookup(&plain, seq, c), "seq {} len {}", seq, c);
                    }
                }
                prop_assert_eq!(q.iter().copied().collect::<Vec<_>>(), plain.iter().copied().collect::<Vec<_>>());
            }
            prop_assert_eq!(q.take_all(), plain.into_iter().collect::<Vec<_>>());
            prop_assert!(q.iter().next().is_none());
        }
    }
}
