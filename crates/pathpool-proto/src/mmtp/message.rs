//! mmTP's messages as in-memory values (thesis §4.4; their byte layout is `pathpool-wire`'s,
//! `docs/wire.md`).
//!
//! Every request is self-contained (thesis §4.2: "data identifier + return FID"): it names the
//! content and the part wanted, carries the opaque [`PathIndex`] of the subflow that sent it
//! (the driver maps it to the reverse FID the request travels on and the forward FID the reply
//! must take), and an [`Echo`] that the publisher copies into its reply so the subscriber can
//! measure the round trip.

use std::fmt;

use pathpool_core::Time;
use sha2::{Digest, Sha256};

/// A compact, statistically unique identifier of a content item: the first 8 bytes
/// (big-endian) of the SHA-256 of its name (thesis §4.1: chunks carry "algorithmic
/// identifiers"). The name itself (`/scope/…/item`, validated by `pathpool-psi`'s
/// `ContentName`) travels only in the slow path; fast-path messages carry this id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContentId(pub u64);

impl ContentId {
    /// The id of the content named `name` (for example `/videos/big.bin`).
    #[must_use]
    pub fn from_name(name: &str) -> ContentId {
        let digest = Sha256::digest(name.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        ContentId(u64::from_be_bytes(first))
    }
}

impl fmt::Display for ContentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// The suffix naming a content's metadata chunk (thesis §4.3: "the reserved `mm` suffix").
pub const METADATA_SUFFIX: &str = "mm";

/// Which part of a content a message is about.
///
/// `Metadata` sorts before every chunk, so a subflow's requests in [`Part`] order start with
/// its metadata request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// The metadata chunk, `/content/mm`.
    Metadata,
    /// Data chunk `index`, counted from 0 (`/content/index`; the thesis's Fig. 4.2 counts
    /// from 1).
    Chunk(u32),
}

/// The full name of one chunk: content and part (thesis §4.3: "content name + counter of
/// the chunk's position").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChunkId {
    /// The content.
    pub content: ContentId,
    /// The part of it.
    pub part: Part,
}

impl fmt::Display for ChunkId {
    /// `/<content id in hex>/<index>` or `/<content id in hex>/mm`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.part {
            Part::Metadata => write!(f, "/{}/{METADATA_SUFFIX}", self.content),
            Part::Chunk(i) => write!(f, "/{}/{i}", self.content),
        }
    }
}

/// The subscriber's index of a subflow, one per FID pair the topology manager gave
/// (thesis §4.5: "one subflow per supplied path").
///
/// It is opaque to publishers, which copy it from a request into the reply; the driver maps
/// it to the reverse FID (requests) and the forward FID (replies). It is not the congestion
/// controller's [`PathId`](pathpool_core::PathId): a subflow joins the controller only once
/// the metadata has given the chunk size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathIndex(pub u32);

impl PathIndex {
    /// The index as a `usize`, for indexing per-subflow arrays.
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for PathIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "subflow{}", self.0)
    }
}

/// Fields a request carries for the subscriber's own use and a reply copies back unchanged
/// (thesis §4.4 infers "a subflow id / nonce or timestamp echo to match replies to requests
/// for RTT sampling").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Echo {
    /// When the subscriber sent the request.
    pub sent_at: Time,
    /// Whether the part was requested on the same path before (after a retransmission
    /// timeout). For information (statistics, caches): the subscriber applies Karn's rule
    /// (thesis §4.5) from its own records, to replies to every request for such a part.
    pub retransmission: bool,
}

/// A request for a content's metadata (thesis §4.3: "the first fast-path subscription always
/// requests a metadata packet").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MetadataRequest {
    /// The content.
    pub content: ContentId,
    /// The subflow that sent it.
    pub path: PathIndex,
    /// Copied into the reply.
    pub echo: Echo,
}

/// A request for one data chunk (thesis §4.2: a "fast-path subscription").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkRequest {
    /// The content.
    pub content: ContentId,
    /// The chunk's index, from 0.
    pub index: u32,
    /// The subflow that sent it.
    pub path: PathIndex,
    /// Copied into the reply.
    pub echo: Echo,
}

/// A subscriber's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Request {
    /// For the metadata.
    Metadata(MetadataRequest),
    /// For one chunk.
    Chunk(ChunkRequest),
}

impl Request {
    /// The content asked for.
    #[must_use]
    pub fn content(&self) -> ContentId {
        match self {
            Request::Metadata(r) => r.content,
            Request::Chunk(r) => r.content,
        }
    }
    /// The part asked for.
    #[must_use]
    pub fn part(&self) -> Part {
        match self {
            Request::Metadata(_) => Part::Metadata,
            Request::Chunk(r) => Part::Chunk(r.index),
        }
    }
    /// The subflow that sent it.
    #[must_use]
    pub fn path(&self) -> PathIndex {
        match self {
            Request::Metadata(r) => r.path,
            Request::Chunk(r) => r.path,
        }
    }
    /// The echo fields.
    #[must_use]
    pub fn echo(&self) -> Echo {
        match self {
            Request::Metadata(r) => r.echo,
            Request::Chunk(r) => r.echo,
        }
    }
}

/// What a subscriber needs to manage a transfer from stateless sources (thesis §4.3).
///
/// The thesis requires it to fit one Ethernet frame (< 1 KByte); the wire format bounds the
/// description to 255 bytes accordingly (`docs/wire.md`, D81).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Metadata {
    /// Size of the whole content in bytes.
    pub size_bytes: u64,
    /// Payload bytes of every chunk but possibly the last, which holds the remainder.
    pub chunk_bytes: u32,
    /// Number of chunks: `ceil(size_bytes / chunk_bytes)`.
    pub chunk_count: u32,
    /// SHA-256 of the whole content (thesis §4.3: "a hash-coded string for integrity
    /// validation").
    pub sha256: [u8; 32],
    /// A short description of the content.
    pub description: String,
}

/// Why a [`Metadata`] value cannot describe a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataError {
    /// `chunk_bytes` is zero.
    ZeroChunkBytes,
    /// `chunk_count` is not `ceil(size_bytes / chunk_bytes)`.
    WrongChunkCount {
        /// What it should be (saturated at `u32::MAX + 1` when too many chunks).
        expected: u64,
    },
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetadataError::ZeroChunkBytes => f.write_str("metadata gives a chunk size of 0 bytes"),
            MetadataError::WrongChunkCount { expected } => write!(
                f,
                "metadata chunk count does not match size and chunk size (expected {expected})"
            ),
        }
    }
}

impl std::error::Error for MetadataError {}

impl Metadata {
    /// The metadata of `content` cut into chunks of `chunk_bytes`, with its SHA-256.
    ///
    /// # Panics
    /// If `chunk_bytes` is 0 or the content needs more than `u32::MAX` chunks.
    #[must_use]
    pub fn for_content(content: &[u8], chunk_bytes: u32, description: &str) -> Metadata {
        Metadata::new(
            content.len() as u64,
            chunk_bytes,
            Sha256::digest(content).into(),
            description,
        )
    }

    /// The metadata of a content of `size_bytes` with the given hash, cut into chunks of
    /// `chunk_bytes`.
    ///
    /// # Panics
    /// If `chunk_bytes` is 0 or the content needs more than `u32::MAX` chunks.
    #[must_use]
    pub fn new(size_bytes: u64, chunk_bytes: u32, sha256: [u8; 32], description: &str) -> Self {
        assert!(chunk_bytes > 0, "chunk_bytes must be positive");
        let count = size_bytes.div_ceil(u64::from(chunk_bytes));
        Metadata {
            size_bytes,
            chunk_bytes,
            chunk_count: u32::try_from(count).expect("at most u32::MAX chunks"),
            sha256,
            description: description.to_owned(),
        }
    }

    /// Checks that the sizes agree with one another.
    ///
    /// # Errors
    /// A zero chunk size, or a chunk count that is not `ceil(size_bytes / chunk_bytes)`.
    pub fn validate(&self) -> Result<(), MetadataError> {
        if self.chunk_bytes == 0 {
            return Err(MetadataError::ZeroChunkBytes);
        }
        let expected = self.size_bytes.div_ceil(u64::from(self.chunk_bytes));
        if expected != u64::from(self.chunk_count) {
            return Err(MetadataError::WrongChunkCount { expected });
        }
        Ok(())
    }

    /// Payload length of chunk `index`, or `None` beyond the last chunk.
    #[must_use]
    pub fn chunk_len(&self, index: u32) -> Option<u32> {
        if index >= self.chunk_count {
            return None;
        }
        let start = u64::from(index) * u64::from(self.chunk_bytes);
        let len = (self.size_bytes - start).min(u64::from(self.chunk_bytes));
        Some(len as u32)
    }

    /// Byte offset of chunk `index` in the content.
    #[must_use]
    pub fn chunk_offset(&self, index: u32) -> u64 {
        u64::from(index) * u64::from(self.chunk_bytes)
    }
}

/// The publisher's answer to a [`MetadataRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MetadataReply {
    /// The content.
    pub content: ContentId,
    /// Copied from the request.
    pub path: PathIndex,
    /// Copied from the request.
    pub echo: Echo,
    /// The metadata.
    pub metadata: Metadata,
}

/// The publisher's answer to a [`ChunkRequest`]: one chunk (thesis §4.2: the data
/// "publication").
///
/// The payload bytes themselves are not part of this value: the subscriber's state machine
/// needs only their length, and the driver carries and stores the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Chunk {
    /// The content.
    pub content: ContentId,
    /// The chunk's index.
    pub index: u32,
    /// Copied from the request.
    pub path: PathIndex,
    /// Copied from the request.
    pub echo: Echo,
    /// Length of the payload in bytes.
    pub payload_bytes: u32,
}

/// Why a publisher could not answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The publisher does not hold this content.
    UnknownContent,
    /// The chunk index is not below the content's chunk count.
    IndexOutOfRange,
    /// The publisher holds another version of the content (wire version 2, issue 18).
    DifferentVersion,
    /// The publisher cannot serve the content any more: its file changed or cannot be read
    /// (wire version 2, issue 18).
    Unavailable,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorKind::UnknownContent => "unknown content",
            ErrorKind::IndexOutOfRange => "chunk index out of range",
            ErrorKind::DifferentVersion => "the publisher holds another version",
            ErrorKind::Unavailable => "content unavailable (file changed or unreadable)",
        })
    }
}

/// A publisher's refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorReply {
    /// The content asked for.
    pub content: ContentId,
    /// The part asked for.
    pub part: Part,
    /// Copied from the request.
    pub path: PathIndex,
    /// Copied from the request.
    pub echo: Echo,
    /// What went wrong.
    pub kind: ErrorKind,
}

/// A publisher's reply.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reply {
    /// The metadata.
    Metadata(MetadataReply),
    /// One chunk.
    Chunk(Chunk),
    /// A refusal.
    Error(ErrorReply),
}

impl Reply {
    /// The content it is about.
    #[must_use]
    pub fn content(&self) -> ContentId {
        match self {
            Reply::Metadata(r) => r.content,
            Reply::Chunk(r) => r.content,
            Reply::Error(r) => r.content,
        }
    }
    /// The subflow whose request it answers.
    #[must_use]
    pub fn path(&self) -> PathIndex {
        match self {
            Reply::Metadata(r) => r.path,
            Reply::Chunk(r) => r.path,
            Reply::Error(r) => r.path,
        }
    }
    /// The echo fields of that request.
    #[must_use]
    pub fn echo(&self) -> Echo {
        match self {
            Reply::Metadata(r) => r.echo,
            Reply::Chunk(r) => r.echo,
            Reply::Error(r) => r.echo,
        }
    }
    /// The part it is about.
    #[must_use]
    pub fn part(&self) -> Part {
        match self {
            Reply::Metadata(_) => Part::Metadata,
            Reply::Chunk(r) => Part::Chunk(r.index),
            Reply::Error(r) => r.part,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ids_are_stable_and_distinct() {
        let a = ContentId::from_name("/videos/a");
        assert_eq!(a, ContentId::from_name("/videos/a"));
        assert_ne!(a, ContentId::from_name("/videos/b"));
        // SHA-256("abc") starts with ba7816bf8f01cfea (FIPS 180-2 test vector).
        assert_eq!(
            ContentId::from_name("abc"),
            ContentId(0xba78_16bf_8f01_cfea)
        );
    }

    #[test]
    fn chunk_names_use_the_mm_suffix_for_metadata() {
        let content = ContentId(0xab);
        let meta = ChunkId {
            content,
            part: Part::Metadata,
        };
        assert_eq!(meta.to_string(), "/00000000000000ab/mm");
        let c = ChunkId {
            content,
            part: Part::Chunk(7),
        };
        assert_eq!(c.to_string(), "/00000000000000ab/7");
        assert!(Part::Metadata < Part::Chunk(0));
    }

    #[test]
    fn metadata_sizes_and_last_chunk() {
        let m = Metadata::new(2500, 1000, [0; 32], "x");
        assert_eq!(m.chunk_count, 3);
        assert_eq!(m.chunk_len(0), Some(1000));
        assert_eq!(m.chunk_len(2), Some(500));
        assert_eq!(m.chunk_len(3), None);
        assert_eq!(m.chunk_offset(2), 2000);
        assert_eq!(m.validate(), Ok(()));
        let empty = Metadata::for_content(&[], 1000, "");
        assert_eq!(empty.chunk_count, 0);
        assert_eq!(empty.chunk_len(0), None);
        let bad = Metadata {
            chunk_count: 2,
            ..m.clone()
        };
        assert_eq!(
            bad.validate(),
            Err(MetadataError::WrongChunkCount { expected: 3 })
        );
        let zero = Metadata {
            chunk_bytes: 0,
            ..m
        };
        assert_eq!(zero.validate(), Err(MetadataError::ZeroChunkBytes));
    }
}
