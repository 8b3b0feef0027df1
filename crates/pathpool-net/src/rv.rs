//! The rendezvous and topology manager as a node's endpoint (`pathpool rv`; thesis §3.3,
//! §4.2 steps 1–3): publishers announce names, subscribers ask for them and receive the FID
//! set the topology manager computes from the overlay file, exactly as in the simulator.
//!
//! Wire version 2 (issue 18): a control message is acted on only if its MAC, timestamp and
//! sender verify ([`crate::control_plane`]), a publisher publishes and a subscriber
//! subscribes only as itself, publications expire unless refreshed and are bounded per node
//! and in total ([`RvLimits`](pathpool_psi::RvLimits)), and every path of a FID set carries
//! the ticket of its forward FID.

use std::net::SocketAddr;

use pathpool_core::{Dur, Time};
use pathpool_psi::{Psi, Rendezvous, RvCounters};
use pathpool_wire::{ControlError, ErrorCode, FidSetMsg, Message, MsgType, Packet};

use crate::node::{Endpoint, NodeIo};
use crate::overlay::Overlay;
use crate::security::{unix_now_s, SecurityMode};

/// Hop limit written on every packet a node originates (decision D48).
pub const HOP_LIMIT: u8 = 64;

/// How often expired publications are swept.
const SWEEP_INTERVAL: Dur = Dur::from_secs(1);

/// Counters of the rendezvous.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RvStats {
    /// PUBLISH messages taken (new publications and refreshes).
    pub publishes: u64,
    /// UNPUBLISH messages taken.
    pub unpublishes: u64,
    /// Subscriptions answered with a FID set.
    pub fid_sets: u64,
    /// Subscriptions refused (no publisher, no path).
    pub refused: u64,
    /// Datagrams that were not valid control messages for the rendezvous.
    pub ignored: u64,
    /// Control messages that failed authentication (MAC, skew, replay; by reason in
    /// [`NodeIo::control`]).
    pub unauthenticated: u64,
    /// Authenticated messages sent on behalf of another node (a PUBLISH for another
    /// publisher, a SUBSCRIBE for another subscriber).
    pub impersonations: u64,
    /// The rendezvous's limits: refusals and expiries.
    pub limits: RvCounters,
    /// Publications held now.
    pub publications: usize,
}

/// The rendezvous endpoint.
#[derive(Debug)]
pub struct RvEndpoint {
    psi: Psi,
    node_count: u32,
    secure: bool,
    ticket_lifetime_s: u64,
    next_sweep: Time,
    stats: RvStats,
}

impl RvEndpoint {
    /// A rendezvous for `overlay`, knowing no publication yet.
    #[must_use]
    pub fn new(overlay: &Overlay) -> Self {
        let security = overlay.security();
        RvEndpoint {
            psi: Psi {
                rendezvous: Rendezvous::with_limits(security.rv_limits()),
                tm: overlay.topology_manager().clone(),
            },
            node_count: overlay.nodes().len() as u32,
            secure: security.mode == SecurityMode::On,
            ticket_lifetime_s: security.ticket_lifetime.as_ps() / 1_000_000_000_000,
            next_sweep: Time::ZERO,
            stats: RvStats::default(),
        }
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> RvStats {
        RvStats {
            limits: self.psi.rendezvous.counters(),
            publications: self.psi.rendezvous.len(),
            ..self.stats
        }
    }

    fn reply(io: &mut NodeIo, to: SocketAddr, message: Message<'_>) {
        let packet = Packet {
            hop_limit: HOP_LIMIT,
            fid: pathpool_topo::Fid::default(),
            message,
        };
        io.send_control_to(to, &packet);
    }
}

impl Endpoint for RvEndpoint {
    fn handle_datagram(
        &mut self,
        io: &mut NodeIo,
        now: Time,
        from: SocketAddr,
        _msg: MsgType,
        datagram: &[u8],
    ) {
        let Ok(packet) = Packet::<4>::decode(datagram) else {
            self.stats.ignored += 1;
            return;
        };
        let Ok(auth) = io.control_mut().open(datagram) else {
            self.stats.unauthenticated += 1;
            return;
        };
        // With security on, a member speaks only for itself.
        let as_itself = |node: pathpool_topo::NodeIx| !self.secure || node == auth.sender;
        match packet.message {
            Message::Publish(p) if p.publisher.0 < self.node_count => {
                if !as_itself(p.publisher) {
                    self.stats.impersonations += 1;
                    return;
                }
                // A refusal is counted by the rendezvous; nothing is answered.
                if self
                    .psi
                    .rendezvous
                    .refresh(&p.name, p.publisher, now)
                    .is_ok()
                {
                    self.stats.publishes += 1;
                }
            }
            Message::Unpublish(p) => {
                if !as_itself(p.publisher) {
                    self.stats.impersonations += 1;
                    return;
                }
                self.psi.rendezvous.unpublish(&p.name, p.publisher);
                self.stats.unpublishes += 1;
            }
            Message::Subscribe(s) if s.subscriber.0 < self.node_count => {
                if !as_itself(s.subscriber) {
                    self.stats.impersonations += 1;
                    return;
                }
                // A publisher gone quiet is forgotten before anyone is sent to it.
                self.psi.rendezvous.expire(now);
                let expiry = u32::try_from(unix_now_s().saturating_add(self.ticket_lifetime_s))
                    .unwrap_or(u32::MAX);
                let key = io.control().key().cloned();
                let answer = match self.psi.subscribe(&s.name, s.subscriber, s.matching) {
                    Ok(set) => FidSetMsg::from_fid_set(
                        s.request_id,
                        s.name.clone(),
                        &set,
                        key.as_ref(),
                        expiry,
                    )
                    .map(Message::FidSet)
                    .unwrap_or_else(|e| {
                        Message::ControlError(ControlError::new(
                            s.request_id,
                            ErrorCode::INTERNAL,
                            &e.to_string(),
                        ))
                    }),
                    Err(e) => {
                        Message::ControlError(ControlError::from_subscribe_error(s.request_id, &e))
                    }
                };
                if matches!(answer, Message::FidSet(_)) {
                    self.stats.fid_sets += 1;
                } else {
                    self.stats.refused += 1;
                }
                Self::reply(io, from, answer);
            }
            _ => self.stats.ignored += 1,
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.next_sweep)
    }

    fn handle_timeout(&mut self, _io: &mut NodeIo, now: Time) {
        if now < self.next_sweep {
            return;
        }
        self.psi.rendezvous.expire(now);
        self.next_sweep = now + SWEEP_INTERVAL;
    }
}
