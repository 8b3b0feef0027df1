//! After `testbed up` started every node: is the rendezvous answering, and does it know every
//! published name? A SUBSCRIBE per name from a probe socket (the rendezvous answers the
//! source address), until it answers with a FID set (or "no path", which also means the name
//! is known: a publisher announced it).
//!
//! Forwarding nodes have no request/response message in wire version 1; their check is the
//! ready file (socket bound, serving) in [`super::nodes`].

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use pathpool_net::control_plane::ControlPlane;
use pathpool_net::overlay::Overlay;
use pathpool_psi::{ContentName, Matching};
use pathpool_topo::{Fid, NodeIx};
use pathpool_wire::{ControlAuth, ErrorCode, Message, Packet, Subscribe};

/// Every this often a name without an answer is asked again.
const RESEND: Duration = Duration::from_millis(250);

/// What the probe found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ProbeError {
    /// Nothing came back from the rendezvous.
    Silent,
    /// The rendezvous answers but does not know these names.
    Unknown(Vec<String>),
    /// The rendezvous refused a subscription for another reason.
    Refused(String),
    /// The probe itself failed (socket).
    Io(String),
}

/// Subscribes to each of `names` (with the publishers' node ids, to choose a subscriber
/// that is not one of them) at the overlay's rendezvous until each is known, for at most
/// `timeout`.
///
/// # Errors
/// As [`ProbeError`].
pub(super) fn probe(
    overlay: &Overlay,
    names: &[(String, Vec<String>)],
    timeout: Duration,
) -> Result<(), ProbeError> {
    let rv = overlay.nodes()[overlay.rendezvous().0 as usize]
        .addr
        .ok_or_else(|| ProbeError::Io("the rendezvous has no address".into()))?;
    let bind: SocketAddr = if rv.is_ipv4() {
        "0.0.0.0:0".parse().expect("an address")
    } else {
        "[::]:0".parse().expect("an address")
    };
    let socket = UdpSocket::bind(bind).map_err(|e| ProbeError::Io(format!("probe socket: {e}")))?;
    socket
        .set_read_timeout(Some(Duration::from_millis(20)))
        .map_err(|e| ProbeError::Io(format!("probe socket: {e}")))?;
    let mut pending: Vec<(u32, ContentName, NodeIx)> = Vec::new();
    for (i, (name, publishers)) in names.iter().enumerate() {
        let content =
            ContentName::new(name).map_err(|e| ProbeError::Refused(format!("{name}: {e}")))?;
        // Any node that does not publish the name can ask for it; without one there is
        // nothing to ask.
        let subscriber = overlay
            .nodes()
            .iter()
            .position(|n| !publishers.contains(&n.id))
            .and_then(|ix| u32::try_from(ix).ok());
        if let Some(ix) = subscriber {
            let id = u32::try_from(i + 1).unwrap_or(u32::MAX);
            pending.push((id, content, NodeIx(ix)));
        }
    }
    let nodes = u32::try_from(overlay.nodes().len()).unwrap_or(u32::MAX);
    let plane = |node: NodeIx| {
        ControlPlane::new(
            node,
            nodes,
            overlay.overlay_key().cloned(),
            overlay.security().clone(),
        )
    };
    let mut planes: std::collections::HashMap<NodeIx, ControlPlane> =
        std::collections::HashMap::new();
    let mut answers = plane(overlay.rendezvous());
    let deadline = Instant::now() + timeout;
    let mut heard = false;
    let mut next_send = Instant::now();
    let mut buf = vec![0u8; 65_536];
    while !pending.is_empty() {
        let now = Instant::now();
        if now >= deadline {
            return Err(if heard {
                ProbeError::Unknown(pending.iter().map(|(_, n, _)| n.to_string()).collect())
            } else {
                ProbeError::Silent
            });
        }
        if now >= next_send {
            next_send = now + RESEND;
            for (id, name, subscriber) in &pending {
                let packet = Packet::<4> {
                    hop_limit: pathpool_net::rv::HOP_LIMIT,
                    fid: Fid::default(),
                    message: Message::Subscribe(Subscribe {
                        request_id: *id,
                        subscriber: *subscriber,
                        matching: Matching::Single,
                        name: name.clone(),
                        auth: ControlAuth::default(),
                    }),
                };
                let mut out = vec![0u8; packet.encoded_len()];
                let len = packet
                    .encode(&mut out)
                    .map_err(|e| ProbeError::Io(format!("encoding a subscription: {e}")))?;
                // Sealed as the subscriber it speaks for (the rendezvous checks the MAC and
                // that a subscriber subscribes as itself).
                planes
                    .entry(*subscriber)
                    .or_insert_with(|| plane(*subscriber))
                    .seal(&mut out[..len])
                    .map_err(|e| ProbeError::Io(format!("sealing a subscription: {e}")))?;
                // A refused send (the rendezvous's port closed: ICMP) is the same as no
                // answer: the loop waits and says so.
                let _ = socket.send_to(&out[..len], rv);
            }
        }
        let Ok((len, from)) = socket.recv_from(&mut buf) else {
            continue;
        };
        if from.port() != rv.port() {
            continue;
        }
        let Ok(packet) = Packet::<4>::decode(&buf[..len]) else {
            continue;
        };
        // Only an authenticated answer counts.
        if answers.open(&buf[..len]).is_err() {
            continue;
        }
        heard = true;
        let answered = match packet.message {
            Message::FidSet(set) => Some(set.request_id),
            Message::ControlError(e) if e.code == ErrorCode::NO_PATH => Some(e.request_id),
            Message::ControlError(e) if e.code == ErrorCode::UNKNOWN_NAME => None,
            Message::ControlError(e) => {
                return Err(ProbeError::Refused(e.text));
            }
            _ => None,
        };
        if let Some(id) = answered {
            pending.retain(|(i, _, _)| *i != id);
        }
    }
    Ok(())
}
