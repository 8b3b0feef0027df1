//! The Forwarding Information Base: name prefixes to next-hop faces, found by longest-prefix
//! match component by component (`/a/b` matches `/a/b/c`, not `/a/bb`).

use pathpool_core::hash::FxHashMap;

use crate::name::Name;
use crate::packet::FaceId;

/// A next hop of a FIB entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextHop {
    /// The face.
    pub face: FaceId,
    /// Its routing cost (lower first).
    pub cost: u32,
}

/// A prefix and its next hops, cheapest first (ties in the order added).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FibEntry {
    /// The prefix.
    pub prefix: Name,
    /// The next hops.
    pub next_hops: Vec<NextHop>,
}

impl FibEntry {
    /// Whether `face` is one of the next hops.
    #[must_use]
    pub fn has_next_hop(&self, face: FaceId) -> bool {
        self.next_hops.iter().any(|h| h.face == face)
    }
}

/// A FIB entry's place, stable while the entry exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FibEntryId(pub u32);

/// The FIB of one node.
#[derive(Clone, Debug, Default)]
pub struct Fib {
    entries: Vec<Option<FibEntry>>,
    /// Entries by their prefix's hash.
    by_hash: FxHashMap<u64, Vec<FibEntryId>>,
    /// Bumped by every change, so that what caches entries (the FAB) knows to flush.
    version: u64,
}

impl Fib {
    /// An empty FIB.
    #[must_use]
    pub fn new() -> Self {
        Fib::default()
    }

    /// The entry for exactly `prefix`.
    #[must_use]
    pub fn exact(&self, prefix: &Name) -> Option<FibEntryId> {
        self.by_hash
            .get(&prefix.prefix_hash())?
            .iter()
            .copied()
            .find(|&id| self.entry(id).prefix == *prefix)
    }

    /// Adds `face` at `cost` as a next hop of `prefix` (or sets the cost if it is one),
    /// creating the entry if needed; returns the entry.
    pub fn add_next_hop(&mut self, prefix: &Name, face: FaceId, cost: u32) -> FibEntryId {
        self.version += 1;
        let id = match self.exact(prefix) {
            Some(id) => id,
            None => {
                let id = FibEntryId(self.entries.len() as u32);
                self.entries.push(Some(FibEntry {
                    prefix: prefix.clone(),
                    next_hops: Vec::new(),
                }));
                self.by_hash
                    .entry(prefix.prefix_hash())
                    .or_default()
                    .push(id);
                id
            }
        };
        let hops = &mut self.entries[id.0 as usize]
            .as_mut()
            .expect("a found entry exists")
            .next_hops;
        hops.retain(|h| h.face != face);
        let at = hops
            .iter()
            .position(|h| h.cost > cost)
            .unwrap_or(hops.len());
        hops.insert(at, NextHop { face, cost });
        id
    }

    /// Removes `face` from `prefix`'s next hops, and the entry if none is left; returns
    /// whether it was there.
    pub fn remove_next_hop(&mut self, prefix: &Name, face: FaceId) -> bool {
        let Some(id) = self.exact(prefix) else {
            return false;
        };
        let entry = self.entries[id.0 as usize]
            .as_mut()
            .expect("a found entry exists");
        let before = entry.next_hops.len();
        entry.next_hops.retain(|h| h.face != face);
        if entry.next_hops.len() == before {
            return false;
        }
        self.version += 1;
        if entry.next_hops.is_empty() {
            self.entries[id.0 as usize] = None;
            let h = prefix.prefix_hash();
            if let Some(ids) = self.by_hash.get_mut(&h) {
                ids.retain(|&x| x != id);
                if ids.is_empty() {
                    self.by_hash.remove(&h);
                }
            }
        }
        true
    }

    /// The entry whose prefix is the longest that is a prefix of `name`, component-wise.
    #[must_use]
    pub fn lpm(&self, name: &Name) -> Option<FibEntryId> {
        let mut best = None;
        for (k, h) in name.prefix_hashes().enumerate() {
            let Some(ids) = self.by_hash.get(&h) else {
                continue;
            };
            if let Some(&id) = ids.iter().find(|&&id| {
                let p = &self.entry(id).prefix;
                p.len() == k && p.is_prefix_of(name)
            }) {
                best = Some(id);
            }
        }
        best
    }

    /// The entry `id`.
    ///
    /// # Panics
    /// If it was removed or never existed.
    #[must_use]
    pub fn entry(&self, id: FibEntryId) -> &FibEntry {
        self.entries[id.0 as usize]
            .as_ref()
            .expect("a FIB entry id names an entry that exists")
    }

    /// The entries that exist.
    pub fn entries(&self) -> impl Iterator<Item = (FibEntryId, &FibEntry)> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| Some((FibEntryId(i as u32), e.as_ref()?)))
    }

    /// A number that changes whenever the FIB does.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.version
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn n(s: &str) -> Name {
        Name::parse(s).unwrap()
    }

    /// Issue 22, acceptance 1: with /, /a and /a/b, /a/b/c → /a/b, /a/bb → /a, /z → /.
    #[test]
    fn longest_prefix_match_goes_by_component() {
        let mut fib = Fib::new();
        for (k, p) in ["/", "/a", "/a/b"].iter().enumerate() {
            fib.add_next_hop(&n(p), k as u32 + 1, 0);
        }
        let lpm = |s: &str| fib.entry(fib.lpm(&n(s)).unwrap()).prefix.to_string();
        assert_eq!(lpm("/a/b/c"), "/a/b");
        assert_eq!(lpm("/a/bb"), "/a");
        assert_eq!(lpm("/z"), "/");
        assert_eq!(lpm("/a/b"), "/a/b");
        let mut no_root = Fib::new();
        no_root.add_next_hop(&n("/a"), 1, 0);
        assert_eq!(no_root.lpm(&n("/z")), None);
    }

    #[test]
    fn next_hops_keep_cost_order_and_the_version_moves() {
        let mut fib = Fib::new();
        let v0 = fib.version();
        let id = fib.add_next_hop(&n("/a"), 3, 10);
        fib.add_next_hop(&n("/a"), 2, 5);
        fib.add_next_hop(&n("/a"), 4, 10);
        let faces: Vec<u32> = fib.entry(id).next_hops.iter().map(|h| h.face).collect();
        assert_eq!(faces, [2, 3, 4]);
        assert!(fib.version() > v0);
        assert!(fib.remove_next_hop(&n("/a"), 3));
        assert!(!fib.remove_next_hop(&n("/a"), 3));
        assert!(fib.remove_next_hop(&n("/a"), 2));
        assert!(fib.remove_next_hop(&n("/a"), 4));
        assert_eq!(fib.lpm(&n("/a/x")), None);
        assert_eq!(fib.entries().count(), 0);
    }

    fn names() -> impl Strategy<Value = Name> {
        // Few distinct components, so that prefixes share and nest.
        proptest::collection::vec(prop_oneof!["a", "b", "ab", "bb"], 0..5).prop_map(|c| {
            Name::parse(&format!("/{}", c.join("/"))).unwrap_or_else(|_| Name::root())
        })
    }

    proptest! {
        /// Issue 22, acceptance 2: LPM is the brute-force longest prefix.
        #[test]
        fn lpm_is_the_longest_prefix_found_by_brute_force(
            prefixes in proptest::collection::vec(names(), 0..12),
            name in names(),
        ) {
            let mut fib = Fib::new();
            for (k, p) in prefixes.iter().enumerate() {
                fib.add_next_hop(p, k as u32 + 1, 0);
            }
            let brute = prefixes
                .iter()
                .filter(|p| p.is_prefix_of(&name))
                .max_by_key(|p| p.len());
            prop_assert_eq!(fib.lpm(&name).map(|id| fib.entry(id).prefix.clone()), brute.cloned());
        }
    }
}
