//! PSI control messages (thesis §4.4, slow path): PUBLISH, UNPUBLISH, SUBSCRIBE, FID_SET and
//! errors, with conversions to and from `pathpool-psi`'s values.

use pathpool_psi::{ContentName, FidSet, Matching, PathInfo, SubscribeError, MAX_NAME_BYTES};
use pathpool_topo::{Fid, NodeIx};

use crate::auth::OverlayKey;
use crate::control_auth::{ControlAuth, CONTROL_TRAILER_BYTES};
use crate::cursor::{Reader, Writer};
use crate::error::{DecodeError, EncodeError, Field};
use crate::ticket::{Ticket, TICKET_BYTES};

/// Most paths in one FID set: 64 paths of 256-bit FIDs make a 4.9 KB packet, 1024-bit ones
/// 16.9 KB, both under [`MAX_PACKET_BYTES`](crate::MAX_PACKET_BYTES).
pub const MAX_PATHS: usize = 64;

/// Longest error text, in bytes of UTF-8.
pub const MAX_ERROR_TEXT_BYTES: usize = 255;

/// A publisher advertises (PUBLISH) or withdraws (UNPUBLISH) an item (thesis §3.3 step 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Publish {
    /// The publisher, as a node of the topology manager's graph.
    pub publisher: NodeIx,
    /// The item.
    pub name: ContentName,
    /// The trailer (wire version 2): filled by [`crate::seal_control`] after encoding.
    pub auth: ControlAuth,
}

/// A subscription (thesis §3.3 step 2), answered by a [`FidSetMsg`] or a [`ControlError`]
/// carrying the same `request_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscribe {
    /// Chosen by the subscriber, copied into the answer.
    pub request_id: u32,
    /// The subscriber, as a node of the topology manager's graph.
    pub subscriber: NodeIx,
    /// One publisher or several (thesis §3.1); on the wire `max_sources` is at most 65 535.
    pub matching: Matching,
    /// The item.
    pub name: ContentName,
    /// The trailer (wire version 2).
    pub auth: ControlAuth,
}

/// One path of a FID set as the subscriber receives it (thesis §4.4: "forward FID_j, reverse
/// FID_j, group_id_j"; the link lists of [`PathInfo`] stay with the topology manager).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PathFids<const W: usize = 4> {
    /// The publisher at the far end.
    pub publisher: NodeIx,
    /// Paths with equal `group_id` are controlled together (thesis §5.2).
    pub group_id: u32,
    /// Carried by requests for the replies (publisher → subscriber).
    pub forward_fid: Fid<W>,
    /// Routes requests (subscriber → publisher).
    pub reverse_fid: Fid<W>,
    /// The topology manager's ticket for `forward_fid` (wire version 2), copied into every
    /// request on this path.
    pub ticket: Ticket,
}

impl PathFids {
    /// The path as the subscriber receives it, with a ticket good until `expiry_unix_s`
    /// issued under `key` (a zero ticket without one: `security = "off"`).
    #[must_use]
    pub fn issue(p: &PathInfo, key: Option<&OverlayKey>, expiry_unix_s: u32) -> Self {
        let ticket = key.map_or_else(Ticket::default, |key| {
            Ticket::issue(key, p.publisher, &p.forward_fid, expiry_unix_s)
        });
        PathFids {
            publisher: p.publisher,
            group_id: p.group_id,
            forward_fid: p.forward_fid,
            reverse_fid: p.reverse_fid,
            ticket,
        }
    }
}

/// The topology manager's answer to a subscription, sent again whenever the paths change
/// (thesis §5.4). The subscriber makes one subflow per path, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FidSetMsg<const W: usize = 4> {
    /// The `request_id` of the subscription.
    pub request_id: u32,
    /// The item.
    pub name: ContentName,
    /// At most [`MAX_PATHS`].
    pub paths: Vec<PathFids<W>>,
    /// The trailer (wire version 2).
    pub auth: ControlAuth,
}

impl FidSetMsg {
    /// The message for `set`, the topology manager's answer to subscription `request_id`,
    /// each path with a ticket good until `expiry_unix_s` issued under `key`.
    ///
    /// # Errors
    /// [`EncodeError::Oversized`] for more than [`MAX_PATHS`] paths.
    pub fn from_fid_set(
        request_id: u32,
        name: ContentName,
        set: &FidSet,
        key: Option<&OverlayKey>,
        expiry_unix_s: u32,
    ) -> Result<Self, EncodeError> {
        check_paths(set.paths.len()).map_err(oversized_to_encode)?;
        Ok(FidSetMsg {
            request_id,
            name,
            paths: set
                .paths
                .iter()
                .map(|p| PathFids::issue(p, key, expiry_unix_s))
                .collect(),
            auth: ControlAuth::default(),
        })
    }
}

/// An error code of a [`ControlError`]. Codes not listed here may appear within version 1:
/// a receiver treats them as [`ErrorCode::INTERNAL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub u16);

impl ErrorCode {
    /// The rendezvous knows no publisher of the item.
    pub const UNKNOWN_NAME: ErrorCode = ErrorCode(1);
    /// The topology manager found no usable path.
    pub const NO_PATH: ErrorCode = ErrorCode(2);
    /// The control message could not be decoded.
    pub const MALFORMED: ErrorCode = ErrorCode(3);
    /// Anything else.
    pub const INTERNAL: ErrorCode = ErrorCode(4);
}

/// The rendezvous or topology manager could not serve a control message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlError {
    /// The `request_id` of the subscription (0 when the message had none).
    pub request_id: u32,
    /// What went wrong.
    pub code: ErrorCode,
    /// For people, at most [`MAX_ERROR_TEXT_BYTES`].
    pub text: String,
    /// The trailer (wire version 2).
    pub auth: ControlAuth,
}

impl ControlError {
    /// An error whose text is `text` cut to [`MAX_ERROR_TEXT_BYTES`] at a character boundary.
    #[must_use]
    pub fn new(request_id: u32, code: ErrorCode, text: &str) -> Self {
        let mut end = text.len().min(MAX_ERROR_TEXT_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        ControlError {
            request_id,
            code,
            text: text.get(..end).unwrap_or_default().to_owned(),
            auth: ControlAuth::default(),
        }
    }

    /// The answer to subscription `request_id` that failed with `e`.
    #[must_use]
    pub fn from_subscribe_error(request_id: u32, e: &SubscribeError) -> Self {
        let code = match e {
            SubscribeError::Rendezvous(_) => ErrorCode::UNKNOWN_NAME,
            SubscribeError::Paths(_) => ErrorCode::NO_PATH,
        };
        ControlError::new(request_id, code, &e.to_string())
    }
}

fn check_paths(n: usize) -> Result<(), DecodeError> {
    if n > MAX_PATHS {
        return Err(DecodeError::Oversized {
            field: Field::PathCount,
            len: n,
            max: MAX_PATHS,
        });
    }
    Ok(())
}

fn oversized_to_encode(e: DecodeError) -> EncodeError {
    match e {
        DecodeError::Oversized { field, len, max } => EncodeError::Oversized { field, len, max },
        _ => EncodeError::InvalidValue(Field::Body),
    }
}

fn read_name(r: &mut Reader<'_>) -> Result<ContentName, DecodeError> {
    let s = r.short_str(Field::Name, MAX_NAME_BYTES)?;
    ContentName::new(s).map_err(|_| DecodeError::BadName)
}

/// Bytes of a name on the wire: its length byte and the name.
fn name_len(name: &ContentName) -> usize {
    1 + name.as_str().len()
}

const MATCHING_SINGLE: u8 = 0;
const MATCHING_MULTISOURCE: u8 = 1;

impl Publish {
    pub(crate) fn body_len(&self) -> usize {
        4 + name_len(&self.name) + CONTROL_TRAILER_BYTES
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.publisher.0)?;
        w.short_bytes(Field::Name, self.name.as_str().as_bytes())?;
        self.auth.write(w)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Publish {
            publisher: NodeIx(r.u32(Field::Node)?),
            name: read_name(r)?,
            auth: ControlAuth::read(r)?,
        })
    }
}

impl Subscribe {
    pub(crate) fn body_len(&self) -> usize {
        4 + 4 + 1 + 2 + name_len(&self.name) + CONTROL_TRAILER_BYTES
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        let (mode, max_sources) = match self.matching {
            Matching::Single => (MATCHING_SINGLE, 0),
            Matching::Multisource { max_sources } => (
                MATCHING_MULTISOURCE,
                u16::try_from(max_sources).map_err(|_| EncodeError::Oversized {
                    field: Field::MaxSources,
                    len: max_sources,
                    max: usize::from(u16::MAX),
                })?,
            ),
        };
        w.u32(self.request_id)?;
        w.u32(self.subscriber.0)?;
        w.u8(mode)?;
        w.u16(max_sources)?;
        w.short_bytes(Field::Name, self.name.as_str().as_bytes())?;
        self.auth.write(w)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let request_id = r.u32(Field::RequestId)?;
        let subscriber = NodeIx(r.u32(Field::Node)?);
        let mode = r.u8(Field::Matching)?;
        let max_sources = r.u16(Field::MaxSources)?;
        let matching = match (mode, max_sources) {
            (MATCHING_SINGLE, 0) => Matching::Single,
            (MATCHING_SINGLE, _) => return Err(DecodeError::InvalidValue(Field::MaxSources)),
            (MATCHING_MULTISOURCE, n) => Matching::Multisource {
                max_sources: usize::from(n),
            },
            _ => return Err(DecodeError::InvalidValue(Field::Matching)),
        };
        Ok(Subscribe {
            request_id,
            subscriber,
            matching,
            name: read_name(r)?,
            auth: ControlAuth::read(r)?,
        })
    }
}

impl<const W: usize> FidSetMsg<W> {
    pub(crate) fn body_len(&self) -> usize {
        let per_path = 4 + 4 + 2 * Fid::<W>::BYTES + TICKET_BYTES;
        4 + name_len(&self.name)
            + 1
            + self.paths.len().saturating_mul(per_path)
            + CONTROL_TRAILER_BYTES
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        check_paths(self.paths.len()).map_err(oversized_to_encode)?;
        w.u32(self.request_id)?;
        w.short_bytes(Field::Name, self.name.as_str().as_bytes())?;
        w.u8(u8::try_from(self.paths.len())
            .map_err(|_| EncodeError::InvalidValue(Field::PathCount))?)?;
        for p in &self.paths {
            w.u32(p.publisher.0)?;
            w.u32(p.group_id)?;
            w.fid(&p.forward_fid)?;
            w.fid(&p.reverse_fid)?;
            p.ticket.write(w)?;
        }
        self.auth.write(w)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let request_id = r.u32(Field::RequestId)?;
        let name = read_name(r)?;
        let count = usize::from(r.u8(Field::PathCount)?);
        check_paths(count)?;
        let mut paths = Vec::with_capacity(count);
        for _ in 0..count {
            paths.push(PathFids {
                publisher: NodeIx(r.u32(Field::Node)?),
                group_id: r.u32(Field::GroupId)?,
                forward_fid: r.fid()?,
                reverse_fid: r.fid()?,
                ticket: Ticket::read(r)?,
            });
        }
        Ok(FidSetMsg {
            request_id,
            name,
            paths,
            auth: ControlAuth::read(r)?,
        })
    }
}

impl ControlError {
    pub(crate) fn body_len(&self) -> usize {
        4 + 2 + 1 + self.text.len() + CONTROL_TRAILER_BYTES
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        if self.text.len() > MAX_ERROR_TEXT_BYTES {
            return Err(EncodeError::Oversized {
                field: Field::ErrorText,
                len: self.text.len(),
                max: MAX_ERROR_TEXT_BYTES,
            });
        }
        w.u32(self.request_id)?;
        w.u16(self.code.0)?;
        w.short_bytes(Field::ErrorText, self.text.as_bytes())?;
        self.auth.write(w)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(ControlError {
            request_id: r.u32(Field::RequestId)?,
            code: ErrorCode(r.u16(Field::ErrorCode)?),
            text: r
                .short_str(Field::ErrorText, MAX_ERROR_TEXT_BYTES)?
                .to_owned(),
            auth: ControlAuth::read(r)?,
        })
    }
}
