//! The Forwarding Acceleration Base (PTP paper §4.B, spec 004 §3.4): flow name → FIB entry
//! for the active flows, so that a tagged Interest's next-hop check skips the longest-prefix
//! match. A chained hash table with a bounded least-recently-used order: a miss runs the
//! LPM and inserts at the head, a hit moves to the head, a full table evicts the tail (the
//! paper calls the list FIFO, but moving a hit to the head makes it LRU). It is flushed
//! whenever the FIB changes, since it points at FIB entries.

use crate::fib::{Fib, FibEntryId};
use crate::lru::LruList;
use crate::name::Name;

/// How a FAB recognises a flow in a bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FabKey {
    /// By the flow name stored with the tuple (default).
    #[default]
    Stored,
    /// As the paper suggests, without storing the key: a tuple matches when its FIB entry's
    /// prefix is a prefix of the flow name. Wrong with nested prefixes: a flow of a more
    /// specific entry sharing a bucket with a flow of the shorter one gets the shorter.
    Prefix,
}

/// What a FAB did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FabStats {
    /// Lookups it answered.
    pub hits: u64,
    /// Lookups that ran the LPM.
    pub misses: u64,
    /// Tuples evicted for room.
    pub evictions: u64,
    /// Times it was emptied because the FIB changed.
    pub flushes: u64,
}

#[derive(Clone, Debug)]
struct Tuple {
    hash: u64,
    /// The flow name, with [`FabKey::Stored`].
    key: Option<Name>,
    entry: FibEntryId,
}

/// One node's FAB.
#[derive(Clone, Debug)]
pub struct Fab {
    capacity: usize,
    key: FabKey,
    buckets: Vec<Vec<u32>>,
    order: LruList<Tuple>,
    fib_version: Option<u64>,
    stats: FabStats,
}

impl Fab {
    /// A FAB of `capacity` tuples (0: every lookup is an LPM) with twice as many buckets,
    /// rounded up to a power of two.
    #[must_use]
    pub fn new(capacity: usize, key: FabKey) -> Self {
        Fab::with_buckets(capacity, key, (2 * capacity).next_power_of_two())
    }

    /// A FAB of `capacity` tuples in `buckets` buckets (at least one); few buckets force
    /// collisions.
    #[must_use]
    pub fn with_buckets(capacity: usize, key: FabKey, buckets: usize) -> Self {
        Fab {
            capacity,
            key,
            buckets: vec![Vec::new(); buckets.max(1)],
            order: LruList::default(),
            fib_version: None,
            stats: FabStats::default(),
        }
    }

    fn bucket(&self, hash: u64) -> usize {
        (hash % self.buckets.len() as u64) as usize
    }

    /// The FIB entry for the flow `flow`: the tuple's if the FAB holds one, else the LPM's,
    /// remembered (`None`: no entry matches, and nothing is remembered).
    pub fn lookup(&mut self, flow: &Name, fib: &Fib) -> Option<FibEntryId> {
        if self.fib_version != Some(fib.version()) {
            if self.order.len() > 0 {
                self.stats.flushes += 1;
            }
            self.order.clear();
            self.buckets.iter_mut().for_each(Vec::clear);
            self.fib_version = Some(fib.version());
        }
        let hash = flow.prefix_hash();
        let b = self.bucket(hash);
        let found = self.buckets[b].iter().copied().find(|&i| {
            let t = self.order.get(i);
            match self.key {
                FabKey::Stored => t.hash == hash && t.key.as_ref() == Some(flow),
                FabKey::Prefix => fib.entry(t.entry).prefix.is_prefix_of(flow),
            }
        });
        if let Some(i) = found {
            self.stats.hits += 1;
            self.order.touch(i);
            return Some(self.order.get(i).entry);
        }
        self.stats.misses += 1;
        let entry = fib.lpm(flow)?;
        if self.capacity == 0 {
            return Some(entry);
        }
        if self.order.len() >= self.capacity {
            if let Some(t) = self.order.tail() {
                let old = self.order.remove(t);
                let ob = self.bucket(old.hash);
                self.buckets[ob].retain(|&x| x != t);
                self.stats.evictions += 1;
            }
        }
        let i = self.order.push_front(Tuple {
            hash,
            key: (self.key == FabKey::Stored).then(|| flow.clone()),
            entry,
        });
        self.buckets[b].push(i);
        Some(entry)
    }

    /// Tuples held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether it holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.order.len() == 0
    }

    /// The stored flow names, most recently used first (`None` for tuples without a key).
    pub fn keys(&self) -> impl Iterator<Item = Option<&Name>> {
        self.order.iter().map(|t| t.key.as_ref())
    }

    /// Its counters.
    #[must_use]
    pub fn stats(&self) -> FabStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn n(s: &str) -> Name {
        Name::parse(s).unwrap()
    }

    /// Issue 22, acceptance 1: capacity 2, flows a, b, a, c, b: 1 hit, 4 misses, 2 evictions.
    #[test]
    fn a_hit_moves_to_the_head_and_the_tail_is_evicted() {
        let mut fib = Fib::new();
        fib.add_next_hop(&n("/"), 1, 0);
        let mut fab = Fab::new(2, FabKey::Stored);
        for f in ["/a", "/b", "/a", "/c", "/b"] {
            assert!(fab.lookup(&n(f), &fib).is_some());
        }
        assert_eq!(
            fab.stats(),
            FabStats {
                hits: 1,
                misses: 4,
                evictions: 2,
                flushes: 0
            }
        );
        let keys: Vec<String> = fab.keys().map(|k| k.unwrap().to_string()).collect();
        assert_eq!(keys, ["/b", "/c"]);
    }

    /// Issue 22, acceptance 1: under a forced collision (one bucket), with /a and /a/z in
    /// the FIB and /a/x in the FAB, /a/z gets /a/z with stored keys and /a with the paper's
    /// key-less prefix test.
    #[test]
    fn a_collision_misleads_only_the_prefix_test() {
        let mut fib = Fib::new();
        fib.add_next_hop(&n("/a"), 1, 0);
        fib.add_next_hop(&n("/a/z"), 2, 0);
        for (key, want) in [(FabKey::Stored, "/a/z"), (FabKey::Prefix, "/a")] {
            let mut fab = Fab::with_buckets(8, key, 1);
            let x = fab.lookup(&n("/a/x"), &fib).unwrap();
            assert_eq!(fib.entry(x).prefix, n("/a"));
            let z = fab.lookup(&n("/a/z"), &fib).unwrap();
            assert_eq!(fib.entry(z).prefix, n(want), "{key:?}");
        }
    }

    #[test]
    fn a_fib_change_flushes_and_capacity_0_always_runs_the_lpm() {
        let mut fib = Fib::new();
        fib.add_next_hop(&n("/a"), 1, 0);
        let mut fab = Fab::new(4, FabKey::Stored);
        fab.lookup(&n("/a/x"), &fib);
        fib.add_next_hop(&n("/a/x"), 2, 0);
        let e = fab.lookup(&n("/a/x"), &fib).unwrap();
        assert_eq!(fib.entry(e).prefix, n("/a/x"));
        assert_eq!(fab.stats().flushes, 1);
        let mut none = Fab::new(0, FabKey::Stored);
        for _ in 0..3 {
            none.lookup(&n("/a/x"), &fib);
        }
        assert_eq!(
            (none.stats().hits, none.stats().misses, none.len()),
            (0, 3, 0)
        );
        assert_eq!(fab.lookup(&n("/b"), &fib), None);
    }

    fn flows() -> impl Strategy<Value = Name> {
        proptest::collection::vec(prop_oneof!["a", "b", "c"], 1..4)
            .prop_map(|c| Name::parse(&format!("/{}", c.join("/"))).unwrap())
    }

    proptest! {
        /// Issue 22, acceptance 2: with stored keys the FAB gives what the LPM gives and
        /// holds the flows an LRU model holds, whatever the buckets.
        #[test]
        fn the_fab_is_the_lpm_and_an_lru_model(
            prefixes in proptest::collection::vec(flows(), 1..6),
            lookups in proptest::collection::vec(flows(), 0..50),
            capacity in 1usize..4,
            buckets in 1usize..4,
        ) {
            let mut fib = Fib::new();
            fib.add_next_hop(&Name::root(), 9, 0);
            for (k, p) in prefixes.iter().enumerate() {
                fib.add_next_hop(p, k as u32 + 1, 0);
            }
            let mut fab = Fab::with_buckets(capacity, FabKey::Stored, buckets);
            let mut model: Vec<Name> = Vec::new();
            for f in &lookups {
                prop_assert_eq!(fab.lookup(f, &fib), fib.lpm(f));
                model.retain(|x| x != f);
                model.insert(0, f.clone());
                model.truncate(capacity);
                let keys: Vec<Name> = fab.keys().map(|k| k.unwrap().clone()).collect();
                prop_assert_eq!(&keys, &model);
            }
        }
    }
}
