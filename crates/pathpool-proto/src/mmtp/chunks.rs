//! The shared chunk-state array and path selection (thesis §4.6, Algorithm 1).
//!
//! One array, shared by every subflow, holds the state of each chunk: IDLE (not requested),
//! DOWNLOADED, or REQUESTED by subflow i. A subflow that may request more runs Algorithm 1 on
//! it; the array "projects the congestion windows of all subflows", so no central scheduler
//! exists and the next chunk always goes to the first subflow with room for it.
//!
//! Two implementations give the same requests (checked by a property test):
//! * [`ChunkArray::select_scan`], Algorithm 1 as printed, scanning cells from `win_start`;
//! * [`ChunkArray::select_fast`], the thesis's "lightweight fix" (§4.6): a global `next_idle`
//!   and the subflow's `pending` count, so a request costs O(log n) instead of a scan over the
//!   window. When cells released after two timeouts lie below some of the subflow's own
//!   requests, it still walks those (the thesis: "sequential parsing of cells is not always
//!   avoided"), which keeps it exact.

use std::collections::BTreeSet;

use super::message::PathIndex;

/// The state of one chunk (thesis §4.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChunkState {
    /// Not requested by any subflow (never, or released after two timeouts).
    Idle,
    /// Delivered; final.
    Downloaded,
    /// Requested by this subflow and not yet delivered.
    Requested(PathIndex),
}

/// What [`ChunkArray::select_scan`] did, with the loop variables of Algorithm 1 at its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scan {
    /// The chunks requested, ascending.
    pub requested: Vec<u32>,
    /// The value of `i` when the loop stopped.
    pub stopped_at: u32,
    /// `other_reqs` at that point.
    pub other_reqs: u32,
    /// `win_start` at that point.
    pub win_start: u32,
}

/// The chunk-state array of one transfer, with the indexes the fast path needs.
///
/// Invariants: every cell below `win_start` is DOWNLOADED; every cell at or above `frontier`
/// is IDLE and has never been requested; `released` holds exactly the IDLE cells below
/// `frontier`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkArray {
    states: Vec<ChunkState>,
    win_start: u32,
    frontier: u32,
    released: BTreeSet<u32>,
    downloaded: u32,
}

impl ChunkArray {
    /// An array of `chunk_count` IDLE chunks.
    #[must_use]
    pub fn new(chunk_count: u32) -> Self {
        ChunkArray {
            states: vec![ChunkState::Idle; chunk_count as usize],
            win_start: 0,
            frontier: 0,
            released: BTreeSet::new(),
            downloaded: 0,
        }
    }

    /// Number of chunks.
    #[must_use]
    pub fn len(&self) -> u32 {
        self.states.len() as u32
    }
    /// Whether the content has no chunk.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
    /// The state of chunk `index`.
    ///
    /// # Panics
    /// If `index` is not below [`len`](Self::len).
    #[must_use]
    pub fn state(&self, index: u32) -> ChunkState {
        self.states[index as usize]
    }
    /// All states, by index.
    #[must_use]
    pub fn states(&self) -> &[ChunkState] {
        &self.states
    }
    /// The left edge shared by every subflow (thesis §4.6 `win_start`; D55): the first chunk
    /// not downloaded.
    #[must_use]
    pub fn win_start(&self) -> u32 {
        self.win_start
    }
    /// The smallest IDLE chunk (thesis §4.6 `next_idle`), if any.
    #[must_use]
    pub fn next_idle(&self) -> Option<u32> {
        match self.released.first() {
            Some(&r) => Some(r),
            None => (self.frontier < self.len()).then_some(self.frontier),
        }
    }
    /// Number of chunks downloaded.
    #[must_use]
    pub fn downloaded(&self) -> u32 {
        self.downloaded
    }
    /// Whether every chunk is downloaded.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.downloaded == self.len()
    }

    /// Marks chunk `index` delivered; returns its previous state.
    pub fn mark_downloaded(&mut self, index: u32) -> ChunkState {
        let prev = self.states[index as usize];
        if prev == ChunkState::Downloaded {
            return prev;
        }
        if prev == ChunkState::Idle {
            self.take_idle(index);
        }
        self.states[index as usize] = ChunkState::Downloaded;
        self.downloaded += 1;
        while self.win_start < self.len() && self.state(self.win_start) == ChunkState::Downloaded {
            self.win_start += 1;
        }
        prev
    }

    /// Makes a requested chunk IDLE again so any subflow may request it (thesis §4.5: after
    /// two expiries; also when its subflow goes away). Does nothing to a DOWNLOADED chunk.
    pub fn release(&mut self, index: u32) {
        if let ChunkState::Requested(_) = self.state(index) {
            self.states[index as usize] = ChunkState::Idle;
            self.released.insert(index);
        }
    }

    /// Gives the array a new length (the subscriber starts with a provisional array holding
    /// chunk 0 until the metadata tells the count). New cells are IDLE.
    pub(crate) fn resize(&mut self, chunk_count: u32) {
        self.states.resize(chunk_count as usize, ChunkState::Idle);
        self.frontier = self.frontier.min(chunk_count);
        self.released.retain(|&r| r < chunk_count);
        self.win_start = self.win_start.min(chunk_count);
        self.downloaded = self
            .states
            .iter()
            .filter(|s| **s == ChunkState::Downloaded)
            .count() as u32;
    }

    /// Takes IDLE chunk `index` out of the indexes of IDLE cells.
    fn take_idle(&mut self, index: u32) {
        if index >= self.frontier {
            // A chunk beyond the frontier that was never requested (a stray reply): the IDLE
            // cells it skips keep the invariant as released cells.
            self.released.extend(self.frontier..index);
            self.frontier = index + 1;
        } else {
            self.released.remove(&index);
        }
    }

    fn request(&mut self, index: u32, by: PathIndex) {
        self.take_idle(index);
        self.states[index as usize] = ChunkState::Requested(by);
    }

    /// Algorithm 1 as printed (thesis §4.6): subflow `sf` with a window of `w` chunks
    /// requests the IDLE chunks among the first `w` cells, from `win_start`, that are IDLE or
    /// its own; cells requested by other subflows or downloaded extend the scan
    /// (`other_reqs`). Marks the chunks it requests and returns them in ascending order.
    pub fn select_scan(&mut self, sf: PathIndex, w: u32) -> Scan {
        let n = self.len();
        let mut requested = Vec::new();
        let mut i = self.win_start; // l.2
        let mut other_reqs = 0; // l.3
        while i < self.win_start.saturating_add(w).saturating_add(other_reqs) && i < n {
            // l.4 (bounded by the array)
            match self.state(i) {
                ChunkState::Idle => {
                    // l.5-7
                    self.request(i, sf);
                    requested.push(i);
                }
                ChunkState::Downloaded => {
                    if i == self.win_start {
                        self.win_start += 1; // l.9-10
                    } else {
                        other_reqs += 1; // l.12
                    }
                }
                ChunkState::Requested(owner) if owner != sf => other_reqs += 1, // l.14-15
                ChunkState::Requested(_) => {}
            }
            i += 1; // l.17
        }
        Scan {
            requested,
            stopped_at: i,
            other_reqs,
            win_start: self.win_start,
        }
    }

    /// The fast path (thesis §4.6, "a global `next_idle` … and a per-subflow `pending`"):
    /// the same requests as [`select_scan`](Self::select_scan) for subflow `sf` with window
    /// `w`, given its own REQUESTED cells `own` in ascending order.
    ///
    /// In the common case every IDLE cell lies above every own cell, and the subflow requests
    /// `w − pending` chunks from `next_idle` on. Cells released below some own request are
    /// merged with the own cells in index order, as the scan would meet them.
    ///
    /// `own` must list exactly the cells in state `Requested(sf)`.
    pub fn select_fast<I>(&mut self, sf: PathIndex, w: u32, own: I) -> Vec<u32>
    where
        I: IntoIterator<Item = u32>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut own = own.into_iter().peekable();
        let mut slots = 0;
        let mut requested = Vec::new();
        // Released cells first, interleaved with own cells by index (the rare case).
        while slots < w {
            let Some(&idle) = self.released.first() else {
                break;
            };
            match own.peek() {
                Some(&o) if o < idle => {
                    debug_assert_eq!(self.state(o), ChunkState::Requested(sf));
                    own.next();
                }
                _ => {
                    self.request(idle, sf);
                    requested.push(idle);
                }
            }
            slots += 1;
        }
        // Every cell from the frontier on is IDLE and above every own cell: the remaining own
        // cells take their slots, then `next_idle` gives the rest (`available = w − pending`).
        // The length, not a walk: a subflow can hold thousands of requests (a 1 Gb/s path
        // with a long RTT), and this runs for every reply.
        let pending = own.len() as u32;
        let available = w.saturating_sub(slots + pending);
        let end = self.len().min(self.frontier.saturating_add(available));
        for idle in self.frontier..end {
            self.states[idle as usize] = ChunkState::Requested(sf);
            requested.push(idle);
        }
        self.frontier = self.frontier.max(end);
        requested
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const S1: PathIndex = PathIndex(1);
    const S2: PathIndex = PathIndex(2);

    impl ChunkArray {
        /// An array in the given states, with `win_start` at `win_start` (which must not pass a
        /// chunk that is not downloaded).
        fn from_states(states: &[ChunkState], win_start: u32) -> Self {
            let mut a = ChunkArray::new(states.len() as u32);
            for (i, s) in states.iter().enumerate() {
                let i = i as u32;
                match *s {
                    ChunkState::Idle => {}
                    ChunkState::Downloaded => {
                        a.mark_downloaded(i);
                    }
                    ChunkState::Requested(by) => a.request(i, by),
                }
            }
            assert!(states[..win_start as usize]
                .iter()
                .all(|s| *s == ChunkState::Downloaded));
            a.win_start = win_start;
            a
        }
        fn own(&self, sf: PathIndex) -> Vec<u32> {
            (0..self.len())
                .filter(|&i| self.state(i) == ChunkState::Requested(sf))
                .collect()
        }
    }

    /// Thesis Fig. 4.3: cells 13..22 = R2, D, R2, R1, R1, R2, R2, IDLE, IDLE, IDLE (cells
    /// below 13 downloaded); subflow 1 has just grown its window to 4.
    fn fig_4_3() -> ChunkArray {
        use ChunkState::{Downloaded as D, Idle as I, Requested as R};
        let mut states = vec![D; 13];
        states.extend([R(S2), D, R(S2), R(S1), R(S1), R(S2), R(S2), I, I, I]);
        states.extend([I; 8]);
        ChunkArray::from_states(&states, 13)
    }

    #[test]
    fn fig_4_3_worked_example_scan() {
        let mut a = fig_4_3();
        let scan = a.select_scan(S1, 4);
        assert_eq!(
            scan.requested,
            vec![20, 21],
            "flow 1 requests 20 and 21 besides its 16 and 17"
        );
        // The loop ends at i = 22 as the thesis says, but as 13 + 4 + 5 (cells 13, 14, 15,
        // 18, 19 are other subflows' or downloaded), not the text's 14 + 4 + 3: cell 13 is R2,
        // so win_start stays 13 (docs/decisions.md D55).
        assert_eq!(scan.stopped_at, 22);
        assert_eq!(scan.win_start, 13);
        assert_eq!(scan.other_reqs, 5);
        assert_eq!(a.state(20), ChunkState::Requested(S1));
        assert_eq!(a.state(22), ChunkState::Idle);
    }

    #[test]
    fn fig_4_3_worked_example_fast_path() {
        let mut a = fig_4_3();
        assert_eq!(a.next_idle(), Some(20));
        let own = a.own(S1);
        assert_eq!(own, vec![16, 17], "pending = 2");
        assert_eq!(a.select_fast(S1, 4, own), vec![20, 21]);
        assert_eq!(a.next_idle(), Some(22));
        let mut scanned = fig_4_3();
        scanned.select_scan(S1, 4);
        assert_eq!(a.states(), scanned.states());
    }

    #[test]
    fn downloads_advance_the_shared_left_edge() {
        let mut a = ChunkArray::new(5);
        assert_eq!(a.select_fast(S1, 3, []), vec![0, 1, 2]);
        assert_eq!(a.mark_downloaded(1), ChunkState::Requested(S1));
        assert_eq!(a.win_start(), 0, "chunk 0 is still outstanding");
        a.mark_downloaded(0);
        assert_eq!(a.win_start(), 2);
        assert_eq!(a.downloaded(), 2);
        assert_eq!(
            a.mark_downloaded(0),
            ChunkState::Downloaded,
            "a duplicate changes nothing"
        );
        assert_eq!(a.downloaded(), 2);
        assert!(!a.is_complete());
    }

    #[test]
    fn released_chunks_come_back_first_and_in_order() {
        let mut a = ChunkArray::new(10);
        assert_eq!(a.select_fast(S1, 4, []), vec![0, 1, 2, 3]);
        assert_eq!(a.select_fast(S2, 2, []), vec![4, 5]);
        a.release(2);
        a.release(1);
        assert_eq!(a.state(1), ChunkState::Idle);
        assert_eq!(a.next_idle(), Some(1));
        // Subflow 2 holds 4 and 5; window 4 leaves two slots: the released 1 and 2.
        assert_eq!(a.select_fast(S2, 4, a.own(S2)), vec![1, 2]);
        assert_eq!(a.next_idle(), Some(6));
        a.mark_downloaded(0);
        a.release(0);
        assert_eq!(
            a.state(0),
            ChunkState::Downloaded,
            "a downloaded chunk is never released"
        );
    }

    #[test]
    fn a_released_cell_below_own_requests_is_taken_beyond_the_window() {
        // Algorithm 1 counts only the first w IDLE-or-own cells: an IDLE cell below the
        // subflow's own requests is taken even if the subflow already has w outstanding.
        use ChunkState::{Idle as I, Requested as R};
        let states = [I, R(S1), R(S1), I, I];
        let mut scan = ChunkArray::from_states(&states, 0);
        let mut fast = scan.clone();
        assert_eq!(fast.next_idle(), Some(0));
        assert_eq!(scan.select_scan(S1, 2).requested, vec![0]);
        assert_eq!(fast.select_fast(S1, 2, fast.own(S1)), vec![0]);
        assert_eq!(scan, fast);
    }

    #[test]
    fn the_array_end_bounds_both() {
        let mut a = ChunkArray::new(3);
        let mut b = a.clone();
        assert_eq!(a.select_scan(S1, 10).requested, vec![0, 1, 2]);
        assert_eq!(b.select_fast(S1, 10, []), vec![0, 1, 2]);
        assert_eq!(b.next_idle(), None);
        assert_eq!(a.select_fast(S2, 10, []), Vec::<u32>::new());
    }

    #[test]
    fn resizing_the_provisional_array() {
        let mut a = ChunkArray::new(1);
        assert_eq!(a.select_fast(S1, 1, []), vec![0]);
        a.resize(4);
        assert_eq!(a.next_idle(), Some(1));
        assert_eq!(a.state(0), ChunkState::Requested(S1));
        let mut empty = ChunkArray::new(1);
        empty.mark_downloaded(0);
        empty.resize(0);
        assert!(empty.is_complete());
        assert_eq!(empty.downloaded(), 0);
        assert_eq!(empty.next_idle(), None);
    }

    fn states_strategy() -> impl Strategy<Value = (Vec<ChunkState>, u32)> {
        let cell = prop_oneof![
            3 => Just(ChunkState::Idle),
            3 => Just(ChunkState::Downloaded),
            4 => (0u32..3).prop_map(|s| ChunkState::Requested(PathIndex(s))),
        ];
        (proptest::collection::vec(cell, 0..60), any::<u32>()).prop_map(|(states, pick)| {
            let first_not_done = states
                .iter()
                .position(|s| *s != ChunkState::Downloaded)
                .unwrap_or(states.len()) as u32;
            (states, pick % (first_not_done + 1))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The fast path requests exactly what Algorithm 1 requests, from any state and with
        /// `win_start` anywhere at or before the first chunk not downloaded.
        #[test]
        fn fast_path_equals_algorithm_1(
            (states, win_start) in states_strategy(),
            sf in 0u32..3,
            w in 1u32..12,
        ) {
            let sf = PathIndex(sf);
            let mut scan = ChunkArray::from_states(&states, win_start);
            let mut fast = ChunkArray::from_states(&states, win_start);
            let own = fast.own(sf);
            let by_scan = scan.select_scan(sf, w).requested;
            let by_fast = fast.select_fast(sf, w, own);
            prop_assert_eq!(&by_scan, &by_fast);
            prop_assert_eq!(scan.states(), fast.states());
            prop_assert_eq!(scan.next_idle(), fast.next_idle());
            // Requests are ascending and were IDLE.
            prop_assert!(by_fast.windows(2).all(|p| p[0] < p[1]));
            prop_assert!(by_fast.iter().all(|&i| states[i as usize] == ChunkState::Idle));
        }
    }
}
