//! The event queue: one pending event per element, ordered by (time, element).
//!
//! Every element (link, endpoint, sampler) has at most one pending event, as in htsim, so the
//! queue holds O(elements) entries however many packets are in flight. The queue enforces
//! this structurally: an element has one slot in one indexed min-heap, and scheduling an
//! element that already has an event moves that event. Ties at the same instant
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
/// Elements are split between two indexed binary min-heaps: a hot one for the elements whose
/// event moves on every packet (links) and a cold one for the rest (retransmission and
/// delayed-ACK timers, sources, the sampler), which wake rarely. The earliest event is the
/// earlier of the two heaps' tops. Keeping the timers out of the links' heap keeps it tiny, so
/// moving a link's event (what nearly every event does) costs a comparison or two whatever the
/// number of flows; a binary heap suits the shallow moves that remain.
#[derive(Clone, Debug, Default)]
pub(crate) struct EventQueue {
    /// The hot heap (0) and the cold heap (1).
    heaps: [Vec<Entry>; 2],
    /// Which heap each element's event goes in.
    heap_of: Vec<u8>,
    /// Position of each element's entry in its heap, or `NONE`.
    pos: Vec<u32>,
}

impl EventQueue {
    /// A queue for elements `0..hot.len()`; `hot[e]` says whether element `e`'s event moves
    /// often.
    pub(crate) fn new(hot: &[bool]) -> Self {
        let in_hot = hot.iter().filter(|&&h| h).count();
        EventQueue {
            heaps: [
                Vec::with_capacity(in_hot),
                Vec::with_capacity(hot.len() - in_hot),
            ],
            heap_of: hot.iter().map(|&h| u8::from(!h)).collect(),
            pos: vec![NONE; hot.len()],
        }
    }

    /// Number of pending events.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heaps[0].len() + self.heaps[1].len()
    }

    /// The earliest event.
    #[inline]
    pub(crate) fn peek(&self) -> Option<(Time, u32)> {
        let top = match (self.heaps[0].first(), self.heaps[1].first()) {
            (Some(&a), Some(&b)) => {
                if a.key < b.key {
                    a
                } else {
                    b
                }
            }
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => return None,
        };
        Some((top.time(), top.elem()))
    }

    /// When `elem`'s event is due, if it has one.
    #[inline]
    pub(crate) fn time_of(&self, elem: u32) -> Option<Time> {
        match self.pos[elem as usize] {
            NONE => None,
            p => Some(self.heaps[usize::from(self.heap_of[elem as usize])][p as usize].time()),
        }
    }

    /// Sets `elem`'s pending event to `time`, inserting it or moving an existing one.
    #[inline]
    pub(crate) fn schedule(&mut self, elem: u32, time: Time) {
        let entry = Entry::new(time, elem);
        let heap = &mut self.heaps[usize::from(self.heap_of[elem as usize])];
        match self.pos[elem as usize] {
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
        let heap = &mut self.heaps[usize::from(self.heap_of[elem as usize])];
        let entry = Entry::new(time, elem);
        debug_assert!(
            heap[0].elem() == elem && entry.key >= heap[0].key,
            "the earliest event is {elem}'s and cannot move back in time"
        );
        sift_down(heap, &mut self.pos, 0, entry);
    }

    /// Removes the earliest event, which must be `elem`'s.
    #[inline]
    pub(crate) fn pop_top(&mut self, elem: u32) {
        let heap = &mut self.heaps[usize::from(self.heap_of[elem as usize])];
        debug_assert_eq!(heap[0].elem(), elem, "the earliest event is {elem}'s");
        self.pos[elem as usize] = NONE;
        let last = heap.pop().expect("non-empty");
        if !heap.is_empty() {
            sift_down(heap, &mut self.pos, 0, last);
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
