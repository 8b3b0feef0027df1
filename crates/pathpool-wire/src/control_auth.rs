//! The trailer of every control message in wire version 2 (issue 18, `docs/security.md`):
//! sender node id (4) ‖ timestamp in unix microseconds (8) ‖ MAC (16), the MAC under the
//! overlay key's control subkey over the whole datagram except the hop limit (which forwarding
//! rewrites) and the MAC itself. [`seal_control`] fills the trailer of an encoded datagram,
//! [`open_control`] checks its MAC, and a [`FreshnessGuard`] refuses timestamps outside the
//! allowed clock skew or not newer than the last accepted from the same sender (replays).
//! Sans-IO: the caller gives the clock.

use core::fmt;
use std::collections::HashMap;

use pathpool_topo::NodeIx;

use crate::auth::{macs_equal, OverlayKey, MAC_BYTES};
use crate::cursor::{Reader, Writer};
use crate::error::{DecodeError, EncodeError, Field};
use crate::header::{peek, MsgType, HOP_LIMIT_OFFSET};

/// Bytes of the trailer: sender (4), timestamp (8), MAC (16).
pub const CONTROL_TRAILER_BYTES: usize = 4 + 8 + MAC_BYTES;

/// A control message's trailer, as decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ControlAuth {
    /// The node that sent the message (as the overlay file numbers it).
    pub sender: NodeIx,
    /// When it was sent, unix microseconds; strictly increasing per sender.
    pub timestamp_us: u64,
    /// The MAC (zero with `security = "off"`).
    pub mac: [u8; MAC_BYTES],
}

impl Default for ControlAuth {
    /// All zero: node 0, time 0, no MAC.
    fn default() -> Self {
        ControlAuth {
            sender: NodeIx(0),
            timestamp_us: 0,
            mac: [0; MAC_BYTES],
        }
    }
}

impl ControlAuth {
    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.sender.0)?;
        w.u64(self.timestamp_us)?;
        w.put(&self.mac)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(ControlAuth {
            sender: NodeIx(r.u32(Field::Trailer)?),
            timestamp_us: r.u64(Field::Trailer)?,
            mac: r.array(Field::Trailer)?,
        })
    }
}

/// Why a control message was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlAuthError {
    /// Not a control message, or its header does not decode.
    NotControl,
    /// The MAC does not verify: no key, a forgery, or bytes changed on the way.
    BadMac,
    /// The sender is not a node of the overlay.
    UnknownSender,
    /// The timestamp is further from the receiver's clock than the allowed skew.
    Stale,
    /// The timestamp is not newer than the last accepted from the sender: a replay.
    Replayed,
}

impl ControlAuthError {
    /// Number of variants, for counters.
    pub const KINDS: usize = 5;

    /// A small number per variant.
    #[must_use]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The variant in snake case, for counters printed at exit.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ControlAuthError::NotControl => "not_control",
            ControlAuthError::BadMac => "bad_mac",
            ControlAuthError::UnknownSender => "unknown_sender",
            ControlAuthError::Stale => "stale",
            ControlAuthError::Replayed => "replayed",
        }
    }
}

impl fmt::Display for ControlAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ControlAuthError::NotControl => "not a control message",
            ControlAuthError::BadMac => "the control MAC does not verify",
            ControlAuthError::UnknownSender => "the sender is not a node of the overlay",
            ControlAuthError::Stale => "the timestamp is outside the allowed clock skew",
            ControlAuthError::Replayed => "the timestamp is not newer than the sender's last",
        })
    }
}

impl std::error::Error for ControlAuthError {}

/// Whether a message type carries the control trailer.
#[must_use]
pub fn is_control(t: MsgType) -> bool {
    matches!(
        t,
        MsgType::Publish
            | MsgType::Unpublish
            | MsgType::Subscribe
            | MsgType::FidSet
            | MsgType::ControlError
    )
}

/// The trailer's byte range in a datagram of `len` bytes whose header `peek` accepted.
fn trailer_start(datagram: &[u8]) -> Option<usize> {
    let h = peek::<4>(datagram).ok()?;
    if !is_control(h.msg_type) || h.body.len() < CONTROL_TRAILER_BYTES {
        return None;
    }
    datagram.len().checked_sub(CONTROL_TRAILER_BYTES)
}

/// The MAC of a datagram whose trailer starts at `start`: every byte but the hop limit and
/// the MAC.
fn datagram_mac(key: &OverlayKey, datagram: &[u8], start: usize) -> Option<[u8; MAC_BYTES]> {
    let mac_at = start.checked_add(CONTROL_TRAILER_BYTES - MAC_BYTES)?;
    let before = datagram.get(..HOP_LIMIT_OFFSET)?;
    let after = datagram.get(HOP_LIMIT_OFFSET + 1..mac_at)?;
    Some(key.control_mac_parts(&[before, after]))
}

/// Fills the trailer of an encoded control datagram (FIDs of 4 words): sender, timestamp and,
/// with a key, the MAC (without one, the MAC is left zero: `security = "off"`).
///
/// # Errors
/// [`EncodeError::InvalidValue`] if `datagram` is not an encoded control message.
pub fn seal_control(
    datagram: &mut [u8],
    sender: NodeIx,
    timestamp_us: u64,
    key: Option<&OverlayKey>,
) -> Result<(), EncodeError> {
    let start = trailer_start(datagram).ok_or(EncodeError::InvalidValue(Field::Trailer))?;
    let mut fields = [0u8; 12];
    fields[..4].copy_from_slice(&sender.0.to_be_bytes());
    fields[4..].copy_from_slice(&timestamp_us.to_be_bytes());
    let mac_at = start + 12;
    datagram
        .get_mut(start..mac_at)
        .ok_or(EncodeError::InvalidValue(Field::Trailer))?
        .copy_from_slice(&fields);
    let mac = match key {
        Some(key) => {
            datagram_mac(key, datagram, start).ok_or(EncodeError::InvalidValue(Field::Trailer))?
        }
        None => [0; MAC_BYTES],
    };
    datagram
        .get_mut(mac_at..mac_at + MAC_BYTES)
        .ok_or(EncodeError::InvalidValue(Field::Trailer))?
        .copy_from_slice(&mac);
    Ok(())
}

/// The trailer of a control datagram whose MAC verifies under `key`.
///
/// # Errors
/// [`ControlAuthError::NotControl`] or [`ControlAuthError::BadMac`].
pub fn open_control(datagram: &[u8], key: &OverlayKey) -> Result<ControlAuth, ControlAuthError> {
    let start = trailer_start(datagram).ok_or(ControlAuthError::NotControl)?;
    let trailer = datagram.get(start..).ok_or(ControlAuthError::NotControl)?;
    let auth =
        ControlAuth::read(&mut Reader::new(trailer)).map_err(|_| ControlAuthError::NotControl)?;
    let want = datagram_mac(key, datagram, start).ok_or(ControlAuthError::NotControl)?;
    if macs_equal(&want, &auth.mac) {
        Ok(auth)
    } else {
        Err(ControlAuthError::BadMac)
    }
}

/// A receiver's memory of the last timestamp accepted from each sender: at most one entry per
/// node of the overlay, so its size is bounded by the overlay file.
#[derive(Clone, Debug)]
pub struct FreshnessGuard {
    nodes: u32,
    max_skew_us: u64,
    last: HashMap<NodeIx, u64>,
}

impl FreshnessGuard {
    /// A guard for an overlay of `nodes` nodes allowing clocks `max_skew_us` apart.
    #[must_use]
    pub fn new(nodes: u32, max_skew_us: u64) -> Self {
        FreshnessGuard {
            nodes,
            max_skew_us,
            last: HashMap::new(),
        }
    }

    /// Accepts `auth` (already MAC-checked) at the receiver's time `now_us` and remembers its
    /// timestamp, or says why not (and remembers nothing).
    ///
    /// # Errors
    /// [`ControlAuthError::UnknownSender`], [`ControlAuthError::Stale`] or
    /// [`ControlAuthError::Replayed`].
    pub fn accept(&mut self, auth: &ControlAuth, now_us: u64) -> Result<(), ControlAuthError> {
        if auth.sender.0 >= self.nodes {
            return Err(ControlAuthError::UnknownSender);
        }
        if auth.timestamp_us.abs_diff(now_us) > self.max_skew_us {
            return Err(ControlAuthError::Stale);
        }
        if self
            .last
            .get(&auth.sender)
            .is_some_and(|&last| auth.timestamp_us <= last)
        {
            return Err(ControlAuthError::Replayed);
        }
        self.last.insert(auth.sender, auth.timestamp_us);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::Publish;
    use crate::packet::{Message, Packet};
    use pathpool_psi::ContentName;
    use pathpool_topo::Fid;

    fn publish(sender: u32, ts: u64, key: Option<&OverlayKey>) -> Vec<u8> {
        let mut d = Packet::<4> {
            hop_limit: 64,
            fid: Fid::default(),
            message: Message::Publish(Publish {
                publisher: NodeIx(2),
                name: ContentName::new("/a/b").unwrap(),
                auth: ControlAuth::default(),
            }),
        }
        .to_vec()
        .unwrap();
        seal_control(&mut d, NodeIx(sender), ts, key).unwrap();
        d
    }

    #[test]
    fn a_sealed_message_opens_with_its_key_only_and_survives_a_hop() {
        let key = OverlayKey::from_bytes([1; 32]);
        let mut d = publish(2, 1_000_000, Some(&key));
        let auth = open_control(&d, &key).unwrap();
        assert_eq!((auth.sender, auth.timestamp_us), (NodeIx(2), 1_000_000));
        // The decoded packet carries the same trailer.
        let Message::Publish(p) = Packet::<4>::decode(&d).unwrap().message else {
            panic!("not a publish")
        };
        assert_eq!(p.auth, auth);
        // The hop limit is not covered: a forwarded copy still verifies.
        d[HOP_LIMIT_OFFSET] = 3;
        assert!(open_control(&d, &key).is_ok());
        let other = OverlayKey::from_bytes([2; 32]);
        assert_eq!(open_control(&d, &other), Err(ControlAuthError::BadMac));
        // Any other byte changed breaks it, sender and timestamp included.
        for i in (0..d.len()).filter(|&i| i != HOP_LIMIT_OFFSET) {
            let mut bad = d.clone();
            bad[i] ^= 0x10;
            assert!(open_control(&bad, &key).is_err(), "byte {i}");
        }
        // Without a key the MAC is zero and does not verify.
        assert_eq!(
            open_control(&publish(2, 5, None), &key),
            Err(ControlAuthError::BadMac)
        );
    }

    #[test]
    fn the_guard_refuses_replays_stale_times_and_strangers() {
        let mut g = FreshnessGuard::new(4, 30_000_000);
        let a = |sender, timestamp_us| ControlAuth {
            sender: NodeIx(sender),
            timestamp_us,
            mac: [0; 16],
        };
        let now = 100_000_000;
        assert_eq!(g.accept(&a(1, now), now), Ok(()));
        assert_eq!(g.accept(&a(1, now), now), Err(ControlAuthError::Replayed));
        assert_eq!(
            g.accept(&a(1, now - 1), now),
            Err(ControlAuthError::Replayed)
        );
        assert_eq!(g.accept(&a(2, now - 1), now), Ok(()), "per sender");
        assert_eq!(g.accept(&a(1, now + 1), now), Ok(()));
        assert_eq!(
            g.accept(&a(3, now - 30_000_001), now),
            Err(ControlAuthError::Stale)
        );
        assert_eq!(
            g.accept(&a(3, now + 30_000_001), now),
            Err(ControlAuthError::Stale)
        );
        assert_eq!(
            g.accept(&a(4, now), now),
            Err(ControlAuthError::UnknownSender)
        );
    }
}
