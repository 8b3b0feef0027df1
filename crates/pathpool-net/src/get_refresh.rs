//! Renewing the FID tickets of a running download, for [`GetEndpoint`] (issue 18; D164,
//! D180). Tickets expire `ticket_lifetime` after the rendezvous issued them, so a download
//! that lasts longer subscribes again at four fifths of the lifetime and swaps in the new
//! tickets of the paths it already uses.
//!
//! The lifetime is read on the rendezvous's own clock: the ticket's expiry less the
//! timestamp of the FID set that carried it (which the control plane has checked against
//! `max_skew`), so a subscriber whose clock is off does not renew too late or in a loop.

use pathpool_core::{Dur, Time};
use pathpool_wire::{FidSetMsg, PathFids};

use super::{GetEndpoint, SUBSCRIBE_RETRY};
use crate::node::NodeIo;

/// Fraction of the tickets' lifetime after which they are renewed: four fifths, leaving
/// the last fifth (12 minutes of the default hour) for a lost SUBSCRIBE or FID set to be
/// repeated.
const RENEW_AT_NUM: u64 = 4;
const RENEW_AT_DEN: u64 = 5;

/// When the download renews its tickets, and the renewal in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TicketRenewal {
    /// When to subscribe again.
    pub(super) due: Time,
    /// The SUBSCRIBE sent for it: its request id, and when it was last sent.
    pub(super) outstanding: Option<(u32, Time)>,
}

impl TicketRenewal {
    /// The renewal of `paths`' tickets, received at `now` in a FID set the rendezvous sent at
    /// `sent_at_us` (unix microseconds): at four fifths of the shortest ticket's lifetime, or
    /// none if no path has a ticket (`security = "off"` issues zero tickets).
    pub(super) fn schedule(paths: &[PathFids], sent_at_us: u64, now: Time) -> Option<Self> {
        let expiry_s = paths
            .iter()
            .map(|p| p.ticket.expiry_unix_s)
            .filter(|&e| e != 0)
            .min()?;
        let lifetime_us = (u64::from(expiry_s) * 1_000_000).saturating_sub(sent_at_us);
        Some(TicketRenewal {
            due: now + Dur::from_us(lifetime_us / RENEW_AT_DEN * RENEW_AT_NUM),
            outstanding: None,
        })
    }

    /// When the endpoint next has to act for the renewal.
    pub(super) fn next_event(&self) -> Time {
        match self.outstanding {
            Some((_, sent)) => sent + SUBSCRIBE_RETRY,
            None => self.due,
        }
    }
}

impl GetEndpoint {
    /// Subscribes again if the tickets are due for renewal, and repeats an unanswered
    /// SUBSCRIBE every [`SUBSCRIBE_RETRY`] (a lost datagram must not cost the download).
    pub(super) fn renew_tickets(&mut self, io: &mut NodeIo, now: Time) {
        let Some(renewal) = &mut self.renewal else {
            return;
        };
        if now < renewal.next_event() {
            return;
        }
        let request_id = match renewal.outstanding {
            Some((id, _)) => id,
            None => crate::keys::random_u32(),
        };
        renewal.outstanding = Some((request_id, now));
        self.send_subscribe(io, request_id);
    }

    /// If `set` answers the renewal in flight, the paths the download uses get their new
    /// tickets (any other FID set is ignored). A path is the same if its publisher and both FIDs are; paths the
    /// topology manager now computes differently are not taken up mid-download, and those
    /// it no longer gives keep their old tickets until they expire.
    pub(super) fn on_renewed_fid_set(&mut self, now: Time, set: &FidSetMsg) {
        let Some(TicketRenewal {
            outstanding: Some((request_id, _)),
            ..
        }) = self.renewal
        else {
            return;
        };
        if set.request_id != request_id {
            return;
        }
        let mut renewed = Vec::new();
        for p in &mut self.paths {
            if let Some(new) = set.paths.iter().find(|n| {
                n.publisher == p.publisher
                    && n.forward_fid == p.forward_fid
                    && n.reverse_fid == p.reverse_fid
            }) {
                p.ticket = new.ticket;
                renewed.push(*p);
            }
        }
        self.get_stats.renewed_tickets += renewed.len() as u64;
        self.get_stats.paths_not_renewed += (self.paths.len() - renewed.len()) as u64;
        // The next renewal follows the tickets just received; with none renewed it follows
        // the old ones again, and a renewal due now is repeated at the retry interval.
        let basis = if renewed.is_empty() {
            &self.paths
        } else {
            &renewed
        };
        self.renewal =
            TicketRenewal::schedule(basis, set.auth.timestamp_us, now).map(|r| TicketRenewal {
                due: r.due.max(now + SUBSCRIBE_RETRY),
                ..r
            });
    }
}
