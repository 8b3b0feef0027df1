//! mmTP data messages of wire version 2 (thesis §4.4, fast path; issue 18): metadata request
//! and reply, chunk request and chunk, and the publisher's refusal. Chunk payloads are
//! borrowed from the datagram.
//!
//! Every data body starts with the same 37 bytes: content id, version (the first 8 bytes of
//! the content's root hash, 0 in a metadata request), the download's random token, path index,
//! echoed send time and a flags byte (the fields a reply copies from its request, decision
//! D53; the version and token, D150).

use pathpool_core::Time;
use pathpool_proto::mmtp::{
    ChunkRequest, ContentId, Echo, ErrorKind, ErrorReply, MetadataReply, MetadataRequest, Part,
    PathIndex, Request,
};
use pathpool_topo::{Fid, NodeIx};

use crate::auth::MAC_BYTES;
use crate::cursor::{Reader, Writer};
use crate::error::{DecodeError, EncodeError, Field};
use crate::metadata::SignedMetadata;
use crate::ticket::{Ticket, TICKET_BYTES};

/// Bytes of the prefix every data body starts with.
pub const DATA_PREFIX_BYTES: usize = 8 + 8 + 8 + 4 + 8 + 1;

/// Bytes of a chunk's body before its payload: the prefix and the chunk index.
pub const CHUNK_FIELDS_BYTES: usize = DATA_PREFIX_BYTES + 4;

/// Flag bit 0: the request is a retransmission ([`Echo::retransmission`]).
const FLAG_RETRANSMISSION: u8 = 0x01;
/// Flag bit 1: in a metadata request, send chunk 0 with the metadata; in a metadata reply,
/// chunk 0 follows the signature; in an error, the part is a chunk (else the metadata).
const FLAG_SECOND: u8 = 0x02;

/// The fields every data message starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataPrefix {
    /// The content.
    pub content: ContentId,
    /// The content's version: the first 8 bytes of its root; 0 in a metadata request.
    pub version: u64,
    /// The download's random token, copied by every reply.
    pub token: u64,
    /// The subflow, copied by replies.
    pub path: PathIndex,
    /// The echo, copied by replies.
    pub echo: Echo,
}

impl DataPrefix {
    fn write(self, second: bool, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        let mut flags = 0;
        if self.echo.retransmission {
            flags |= FLAG_RETRANSMISSION;
        }
        if second {
            flags |= FLAG_SECOND;
        }
        w.u64(self.content.0)?;
        w.u64(self.version)?;
        w.u64(self.token)?;
        w.u32(self.path.0)?;
        w.u64(self.echo.sent_at.as_ps())?;
        w.u8(flags)
    }

    /// Reads the prefix and whether flag bit 1 is set; `allowed` are the flag bits the
    /// message type defines.
    fn read(r: &mut Reader<'_>, allowed: u8) -> Result<(DataPrefix, bool), DecodeError> {
        let content = ContentId(r.u64(Field::Content)?);
        let version = r.u64(Field::Version)?;
        let token = r.u64(Field::Token)?;
        let path = PathIndex(r.u32(Field::PathIndex)?);
        let sent_at = Time::from_ps(r.u64(Field::SentAt)?);
        let flags = r.u8(Field::Flags)?;
        if flags & !allowed != 0 {
            return Err(DecodeError::InvalidValue(Field::Flags));
        }
        let prefix = DataPrefix {
            content,
            version,
            token,
            path,
            echo: Echo {
                sent_at,
                retransmission: flags & FLAG_RETRANSMISSION != 0,
            },
        };
        Ok((prefix, flags & FLAG_SECOND != 0))
    }
}

/// A metadata request with the ticket and forward FID its reply must take (thesis §4.2:
/// requests carry "data identifier + return FID").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MetadataRequestMsg<const W: usize = 4> {
    /// The request.
    pub request: MetadataRequest,
    /// The download's token.
    pub token: u64,
    /// Whether chunk 0 is wanted in the same reply (thesis §4.3: "the first chunk may be
    /// requested at the same time").
    pub first_chunk: bool,
    /// The ticket of the forward FID.
    pub ticket: Ticket,
    /// The FID the reply is sent on.
    pub forward_fid: Fid<W>,
}

impl<const W: usize> MetadataRequestMsg<W> {
    /// The requests for the publisher's state machine: the metadata, then chunk 0 with the
    /// same echo when `first_chunk` is set.
    pub fn requests(&self) -> impl Iterator<Item = Request> {
        let r = self.request;
        let chunk0 = self.first_chunk.then_some(Request::Chunk(ChunkRequest {
            content: r.content,
            index: 0,
            path: r.path,
            echo: r.echo,
        }));
        std::iter::once(Request::Metadata(r)).chain(chunk0)
    }

    /// The prefix a reply copies.
    #[must_use]
    pub fn prefix(&self) -> DataPrefix {
        DataPrefix {
            content: self.request.content,
            version: 0,
            token: self.token,
            path: self.request.path,
            echo: self.request.echo,
        }
    }

    pub(crate) fn body_len(&self) -> usize {
        DATA_PREFIX_BYTES + TICKET_BYTES + Fid::<W>::BYTES
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.prefix().write(self.first_chunk, w)?;
        self.ticket.write(w)?;
        w.fid(&self.forward_fid)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let (p, first_chunk) = DataPrefix::read(r, FLAG_RETRANSMISSION | FLAG_SECOND)?;
        if p.version != 0 {
            // Canonical: a metadata request names no version.
            return Err(DecodeError::InvalidValue(Field::Version));
        }
        Ok(MetadataRequestMsg {
            request: MetadataRequest {
                content: p.content,
                path: p.path,
                echo: p.echo,
            },
            token: p.token,
            first_chunk,
            ticket: Ticket::read(r)?,
            forward_fid: r.fid()?,
        })
    }
}

/// A chunk request with the ticket and forward FID its reply must take (thesis §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkRequestMsg<const W: usize = 4> {
    /// The request.
    pub request: ChunkRequest,
    /// The version asked for.
    pub version: u64,
    /// The download's token.
    pub token: u64,
    /// The ticket of the forward FID.
    pub ticket: Ticket,
    /// The FID the chunk is sent on.
    pub forward_fid: Fid<W>,
}

impl<const W: usize> ChunkRequestMsg<W> {
    /// The prefix a reply copies.
    #[must_use]
    pub fn prefix(&self) -> DataPrefix {
        DataPrefix {
            content: self.request.content,
            version: self.version,
            token: self.token,
            path: self.request.path,
            echo: self.request.echo,
        }
    }

    pub(crate) fn body_len(&self) -> usize {
        CHUNK_FIELDS_BYTES + TICKET_BYTES + Fid::<W>::BYTES
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.prefix().write(false, w)?;
        w.u32(self.request.index)?;
        self.ticket.write(w)?;
        w.fid(&self.forward_fid)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let (p, _) = DataPrefix::read(r, FLAG_RETRANSMISSION)?;
        Ok(ChunkRequestMsg {
            request: ChunkRequest {
                content: p.content,
                index: r.u32(Field::ChunkIndex)?,
                path: p.path,
                echo: p.echo,
            },
            version: p.version,
            token: p.token,
            ticket: Ticket::read(r)?,
            forward_fid: r.fid()?,
        })
    }
}

/// A metadata reply, possibly with chunk 0's payload (borrowed).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MetadataReplyMsg<'a> {
    /// The content id, token, path and echo of the request (the version is the metadata's).
    pub prefix: DataPrefix,
    /// The signed metadata.
    pub metadata: SignedMetadata,
    /// Chunk 0's payload, when the request asked for it.
    pub first_chunk: Option<&'a [u8]>,
}

impl MetadataReplyMsg<'_> {
    /// The reply for the subscriber's state machine, describing the whole transfer (pages and
    /// data chunks, [`SignedMetadata::transfer`]).
    #[must_use]
    pub fn reply(&self) -> MetadataReply {
        MetadataReply {
            content: self.prefix.content,
            path: self.prefix.path,
            echo: self.prefix.echo,
            metadata: self.metadata.transfer(),
        }
    }

    pub(crate) fn body_len(&self) -> usize {
        DATA_PREFIX_BYTES + self.metadata.wire_len() + self.first_chunk.map_or(0, <[u8]>::len)
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        if self.prefix.version != self.metadata.version()
            || self.prefix.content != self.metadata.content()
        {
            return Err(EncodeError::InvalidValue(Field::Version));
        }
        self.prefix.write(self.first_chunk.is_some(), w)?;
        self.metadata.write(w)?;
        if let Some(payload) = self.first_chunk {
            w.put(payload)?;
        }
        Ok(())
    }

    pub(crate) fn read<'a>(r: &mut Reader<'a>) -> Result<MetadataReplyMsg<'a>, DecodeError> {
        let (prefix, second) = DataPrefix::read(r, FLAG_RETRANSMISSION | FLAG_SECOND)?;
        let metadata = SignedMetadata::read(r)?;
        // Canonical: the prefix's content id and version are the metadata's.
        if prefix.content != metadata.content() {
            return Err(DecodeError::InvalidValue(Field::Content));
        }
        if prefix.version != metadata.version() {
            return Err(DecodeError::InvalidValue(Field::Version));
        }
        let first_chunk = second.then(|| r.rest());
        Ok(MetadataReplyMsg {
            prefix,
            metadata,
            first_chunk,
        })
    }
}

/// One chunk (a page or data) with its payload borrowed from the datagram (thesis §4.2: the
/// data "publication").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkMsg<'a> {
    /// The content, version, token, path and echo (the last three copied from the request).
    pub prefix: DataPrefix,
    /// The chunk's index in the transfer, from 0 (pages first).
    pub index: u32,
    /// The chunk's bytes.
    pub payload: &'a [u8],
}

impl<'a> ChunkMsg<'a> {
    /// The in-memory reply for the subscriber's state machine (it needs only the length).
    #[must_use]
    pub fn to_chunk(&self) -> pathpool_proto::mmtp::Chunk {
        pathpool_proto::mmtp::Chunk {
            content: self.prefix.content,
            index: self.index,
            path: self.prefix.path,
            echo: self.prefix.echo,
            payload_bytes: u32::try_from(self.payload.len()).unwrap_or(u32::MAX),
        }
    }

    pub(crate) fn body_len(&self) -> usize {
        CHUNK_FIELDS_BYTES + self.payload.len()
    }

    pub(crate) fn write_fields(
        prefix: DataPrefix,
        index: u32,
        w: &mut Writer<'_>,
    ) -> Result<(), EncodeError> {
        prefix.write(false, w)?;
        w.u32(index)
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        Self::write_fields(self.prefix, self.index, w)?;
        w.put(self.payload)
    }

    pub(crate) fn read(r: &mut Reader<'a>) -> Result<ChunkMsg<'a>, DecodeError> {
        let (prefix, _) = DataPrefix::read(r, FLAG_RETRANSMISSION)?;
        Ok(ChunkMsg {
            prefix,
            index: r.u32(Field::ChunkIndex)?,
            payload: r.rest(),
        })
    }
}

const ERROR_UNKNOWN_CONTENT: u8 = 1;
const ERROR_INDEX_OUT_OF_RANGE: u8 = 2;
const ERROR_DIFFERENT_VERSION: u8 = 3;
const ERROR_UNAVAILABLE: u8 = 4;

/// Body bytes of a data error: prefix, chunk index, kind, publisher, MAC.
pub const DATA_ERROR_BODY_BYTES: usize = DATA_PREFIX_BYTES + 4 + 1 + 4 + MAC_BYTES;

/// A publisher's refusal, with the MAC that lets a subscriber believe it
/// (`OverlayKey::data_error_mac` over the datagram but its hop limit and the MAC; see
/// [`crate::seal_data_error`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataErrorMsg {
    /// The refusal (content, part, path, echo, kind).
    pub error: ErrorReply,
    /// The version the request named (0 for a metadata request).
    pub version: u64,
    /// The request's token.
    pub token: u64,
    /// The publisher that refuses.
    pub publisher: NodeIx,
    /// The MAC; zero until sealed.
    pub mac: [u8; MAC_BYTES],
}

impl DataErrorMsg {
    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        let e = &self.error;
        let (is_chunk, index) = match e.part {
            Part::Metadata => (false, 0),
            Part::Chunk(i) => (true, i),
        };
        DataPrefix {
            content: e.content,
            version: self.version,
            token: self.token,
            path: e.path,
            echo: e.echo,
        }
        .write(is_chunk, w)?;
        w.u32(index)?;
        w.u8(match e.kind {
            ErrorKind::UnknownContent => ERROR_UNKNOWN_CONTENT,
            ErrorKind::IndexOutOfRange => ERROR_INDEX_OUT_OF_RANGE,
            ErrorKind::DifferentVersion => ERROR_DIFFERENT_VERSION,
            ErrorKind::Unavailable => ERROR_UNAVAILABLE,
        })?;
        w.u32(self.publisher.0)?;
        w.put(&self.mac)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<DataErrorMsg, DecodeError> {
        let (p, second) = DataPrefix::read(r, FLAG_RETRANSMISSION | FLAG_SECOND)?;
        let index = r.u32(Field::ChunkIndex)?;
        let part = match (second, index) {
            (true, i) => Part::Chunk(i),
            (false, 0) => Part::Metadata,
            (false, _) => return Err(DecodeError::InvalidValue(Field::ChunkIndex)),
        };
        let kind = match r.u8(Field::ErrorCode)? {
            ERROR_UNKNOWN_CONTENT => ErrorKind::UnknownContent,
            ERROR_INDEX_OUT_OF_RANGE => ErrorKind::IndexOutOfRange,
            ERROR_DIFFERENT_VERSION => ErrorKind::DifferentVersion,
            ERROR_UNAVAILABLE => ErrorKind::Unavailable,
            _ => return Err(DecodeError::InvalidValue(Field::ErrorCode)),
        };
        Ok(DataErrorMsg {
            error: ErrorReply {
                content: p.content,
                part,
                path: p.path,
                echo: p.echo,
                kind,
            },
            version: p.version,
            token: p.token,
            publisher: NodeIx(r.u32(Field::Node)?),
            mac: r.array(Field::Mac)?,
        })
    }
}
