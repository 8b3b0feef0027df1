//! The fixed header every packet starts with, and the forwarding node's view of it: magic,
//! version, type, hop limit, FID width, body length and the LIPSIN FID, readable and
//! rewritable without parsing the body.

use pathpool_topo::{ttl_after_hop, Fid};

use crate::cursor::Reader;
use crate::error::{DecodeError, Field};

/// The first two bytes of every packet, `pp` in ASCII.
pub const MAGIC: [u8; 2] = *b"pp";

/// The version this crate writes and the only one it reads (see `docs/wire.md`, "Versions").
pub const VERSION: u8 = 2;

/// Bytes of the header before the FID: magic (2), version, type, hop limit, FID width (1
/// each), body length (2).
pub const FIXED_HEADER_BYTES: usize = 8;

/// Byte offset of the hop limit, which a forwarding node rewrites in place.
pub const HOP_LIMIT_OFFSET: usize = 4;

/// The largest packet: the largest UDP payload over IPv4 (65 535 − 20 − 8 bytes, RFC 768
/// and RFC 791), so every packet fits one datagram.
pub const MAX_PACKET_BYTES: usize = 65_507;

/// Bytes of the header with a FID of `W` words: [`FIXED_HEADER_BYTES`] + 8·W (40 for the
/// default 256-bit FID).
#[must_use]
pub const fn header_bytes<const W: usize>() -> usize {
    FIXED_HEADER_BYTES + Fid::<W>::BYTES
}

/// The FID width in 64-bit words as written in the header. A compile-time error for widths
/// outside 1..=16, those of `pathpool_topo::TagSpace` (decision D48).
pub(crate) const fn fid_words<const W: usize>() -> u8 {
    assert!(W >= 1 && W <= 16, "FIDs are 1 to 16 words wide (D48)");
    W as u8
}

/// Message types (byte 3 of the header). 0x01–0x0f are PSI control messages, 0x10–0x1f mmTP
/// data messages; every other value is unknown in version 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MsgType {
    /// A publisher advertises an item (thesis §4.4, PUBLISH).
    Publish = 0x01,
    /// A publisher withdraws an item.
    Unpublish = 0x02,
    /// A subscriber asks the rendezvous for an item (thesis §4.4, SUBSCRIBE).
    Subscribe = 0x03,
    /// The topology manager's paths for a subscription (thesis §4.4, FID_SET).
    FidSet = 0x04,
    /// The rendezvous or topology manager could not serve a control message.
    ControlError = 0x05,
    /// mmTP metadata request (thesis §4.4, METADATA_REQUEST).
    MetadataRequest = 0x10,
    /// mmTP metadata reply (thesis §4.4, METADATA).
    MetadataReply = 0x11,
    /// mmTP chunk request (thesis §4.4, CHUNK_REQUEST).
    ChunkRequest = 0x12,
    /// mmTP chunk (thesis §4.4, CHUNK).
    Chunk = 0x13,
    /// mmTP publisher's refusal (decision D53).
    DataError = 0x14,
}

impl MsgType {
    /// The type with this code.
    ///
    /// # Errors
    /// [`DecodeError::UnknownType`] for a code version 1 does not define.
    pub fn from_code(code: u8) -> Result<MsgType, DecodeError> {
        Ok(match code {
            0x01 => MsgType::Publish,
            0x02 => MsgType::Unpublish,
            0x03 => MsgType::Subscribe,
            0x04 => MsgType::FidSet,
            0x05 => MsgType::ControlError,
            0x10 => MsgType::MetadataRequest,
            0x11 => MsgType::MetadataReply,
            0x12 => MsgType::ChunkRequest,
            0x13 => MsgType::Chunk,
            0x14 => MsgType::DataError,
            _ => return Err(DecodeError::UnknownType(code)),
        })
    }

    /// The code written in the header.
    #[must_use]
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// What a forwarding node reads: the header, checked, and the body left unparsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardingHeader<'a, const W: usize = 4> {
    /// The message type (known to this version).
    pub msg_type: MsgType,
    /// Hops the packet may still cross (1 to 255; decision D48).
    pub hop_limit: u8,
    /// The LIPSIN FID the packet is forwarded on.
    pub fid: Fid<W>,
    /// The body, borrowed from the datagram.
    pub body: &'a [u8],
}

/// Reads and checks the header of `datagram`: magic, version, type, hop limit, FID width and
/// that the body length is exactly what follows the FID. The body is not parsed, so a
/// forwarding node pays for 8 + 8·W bytes whatever the message.
///
/// # Errors
/// Any [`DecodeError`] about the header; the body may still be malformed.
pub fn peek<const W: usize>(datagram: &[u8]) -> Result<ForwardingHeader<'_, W>, DecodeError> {
    if datagram.len() > MAX_PACKET_BYTES {
        return Err(DecodeError::Oversized {
            field: Field::Packet,
            len: datagram.len(),
            max: MAX_PACKET_BYTES,
        });
    }
    let mut r = Reader::new(datagram);
    if r.array::<2>(Field::Header)? != MAGIC {
        return Err(DecodeError::BadMagic);
    }
    let version = r.u8(Field::Header)?;
    if version != VERSION {
        return Err(DecodeError::BadVersion(version));
    }
    let msg_type = MsgType::from_code(r.u8(Field::Header)?)?;
    let hop_limit = r.u8(Field::HopLimit)?;
    if hop_limit == 0 {
        return Err(DecodeError::InvalidValue(Field::HopLimit));
    }
    let words = r.u8(Field::FidWidth)?;
    if words != fid_words::<W>() {
        return Err(DecodeError::FidWidth {
            expected: fid_words::<W>(),
            got: words,
        });
    }
    let body_len = usize::from(r.u16(Field::Header)?);
    let fid = r.fid::<W>()?;
    let body = r.rest();
    if body.len() != body_len {
        return Err(if body.len() < body_len {
            DecodeError::Truncated(Field::Body)
        } else {
            DecodeError::BadLength {
                declared: body_len,
                actual: body.len(),
            }
        });
    }
    Ok(ForwardingHeader {
        msg_type,
        hop_limit,
        fid,
        body,
    })
}

/// The forwarding step of decision D48, in place: decrements the hop limit of a datagram
/// whose header [`peek`] accepted and returns the new value, or returns `None` (drop the
/// packet, leaving it unchanged) when the hop limit runs out or the datagram is too short.
pub fn decrement_hop_limit(datagram: &mut [u8]) -> Option<u8> {
    let hop = datagram.get_mut(HOP_LIMIT_OFFSET)?;
    let next = ttl_after_hop(*hop)?;
    *hop = next;
    Some(next)
}
