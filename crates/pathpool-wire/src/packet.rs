//! Whole packets: the header of [`crate::header`] and one message, decoded from a borrowed
//! datagram and encoded into a caller's buffer.

use pathpool_proto::mmtp::Request;
use pathpool_topo::Fid;

use crate::auth::{OverlayKey, MAC_BYTES};
use crate::control::{ControlError, FidSetMsg, Publish, Subscribe};
use crate::cursor::{Reader, Writer};
use crate::data::{
    ChunkMsg, ChunkRequestMsg, DataErrorMsg, DataPrefix, MetadataReplyMsg, MetadataRequestMsg,
    CHUNK_FIELDS_BYTES, DATA_ERROR_BODY_BYTES,
};
use crate::error::{DecodeError, EncodeError, Field};
use crate::header::{
    fid_words, header_bytes, peek, MsgType, HOP_LIMIT_OFFSET, MAGIC, MAX_PACKET_BYTES, VERSION,
};
use crate::ticket::Ticket;

/// One message of any type. Data messages borrow payloads from the datagram they were
/// decoded from; control messages own their (small) fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message<'a, const W: usize = 4> {
    /// PUBLISH.
    Publish(Publish),
    /// UNPUBLISH.
    Unpublish(Publish),
    /// SUBSCRIBE.
    Subscribe(Subscribe),
    /// FID_SET.
    FidSet(FidSetMsg<W>),
    /// A control-plane error.
    ControlError(ControlError),
    /// mmTP metadata request.
    MetadataRequest(MetadataRequestMsg<W>),
    /// mmTP metadata reply.
    MetadataReply(MetadataReplyMsg<'a>),
    /// mmTP chunk request.
    ChunkRequest(ChunkRequestMsg<W>),
    /// mmTP chunk.
    Chunk(ChunkMsg<'a>),
    /// mmTP publisher's refusal.
    DataError(DataErrorMsg),
}

impl<'a, const W: usize> Message<'a, W> {
    /// The message's type.
    #[must_use]
    pub fn msg_type(&self) -> MsgType {
        match self {
            Message::Publish(_) => MsgType::Publish,
            Message::Unpublish(_) => MsgType::Unpublish,
            Message::Subscribe(_) => MsgType::Subscribe,
            Message::FidSet(_) => MsgType::FidSet,
            Message::ControlError(_) => MsgType::ControlError,
            Message::MetadataRequest(_) => MsgType::MetadataRequest,
            Message::MetadataReply(_) => MsgType::MetadataReply,
            Message::ChunkRequest(_) => MsgType::ChunkRequest,
            Message::Chunk(_) => MsgType::Chunk,
            Message::DataError(_) => MsgType::DataError,
        }
    }

    /// The message carrying a subscriber's request of a download with `token`, for
    /// `version` of the content (ignored for a metadata request, which names none), whose
    /// reply must take `forward_fid` under `ticket`. A metadata request does not ask for
    /// chunk 0 (set [`MetadataRequestMsg::first_chunk`] to coalesce the two requests).
    #[must_use]
    pub fn from_request(
        request: Request,
        token: u64,
        version: u64,
        ticket: Ticket,
        forward_fid: Fid<W>,
    ) -> Self {
        match request {
            Request::Metadata(request) => Message::MetadataRequest(MetadataRequestMsg {
                request,
                token,
                first_chunk: false,
                ticket,
                forward_fid,
            }),
            Request::Chunk(request) => Message::ChunkRequest(ChunkRequestMsg {
                request,
                version,
                token,
                ticket,
                forward_fid,
            }),
        }
    }

    fn body_len(&self) -> usize {
        match self {
            Message::Publish(m) | Message::Unpublish(m) => m.body_len(),
            Message::Subscribe(m) => m.body_len(),
            Message::FidSet(m) => m.body_len(),
            Message::ControlError(m) => m.body_len(),
            Message::MetadataRequest(m) => m.body_len(),
            Message::MetadataReply(m) => m.body_len(),
            Message::ChunkRequest(m) => m.body_len(),
            Message::Chunk(m) => m.body_len(),
            Message::DataError(_) => DATA_ERROR_BODY_BYTES,
        }
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match self {
            Message::Publish(m) | Message::Unpublish(m) => m.write(w),
            Message::Subscribe(m) => m.write(w),
            Message::FidSet(m) => m.write(w),
            Message::ControlError(m) => m.write(w),
            Message::MetadataRequest(m) => m.write(w),
            Message::MetadataReply(m) => m.write(w),
            Message::ChunkRequest(m) => m.write(w),
            Message::Chunk(m) => m.write(w),
            Message::DataError(e) => e.write(w),
        }
    }

    /// Decodes a body of type `t`; every byte must be used.
    ///
    /// # Errors
    /// Any [`DecodeError`] about the body.
    pub fn decode_body(t: MsgType, body: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(body);
        let m = match t {
            MsgType::Publish => Message::Publish(Publish::read(&mut r)?),
            MsgType::Unpublish => Message::Unpublish(Publish::read(&mut r)?),
            MsgType::Subscribe => Message::Subscribe(Subscribe::read(&mut r)?),
            MsgType::FidSet => Message::FidSet(FidSetMsg::read(&mut r)?),
            MsgType::ControlError => Message::ControlError(ControlError::read(&mut r)?),
            MsgType::MetadataRequest => Message::MetadataRequest(MetadataRequestMsg::read(&mut r)?),
            MsgType::MetadataReply => Message::MetadataReply(MetadataReplyMsg::read(&mut r)?),
            MsgType::ChunkRequest => Message::ChunkRequest(ChunkRequestMsg::read(&mut r)?),
            MsgType::Chunk => Message::Chunk(ChunkMsg::read(&mut r)?),
            MsgType::DataError => Message::DataError(DataErrorMsg::read(&mut r)?),
        };
        r.finish(body.len())?;
        Ok(m)
    }
}

/// A packet: the forwarding header's hop limit and FID, and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet<'a, const W: usize = 4> {
    /// Hops the packet may still cross, 1 to 255 ([`pathpool_topo::DEFAULT_TTL`] when
    /// sent; decision D48).
    pub hop_limit: u8,
    /// The LIPSIN FID the packet is forwarded on.
    pub fid: Fid<W>,
    /// The message.
    pub message: Message<'a, W>,
}

fn write_header<const W: usize>(
    w: &mut Writer<'_>,
    t: MsgType,
    hop_limit: u8,
    fid: &Fid<W>,
    body_len: usize,
) -> Result<(), EncodeError> {
    if hop_limit == 0 {
        return Err(EncodeError::InvalidValue(Field::HopLimit));
    }
    let body_len = u16::try_from(body_len).map_err(|_| EncodeError::Oversized {
        field: Field::Body,
        len: body_len,
        max: usize::from(u16::MAX),
    })?;
    w.put(&MAGIC)?;
    w.u8(VERSION)?;
    w.u8(t.code())?;
    w.u8(hop_limit)?;
    w.u8(fid_words::<W>())?;
    w.u16(body_len)?;
    w.fid(fid)
}

/// Checks that a packet of `len` bytes is within [`MAX_PACKET_BYTES`] and fits `buf`.
fn check_len(len: usize, buf: &[u8]) -> Result<(), EncodeError> {
    if len > MAX_PACKET_BYTES {
        return Err(EncodeError::Oversized {
            field: Field::Packet,
            len,
            max: MAX_PACKET_BYTES,
        });
    }
    if buf.len() < len {
        return Err(EncodeError::BufferTooSmall {
            needed: len,
            available: buf.len(),
        });
    }
    Ok(())
}

impl<'a, const W: usize> Packet<'a, W> {
    /// Decodes `datagram`. Never panics; allocates only for control messages and metadata
    /// replies (names, paths, texts), never for requests and chunks.
    ///
    /// # Errors
    /// Why the datagram is not a valid version-2 packet, for counting
    /// ([`crate::DropCounters`]).
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        let h = peek::<W>(datagram)?;
        Ok(Packet {
            hop_limit: h.hop_limit,
            fid: h.fid,
            message: Message::decode_body(h.msg_type, h.body)?,
        })
    }

    /// Bytes [`Packet::encode`] writes.
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        header_bytes::<W>().saturating_add(self.message.body_len())
    }

    /// Encodes the packet at the start of `buf` and returns its length.
    ///
    /// # Errors
    /// A buffer too short, a hop limit of 0, or a field over its limit.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let len = self.encoded_len();
        check_len(len, buf)?;
        let mut w = Writer::new(buf);
        write_header(
            &mut w,
            self.message.msg_type(),
            self.hop_limit,
            &self.fid,
            self.message.body_len(),
        )?;
        self.message.write(&mut w)?;
        Ok(w.position())
    }

    /// [`Packet::encode`] into a new vector (tests and control messages).
    ///
    /// # Errors
    /// As [`Packet::encode`].
    pub fn to_vec(&self) -> Result<Vec<u8>, EncodeError> {
        let mut buf = vec![0; self.encoded_len().min(MAX_PACKET_BYTES)];
        let n = self.encode(&mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }
}

/// Byte offset of a chunk's payload in its packet, with FIDs of `W` words (65 for 256-bit
/// FIDs): a publisher can read the chunk from its store straight into
/// `buf[chunk_payload_offset::<W>()..]` and then call [`encode_chunk_header`].
#[must_use]
pub const fn chunk_payload_offset<const W: usize>() -> usize {
    header_bytes::<W>() + CHUNK_FIELDS_BYTES
}

/// Writes the header and the chunk fields (`prefix`, `index`) in front of a payload of
/// `payload_bytes` already at [`chunk_payload_offset`] in `buf`, so the payload is never
/// copied. Returns the packet's length; the result is the packet [`Packet::encode`] would
/// write for the same chunk and payload.
///
/// # Errors
/// A buffer too short for the payload, a hop limit of 0, or a packet over
/// [`MAX_PACKET_BYTES`].
pub fn encode_chunk_header<const W: usize>(
    buf: &mut [u8],
    hop_limit: u8,
    fid: &Fid<W>,
    prefix: DataPrefix,
    index: u32,
    payload_bytes: usize,
) -> Result<usize, EncodeError> {
    let body_len = CHUNK_FIELDS_BYTES.saturating_add(payload_bytes);
    let len = header_bytes::<W>().saturating_add(body_len);
    check_len(len, buf)?;
    let mut w = Writer::new(buf);
    write_header(&mut w, MsgType::Chunk, hop_limit, fid, body_len)?;
    ChunkMsg::write_fields(prefix, index, &mut w)?;
    Ok(len)
}

/// What a DATA_ERROR's MAC covers: the datagram but its hop limit (which forwarding nodes
/// rewrite) and the MAC itself (its last 16 bytes). `None` for a datagram too short to be one.
fn data_error_mac_input(datagram: &[u8]) -> Option<Vec<u8>> {
    let end = datagram.len().checked_sub(MAC_BYTES)?;
    let before = datagram.get(..HOP_LIMIT_OFFSET)?;
    let after = datagram.get(HOP_LIMIT_OFFSET + 1..end)?;
    Some([before, after].concat())
}

/// Writes the MAC of an encoded DATA_ERROR datagram into its last 16 bytes; returns whether
/// the datagram was long enough.
pub fn seal_data_error(datagram: &mut [u8], key: &OverlayKey) -> bool {
    let Some(input) = data_error_mac_input(datagram) else {
        return false;
    };
    let mac = key.data_error_mac(&input);
    let len = datagram.len();
    match datagram.get_mut(len - MAC_BYTES..) {
        Some(slot) => {
            slot.copy_from_slice(&mac);
            true
        }
        None => false,
    }
}

/// Whether an encoded DATA_ERROR datagram carries the MAC `key` gives it (constant-time
/// comparison).
#[must_use]
pub fn data_error_authentic(datagram: &[u8], key: &OverlayKey) -> bool {
    let (Some(input), Some(got)) = (
        data_error_mac_input(datagram),
        datagram
            .len()
            .checked_sub(MAC_BYTES)
            .and_then(|at| datagram.get(at..))
            .and_then(|m| <[u8; MAC_BYTES]>::try_from(m).ok()),
    ) else {
        return false;
    };
    crate::auth::macs_equal(&key.data_error_mac(&input), &got)
}
