//! The rendezvous function (thesis §3.1): publications in, subscriptions matched with their
//! publishers.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use pathpool_core::{Dur, Time};
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

/// How long publications last and how many the rendezvous holds (issue 18: its state is
/// soft and bounded). The default is the simulator's: nothing expires, no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RvLimits {
    /// A publication not refreshed for this long is forgotten (`None`: never).
    pub ttl: Option<Dur>,
    /// Most publications (name, publisher) one publisher may hold.
    pub max_per_publisher: usize,
    /// Most publications in all.
    pub max_total: usize,
}

impl Default for RvLimits {
    fn default() -> Self {
        RvLimits {
            ttl: None,
            max_per_publisher: usize::MAX,
            max_total: usize::MAX,
        }
    }
}

/// Why a publication was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The publisher already holds [`RvLimits::max_per_publisher`] publications.
    PublisherFull,
    /// The rendezvous holds [`RvLimits::max_total`] publications.
    Full,
}

/// Counters of the rendezvous's limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RvCounters {
    /// Publications refused by the per-publisher limit.
    pub refused_publisher_full: u64,
    /// Publications refused by the total limit.
    pub refused_full: u64,
    /// Publications forgotten for want of a refresh.
    pub expired: u64,
}

/// The publications known to the rendezvous: for each item, its publishers in the order they
/// advertised it, each with the time of its last refresh.
#[derive(Clone, Debug, Default)]
pub struct Rendezvous {
    publications: BTreeMap<ContentName, Vec<(NodeIx, Time)>>,
    per_publisher: HashMap<NodeIx, usize>,
    total: usize,
    limits: RvLimits,
    counters: RvCounters,
}

impl Rendezvous {
    /// No publication yet; nothing expires and there is no limit (the simulator's).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// No publication yet, with `limits`.
    #[must_use]
    pub fn with_limits(limits: RvLimits) -> Self {
        Rendezvous {
            limits,
            ..Self::default()
        }
    }

    /// `publisher` advertises `name` (again: no effect), whatever the limits say about time.
    pub fn publish(&mut self, name: &ContentName, publisher: NodeIx) {
        let _ = self.refresh(name, publisher, Time::ZERO);
    }

    /// `publisher` advertises `name` at `now`: a new publication if the limits allow it, or
    /// the refresh of an existing one (always allowed).
    ///
    /// # Errors
    /// [`Refusal`] when a limit is reached (counted).
    pub fn refresh(
        &mut self,
        name: &ContentName,
        publisher: NodeIx,
        now: Time,
    ) -> Result<(), Refusal> {
        if let Some(entry) = self
            .publications
            .get_mut(name)
            .and_then(|pubs| pubs.iter_mut().find(|(p, _)| *p == publisher))
        {
            entry.1 = entry.1.max(now);
            return Ok(());
        }
        let held = self.per_publisher.get(&publisher).copied().unwrap_or(0);
        if held >= self.limits.max_per_publisher {
            self.counters.refused_publisher_full += 1;
            return Err(Refusal::PublisherFull);
        }
        if self.total >= self.limits.max_total {
            self.counters.refused_full += 1;
            return Err(Refusal::Full);
        }
        self.publications
            .entry(name.clone())
            .or_default()
            .push((publisher, now));
        *self.per_publisher.entry(publisher).or_insert(0) += 1;
        self.total += 1;
        Ok(())
    }

    fn forget(&mut self, publisher: NodeIx) {
        if let Some(n) = self.per_publisher.get_mut(&publisher) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_publisher.remove(&publisher);
            }
        }
        self.total = self.total.saturating_sub(1);
    }

    /// `publisher` withdraws `name`; returns whether it was publishing it.
    pub fn unpublish(&mut self, name: &ContentName, publisher: NodeIx) -> bool {
        let Some(pubs) = self.publications.get_mut(name) else {
            return false;
        };
        let before = pubs.len();
        pubs.retain(|&(p, _)| p != publisher);
        let removed = pubs.len() < before;
        if pubs.is_empty() {
            self.publications.remove(name);
        }
        if removed {
            self.forget(publisher);
        }
        removed
    }

    /// Forgets every publication not refreshed within the TTL before `now`; returns how many.
    pub fn expire(&mut self, now: Time) -> usize {
        let Some(ttl) = self.limits.ttl else {
            return 0;
        };
        let mut gone: Vec<NodeIx> = Vec::new();
        self.publications.retain(|_, pubs| {
            pubs.retain(|&(p, at)| {
                let alive = now.saturating_since(at) <= ttl;
                if !alive {
                    gone.push(p);
                }
                alive
            });
            !pubs.is_empty()
        });
        for &p in &gone {
            self.forget(p);
        }
        self.counters.expired += gone.len() as u64;
        gone.len()
    }

    /// Publications held (pairs of name and publisher).
    #[must_use]
    pub fn len(&self) -> usize {
        self.total
    }

    /// Whether no publication is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The counters of the limits.
    #[must_use]
    pub fn counters(&self) -> RvCounters {
        self.counters
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
        Ok(pubs.iter().map(|&(p, _)| p).take(n).collect())
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
        assert!(rv.is_empty());
    }

    #[test]
    fn publications_expire_without_refresh_and_limits_hold() {
        let mut rv = Rendezvous::with_limits(RvLimits {
            ttl: Some(Dur::from_secs(10)),
            max_per_publisher: 2,
            max_total: 3,
        });
        let t = Time::from_secs;
        assert_eq!(rv.refresh(&name("/s/a"), NodeIx(1), t(0)), Ok(()));
        assert_eq!(rv.refresh(&name("/s/b"), NodeIx(1), t(0)), Ok(()));
        assert_eq!(
            rv.refresh(&name("/s/c"), NodeIx(1), t(0)),
            Err(Refusal::PublisherFull)
        );
        // A refresh of a held publication is always allowed.
        assert_eq!(rv.refresh(&name("/s/a"), NodeIx(1), t(8)), Ok(()));
        assert_eq!(rv.refresh(&name("/s/a"), NodeIx(2), t(0)), Ok(()));
        assert_eq!(
            rv.refresh(&name("/s/d"), NodeIx(3), t(0)),
            Err(Refusal::Full)
        );
        assert_eq!(rv.len(), 3);
        // /s/b (publisher 1) and /s/a (publisher 2) were last refreshed at 0: gone at 10.001 s.
        assert_eq!(rv.expire(t(10)), 0);
        assert_eq!(rv.expire(Time::from_ms(10_001)), 2);
        assert_eq!(rv.len(), 1);
        assert_eq!(
            rv.resolve(&name("/s/a"), Matching::Single).unwrap(),
            vec![NodeIx(1)]
        );
        assert!(rv.resolve(&name("/s/b"), Matching::Single).is_err());
        // Room again.
        assert_eq!(rv.refresh(&name("/s/d"), NodeIx(3), t(11)), Ok(()));
        let c = rv.counters();
        assert_eq!(
            (c.refused_publisher_full, c.refused_full, c.expired),
            (1, 1, 2)
        );
    }
}
