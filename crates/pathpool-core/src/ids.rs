//! Typed identifiers.

use std::fmt;

/// Index of one path (subflow) inside a connection-level congestion controller.
///
/// Paths are numbered from 0 in the order they were added; a single-path TCP flow has only
/// `PathId(0)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathId(pub u32);

impl PathId {
    /// The index as a `usize`, for indexing per-path arrays.
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for PathId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "path{}", self.0)
    }
}
