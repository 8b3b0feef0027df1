//! The rendezvous function (thesis §3.1): publications in, subscriptions matched with their
//! publishers.

use std::collections::BTreeMap;
use std::fmt;

use pathpool_topo::NodeIx;

use crate::name::ContentName;

/// How a subscription is matched with the publishers of an item (thesis §3.1: "a
/// multiflow-aware RV can match multiple publishers to one subscriber (multisource) or do
/// one-to-one matching (multipath)").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matching {
    /// Every publisher of the item, up to `max_sources` (in the order they published).
    Multisource {
        /// Most publishers to return.
        max_sources: usize,
    },
    /// One publisher: the first to have published the item.
    Single,
}

/// Why the rendezvous cannot answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RvError {
    /// Nobody publishes the item.
    UnknownName(String),
}

impl fmt::Display for RvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RvError::UnknownName(n) => write!(f, "no publisher of {n} is known to the rendezvous"),
        }
    }
}

impl std::error::Error for RvError {}

/// The publications known to the rendezvous: for each item, its publishers in the order they
/// advertised it.
#[derive(Clone, Debug, Default)]
pub struct Rendezvous {
    publications: BTreeMap<ContentName, Vec<NodeIx>>,
}

impl Rendezvous {
    /// No publication yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// `publisher` advertises `name` (again: no effect).
    pub fn publish(&mut self, name: &ContentName, publisher: NodeIx) {
        let pubs = self.publications.entry(name.clone()).or_default();
        if !pubs.contains(&publisher) {
            pubs.push(publisher);
        }
    }

    /// `publisher` withdraws `name`; returns whether it was publishing it.
    pub fn unpublish(&mut self, name: &ContentName, publisher: NodeIx) -> bool {
        let Some(pubs) = self.publications.get_mut(name) else {
            return false;
        };
        let before = pubs.len();
        pubs.retain(|&p| p != publisher);
        let removed = pubs.len() < before;
        if pubs.is_empty() {
            self.publications.remove(name);
        }
        removed
    }

    /// The publishers a subscription to `name` is matched with.
    ///
    /// # Errors
    /// [`RvError::UnknownName`] if nobody publishes `name`.
    pub fn resolve(&self, name: &ContentName, matching: Matching) -> Result<Vec<NodeIx>, RvError> {
        let pubs = self
            .publications
            .get(name)
            .ok_or_else(|| RvError::UnknownName(name.to_string()))?;
        let n = match matching {
            Matching::Multisource { max_sources } => max_sources.max(1),
            Matching::Single => 1,
        };
        Ok(pubs.iter().copied().take(n).collect())
    }

    /// Every item published, in name order.
    pub fn names(&self) -> impl Iterator<Item = &ContentName> {
        self.publications.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> ContentName {
        ContentName::new(s).unwrap()
    }

    #[test]
    fn many_to_one_and_one_to_one_matching() {
        let mut rv = Rendezvous::new();
        let a = name("/s/a");
        rv.publish(&a, NodeIx(3));
        rv.publish(&a, NodeIx(1));
        rv.publish(&a, NodeIx(3));
        rv.publish(&a, NodeIx(7));
        let all = Matching::Multisource { max_sources: 8 };
        assert_eq!(
            rv.resolve(&a, all).unwrap(),
            vec![NodeIx(3), NodeIx(1), NodeIx(7)]
        );
        let two = Matching::Multisource { max_sources: 2 };
        assert_eq!(rv.resolve(&a, two).unwrap(), vec![NodeIx(3), NodeIx(1)]);
        assert_eq!(rv.resolve(&a, Matching::Single).unwrap(), vec![NodeIx(3)]);
    }

    #[test]
    fn withdrawn_and_unknown_items() {
        let mut rv = Rendezvous::new();
        let a = name("/s/a");
        rv.publish(&a, NodeIx(0));
        assert!(rv.unpublish(&a, NodeIx(0)));
        assert!(!rv.unpublish(&a, NodeIx(0)));
        let e = rv.resolve(&a, Matching::Single).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no publisher of /s/a is known to the rendezvous"
        );
        assert_eq!(rv.names().count(), 0);
    }
}
