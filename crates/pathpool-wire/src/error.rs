//! Why a datagram cannot be decoded or a message encoded, as typed values a node can count
//! (issue 5, acceptance 6: bad input is "counted and dropped without a crash").

use std::fmt;

/// A field of a packet, named in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// The fixed header (magic, version, type, hop limit, FID width, body length).
    Header,
    /// The hop limit (decision D48: never 0 on the wire).
    HopLimit,
    /// The FID width in 64-bit words.
    FidWidth,
    /// A LIPSIN forwarding identifier.
    Fid,
    /// The body as a whole.
    Body,
    /// A node index (publisher or subscriber).
    Node,
    /// A request id.
    RequestId,
    /// A content name.
    Name,
    /// The matching mode of a subscription.
    Matching,
    /// The number of sources of a multisource subscription.
    MaxSources,
    /// The number of paths of a FID set.
    PathCount,
    /// A `group_id`.
    GroupId,
    /// An error code.
    ErrorCode,
    /// An error text.
    ErrorText,
    /// A content id.
    Content,
    /// A subflow's path index.
    PathIndex,
    /// The echoed send time.
    SentAt,
    /// The flags byte of an mmTP message.
    Flags,
    /// A chunk index.
    ChunkIndex,
    /// The sizes of a metadata reply.
    Sizes,
    /// The root hash of a metadata reply.
    Root,
    /// The whole content's hash in a metadata reply.
    ContentHash,
    /// The version of a data message (first 8 bytes of the root).
    Version,
    /// The token of a data message.
    Token,
    /// A FID ticket.
    Ticket,
    /// An Ed25519 signature.
    Signature,
    /// A MAC.
    Mac,
    /// The description of a metadata reply.
    Description,
    /// A chunk payload.
    Payload,
    /// The whole packet.
    Packet,
    /// A control message's trailer: sender, timestamp, MAC (wire version 2).
    Trailer,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Why a datagram was rejected. Every parser returns one of these for any input it does not
/// accept; none panics (the fuzz targets in `fuzz/` and `tests/robustness.rs` check it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecodeError {
    /// The first two bytes are not [`MAGIC`](crate::MAGIC): not a pathpool packet.
    BadMagic,
    /// A version this decoder does not speak ([`VERSION`](crate::VERSION) only).
    BadVersion(u8),
    /// A message type this version does not define.
    UnknownType(u8),
    /// The packet's FIDs are not as wide as this node's (its `fid_words` byte).
    FidWidth {
        /// This node's width in 64-bit words.
        expected: u8,
        /// The packet's.
        got: u8,
    },
    /// The datagram or the body ends inside this field.
    Truncated(Field),
    /// The body length in the header disagrees with the datagram, or bytes are left after
    /// the last field of the body.
    BadLength {
        /// Bytes the header or the layout says.
        declared: usize,
        /// Bytes there are.
        actual: usize,
    },
    /// A field longer than its limit (see `docs/wire.md`, "Limits").
    Oversized {
        /// Which field.
        field: Field,
        /// Its length (bytes, or paths for [`Field::PathCount`]).
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A value this version does not define: a hop limit of 0, a reserved flag bit set, an
    /// unknown matching mode or mmTP error kind, a non-zero field that must be zero.
    InvalidValue(Field),
    /// A text field that is not UTF-8.
    BadUtf8(Field),
    /// A name that is not a valid `/scope/…/item` (`pathpool_psi::ContentName`).
    BadName,
}

impl DecodeError {
    /// Number of distinct [`DecodeError::index`] values.
    pub const KINDS: usize = 10;

    /// A small number per variant (fields ignored), for counting drops in an array.
    #[must_use]
    pub fn index(&self) -> usize {
        match self {
            DecodeError::BadMagic => 0,
            DecodeError::BadVersion(_) => 1,
            DecodeError::UnknownType(_) => 2,
            DecodeError::FidWidth { .. } => 3,
            DecodeError::Truncated(_) => 4,
            DecodeError::BadLength { .. } => 5,
            DecodeError::Oversized { .. } => 6,
            DecodeError::InvalidValue(_) => 7,
            DecodeError::BadUtf8(_) => 8,
            DecodeError::BadName => 9,
        }
    }

    /// The variant's name in snake case, for metrics and logs.
    #[must_use]
    pub fn name(&self) -> &'static str {
        DROP_NAMES.get(self.index()).copied().unwrap_or("unknown")
    }
}

/// [`DecodeError::name`] of each [`DecodeError::index`].
pub const DROP_NAMES: [&str; DecodeError::KINDS] = [
    "bad_magic",
    "bad_version",
    "unknown_type",
    "fid_width",
    "truncated",
    "bad_length",
    "oversized",
    "invalid_value",
    "bad_utf8",
    "bad_name",
];

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::BadMagic => f.write_str("not a pathpool packet (bad magic)"),
            DecodeError::BadVersion(v) => write!(f, "unsupported wire version {v}"),
            DecodeError::UnknownType(t) => write!(f, "unknown message type 0x{t:02x}"),
            DecodeError::FidWidth { expected, got } => {
                write!(f, "FIDs of {got} words, this node uses {expected}")
            }
            DecodeError::Truncated(field) => write!(f, "packet ends inside field {field}"),
            DecodeError::BadLength { declared, actual } => {
                write!(f, "length {declared} bytes declared, {actual} present")
            }
            DecodeError::Oversized { field, len, max } => {
                write!(f, "field {field} has length {len}, more than {max}")
            }
            DecodeError::InvalidValue(field) => write!(f, "invalid value in field {field}"),
            DecodeError::BadUtf8(field) => write!(f, "field {field} is not UTF-8"),
            DecodeError::BadName => f.write_str("invalid content name"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Counts of rejected datagrams by kind of [`DecodeError`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropCounters {
    /// Drops per [`DecodeError::index`].
    pub by_kind: [u64; DecodeError::KINDS],
}

impl DropCounters {
    /// Counts one drop.
    pub fn record(&mut self, e: &DecodeError) {
        if let Some(n) = self.by_kind.get_mut(e.index()) {
            *n = n.saturating_add(1);
        }
    }

    /// All drops.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.by_kind.iter().sum()
    }

    /// `(name, count)` of every kind, in [`DecodeError::index`] order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        DROP_NAMES.iter().copied().zip(self.by_kind.iter().copied())
    }
}

/// Why a message cannot be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EncodeError {
    /// The caller's buffer is too short.
    BufferTooSmall {
        /// Bytes the packet needs.
        needed: usize,
        /// Bytes the buffer has.
        available: usize,
    },
    /// A field longer than its limit, the same limits as [`DecodeError::Oversized`].
    Oversized {
        /// Which field.
        field: Field,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A value the wire cannot carry: a hop limit of 0, a content name the decoder would
    /// refuse, a chunk whose `payload_bytes` is not its payload's length.
    InvalidValue(Field),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BufferTooSmall { needed, available } => {
                write!(f, "packet needs {needed} bytes, buffer has {available}")
            }
            EncodeError::Oversized { field, len, max } => {
                write!(f, "field {field} has length {len}, more than {max}")
            }
            EncodeError::InvalidValue(field) => write!(f, "invalid value in field {field}"),
        }
    }
}

impl std::error::Error for EncodeError {}
