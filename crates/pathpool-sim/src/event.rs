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
#[derive(Clone, Debug)]
pub(crate) struct EventQueue {
    /// The winner tree, `2 · L` keys for `L` leaves, the number of hot elements rounded up to
    /// a power of two (at least one) so that every leaf is at the same depth: node 1 is the
    /// root, node `k`'s children are `2k` and `2k + 1`, and the leaves are `L..2L`; node 0 is
    /// unused. A leaf without an event (or beyond the hot elements) holds [`EMPTY`].
    tree: Vec<u128>,
    /// The cold elements' binary min-heap.
    cold: Vec<Entry>,
    /// For each element: its leaf (a node index of `tree`) if it is hot, or [`NONE`].
    leaf: Vec<u32>,
    /// Position of each cold element's entry in `cold`, or [`NONE`].
    pos: Vec<u32>,
}

/// The key of a leaf without an event: above every real key, whose top 32 bits are zero.
const EMPTY: u128 = u128::MAX;

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
        let in_hot = hot.iter().filter(|&&h| h).count();
        let leaves = in_hot.next_power_of_two();
        let mut next_leaf = leaves as u32;
        let leaf = hot
            .iter()
            .map(|&h| {
                if h {
                    next_leaf += 1;
                    next_leaf - 1
                } else {
                    NONE
                }
            })
            .collect();
        EventQueue {
            tree: vec![EMPTY; 2 * leaves],
            cold: Vec::with_capacity(hot.len() - in_hot),
            leaf,
            pos: vec![NONE; hot.len()],
        }
    }

    /// Number of pending events.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        let hot = &self.tree[self.tree.len() / 2..];
        hot.iter().filter(|&&k| k != EMPTY).count() + self.cold.len()
    }

    /// The earliest event.
    #[inline]
    pub(crate) fn peek(&self) -> Option<(Time, u32)> {
        // The tree has at least one leaf, so node 1 exists (it is the leaf when there is one).
        let hot = self.tree[1];
        let key = match self.cold.first() {
            Some(c) if c.key < hot => c.key,
            _ if hot != EMPTY => hot,
            _ => return None,
        };
        let top = Entry { key };
        Some((top.time(), top.elem()))
    }

    /// When `elem`'s event is due, if it has one.
    #[inline]
    pub(crate) fn time_of(&self, elem: u32) -> Option<Time> {
        match self.leaf[elem as usize] {
            NONE => match self.pos[elem as usize] {
                NONE => None,
                p => Some(self.cold[p as usize].time()),
            },
            leaf => {
                let key = self.tree[leaf as usize];
                (key != EMPTY).then(|| Entry { key }.time())
            }
        }
    }

    /// Sets `elem`'s pending event to `time`, inserting it or moving an existing one.
    #[inline]
    pub(crate) fn schedule(&mut self, elem: u32, time: Time) {
        let entry = Entry::new(time, elem);
        match self.leaf[elem as usize] {
            NONE => self.schedule_cold(entry),
            leaf => self.set_leaf(leaf, entry.key),
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
            NONE => sift_down(&mut self.cold, &mut self.pos, 0, entry),
            leaf => self.set_leaf(leaf, entry.key),
        }
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
            }
            leaf => self.set_leaf(leaf, EMPTY),
        }
    }

    /// Gives leaf `leaf` the key `key` and brings its ancestors up to date: each becomes the
    /// smaller of its children, the one on the leaf's side being the winner carried up.
    #[inline]
    fn set_leaf(&mut self, leaf: u32, key: u128) {
        let tree = &mut self.tree[..];
        let mut node = leaf as usize;
        let mut winner = key;
        tree[node] = winner;
        while node > 1 {
            let rival = tree[node ^ 1];
            // This compiles to a branch. Reading the winner from the index the comparison
            // gives removes it, but was slower by wall clock (D112).
            winner = winner.min(rival);
            node >>= 1;
            tree[node] = winner;
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
            let mut q = EventQueue::new(&hot);
            let mut model: BTreeMap<u32, u64> = BTreeMap::new();
            for (elem, t, op) in ops {
                match op {
                    0..=2 => {
                        q.schedule(elem, Time(t));
                        model.insert(elem, t);
                    }
                    3 => {
                        // Move the earliest event later.
                        if let Some((t0, e)) = model.iter().map(|(&e, &t)| (t, e)).min() {
                            q.reschedule_top(e, Time(t0 + t));
                            model.insert(e, t0 + t);
                        }
                    }
                    _ => {
                        let want = model.iter().map(|(&e, &t)| (t, e)).min();
                        let got = q.pop().map(|(t, e)| (t.0, e));
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
        }
    }
}
