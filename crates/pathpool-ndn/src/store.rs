//! The content store: Data by full name, least recently used evicted first, each arrival
//! admitted with a probability (issue 22: `[[ndn.cs]]` {capacity, admit}).

use pathpool_core::hash::FxHashMap;
use pathpool_core::Rng;

use crate::lru::LruList;
use crate::name::Name;
use crate::packet::Data;

/// What a content store did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsStats {
    /// Lookups it answered.
    pub hits: u64,
    /// Lookups it could not answer.
    pub misses: u64,
    /// Data it stored.
    pub insertions: u64,
    /// Data it evicted for room.
    pub evictions: u64,
    /// Data its admission draw turned away.
    pub refused: u64,
}

/// One node's content store.
#[derive(Clone, Debug)]
pub struct ContentStore {
    capacity: usize,
    admit: f64,
    index: FxHashMap<Name, u32>,
    order: LruList<Data>,
    stats: CsStats,
}

impl ContentStore {
    /// A store of `capacity` packets that admits a new Data with probability `admit`.
    #[must_use]
    pub fn new(capacity: usize, admit: f64) -> Self {
        ContentStore {
            capacity,
            admit,
            index: FxHashMap::default(),
            order: LruList::default(),
            stats: CsStats::default(),
        }
    }

    /// Offers `data` to the store; `rng` draws the admission (not drawn when `admit` is 1 or
    /// the name is stored already). Stored without its tag, flag, label or mark: what a hit
    /// sends is set by the node answering. Returns whether it is stored now.
    pub fn insert(&mut self, data: &Data, rng: &mut Rng) -> bool {
        if self.capacity == 0 {
            return false;
        }
        if let Some(&i) = self.index.get(&data.name) {
            self.order.touch(i);
            return true;
        }
        if self.admit < 1.0 && !rng.bernoulli(self.admit) {
            self.stats.refused += 1;
            return false;
        }
        if self.order.len() >= self.capacity {
            if let Some(t) = self.order.tail() {
                let old = self.order.remove(t);
                self.index.remove(&old.name);
                self.stats.evictions += 1;
            }
        }
        let stored = Data::new(data.name.clone(), data.payload_bytes);
        let i = self.order.push_front(stored);
        self.index.insert(data.name.clone(), i);
        self.stats.insertions += 1;
        true
    }

    /// The Data stored under exactly `name`, made the most recently used.
    pub fn lookup(&mut self, name: &Name) -> Option<&Data> {
        match self.index.get(name) {
            Some(&i) => {
                self.stats.hits += 1;
                self.order.touch(i);
                Some(self.order.get(i))
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// Packets stored.
    #[must_use]
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether it stores nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.order.len() == 0
    }

    /// The stored names, most recently used first.
    pub fn names(&self) -> impl Iterator<Item = &Name> {
        self.order.iter().map(|d| &d.name)
    }

    /// Its counters.
    #[must_use]
    pub fn stats(&self) -> CsStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert_eq, proptest};

    fn d(k: u32) -> Data {
        Data::new(Name::parse(&format!("/c/D{k}")).unwrap(), 1024)
    }

    /// Issue 22, acceptance 1: capacity 3: D1, D2, D3, a hit on D1, and D4 evicts D2.
    #[test]
    fn the_least_recently_used_goes_first() {
        let mut cs = ContentStore::new(3, 1.0);
        let mut rng = Rng::seed_from_u64(1);
        for k in 1..=3 {
            assert!(cs.insert(&d(k), &mut rng));
        }
        assert!(cs.lookup(&d(1).name).is_some());
        cs.insert(&d(4), &mut rng);
        let names: Vec<String> = cs.names().map(ToString::to_string).collect();
        assert_eq!(names, ["/c/D4", "/c/D1", "/c/D3"]);
        assert!(cs.lookup(&d(2).name).is_none());
        assert_eq!(
            cs.stats(),
            CsStats {
                hits: 1,
                misses: 1,
                insertions: 4,
                evictions: 1,
                refused: 0
            }
        );
    }

    #[test]
    fn stored_data_lose_their_tag_flag_label_and_mark() {
        let mut cs = ContentStore::new(1, 1.0);
        let mut data = d(1);
        data.tag = Some(vec![3, 2]);
        data.intermediate = true;
        data.route_label = 7;
        data.ce = true;
        cs.insert(&data, &mut Rng::seed_from_u64(1));
        assert_eq!(cs.lookup(&data.name), Some(&d(1)));
    }

    #[test]
    fn admission_is_a_draw_with_the_given_probability() {
        let mut cs = ContentStore::new(100_000, 0.5);
        let mut rng = Rng::seed_from_u64(3);
        let stored = (0..20_000).filter(|&k| cs.insert(&d(k), &mut rng)).count();
        // Binomial(20000, 0.5): 4 standard deviations are 283.
        assert!((9_717..=10_283).contains(&stored), "{stored}");
        assert!(!ContentStore::new(0, 1.0).insert(&d(1), &mut rng));
    }

    proptest! {
        /// Issue 22, acceptance 2: the store is an LRU model.
        #[test]
        fn the_store_behaves_as_an_lru_model(
            capacity in 1usize..5,
            ops in proptest::collection::vec((any::<bool>(), 0u32..8), 0..60),
        ) {
            let mut cs = ContentStore::new(capacity, 1.0);
            let mut rng = Rng::seed_from_u64(1);
            let mut model: Vec<u32> = Vec::new();
            for (insert, k) in ops {
                if insert {
                    cs.insert(&d(k), &mut rng);
                    model.retain(|&x| x != k);
                    model.insert(0, k);
                    model.truncate(capacity);
                } else {
                    let hit = cs.lookup(&d(k).name).is_some();
                    prop_assert_eq!(hit, model.contains(&k));
                    if hit {
                        model.retain(|&x| x != k);
                        model.insert(0, k);
                    }
                }
                let names: Vec<Name> = cs.names().cloned().collect();
                let want: Vec<Name> = model.iter().map(|&k| d(k).name).collect();
                prop_assert_eq!(names, want);
            }
        }
    }
}
