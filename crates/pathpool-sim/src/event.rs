//! The event queue: one pending event per element, ordered by (time, element).
//!
//! Every element (link, endpoint, sampler) has at most one pending event, as in htsim, so the
//! queue holds O(elements) entries however many packets are in flight. The queue enforces
//! this structurally: an element has one slot (a leaf of a winner tree or a place in an indexed
//! min-heap), and scheduling an element that already has an event moves that event. Ties at the same instant
//! are broken by element index, so the order of events never depends on anything but the
//! scenario: the same scenario and seed give the same run on every machine.

use pathpool_core::Time;

const NONE: u32 = u32::MAX;

/// [`EventQueue::next`]'s mark of a hot element's event: the rest is the element's leaf rank.
pub(crate) const HOT: u32 = 1 << 31;

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// `(time << 32) | element`: one comparison orders by time, then by element.
    key: u128,
}

impl Entry {
    fn new(time: Time, elem: u32) -> Self {
        Entry {
            key: (u128::from(time.as_ps()) << 32) | u128::from(elem),
        }
    }
    fn elem(self) -> u32 {
        self.key as u32
    }
    fn time(self) -> Time {
        Time((self.key >> 32) as u64)
    }
}

/// Pending events, at most one per element, taken in (time, element) order.
///
/// Elements are split in two: the hot ones, whose event moves on every packet (links that hold
/// packets), and the cold ones (retransmission and delayed-ACK timers, sources, the sampler),
/// which wake rarely. The earliest event is the earlier of the two parts' first.
///
/// The hot elements are the leaves of a winner tree (a tournament): every inner node holds the
/// smaller key of its two children, so the root is the earliest hot event. Moving an element's
/// event rewrites the nodes from its leaf to the root, one comparison per level and always all
/// levels, where a binary heap's sift-down makes two comparisons a level and a data-dependent
/// exit (`docs/decisions.md` D112). The cold elements keep an indexed binary heap: there are
/// many of them and they move rarely.
///
/// A hot key is one 64-bit word, `(time << shift) | rank`, where `rank` is the leaf's
/// position among the `2^shift` leaves (D118). Hot elements get their leaves in element order,
/// so ordering by (time, rank) is ordering by (time, element), ties included, and one word
/// costs a level of the tree half the loads, stores and comparison of the `u128` key it
/// replaces; and the rank comes out of the root's key without a lookup, so the simulator finds
/// the link whose event is due in a table by rank ([`EventQueue::next`]). A time too large for
/// the word (at least `sat` picoseconds: 26 days with eight leaves) is stored as `sat`,
/// exactly in `far`; such keys sort after every exact one, and while the earliest hot key is
/// one of them, `next` finds the earliest by looking at the exact times.
#[derive(Clone, Debug)]
pub(crate) struct EventQueue {
    /// The winner tree, `2 · L` keys for `L = 2^shift` leaves, the number of hot elements
    /// rounded up to a power of two (at least one) so that every leaf is at the same depth:
    /// node 1 is the root, node `k`'s children are `2k` and `2k + 1`, and the leaves are
    /// `L..2L`; node 0 is unused. A leaf without an event (or beyond the hot elements) holds
    /// [`EMPTY`].
    tree: Vec<u64>,
    /// `log2 L`: a hot key's time is shifted left by this much.
    shift: u32,
    /// `L - 1`: a hot key's rank.
    mask: u64,
    /// The first time that does not fit a hot key: `2^(64 - shift) - 2`, so that the largest
    /// key, `(sat << shift) | (L - 1)`, is below [`EMPTY`].
    sat: u64,
    /// `sat << shift`: every key below it holds its exact time.
    sat_key: u64,
    /// The time of the cold heap's first event (`u64::MAX` if none), kept so that `next` can
    /// tell the common case, a hot event before every cold one, from one comparison.
    cold_time: u64,
    /// The element of each leaf, by rank.
    elem_of: Vec<u32>,
    /// The exact time of each leaf whose key holds `sat`, by rank (stale otherwise).
    far: Vec<u64>,
    /// The cold elements' binary min-heap.
    cold: Vec<Entry>,
    /// For each element: its leaf (a node index of `tree`) if it is hot, or [`NONE`].
    leaf: Vec<u32>,
    /// Position of each cold element's entry in `cold`, or [`NONE`].
    pos: Vec<u32>,
}

/// The key of a leaf without an event: above every real key.
const EMPTY: u64 = u64::MAX;

impl Default for EventQueue {
    /// A queue without elements.
    fn default() -> Self {
        EventQueue::new(&[])
    }
}

impl EventQueue {
    /// A queue for elements `0..hot.len()`; `hot[e]` says whether element `e`'s event moves
    /// often.
    pub(crate) fn new(hot: &[bool]) -> Self {
        assert!(
            hot.len() < HOT as usize,
            "element indices leave the top bit free"
        );
        let in_hot = hot.iter().filter(|&&h| h).count();
        let leaves = in_hot.next_power_of_two();
        let shift = leaves.trailing_zeros();
        let mut next_leaf = leaves as u32;
        let mut elem_of = Vec::with_capacity(leaves);
        let leaf = hot
            .iter()
            .enumerate()
            .map(|(e, &h)| {
                if h {
                    elem_of.push(e as u32);
                    next_leaf += 1;
                    next_leaf - 1
                } else {
                    NONE
                }
            })
            .collect();
        elem_of.resize(leaves, NONE);
        EventQueue {
            tree: vec![EMPTY; 2 * leaves],
            shift,
            mask: leaves as u64 - 1,
            sat: (u64::MAX >> shift) - 1,
            sat_key: ((u64::MAX >> shift) - 1) << shift,
            cold_time: u64::MAX,
            elem_of,
            far: vec![0; leaves],
            cold: Vec::with_capacity(hot.len() - in_hot),
            leaf,
            pos: vec![NONE; hot.len()],
        }
    }

    /// The key of leaf `leaf` with an event at `time`.
    #[inline]
    fn hot_key(&mut self, leaf: u32, time: Time) -> u64 {
        // Leaves are `L..2L`, so the rank is the leaf's low bits.
        let rank = u64::from(leaf) & self.mask;
        if time.as_ps() < self.sat {
            (time.as_ps() << self.shift) | rank
        } else {
            self.far_key(rank as usize, time)
        }
    }

    /// [`EventQueue::hot_key`] for a time that does not fit: kept exactly in `far`.
    #[cold]
    fn far_key(&mut self, rank: usize, time: Time) -> u64 {
        self.far[rank] = time.as_ps();
        (self.sat << self.shift) | rank as u64
    }

    /// The time and element of hot key `key` (not [`EMPTY`]).
    #[inline]
    fn decode(&self, key: u64) -> (Time, u32) {
        let rank = (key & self.mask) as usize;
        let t = key >> self.shift;
        let t = if t < self.sat { t } else { self.far[rank] };
        (Time(t), self.elem_of[rank])
    }

    /// Number of pending events.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        let hot = &self.tree[self.tree.len() / 2..];
        hot.iter().filter(|&&k| k != EMPTY).count() + self.cold.len()
    }

    /// The earliest event (for checks: the simulator runs on [`EventQueue::next`]).
    pub(crate) fn peek(&self) -> Option<(Time, u32)> {
        self.next().map(|(t, id)| match id & HOT {
            0 => (t, id),
            _ => (t, self.elem_of[(id & !HOT) as usize]),
        })
    }

    /// The earliest event: its time and, for a hot element, [`HOT`] with the element's leaf
    /// rank ([`EventQueue::hot_elem`] gives the element, [`EventQueue::reschedule_hot`] and
    /// [`EventQueue::pop_hot`] move it), else the element. The rank comes from the key
    /// without a lookup, so a driver that keeps its own table by rank (the simulator's links)
    /// finds what to run with one load.
    #[inline]
    pub(crate) fn next(&self) -> Option<(Time, u32)> {
        // The tree has at least one leaf, so node 1 exists (it is the leaf when there is one).
        let hot = self.tree[1];
        if hot < self.sat_key {
            let t = hot >> self.shift;
            // Nearly every event: a hot one strictly before the first cold one.
            if t < self.cold_time {
                return Some((Time(t), HOT | (hot & self.mask) as u32));
            }
        }
        self.next_slow()
    }

    /// [`EventQueue::next`] when a cold event comes first, ties with the first hot one, or
    /// there is no hot event with an exact key.
    #[inline(never)]
    fn next_slow(&self) -> Option<(Time, u32)> {
        let hot = self.tree[1];
        if hot >= self.sat_key {
            return self.next_far();
        }
        let (t, e) = self.decode(hot);
        match self.cold.first() {
            Some(c) if c.key < Entry::new(t, e).key => Some((c.time(), c.elem())),
            _ => Some((t, HOT | (hot & self.mask) as u32)),
        }
    }

    /// The element of leaf rank `rank`.
    #[cfg(test)]
    pub(crate) fn hot_elem(&self, rank: u32) -> u32 {
        self.elem_of[rank as usize]
    }

    /// [`EventQueue::next`] when no hot event has a time that fits a key: the earliest of the
    /// far hot events' exact times (in element order at equal times) and the cold heap's first.
    #[cold]
    fn next_far(&self) -> Option<(Time, u32)> {
        let leaves = self.elem_of.len();
        let hot = (0..leaves)
            .filter(|&r| self.tree[leaves + r] != EMPTY)
            .map(|r| (Entry::new(Time(self.far[r]), self.elem_of[r]).key, r))
            .min();
        match (hot, self.cold.first()) {
            (Some((h, _)), Some(c)) if c.key < h => Some((c.time(), c.elem())),
            (Some((h, r)), _) => Some((Entry { key: h }.time(), HOT | r as u32)),
            (None, Some(c)) => Some((c.time(), c.elem())),
            (None, None) => None,
        }
    }

    /// When `elem`'s event is due, if it has one.
    #[inline]
    pub(crate) fn time_of(&self, elem: u32) -> Option<Time> {
        match self.leaf[elem as usize] {
            NONE => match self.pos[elem as usize] {
                NONE => None,
                p => Some(self.cold[p as usize].time()),
            },
            leaf => self.hot_time_of(leaf),
        }
    }

    /// [`EventQueue::time_of`] for a hot element (the engine asks it about endpoints, whose
    /// elements are cold: kept out of their way).
    #[inline(never)]
    fn hot_time_of(&self, leaf: u32) -> Option<Time> {
        let key = self.tree[leaf as usize];
        (key != EMPTY).then(|| self.decode(key).0)
    }

    /// Sets `elem`'s pending event to `time`, inserting it or moving an existing one.
    #[inline]
    pub(crate) fn schedule(&mut self, elem: u32, time: Time) {
        let entry = Entry::new(time, elem);
        match self.leaf[elem as usize] {
            NONE => self.schedule_cold(entry),
            leaf => {
                let key = self.hot_key(leaf, time);
                self.set_leaf(leaf, key);
            }
        }
    }

    fn schedule_cold(&mut self, entry: Entry) {
        let heap = &mut self.cold;
        match self.pos[entry.elem() as usize] {
            NONE => {
                let i = heap.len();
                heap.push(entry);
                sift_up(heap, &mut self.pos, i, entry);
            }
            p => {
                let p = p as usize;
                if entry.key < heap[p].key {
                    sift_up(heap, &mut self.pos, p, entry);
                } else {
                    sift_down(heap, &mut self.pos, p, entry);
                }
            }
        }
        self.cold_moved();
    }

    /// Brings `cold_time` up to date after a change of the cold heap.
    #[inline]
    fn cold_moved(&mut self) {
        self.cold_time = self.cold.first().map_or(u64::MAX, |c| c.time().as_ps());
    }

    /// Moves the earliest event, which must be `elem`'s, to `time`: cheaper than pop + push.
    #[inline]
    pub(crate) fn reschedule_top(&mut self, elem: u32, time: Time) {
        let entry = Entry::new(time, elem);
        debug_assert!(
            self.peek().is_some_and(|(t, e)| e == elem && time >= t),
            "the earliest event is {elem}'s and cannot move back in time"
        );
        match self.leaf[elem as usize] {
            NONE => {
                sift_down(&mut self.cold, &mut self.pos, 0, entry);
                self.cold_moved();
            }
            leaf => {
                let key = self.hot_key(leaf, time);
                self.set_leaf(leaf, key);
            }
        }
    }

    /// [`EventQueue::reschedule_top`] for the hot element of leaf rank `rank`.
    #[inline]
    pub(crate) fn reschedule_hot(&mut self, rank: u32, time: Time) {
        debug_assert!(
            self.next()
                .is_some_and(|(t, id)| id == HOT | rank && time >= t),
            "the earliest event is rank {rank}'s and cannot move back in time"
        );
        let leaf = self.elem_of.len() as u32 + rank;
        let key = self.hot_key(leaf, time);
        self.set_leaf(leaf, key);
    }

    /// [`EventQueue::pop_top`] for the hot element of leaf rank `rank`.
    #[inline]
    pub(crate) fn pop_hot(&mut self, rank: u32) {
        debug_assert_eq!(self.next().map(|(_, id)| id), Some(HOT | rank));
        let leaf = self.elem_of.len() as u32 + rank;
        self.set_leaf(leaf, EMPTY);
    }

    /// Removes the earliest event, which must be `elem`'s.
    #[inline]
    pub(crate) fn pop_top(&mut self, elem: u32) {
        debug_assert_eq!(
            self.peek().map(|(_, e)| e),
            Some(elem),
            "the earliest event is {elem}'s"
        );
        match self.leaf[elem as usize] {
            NONE => {
                self.pos[elem as usize] = NONE;
                let last = self.cold.pop().expect("non-empty");
                if !self.cold.is_empty() {
                    sift_down(&mut self.cold, &mut self.pos, 0, last);
                }
                self.cold_moved();
            }
            leaf => self.set_leaf(leaf, EMPTY),
        }
    }

    /// Gives leaf `leaf` the key `key` and brings its ancestors up to date: each becomes the
    /// smaller of its children, the one on the leaf's side being the winner carried up.
    #[inline]
    fn set_leaf(&mut self, leaf: u32, key: u64) {
        let tree = &mut self.tree[..];
        // The tree's length is a power of two, so masking with `len - 1` keeps an index in
        // bounds without a check; the nodes visited are below `len` anyway.
        let m = tree.len() - 1;
        let mut node = leaf as usize;
        let mut winner = key;
        tree[node & m] = winner;
        if let Some(Ok(leaves)) = tree.get(8..).map(<&[u64; 8]>::try_from) {
            // Eight leaves (a four-path topology's bottlenecks): the root straight from the
            // leaves by a balanced minimum, fewer instructions than three levels of the loop
            // and no chain through the inner nodes, which stay stale (only the root and the
            // leaves are ever read).
            let [a, b, c, d, e, f, g, h] = *leaves;
            tree[1] = a.min(b).min(c.min(d)).min(e.min(f).min(g.min(h)));
            return;
        }
        while node > 1 {
            let rival = tree[(node ^ 1) & m];
            // A conditional move on one word: no branch, and no load depends on its outcome.
            winner = winner.min(rival);
            node >>= 1;
            tree[node & m] = winner;
        }
    }
}

/// Moves `e` from position `i` towards the root of `heap` to its place.
fn sift_up(heap: &mut [Entry], pos: &mut [u32], mut i: usize, e: Entry) {
    while i > 0 {
        let parent = (i - 1) / 2;
        let p = heap[parent];
        if p.key <= e.key {
            break;
        }
        heap[i] = p;
        pos[p.elem() as usize] = i as u32;
        i = parent;
    }
    heap[i] = e;
    pos[e.elem() as usize] = i as u32;
}

/// Moves `e` from position `i` towards the leaves of `heap` to its place.
#[inline]
fn sift_down(heap: &mut [Entry], pos: &mut [u32], mut i: usize, e: Entry) {
    loop {
        let left = 2 * i + 1;
        let Some(&l) = heap.get(left) else { break };
        let (child, c) = match heap.get(left + 1) {
            Some(&r) if r.key < l.key => (left + 1, r),
            _ => (left, l),
        };
        if c.key >= e.key {
            break;
        }
        heap[i] = c;
        pos[c.elem() as usize] = i as u32;
        i = child;
    }
    heap[i] = e;
    pos[e.elem() as usize] = i as u32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    impl EventQueue {
        /// Removes and returns the earliest event.
        fn pop(&mut self) -> Option<(Time, u32)> {
            let top = self.peek()?;
            self.pop_top(top.1);
            Some(top)
        }
    }

    #[test]
    fn orders_by_time_then_element() {
        let mut q = EventQueue::new(&[false, true, false, true]);
        q.schedule(3, Time(10));
        q.schedule(1, Time(10));
        q.schedule(2, Time(5));
        assert_eq!(q.pop(), Some((Time(5), 2)));
        assert_eq!(q.pop(), Some((Time(10), 1)));
        assert_eq!(q.pop(), Some((Time(10), 3)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn rescheduling_moves_the_single_entry() {
        let mut q = EventQueue::new(&[true, false, true]);
        q.schedule(0, Time(10));
        q.schedule(1, Time(20));
        q.schedule(0, Time(30));
        assert_eq!(q.len(), 2, "one entry per element");
        assert_eq!(q.time_of(0), Some(Time(30)));
        assert_eq!(q.pop(), Some((Time(20), 1)));
        q.reschedule_top(0, Time(40));
        assert_eq!(q.peek(), Some((Time(40), 0)));
        assert_eq!(q.pop(), Some((Time(40), 0)));
        assert_eq!(q.time_of(0), None);
    }

    proptest! {
        /// The queue behaves like a map element -> time read in (time, element) order, however
        /// the elements are split between the hot and the cold heap.
        #[test]
        fn matches_a_reference_map(
            hot in proptest::array::uniform16(any::<bool>()),
            ops in proptest::collection::vec((0u32..16, 0u64..50, 0u8..5), 1..300),
        ) {
            check_against_map(&hot, &ops, |_, t| t)?;
        }

        /// The same with times around and beyond the largest a hot key holds exactly, where
        /// keys saturate and the exact times decide.
        #[test]
        fn matches_a_reference_map_at_far_times(
            hot in proptest::array::uniform16(any::<bool>()),
            ops in proptest::collection::vec((0u32..16, 0u64..50, 0u8..5), 1..300),
        ) {
            check_against_map(&hot, &ops, |q, t| {
                if t < 10 {
                    t
                } else {
                    // From a little below `sat` to `u64::MAX`.
                    (q.sat - 20).saturating_add(t) | if t > 45 { u64::MAX } else { 0 }
                }
            })?;
        }
    }

    fn check_against_map(
        hot: &[bool],
        ops: &[(u32, u64, u8)],
        time: impl Fn(&EventQueue, u64) -> u64,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut q = EventQueue::new(hot);
        let mut model: BTreeMap<u32, u64> = BTreeMap::new();
        for &(elem, t, op) in ops {
            let t = time(&q, t);
            match op {
                0..=2 => {
                    q.schedule(elem, Time(t));
                    model.insert(elem, t);
                }
                3 => {
                    // Move the earliest event later, as the simulator does: a hot one by its
                    // rank, as `next` gives it.
                    if let Some((t0, e)) = model.iter().map(|(&e, &t)| (t, e)).min() {
                        let later = t0.saturating_add(t % 50);
                        match q.next() {
                            Some((_, id)) if id & HOT != 0 => {
                                prop_assert_eq!(q.hot_elem(id & !HOT), e);
                                q.reschedule_hot(id & !HOT, Time(later));
                            }
                            _ => q.reschedule_top(e, Time(later)),
                        }
                        model.insert(e, later);
                    }
                }
                4 if t % 2 == 0 => {
                    let want = model.iter().map(|(&e, &t)| (t, e)).min();
                    let got = q.pop().map(|(t, e)| (t.0, e));
                    prop_assert_eq!(got, want);
                    if let Some((_, e)) = want {
                        model.remove(&e);
                    }
                }
                _ => {
                    // The same through `next` and `pop_hot`.
                    let want = model.iter().map(|(&e, &t)| (t, e)).min();
                    let got = q.next().map(|(t, id)| match id & HOT {
                        0 => {
                            q.pop_top(id);
                            (t.0, id)
                        }
                        _ => {
                            let e = q.hot_elem(id & !HOT);
                            q.pop_hot(id & !HOT);
                            (t.0, e)
                        }
                    });
                    prop_assert_eq!(got, want);
                    if let Some((_, e)) = want {
                        model.remove(&e);
                    }
                }
            }
            prop_assert_eq!(q.len(), model.len());
            for (&e, &t) in &model {
                prop_assert_eq!(q.time_of(e), Some(Time(t)));
            }
        }
        Ok(())
    }
}
