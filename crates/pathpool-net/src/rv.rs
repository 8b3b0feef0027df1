//! The rendezvous and topology manager as a node's endpoint (`pathpool rv`; thesis §3.3,
//! §4.2 steps 1–3): publishers announce names, subscribers ask for them and receive the FID
//! set the topology manager computes from the overlay file, exactly as in the simulator.

use std::net::SocketAddr;

use pathpool_core::Time;
use pathpool_psi::{Psi, Rendezvous};
use pathpool_wire::{ControlError, ErrorCode, FidSetMsg, Message, MsgType, Packet};

use crate::node::{Endpoint, NodeIo};
use crate::overlay::Overlay;

/// Hop limit written on every packet a node originates (decision D48).
pub const HOP_LIMIT: u8 = 64;

/// Counters of the rendezvous.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RvStats {
    /// PUBLISH messages taken.
    pub publishes: u64,
    /// UNPUBLISH messages taken.
    pub unpublishes: u64,
    /// Subscriptions answered with a FID set.
    pub fid_sets: u64,
    /// Subscriptions refused (no publisher, no path).
    pub refused: u64,
    /// Datagrams that were not valid control messages for the rendezvous.
    pub ignored: u64,
}

/// The rendezvous endpoint.
#[derive(Debug)]
pub struct RvEndpoint {
    psi: Psi,
    node_count: u32,
    stats: RvStats,
}

impl RvEndpoint {
    /// A rendezvous for `overlay`, knowing no publication yet.
    #[must_use]
    pub fn new(overlay: &Overlay) -> Self {
        RvEndpoint {
            psi: Psi {
                rendezvous: Rendezvous::new(),
                tm: overlay.topology_manager().clone(),
            },
            node_count: overlay.nodes().len() as u32,
            stats: RvStats::default(),
        }
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> RvStats {
        self.stats
    }

    fn reply(io: &mut NodeIo, to: SocketAddr, message: Message<'_>) {
        let packet = Packet {
            hop_limit: HOP_LIMIT,
            fid: pathpool_topo::Fid::default(),
            message,
        };
        io.send_packet_to(to, &packet);
    }
}

impl Endpoint for RvEndpoint {
    fn on_datagram(
        &mut self,
        io: &mut NodeIo,
        _now: Time,
        from: SocketAddr,
        _msg: MsgType,
        datagram: &[u8],
    ) {
        let Ok(packet) = Packet::<4>::decode(datagram) else {
            self.stats.ignored += 1;
            return;
        };
        match packet.message {
            Message::Publish(p) if p.publisher.0 < self.node_count => {
                self.psi.rendezvous.publish(&p.name, p.publisher);
                self.stats.publishes += 1;
            }
            Message::Unpublish(p) => {
                self.psi.rendezvous.unpublish(&p.name, p.publisher);
                self.stats.unpublishes += 1;
            }
            Message::Subscribe(s) if s.subscriber.0 < self.node_count => {
                let answer = match self.psi.subscribe(&s.name, s.subscriber, s.matching) {
                    Ok(set) => FidSetMsg::from_fid_set(s.request_id, s.name.clone(), &set)
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
}
