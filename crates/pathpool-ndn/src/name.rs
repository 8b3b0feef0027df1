//! NDN names: a sequence of components, written `/a/b/c`; `/` is the name of no components.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use pathpool_core::hash::FxHasher;

/// A hierarchical name. Cloning is cheap (the components are shared).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name {
    components: Arc<[Box<str>]>,
}

/// Why a text is not a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameError {
    /// It does not start with `/`.
    NotAbsolute(String),
    /// It has an empty component (`//`, or a `/` at the end of a longer name).
    EmptyComponent(String),
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::NotAbsolute(s) => write!(f, "{s:?} is not a name: names start with `/`"),
            NameError::EmptyComponent(s) => write!(
                f,
                "{s:?} is not a name: a component is empty (`//` or a trailing `/`)"
            ),
        }
    }
}

impl std::error::Error for NameError {}

impl Name {
    /// The name `/`, of no components.
    #[must_use]
    pub fn root() -> Self {
        Name {
            components: Arc::from(Vec::new()),
        }
    }

    /// Parses `/a/b/c` (`/` is the root).
    ///
    /// # Errors
    /// If the text does not start with `/` or has an empty component.
    pub fn parse(text: &str) -> Result<Self, NameError> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(NameError::NotAbsolute(text.to_string()));
        };
        if rest.is_empty() {
            return Ok(Name::root());
        }
        let parts: Vec<Box<str>> = rest.split('/').map(Box::from).collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(NameError::EmptyComponent(text.to_string()));
        }
        Ok(Name {
            components: Arc::from(parts),
        })
    }

    /// This name with `component` appended.
    #[must_use]
    pub fn child(&self, component: &str) -> Self {
        let mut parts: Vec<Box<str>> = self.components.to_vec();
        parts.push(Box::from(component));
        Name {
            components: Arc::from(parts),
        }
    }

    /// The number of components.
    #[must_use]
    pub fn len(&self) -> usize {
        self.components.len()
    }

    /// Whether this is `/`.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.components.is_empty()
    }

    /// The components.
    #[must_use]
    pub fn components(&self) -> &[Box<str>] {
        &self.components
    }

    /// The first `k` components (all of them if `k` is larger).
    #[must_use]
    pub fn prefix(&self, k: usize) -> Self {
        Name {
            components: Arc::from(&self.components[..k.min(self.len())]),
        }
    }

    /// The flow name (spec 004 §2): the name without its last component, the sequence
    /// number; `/` stays `/`.
    #[must_use]
    pub fn flow_name(&self) -> Self {
        self.prefix(self.len().saturating_sub(1))
    }

    /// Whether `self` is a prefix of `other`, component by component: `/a/b` is a prefix of
    /// `/a/b/c` and of itself, not of `/a/bb`.
    #[must_use]
    pub fn is_prefix_of(&self, other: &Name) -> bool {
        self.len() <= other.len() && self.components[..] == other.components[..self.len()]
    }

    /// The hash of each prefix, from `/` (k = 0) to the whole name (k = len), each computed
    /// from the one before: what [`Name::prefix_hash`] gives for every k, without building
    /// the prefixes.
    pub fn prefix_hashes(&self) -> impl Iterator<Item = u64> + '_ {
        let mut h = FxHasher::default();
        std::iter::once(h.finish()).chain(self.components.iter().map(move |c| {
            hash_component(&mut h, c);
            h.finish()
        }))
    }

    /// The hash of the name as a prefix (the same for equal names, whatever their storage).
    #[must_use]
    pub fn prefix_hash(&self) -> u64 {
        self.prefix_hashes().last().unwrap_or_default()
    }
}

/// The rank `k` of a route label, a `_R<k>` name component (k ≥ 1; thesis §6.3: a
/// branching router's `k`-th FIB next hop).
#[must_use]
pub fn route_rank(component: &str) -> Option<u32> {
    component
        .strip_prefix("_R")?
        .parse()
        .ok()
        .filter(|&k| k > 0)
}

impl Name {
    /// The number of route labels (`_R<k>` components) at the end of the name.
    #[must_use]
    pub fn label_count(&self) -> usize {
        self.components
            .iter()
            .rev()
            .take_while(|c| route_rank(c).is_some())
            .count()
    }

    /// The name without its trailing route labels.
    #[must_use]
    pub fn without_labels(&self) -> Name {
        self.prefix(self.len() - self.label_count())
    }

    /// The ranks of the trailing route labels, in name order (the label of the branching
    /// node nearest the producer first).
    #[must_use]
    pub fn route_labels(&self) -> Vec<u32> {
        let n = self.label_count();
        self.components[self.len() - n..]
            .iter()
            .filter_map(|c| route_rank(c))
            .collect()
    }

    /// This name with route labels `ranks` appended, in order.
    #[must_use]
    pub fn with_labels(&self, ranks: &[u32]) -> Name {
        let mut parts: Vec<Box<str>> = self.components.to_vec();
        parts.extend(ranks.iter().map(|k| Box::from(format!("_R{k}"))));
        Name {
            components: Arc::from(parts),
        }
    }

    /// Bytes the trailing route labels take on the wire: each component's text and its
    /// type and length octets (NDN's TLV, two octets for a short component).
    #[must_use]
    pub fn label_bytes(&self) -> u32 {
        let n = self.label_count();
        self.components[self.len() - n..]
            .iter()
            .map(|c| c.len() as u32 + 2)
            .sum()
    }
}

fn hash_component(h: &mut FxHasher, c: &str) {
    h.write_usize(c.len());
    h.write(c.as_bytes());
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("/");
        }
        for c in self.components.iter() {
            write!(f, "/{c}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        Name::parse(s).unwrap()
    }

    #[test]
    fn route_labels_are_the_trailing_r_components() {
        // Thesis §6.3's example: segment 1 of version 1 of `a`, via R's first FIB entry.
        let name = n("/aueb.gr/a/_v1/_s1/_R1");
        assert_eq!(name.label_count(), 1);
        assert_eq!(name.without_labels(), n("/aueb.gr/a/_v1/_s1"));
        assert_eq!(name.route_labels(), vec![1]);
        assert_eq!(name.label_bytes(), 5);
        let two = n("/c/A/7/_R2/_R10");
        assert_eq!(two.route_labels(), vec![2, 10]);
        assert_eq!(two.label_bytes(), 5 + 6);
        assert_eq!(n("/c/A/7").with_labels(&[2, 10]), two);
        // `_R0`, `_Rx` and a label before the SEQ are not trailing route labels.
        assert_eq!(n("/c/_R1/7").label_count(), 0);
        assert_eq!(n("/c/A/_R0").label_count(), 0);
        assert_eq!(n("/c/A/_Rx").label_count(), 0);
        assert_eq!(route_rank("_R3"), Some(3));
        assert_eq!(route_rank("R3"), None);
    }

    #[test]
    fn names_parse_print_and_compare_by_component() {
        assert_eq!(n("/").len(), 0);
        assert_eq!(n("/a/b/c").to_string(), "/a/b/c");
        assert_eq!(n("/").to_string(), "/");
        assert!(n("/a/b").is_prefix_of(&n("/a/b/c")));
        assert!(n("/a/b").is_prefix_of(&n("/a/b")));
        assert!(!n("/a/b").is_prefix_of(&n("/a/bb")));
        assert!(n("/").is_prefix_of(&n("/z")));
        assert_eq!(n("/c/A/5").flow_name(), n("/c/A"));
        assert_eq!(n("/").flow_name(), n("/"));
        assert_eq!(n("/c/A").child("5"), n("/c/A/5"));
        assert_eq!(
            Name::parse("a/b"),
            Err(NameError::NotAbsolute("a/b".into()))
        );
        assert!(matches!(
            Name::parse("/a//b"),
            Err(NameError::EmptyComponent(_))
        ));
        assert!(matches!(
            Name::parse("/a/"),
            Err(NameError::EmptyComponent(_))
        ));
    }

    #[test]
    fn prefix_hashes_are_the_hashes_of_the_prefixes() {
        let name = n("/a/bb/c");
        let hashes: Vec<u64> = name.prefix_hashes().collect();
        assert_eq!(hashes.len(), 4);
        for (k, h) in hashes.iter().enumerate() {
            assert_eq!(*h, name.prefix(k).prefix_hash());
        }
        // Component boundaries count: /ab is not /a/b.
        assert_ne!(n("/ab").prefix_hash(), n("/a/b").prefix_hash());
    }
}
