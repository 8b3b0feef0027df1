//! The hash tree of wire version 2 (`docs/wire.md`, "Hash tree"; issue 18): per-chunk
//! verification of a content against the root its publisher signs.
//!
//! Leaves are the BLAKE3 hashes of the data chunks, each with its index, in BLAKE3's
//! key-derivation mode with a context string of their own (BLAKE3 spec §2.6), so a leaf can
//! never be taken for a page hash or for a hash of another use. A level's hashes are cut into
//! *pages* of at most `F = chunk_bytes / 32` hashes, so a page travels as one chunk; the
//! hashes of a level's pages (with the level and the page's index) form the next level, up to
//! the first level that fits one page, the *root page*, whose hash is the root. The transfer
//! sends the pages first, top-down (index 0 is the root page), then the data chunks, so every
//! chunk that arrives can be checked against a page already verified: a bad chunk is found on
//! arrival, as in Bao's verified streaming, with pages of many hashes instead of Bao's binary
//! tree so that a 1 GB content needs one page per 34 chunks (3 % more bytes), not a 64-byte
//! parent per chunk.
//!
//! Sans-IO: nothing here reads files, clocks or sockets.

use core::fmt;

/// Bytes of one hash.
pub const HASH_BYTES: usize = 32;

const LEAF_CONTEXT: &str = "pathpool v2 chunk";
const PAGE_CONTEXT: &str = "pathpool v2 page";

/// A 32-byte BLAKE3 hash.
pub type Hash = [u8; HASH_BYTES];

/// The leaf hash of data chunk `index` holding `bytes`.
#[must_use]
pub fn leaf_hash(index: u64, bytes: &[u8]) -> Hash {
    let mut h = blake3::Hasher::new_derive_key(LEAF_CONTEXT);
    h.update(&index.to_be_bytes());
    h.update(bytes);
    *h.finalize().as_bytes()
}

/// The hash of page `page` of `level` whose hashes are `bytes`.
#[must_use]
pub fn page_hash(level: u8, page: u64, bytes: &[u8]) -> Hash {
    let mut h = blake3::Hasher::new_derive_key(PAGE_CONTEXT);
    h.update(&[level]);
    h.update(&page.to_be_bytes());
    h.update(bytes);
    *h.finalize().as_bytes()
}

/// Why a tree cannot be built or described.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeError {
    /// A content of no chunk has no tree.
    Empty,
    /// Chunks under 64 bytes hold fewer than two hashes per page: the tree would not shrink.
    ChunkTooSmall {
        /// The chunk size given.
        chunk_bytes: u32,
    },
    /// More pages than a chunk index can count next to the data chunks.
    TooManyChunks,
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeError::Empty => f.write_str("an empty content has no hash tree"),
            TreeError::ChunkTooSmall { chunk_bytes } => write!(
                f,
                "chunk size {chunk_bytes} B holds fewer than two hashes: it must be at least 64 B"
            ),
            TreeError::TooManyChunks => f.write_str("too many chunks and pages for 32-bit indices"),
        }
    }
}

impl std::error::Error for TreeError {}

/// The shape of a tree: how many hashes each level has and where its pages sit in the
/// transfer's chunk index space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeShape {
    fanout: u64,
    /// Hashes of each level, level 0 (the leaves) first; the last level fits one page.
    level_hashes: Vec<u64>,
    /// Transfer index of each level's first page.
    level_start: Vec<u32>,
    pages: u32,
    data_chunks: u32,
}

impl TreeShape {
    /// The shape over `data_chunks` chunks of `chunk_bytes`.
    ///
    /// # Errors
    /// No chunk, chunks under 64 bytes, or more than `u32::MAX` chunks and pages together.
    pub fn new(data_chunks: u32, chunk_bytes: u32) -> Result<TreeShape, TreeError> {
        if data_chunks == 0 {
            return Err(TreeError::Empty);
        }
        let fanout = u64::from(chunk_bytes) / HASH_BYTES as u64;
        if fanout < 2 {
            return Err(TreeError::ChunkTooSmall { chunk_bytes });
        }
        let mut level_hashes = vec![u64::from(data_chunks)];
        let mut n = u64::from(data_chunks);
        while n > fanout {
            n = n.div_ceil(fanout);
            level_hashes.push(n);
        }
        let pages_of = |hashes: u64| hashes.div_ceil(fanout);
        let total: u64 = level_hashes.iter().map(|&h| pages_of(h)).sum();
        let pages = u32::try_from(total).map_err(|_| TreeError::TooManyChunks)?;
        if u64::from(pages) + u64::from(data_chunks) > u64::from(u32::MAX) {
            return Err(TreeError::TooManyChunks);
        }
        // Pages go top-down: the root level first.
        let mut level_start = vec![0u32; level_hashes.len()];
        let mut next = 0u64;
        for (start, &h) in level_start.iter_mut().zip(&level_hashes).rev() {
            *start = next as u32;
            next += pages_of(h);
        }
        Ok(TreeShape {
            fanout,
            level_hashes,
            level_start,
            pages,
            data_chunks,
        })
    }

    /// Hashes per page, `F`.
    #[must_use]
    pub fn fanout(&self) -> u64 {
        self.fanout
    }

    /// Pages in the tree (the transfer's chunks `0..pages`).
    #[must_use]
    pub fn pages(&self) -> u32 {
        self.pages
    }

    /// Data chunks (the transfer's chunks `pages..pages + data_chunks`).
    #[must_use]
    pub fn data_chunks(&self) -> u32 {
        self.data_chunks
    }

    /// Levels, the leaves' included.
    #[must_use]
    pub fn levels(&self) -> usize {
        self.level_hashes.len()
    }

    /// The level and index within it of the page at transfer index `index`.
    #[must_use]
    pub fn page_position(&self, index: u32) -> Option<(u8, u64)> {
        if index >= self.pages {
            return None;
        }
        // Levels are few (at most 6 for 2^32 chunks of 1119 bytes): a linear scan.
        self.level_start
            .iter()
            .enumerate()
            .find(|&(_, &start)| index >= start)
            .map(|(l, &start)| (l as u8, u64::from(index - start)))
    }

    /// Bytes of the page at transfer index `index` (32 per hash it holds).
    #[must_use]
    pub fn page_bytes(&self, index: u32) -> Option<usize> {
        let (level, page) = self.page_position(index)?;
        let hashes = *self.level_hashes.get(usize::from(level))?;
        let held = (hashes - page * self.fanout).min(self.fanout);
        Some(held as usize * HASH_BYTES)
    }

    /// Where the hash of transfer chunk `index` (page or data) is: `None` for the root page
    /// (its hash is the root), else the parent page's transfer index and the hash's slot in
    /// it. `None` too for an index beyond the transfer.
    #[must_use]
    pub fn parent(&self, index: u32) -> Option<(u32, usize)> {
        let (level, position) = if index >= self.pages {
            let data = index - self.pages;
            if data >= self.data_chunks {
                return None;
            }
            (0usize, u64::from(data))
        } else {
            let (l, page) = self.page_position(index)?;
            (usize::from(l) + 1, page)
        };
        let parent = self.level_start.get(level)? + (position / self.fanout) as u32;
        Some((parent, (position % self.fanout) as usize))
    }
}

/// A whole tree, as the publisher builds it: the pages in transfer order and the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HashTree {
    shape: TreeShape,
    pages: Vec<Vec<u8>>,
    leaves: Vec<Hash>,
    root: Hash,
}

impl HashTree {
    /// The tree over the leaf hashes of a content cut into chunks of `chunk_bytes`.
    ///
    /// # Errors
    /// As [`TreeShape::new`].
    pub fn from_leaves(leaves: Vec<Hash>, chunk_bytes: u32) -> Result<HashTree, TreeError> {
        let count = u32::try_from(leaves.len()).map_err(|_| TreeError::TooManyChunks)?;
        let shape = TreeShape::new(count, chunk_bytes)?;
        let mut pages: Vec<Vec<u8>> = vec![Vec::new(); shape.pages as usize];
        let mut level: Vec<Hash> = leaves.clone();
        let mut root = [0u8; HASH_BYTES];
        for l in 0..shape.levels() {
            let mut next = Vec::new();
            for (j, group) in level.chunks(shape.fanout as usize).enumerate() {
                let bytes: Vec<u8> = group.iter().flatten().copied().collect();
                let hash = page_hash(l as u8, j as u64, &bytes);
                next.push(hash);
                root = hash;
                let start = shape.level_start.get(l).copied().unwrap_or(0) as usize;
                if let Some(slot) = pages.get_mut(start + j) {
                    *slot = bytes;
                }
            }
            level = next;
        }
        Ok(HashTree {
            shape,
            pages,
            leaves,
            root,
        })
    }

    /// The tree's shape.
    #[must_use]
    pub fn shape(&self) -> &TreeShape {
        &self.shape
    }

    /// The root hash.
    #[must_use]
    pub fn root(&self) -> Hash {
        self.root
    }

    /// The page at transfer index `index`.
    #[must_use]
    pub fn page(&self, index: u32) -> Option<&[u8]> {
        self.pages.get(index as usize).map(Vec::as_slice)
    }

    /// The leaf hash of data chunk `data_index`.
    #[must_use]
    pub fn leaf(&self, data_index: u32) -> Option<&Hash> {
        self.leaves.get(data_index as usize)
    }
}

/// What [`Verifier::check`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The chunk is the one the root vouches for (a page is now kept to check its children).
    Valid,
    /// It is not: wrong bytes or wrong length, or an index beyond the transfer.
    Invalid,
    /// Its parent page has not been verified yet: hold it and check it again later.
    ParentMissing {
        /// The parent page's transfer index.
        parent: u32,
    },
}

/// Checks chunks of one transfer as they arrive, against a root and the pages verified so far.
#[derive(Clone, Debug)]
pub struct Verifier {
    shape: TreeShape,
    root: Hash,
    pages: Vec<Option<Box<[u8]>>>,
}

impl Verifier {
    /// A verifier for a transfer of `shape` whose root is `root`.
    #[must_use]
    pub fn new(shape: TreeShape, root: Hash) -> Self {
        let pages = vec![None; shape.pages as usize];
        Verifier { shape, root, pages }
    }

    /// The tree's shape.
    #[must_use]
    pub fn shape(&self) -> &TreeShape {
        &self.shape
    }

    /// Whether the page at transfer index `index` has been verified.
    #[must_use]
    pub fn has_page(&self, index: u32) -> bool {
        self.pages.get(index as usize).is_some_and(Option::is_some)
    }

    /// The hash of the chunk at transfer index `index` as its verified parent gives it.
    fn expected(&self, index: u32) -> Result<Hash, Check> {
        let Some((parent, slot)) = self.shape.parent(index) else {
            return if index == 0 && self.shape.pages > 0 {
                Ok(self.root)
            } else {
                Err(Check::Invalid)
            };
        };
        let Some(Some(page)) = self.pages.get(parent as usize) else {
            return Err(Check::ParentMissing { parent });
        };
        let at = slot * HASH_BYTES;
        page.get(at..at + HASH_BYTES)
            .and_then(|h| <Hash>::try_from(h).ok())
            .ok_or(Check::Invalid)
    }

    /// Checks the chunk at transfer index `index` holding `bytes`; keeps a valid page.
    pub fn check(&mut self, index: u32, bytes: &[u8]) -> Check {
        let expected = match self.expected(index) {
            Ok(h) => h,
            Err(c) => return c,
        };
        let actual = match self.shape.page_position(index) {
            Some((level, page)) => {
                if self.shape.page_bytes(index) != Some(bytes.len()) {
                    return Check::Invalid;
                }
                page_hash(level, page, bytes)
            }
            None => leaf_hash(u64::from(index - self.shape.pages), bytes),
        };
        // blake3::Hash's equality is constant-time; the hashes are public here, but the
        // habit costs nothing.
        if blake3::Hash::from(actual) != blake3::Hash::from(expected) {
            return Check::Invalid;
        }
        if let Some(slot) = self.pages.get_mut(index as usize) {
            *slot = Some(bytes.into());
        }
        Check::Valid
    }

    /// The leaf hash of data chunk `data_index`, once its leaf page is verified.
    #[must_use]
    pub fn leaf(&self, data_index: u32) -> Option<Hash> {
        self.expected(self.shape.pages.checked_add(data_index)?)
            .ok()
    }
}

#[cfg(test)]
#[path = "hash_tree_tests.rs"]
mod tests;
