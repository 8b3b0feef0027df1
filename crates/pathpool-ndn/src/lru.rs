//! A least-recently-used order over values kept in a slab: O(1) insertion at the head,
//! move to the head and removal at the tail, with stable indices for the tables that point
//! into it (the content store's and the FAB's).

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Node<T> {
    value: Option<T>,
    prev: u32,
    next: u32,
}

/// Values from most (head) to least (tail) recently used.
#[derive(Clone, Debug)]
pub(crate) struct LruList<T> {
    nodes: Vec<Node<T>>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
    len: usize,
}

impl<T> Default for LruList<T> {
    fn default() -> Self {
        LruList {
            nodes: Vec::new(),
            free: Vec::new(),
            head: NONE,
            tail: NONE,
            len: 0,
        }
    }
}

impl<T> LruList<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Inserts `value` as the most recently used; returns its index.
    pub(crate) fn push_front(&mut self, value: T) -> u32 {
        let node = Node {
            value: Some(value),
            prev: NONE,
            next: self.head,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() as u32 - 1
            }
        };
        if self.head != NONE {
            self.nodes[self.head as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
        self.len += 1;
        i
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = (self.nodes[i as usize].prev, self.nodes[i as usize].next);
        if prev != NONE {
            self.nodes[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NONE {
            self.nodes[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    /// Makes `i` the most recently used.
    pub(crate) fn touch(&mut self, i: u32) {
        if self.head == i {
            return;
        }
        self.unlink(i);
        let node = &mut self.nodes[i as usize];
        node.prev = NONE;
        node.next = self.head;
        self.nodes[self.head as usize].prev = i;
        self.head = i;
    }

    /// Removes `i`; returns its value.
    pub(crate) fn remove(&mut self, i: u32) -> T {
        self.unlink(i);
        self.free.push(i);
        self.len -= 1;
        self.nodes[i as usize]
            .value
            .take()
            .expect("an index given out holds a value")
    }

    /// The least recently used index.
    pub(crate) fn tail(&self) -> Option<u32> {
        (self.tail != NONE).then_some(self.tail)
    }

    pub(crate) fn get(&self, i: u32) -> &T {
        self.nodes[i as usize]
            .value
            .as_ref()
            .expect("an index given out holds a value")
    }

    /// Every value, most recently used first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        let mut i = self.head;
        std::iter::from_fn(move || {
            if i == NONE {
                return None;
            }
            let node = &self.nodes[i as usize];
            i = node.next;
            node.value.as_ref()
        })
    }

    pub(crate) fn clear(&mut self) {
        *self = LruList::default();
    }
}
