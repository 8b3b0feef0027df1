//! The signed metadata of wire version 2 (`docs/wire.md`, "METADATA_REPLY"; issue 18): what a
//! publisher vouches for with its Ed25519 key, and what a subscriber or a cache checks before
//! trusting a single byte of a content.

use pathpool_proto::mmtp::{ContentId, Metadata};
use pathpool_psi::{ContentName, MAX_NAME_BYTES};
use pathpool_topo::NodeIx;

use crate::auth::{PublicKey, PublisherKey, SIGNATURE_BYTES};
use crate::cursor::{Reader, Writer};
use crate::error::{DecodeError, EncodeError, Field};
use crate::hash_tree::{Hash, TreeError, TreeShape};

/// Longest metadata description, in bytes of UTF-8. With it a metadata reply without a first
/// chunk is at most 37 + 256 + 60 + 256 + 64 = 673 bytes of body, under the thesis's 1 KB
/// (§4.3).
pub const MAX_DESCRIPTION_BYTES: usize = 255;

/// What the signature covers before the fields (domain separation: a signature made for
/// anything else never verifies as metadata).
pub const SIGNATURE_CONTEXT: &[u8] = b"pathpool v2 metadata";

/// A content's metadata as its publisher signs it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SignedMetadata {
    /// The content's name; the data prefix's content id is derived from it.
    pub name: ContentName,
    /// The node that signed.
    pub publisher: NodeIx,
    /// Bytes of the content.
    pub size_bytes: u64,
    /// Payload bytes of a chunk (the last may be shorter).
    pub chunk_bytes: u32,
    /// Data chunks: `ceil(size_bytes / chunk_bytes)`.
    pub data_chunks: u32,
    /// Pages of the hash tree, sent ahead of the data chunks; 0 with security off.
    pub pages: u32,
    /// The hash tree's root; with security off, the BLAKE3 hash of the whole content.
    pub root: Hash,
    /// The BLAKE3 hash of the whole content, which the subscriber's writer checks the file
    /// against before the rename (D181); equal to the root with security off.
    pub content_hash: Hash,
    /// A short description, at most [`MAX_DESCRIPTION_BYTES`].
    pub description: String,
    /// Ed25519 over [`SIGNATURE_CONTEXT`] and the fields from the name to the description;
    /// zero with security off.
    pub signature: [u8; SIGNATURE_BYTES],
}

/// Why signed metadata cannot describe a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataError {
    /// A chunk size of 0.
    ZeroChunkBytes,
    /// The data chunk count is not `ceil(size / chunk size)`.
    WrongChunkCount,
    /// The page count is neither 0 nor the tree's.
    WrongPageCount,
    /// No pages (security off), yet the content hash is not the root.
    ContentHashNotRoot,
    /// No tree over these sizes.
    Tree(TreeError),
}

impl core::fmt::Display for MetadataError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MetadataError::ZeroChunkBytes => f.write_str("chunk size 0"),
            MetadataError::WrongChunkCount => {
                f.write_str("data chunk count does not match size and chunk size")
            }
            MetadataError::WrongPageCount => {
                f.write_str("page count does not match the hash tree's")
            }
            MetadataError::ContentHashNotRoot => {
                f.write_str("no hash tree, yet the content hash is not the root")
            }
            MetadataError::Tree(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MetadataError {}

impl SignedMetadata {
    /// Bytes of the signed fields on the wire (name to description).
    pub(crate) fn fields_len(&self) -> usize {
        1 + self.name.as_str().len() + 4 + 8 + 4 + 4 + 4 + 32 + 32 + 1 + self.description.len()
    }

    /// Bytes on the wire, the signature included.
    pub(crate) fn wire_len(&self) -> usize {
        self.fields_len() + SIGNATURE_BYTES
    }

    pub(crate) fn write_fields(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        if self.description.len() > MAX_DESCRIPTION_BYTES {
            return Err(EncodeError::Oversized {
                field: Field::Description,
                len: self.description.len(),
                max: MAX_DESCRIPTION_BYTES,
            });
        }
        w.short_bytes(Field::Name, self.name.as_str().as_bytes())?;
        w.u32(self.publisher.0)?;
        w.u64(self.size_bytes)?;
        w.u32(self.chunk_bytes)?;
        w.u32(self.data_chunks)?;
        w.u32(self.pages)?;
        w.put(&self.root)?;
        w.put(&self.content_hash)?;
        w.short_bytes(Field::Description, self.description.as_bytes())
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.write_fields(w)?;
        w.put(&self.signature)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let name = r.short_str(Field::Name, MAX_NAME_BYTES)?;
        let name = ContentName::new(name).map_err(|_| DecodeError::BadName)?;
        Ok(SignedMetadata {
            name,
            publisher: NodeIx(r.u32(Field::Node)?),
            size_bytes: r.u64(Field::Sizes)?,
            chunk_bytes: r.u32(Field::Sizes)?,
            data_chunks: r.u32(Field::Sizes)?,
            pages: r.u32(Field::Sizes)?,
            root: r.array(Field::Root)?,
            content_hash: r.array(Field::ContentHash)?,
            description: r
                .short_str(Field::Description, MAX_DESCRIPTION_BYTES)?
                .to_owned(),
            signature: r.array(Field::Signature)?,
        })
    }

    /// What the signature covers: [`SIGNATURE_CONTEXT`] then the fields as on the wire.
    ///
    /// # Errors
    /// A description over its limit.
    pub fn signed_message(&self) -> Result<Vec<u8>, EncodeError> {
        let mut buf = vec![0u8; SIGNATURE_CONTEXT.len() + self.fields_len()];
        let mut w = Writer::new(&mut buf);
        w.put(SIGNATURE_CONTEXT)?;
        self.write_fields(&mut w)?;
        Ok(buf)
    }

    /// Signs the fields with `key` (the signature field is replaced).
    ///
    /// # Errors
    /// A description over its limit.
    pub fn sign(&mut self, key: &PublisherKey) -> Result<(), EncodeError> {
        self.signature = key.sign(&self.signed_message()?);
        Ok(())
    }

    /// Whether the signature is `key`'s over these fields.
    #[must_use]
    pub fn verify(&self, key: &PublicKey) -> bool {
        self.signed_message()
            .is_ok_and(|m| key.verify(&m, &self.signature))
    }

    /// The content id the data prefix carries: from the name.
    #[must_use]
    pub fn content(&self) -> ContentId {
        ContentId::from_name(self.name.as_str())
    }

    /// The version the data prefix carries: the root's first 8 bytes, big-endian.
    #[must_use]
    pub fn version(&self) -> u64 {
        version_of(&self.root)
    }

    /// Checks that the sizes agree and returns the tree's shape (`None` with no pages,
    /// security off).
    ///
    /// # Errors
    /// What disagrees.
    pub fn validate(&self) -> Result<Option<TreeShape>, MetadataError> {
        if self.chunk_bytes == 0 {
            return Err(MetadataError::ZeroChunkBytes);
        }
        if self.size_bytes.div_ceil(u64::from(self.chunk_bytes)) != u64::from(self.data_chunks) {
            return Err(MetadataError::WrongChunkCount);
        }
        if self.pages == 0 {
            return if self.content_hash == self.root {
                Ok(None)
            } else {
                Err(MetadataError::ContentHashNotRoot)
            };
        }
        let shape =
            TreeShape::new(self.data_chunks, self.chunk_bytes).map_err(MetadataError::Tree)?;
        if shape.pages() != self.pages {
            return Err(MetadataError::WrongPageCount);
        }
        Ok(Some(shape))
    }

    /// The transfer as mmTP's subscriber counts it: the pages (each counted as a full chunk)
    /// then the data chunks, one index space; the root in the hash field. Call
    /// [`validate`](Self::validate) first.
    #[must_use]
    pub fn transfer(&self) -> Metadata {
        let pages_bytes = u64::from(self.pages) * u64::from(self.chunk_bytes);
        Metadata {
            size_bytes: pages_bytes.saturating_add(self.size_bytes),
            chunk_bytes: self.chunk_bytes,
            chunk_count: self.pages.saturating_add(self.data_chunks),
            sha256: self.root,
            description: self.description.clone(),
        }
    }
}

/// The version of a content whose root is `root`: its first 8 bytes, big-endian.
#[must_use]
pub fn version_of(root: &Hash) -> u64 {
    let mut first = [0u8; 8];
    for (o, b) in first.iter_mut().zip(root) {
        *o = *b;
    }
    u64::from_be_bytes(first)
}
