//! mmTP data messages (thesis §4.4, fast path): metadata request and reply, chunk request and
//! chunk, and the publisher's refusal, with conversions to and from `pathpool-proto`'s
//! in-memory messages. Chunk payloads are borrowed from the datagram.
//!
//! Every data body starts with the same 21 bytes: content id, path index, echoed send time and
//! a flags byte (the fields a reply copies from its request, decision D53).

use pathpool_core::Time;
use pathpool_proto::mmtp::{
    Chunk, ChunkRequest, ContentId, Echo, ErrorKind, ErrorReply, Metadata, MetadataReply,
    MetadataRequest, Part, PathIndex, Reply, Request,
};
use pathpool_topo::Fid;

use crate::cursor::{Reader, Writer};
use crate::error::{DecodeError, EncodeError, Field};
use crate::ticket::{Ticket, TICKET_BYTES};

/// Longest metadata description, in bytes of UTF-8. With it a metadata reply without a first
/// chunk is at most 40 + 70 + 255 = 365 bytes, under the thesis's 1 KB (§4.3).
pub const MAX_DESCRIPTION_BYTES: usize = 255;

/// Bytes of the prefix every data body starts with.
pub const DATA_PREFIX_BYTES: usize = 8 + 4 + 8 + 1;

/// Bytes of a chunk's body before its payload: the prefix and the chunk index.
pub const CHUNK_FIELDS_BYTES: usize = DATA_PREFIX_BYTES + 4;

/// Flag bit 0: the request is a retransmission ([`Echo::retransmission`]).
const FLAG_RETRANSMISSION: u8 = 0x01;
/// Flag bit 1: in a metadata request, send chunk 0 with the metadata; in a metadata reply,
/// chunk 0 follows the description; in an error, the part is a chunk (else the metadata).
const FLAG_SECOND: u8 = 0x02;

/// The fields every data message starts with.
#[derive(Clone, Copy)]
struct Prefix {
    content: ContentId,
    path: PathIndex,
    echo: Echo,
    second: bool,
}

impl Prefix {
    fn write(self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        let mut flags = 0;
        if self.echo.retransmission {
            flags |= FLAG_RETRANSMISSION;
        }
        if self.second {
            flags |= FLAG_SECOND;
        }
        w.u64(self.content.0)?;
        w.u32(self.path.0)?;
        w.u64(self.echo.sent_at.as_ps())?;
        w.u8(flags)
    }

    /// Reads the prefix; `allowed` are the flag bits the message type defines.
    fn read(r: &mut Reader<'_>, allowed: u8) -> Result<Prefix, DecodeError> {
        let content = ContentId(r.u64(Field::Content)?);
        let path = PathIndex(r.u32(Field::PathIndex)?);
        let sent_at = Time::from_ps(r.u64(Field::SentAt)?);
        let flags = r.u8(Field::Flags)?;
        if flags & !allowed != 0 {
            return Err(DecodeError::InvalidValue(Field::Flags));
        }
        Ok(Prefix {
            content,
            path,
            echo: Echo {
                sent_at,
                retransmission: flags & FLAG_RETRANSMISSION != 0,
            },
            second: flags & FLAG_SECOND != 0,
        })
    }
}

/// A metadata request with the forward FID its reply must take (thesis §4.2: requests carry
/// "data identifier + return FID").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MetadataRequestMsg<const W: usize = 4> {
    /// The request.
    pub request: MetadataRequest,
    /// Whether chunk 0 is wanted in the same reply (thesis §4.3: "the first chunk may be
    /// requested at the same time").
    pub first_chunk: bool,
    /// The topology manager's ticket for `forward_fid` (wire version 2).
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

    pub(crate) fn body_len(&self) -> usize {
        DATA_PREFIX_BYTES + TICKET_BYTES + Fid::<W>::BYTES
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        Prefix {
            content: self.request.content,
            path: self.request.path,
            echo: self.request.echo,
            second: self.first_chunk,
        }
        .write(w)?;
        self.ticket.write(w)?;
        w.fid(&self.forward_fid)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let p = Prefix::read(r, FLAG_RETRANSMISSION | FLAG_SECOND)?;
        Ok(MetadataRequestMsg {
            request: MetadataRequest {
                content: p.content,
                path: p.path,
                echo: p.echo,
            },
            first_chunk: p.second,
            ticket: Ticket::read(r)?,
            forward_fid: r.fid()?,
        })
    }
}

/// A chunk request with the forward FID its reply must take (thesis §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkRequestMsg<const W: usize = 4> {
    /// The request.
    pub request: ChunkRequest,
    /// The topology manager's ticket for `forward_fid` (wire version 2).
    pub ticket: Ticket,
    /// The FID the chunk is sent on.
    pub forward_fid: Fid<W>,
}

impl<const W: usize> ChunkRequestMsg<W> {
    pub(crate) fn body_len(&self) -> usize {
        CHUNK_FIELDS_BYTES + TICKET_BYTES + Fid::<W>::BYTES
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        Prefix {
            content: self.request.content,
            path: self.request.path,
            echo: self.request.echo,
            second: false,
        }
        .write(w)?;
        w.u32(self.request.index)?;
        self.ticket.write(w)?;
        w.fid(&self.forward_fid)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let p = Prefix::read(r, FLAG_RETRANSMISSION)?;
        Ok(ChunkRequestMsg {
            request: ChunkRequest {
                content: p.content,
                index: r.u32(Field::ChunkIndex)?,
                path: p.path,
                echo: p.echo,
            },
            ticket: Ticket::read(r)?,
            forward_fid: r.fid()?,
        })
    }
}

/// A metadata reply, possibly with chunk 0's payload (borrowed).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MetadataReplyMsg<'a> {
    /// The reply; its description is at most [`MAX_DESCRIPTION_BYTES`].
    pub reply: MetadataReply,
    /// Chunk 0's payload, when the request asked for it.
    pub first_chunk: Option<&'a [u8]>,
}

impl MetadataReplyMsg<'_> {
    /// The replies for the subscriber's state machine: the metadata, then chunk 0 (with the
    /// metadata request's echo) when present.
    pub fn replies(&self) -> impl Iterator<Item = Reply> + '_ {
        let r = &self.reply;
        let chunk0 = self.first_chunk.map(|payload| {
            Reply::Chunk(Chunk {
                content: r.content,
                index: 0,
                path: r.path,
                echo: r.echo,
                payload_bytes: u32::try_from(payload.len()).unwrap_or(u32::MAX),
            })
        });
        std::iter::once(Reply::Metadata(r.clone())).chain(chunk0)
    }

    pub(crate) fn body_len(&self) -> usize {
        DATA_PREFIX_BYTES
            + 8
            + 4
            + 4
            + 32
            + 1
            + self.reply.metadata.description.len()
            + self.first_chunk.map_or(0, <[u8]>::len)
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        let r = &self.reply;
        let m = &r.metadata;
        if m.description.len() > MAX_DESCRIPTION_BYTES {
            return Err(EncodeError::Oversized {
                field: Field::Description,
                len: m.description.len(),
                max: MAX_DESCRIPTION_BYTES,
            });
        }
        Prefix {
            content: r.content,
            path: r.path,
            echo: r.echo,
            second: self.first_chunk.is_some(),
        }
        .write(w)?;
        w.u64(m.size_bytes)?;
        w.u32(m.chunk_bytes)?;
        w.u32(m.chunk_count)?;
        w.put(&m.sha256)?;
        w.short_bytes(Field::Description, m.description.as_bytes())?;
        if let Some(payload) = self.first_chunk {
            w.put(payload)?;
        }
        Ok(())
    }

    pub(crate) fn read<'a>(r: &mut Reader<'a>) -> Result<MetadataReplyMsg<'a>, DecodeError> {
        let p = Prefix::read(r, FLAG_RETRANSMISSION | FLAG_SECOND)?;
        let metadata = Metadata {
            size_bytes: r.u64(Field::Sizes)?,
            chunk_bytes: r.u32(Field::Sizes)?,
            chunk_count: r.u32(Field::Sizes)?,
            sha256: r.array(Field::Sha256)?,
            description: r
                .short_str(Field::Description, MAX_DESCRIPTION_BYTES)?
                .to_owned(),
        };
        let first_chunk = p.second.then(|| r.rest());
        Ok(MetadataReplyMsg {
            reply: MetadataReply {
                content: p.content,
                path: p.path,
                echo: p.echo,
                metadata,
            },
            first_chunk,
        })
    }
}

/// One chunk with its payload borrowed from the datagram (thesis §4.2: the data
/// "publication").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkMsg<'a> {
    /// The content.
    pub content: ContentId,
    /// The chunk's index, from 0.
    pub index: u32,
    /// Copied from the request.
    pub path: PathIndex,
    /// Copied from the request.
    pub echo: Echo,
    /// The chunk's bytes.
    pub payload: &'a [u8],
}

impl<'a> ChunkMsg<'a> {
    /// The message carrying `chunk` with `payload`.
    ///
    /// # Errors
    /// [`EncodeError::InvalidValue`] if `chunk.payload_bytes` is not `payload.len()`.
    pub fn new(chunk: &Chunk, payload: &'a [u8]) -> Result<Self, EncodeError> {
        if usize::try_from(chunk.payload_bytes).ok() != Some(payload.len()) {
            return Err(EncodeError::InvalidValue(Field::Payload));
        }
        Ok(ChunkMsg {
            content: chunk.content,
            index: chunk.index,
            path: chunk.path,
            echo: chunk.echo,
            payload,
        })
    }

    /// The in-memory reply for the subscriber's state machine (it needs only the length).
    #[must_use]
    pub fn to_chunk(&self) -> Chunk {
        Chunk {
            content: self.content,
            index: self.index,
            path: self.path,
            echo: self.echo,
            payload_bytes: u32::try_from(self.payload.len()).unwrap_or(u32::MAX),
        }
    }

    pub(crate) fn body_len(&self) -> usize {
        CHUNK_FIELDS_BYTES + self.payload.len()
    }

    pub(crate) fn write_fields(
        content: ContentId,
        index: u32,
        path: PathIndex,
        echo: Echo,
        w: &mut Writer<'_>,
    ) -> Result<(), EncodeError> {
        Prefix {
            content,
            path,
            echo,
            second: false,
        }
        .write(w)?;
        w.u32(index)
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        Self::write_fields(self.content, self.index, self.path, self.echo, w)?;
        w.put(self.payload)
    }

    pub(crate) fn read(r: &mut Reader<'a>) -> Result<ChunkMsg<'a>, DecodeError> {
        let p = Prefix::read(r, FLAG_RETRANSMISSION)?;
        Ok(ChunkMsg {
            content: p.content,
            index: r.u32(Field::ChunkIndex)?,
            path: p.path,
            echo: p.echo,
            payload: r.rest(),
        })
    }
}

const ERROR_UNKNOWN_CONTENT: u8 = 1;
const ERROR_INDEX_OUT_OF_RANGE: u8 = 2;

/// Body bytes of a data error.
pub(crate) const ERROR_BODY_BYTES: usize = DATA_PREFIX_BYTES + 4 + 1;

pub(crate) fn write_error(e: &ErrorReply, w: &mut Writer<'_>) -> Result<(), EncodeError> {
    let (is_chunk, index) = match e.part {
        Part::Metadata => (false, 0),
        Part::Chunk(i) => (true, i),
    };
    Prefix {
        content: e.content,
        path: e.path,
        echo: e.echo,
        second: is_chunk,
    }
    .write(w)?;
    w.u32(index)?;
    w.u8(match e.kind {
        ErrorKind::UnknownContent => ERROR_UNKNOWN_CONTENT,
        ErrorKind::IndexOutOfRange => ERROR_INDEX_OUT_OF_RANGE,
    })
}

pub(crate) fn read_error(r: &mut Reader<'_>) -> Result<ErrorReply, DecodeError> {
    let p = Prefix::read(r, FLAG_RETRANSMISSION | FLAG_SECOND)?;
    let index = r.u32(Field::ChunkIndex)?;
    let part = match (p.second, index) {
        (true, i) => Part::Chunk(i),
        (false, 0) => Part::Metadata,
        (false, _) => return Err(DecodeError::InvalidValue(Field::ChunkIndex)),
    };
    let kind = match r.u8(Field::ErrorCode)? {
        ERROR_UNKNOWN_CONTENT => ErrorKind::UnknownContent,
        ERROR_INDEX_OUT_OF_RANGE => ErrorKind::IndexOutOfRange,
        _ => return Err(DecodeError::InvalidValue(Field::ErrorCode)),
    };
    Ok(ErrorReply {
        content: p.content,
        part,
        path: p.path,
        echo: p.echo,
        kind,
    })
}
