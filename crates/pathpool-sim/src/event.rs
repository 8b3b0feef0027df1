//! The event queue: one pending event per element, ordered by (time, element).
//!
//! Every element (link, endpoint, sampler) has at most one pending event, as in htsim, so the
//! queue holds O(elements) entries however many packets are in flight. The queue enforces
//! this structurally: it is an indexed binary min-heap with one slot per element, and
//! scheduling an element that already has an event moves that event. Ties at the same instant
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

/// An indexed min-heap of (time, element) with at most one entry per element.
///
/// The heap is binary rather than 4-ary: most operations move a link's event at the top a
/// little later, and it sinks one or two levels at most (below the links' events are the
/// retransmission timers, far in the future), where two comparisons per level beat four.
#[derive(Clone, Debug, Default)]
pub(crate) struct EventQueue {
    heap: Vec<Entry>,
    /// Heap position of each element's entry, or `NONE`.
    pos: Vec<u32>,
}

impl EventQueue {
    /// A queue for elements `0..n`.
    pub(crate) fn with_elements(n: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(n),
            pos: vec![NONE; n],
        }
    }

    /// Makes room for elements up to `n`.
    pub(crate) fn grow(&mut self, n: usize) {
        if self.pos.len() < n {
            self.pos.resize(n, NONE);
        }
    }

    /// Number of pending events.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// The earliest event.
    #[inline]
    pub(crate) fn peek(&self) -> Option<(Time, u32)> {
        self.heap.first().map(|e| (e.time(), e.elem()))
    }

    /// When `elem`'s event is due, if it has one.
    #[inline]
    pub(crate) fn time_of(&self, elem: u32) -> Option<Time> {
        match self.pos[elem as usize] {
            NONE => None,
            p => Some(self.heap[p as usize].time()),
        }
    }

    /// Sets `elem`'s pending event to `time`, inserting it or moving an existing one.
    #[inline]
    pub(crate) fn schedule(&mut self, elem: u32, time: Time) {
        let entry = Entry::new(time, elem);
        match self.pos[elem as usize] {
            NONE => {
                let i = self.heap.len();
                self.heap.push(entry);
                self.sift_up(i, entry);
            }
            p => {
                let p = p as usize;
                let old = self.heap[p];
                if entry.key < old.key {
                    self.sift_up(p, entry);
                } else {
                    self.sift_down(p, entry);
                }
            }
        }
    }

    /// Moves the earliest event (which must exist) to `time`: cheaper than pop + push.
    #[inline]
    pub(crate) fn reschedule_top(&mut self, time: Time) {
        let top = self.heap[0];
        let entry = Entry::new(time, top.elem());
        debug_assert!(
            entry.key >= top.key,
            "an element cannot move its own event back in time"
        );
        self.sift_down(0, entry);
    }

    /// Removes the earliest event.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(Time, u32)> {
        let top = *self.heap.first()?;
        self.pos[top.elem() as usize] = NONE;
        let last = self.heap.pop().expect("non-empty");
        if !self.heap.is_empty() {
            self.sift_down(0, last);
        }
        Some((top.time(), top.elem()))
    }

    fn sift_up(&mut self, mut i: usize, e: Entry) {
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = self.heap[parent];
            if p.key <= e.key {
                break;
            }
            self.heap[i] = p;
            self.pos[p.elem() as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = e;
        self.pos[e.elem() as usize] = i as u32;
    }

    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let heap = &mut self.heap[..];
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
            self.pos[c.elem() as usize] = i as u32;
            i = child;
        }
        heap[i] = e;
        self.pos[e.elem() as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn orders_by_time_then_element() {
        let mut q = EventQueue::with_elements(4);
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
        let mut q = EventQueue::with_elements(3);
        q.schedule(0, Time(10));
        q.schedule(1, Time(20));
        q.schedule(0, Time(30));
        assert_eq!(q.len(), 2, "one entry per element");
        assert_eq!(q.time_of(0), Some(Time(30)));
        assert_eq!(q.pop(), Some((Time(20), 1)));
        q.reschedule_top(Time(40));
        assert_eq!(q.peek(), Some((Time(40), 0)));
        assert_eq!(q.pop(), Some((Time(40), 0)));
        assert_eq!(q.time_of(0), None);
    }

    proptest! {
        /// The queue behaves like a map element -> time read in (time, element) order.
        #[test]
        fn matches_a_reference_map(ops in proptest::collection::vec((0u32..16, 0u64..50, 0u8..4), 1..300)) {
            let mut q = EventQueue::with_elements(16);
            let mut model: BTreeMap<u32, u64> = BTreeMap::new();
            for (elem, t, op) in ops {
                match op {
                    0..=2 => {
                        q.schedule(elem, Time(t));
                        model.insert(elem, t);
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
