//! Information names (thesis §3.2): a sequence of scope ids and one rendezvous id, written
//! `/scope/…/item`.

use std::fmt;
use std::str::FromStr;

/// The reserved last segment that names an item's metadata chunk (thesis §4.3: "named after
/// the content with the reserved `mm` suffix").
pub const METADATA_SUFFIX: &str = "mm";

/// Longest name accepted, in bytes (it travels in every slow-path message).
pub const MAX_NAME_BYTES: usize = 255;

/// A validated name of an information item: `/scope/…/item`, at least one scope and the
/// item's rendezvous id (thesis §3.2: an item "must belong to at least one scope").
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContentName(String);

/// Why a string is not a [`ContentName`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameError {
    /// The string given.
    pub name: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid name {:?}: {} (a name is /SCOPE/.../ITEM: at least one scope and the \
             item id, segments of visible characters without '/')",
            self.name, self.reason
        )
    }
}

impl std::error::Error for NameError {}

impl ContentName {
    /// Checks and wraps `name`.
    ///
    /// # Errors
    /// Not of the form `/scope/…/item`, a segment empty or with spaces or control
    /// characters, the reserved metadata suffix as the item id, or longer than 255 bytes.
    pub fn new(name: &str) -> Result<Self, NameError> {
        let err = |reason| {
            Err(NameError {
                name: name.to_owned(),
                reason,
            })
        };
        if name.len() > MAX_NAME_BYTES {
            return err("longer than 255 bytes");
        }
        let Some(rest) = name.strip_prefix('/') else {
            return err("it must start with '/'");
        };
        let segments: Vec<&str> = rest.split('/').collect();
        if segments.iter().any(|s| s.is_empty()) {
            return err("a segment is empty");
        }
        if segments
            .iter()
            .any(|s| s.chars().any(|c| c.is_control() || c.is_whitespace()))
        {
            return err("a segment contains a space or a control character");
        }
        if segments.len() < 2 {
            return err("it has no scope");
        }
        if segments.last() == Some(&METADATA_SUFFIX) {
            return err("the item id \"mm\" is reserved for metadata chunks");
        }
        Ok(ContentName(name.to_owned()))
    }

    /// The name as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name of the item's metadata chunk, `/scope/…/item/mm`.
    #[must_use]
    pub fn metadata_name(&self) -> String {
        format!("{}/{METADATA_SUFFIX}", self.0)
    }

    /// The name of chunk `index` (counted from 0), `/scope/…/item/index`.
    #[must_use]
    pub fn chunk_name(&self, index: u64) -> String {
        format!("{}/{index}", self.0)
    }
}

impl FromStr for ContentName {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, NameError> {
        ContentName::new(s)
    }
}

impl fmt::Display for ContentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_and_their_chunk_names() {
        let n = ContentName::new("/videos/2018/big.bin").unwrap();
        assert_eq!(n.as_str(), "/videos/2018/big.bin");
        assert_eq!(n.metadata_name(), "/videos/2018/big.bin/mm");
        assert_eq!(n.chunk_name(0), "/videos/2018/big.bin/0");
        assert_eq!("/a/b".parse::<ContentName>().unwrap().to_string(), "/a/b");
    }

    #[test]
    fn invalid_names_say_why() {
        for (name, reason) in [
            ("a/b", "start with '/'"),
            ("/item", "no scope"),
            ("/a//b", "empty"),
            ("/a/b/", "empty"),
            ("/a/b c", "space"),
            ("/a/mm", "reserved"),
        ] {
            let e = ContentName::new(name).unwrap_err();
            assert!(e.to_string().contains(reason), "{name}: {e}");
        }
        let long = format!("/s/{}", "x".repeat(300));
        assert!(ContentName::new(&long).unwrap_err().reason.contains("255"));
    }
}
