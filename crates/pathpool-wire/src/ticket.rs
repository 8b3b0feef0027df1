//! FID tickets (wire version 2, issue 18): the topology manager's proof that it issued a
//! forward FID for a publisher, so that a request carrying a forged forward FID cannot make a
//! publisher send to a victim (no amplification). A ticket is 24 bytes: the publisher's node
//! id, an expiry in unix seconds and a MAC under the overlay key's ticket subkey over the
//! publisher, the expiry and the forward FID's words (all big-endian).

use core::fmt;

use pathpool_topo::{Fid, NodeIx};

use crate::auth::{macs_equal, OverlayKey, MAC_BYTES};
use crate::cursor::{Reader, Writer};
use crate::error::{DecodeError, EncodeError, Field};

/// Bytes of a ticket on the wire.
pub const TICKET_BYTES: usize = 4 + 4 + MAC_BYTES;

/// A forward FID's ticket, carried in FID sets (one per path) and in requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    /// The publisher the FID was issued for.
    pub publisher: NodeIx,
    /// The last second (unix time) the ticket is good for.
    pub expiry_unix_s: u32,
    /// The MAC (all zero with `security = "off"`).
    pub mac: [u8; MAC_BYTES],
}

/// Why a publisher refuses a request's ticket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TicketError {
    /// The ticket is another publisher's.
    WrongPublisher,
    /// The ticket expired (beyond the allowed clock skew).
    Expired,
    /// The MAC does not verify with this forward FID: forged, or issued for another FID.
    BadMac,
}

impl fmt::Display for TicketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TicketError::WrongPublisher => "the ticket is for another publisher",
            TicketError::Expired => "the ticket has expired",
            TicketError::BadMac => "the ticket's MAC does not verify with the forward FID",
        })
    }
}

impl std::error::Error for TicketError {}

/// The bytes a ticket's MAC covers.
fn ticket_message<const W: usize>(publisher: NodeIx, expiry_unix_s: u32, fid: &Fid<W>) -> Vec<u8> {
    let mut m = Vec::with_capacity(8 + Fid::<W>::BYTES);
    m.extend_from_slice(&publisher.0.to_be_bytes());
    m.extend_from_slice(&expiry_unix_s.to_be_bytes());
    for w in fid.words() {
        m.extend_from_slice(&w.to_be_bytes());
    }
    m
}

impl Default for Ticket {
    /// All zero: node 0, time 0, no MAC.
    fn default() -> Self {
        Ticket {
            publisher: NodeIx(0),
            expiry_unix_s: 0,
            mac: [0; MAC_BYTES],
        }
    }
}

impl Ticket {
    /// The ticket of forward FID `fid` towards `publisher`, good until `expiry_unix_s`.
    #[must_use]
    pub fn issue<const W: usize>(
        key: &OverlayKey,
        publisher: NodeIx,
        fid: &Fid<W>,
        expiry_unix_s: u32,
    ) -> Self {
        Ticket {
            publisher,
            expiry_unix_s,
            mac: key.ticket_mac(&ticket_message(publisher, expiry_unix_s, fid)),
        }
    }

    /// Whether the ticket lets `publisher` answer a request carrying forward FID `fid` at
    /// unix time `now_unix_s`, with clocks up to `skew_s` apart.
    ///
    /// # Errors
    /// Why not, checked in this order: publisher, expiry, MAC.
    pub fn verify<const W: usize>(
        &self,
        key: &OverlayKey,
        publisher: NodeIx,
        fid: &Fid<W>,
        now_unix_s: u64,
        skew_s: u64,
    ) -> Result<(), TicketError> {
        if self.publisher != publisher {
            return Err(TicketError::WrongPublisher);
        }
        if u64::from(self.expiry_unix_s).saturating_add(skew_s) < now_unix_s {
            return Err(TicketError::Expired);
        }
        let want = key.ticket_mac(&ticket_message(self.publisher, self.expiry_unix_s, fid));
        if macs_equal(&want, &self.mac) {
            Ok(())
        } else {
            Err(TicketError::BadMac)
        }
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.publisher.0)?;
        w.u32(self.expiry_unix_s)?;
        w.put(&self.mac)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Ticket {
            publisher: NodeIx(r.u32(Field::Ticket)?),
            expiry_unix_s: r.u32(Field::Ticket)?,
            mac: r.array(Field::Ticket)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fid(seed: u64) -> Fid {
        Fid::from_words([seed, seed ^ 0xff, 7, 1 << 63])
    }

    #[test]
    fn a_ticket_verifies_only_for_its_publisher_fid_key_and_time() {
        let key = OverlayKey::from_bytes([5; 32]);
        let t = Ticket::issue(&key, NodeIx(3), &fid(1), 1_000);
        assert_eq!(t.verify(&key, NodeIx(3), &fid(1), 1_000, 30), Ok(()));
        // Within the skew after expiry, then not.
        assert_eq!(t.verify(&key, NodeIx(3), &fid(1), 1_030, 30), Ok(()));
        assert_eq!(
            t.verify(&key, NodeIx(3), &fid(1), 1_031, 30),
            Err(TicketError::Expired)
        );
        assert_eq!(
            t.verify(&key, NodeIx(4), &fid(1), 1_000, 30),
            Err(TicketError::WrongPublisher)
        );
        assert_eq!(
            t.verify(&key, NodeIx(3), &fid(2), 1_000, 30),
            Err(TicketError::BadMac)
        );
        let other = OverlayKey::from_bytes([6; 32]);
        assert_eq!(
            t.verify(&other, NodeIx(3), &fid(1), 1_000, 30),
            Err(TicketError::BadMac)
        );
        // A later expiry under the same MAC is a forgery.
        let stretched = Ticket {
            expiry_unix_s: 9_000,
            ..t
        };
        assert_eq!(
            stretched.verify(&key, NodeIx(3), &fid(1), 2_000, 30),
            Err(TicketError::BadMac)
        );
    }
}
