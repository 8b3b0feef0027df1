//! A node of the overlay on a UDP socket and the wall clock: it forwards datagrams by their
//! FIDs through its links' emulation, and hands what is addressed to it to its endpoint (the
//! rendezvous, a publisher or a subscriber), a sans-IO state machine driven with the time.
//!
//! One thread per node, one socket per node: every neighbour sends to the node's address, and
//! the node sends to each neighbour's. The loop waits on the socket until the next timer (an
//! emulated link's next release or the endpoint's own), so an idle node costs nothing.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pathpool_core::{Rng, Time};
use pathpool_topo::{Fid, NodeIx};
use pathpool_wire::{MsgType, Packet, MAX_PACKET_BYTES};

use crate::emulation::{EmulatedLink, LinkEmulation, LinkStats};
use crate::forward::{Forwarder, Route};
use crate::overlay::Overlay;

/// Longest wait on the socket: how quickly a node notices a stop request.
pub const MAX_WAIT: Duration = Duration::from_millis(50);

/// Largest datagram a node receives.
const RECV_BUFFER_BYTES: usize = 65_536;

/// The wall clock as the state machines' [`Time`]: picoseconds since the node started.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    /// A clock starting now.
    #[must_use]
    pub fn new() -> Self {
        Clock {
            start: Instant::now(),
        }
    }

    /// The time now.
    #[must_use]
    pub fn now(&self) -> Time {
        let ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX / 1000);
        Time::from_ps(ns.saturating_mul(1000))
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// One outgoing link: the neighbour's address and, unless transparent, its emulation.
#[derive(Debug)]
struct Egress {
    peer: SocketAddr,
    link: Option<EmulatedLink<Vec<u8>>>,
}

/// A node's socket, forwarding table and outgoing links: what an endpoint sends through.
#[derive(Debug)]
pub struct NodeIo {
    socket: UdpSocket,
    node: NodeIx,
    forwarder: Forwarder,
    egress: Vec<Egress>,
    clock: Clock,
    read_timeout: Option<Duration>,
    send_errors: u64,
    spare: Vec<Vec<u8>>,
    encode_buf: Vec<u8>,
}

impl NodeIo {
    /// Binds `node`'s address from the overlay.
    ///
    /// # Errors
    /// The node or a neighbour has no address, the bind fails, or the node has too many links.
    pub fn bind(overlay: &Overlay, node: NodeIx, seed: u64) -> io::Result<NodeIo> {
        let me = &overlay.nodes()[node.0 as usize];
        let addr = me.addr.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("node {:?} has no address in the overlay file", me.id),
            )
        })?;
        let socket = UdpSocket::bind(addr)
            .map_err(|e| io::Error::new(e.kind(), format!("binding {} to {addr}: {e}", me.id)))?;
        NodeIo::with_socket(overlay, node, socket, seed)
    }

    /// A node on a socket already bound (tests bind port 0 first, then write the addresses
    /// into the overlay).
    ///
    /// # Errors
    /// A neighbour has no address, or the node has too many links.
    pub fn with_socket(
        overlay: &Overlay,
        node: NodeIx,
        socket: UdpSocket,
        seed: u64,
    ) -> io::Result<NodeIo> {
        let links = overlay.node_links(node);
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        let forwarder = Forwarder::new(&links, overlay.nodes()[node.0 as usize].transit)
            .map_err(|e| invalid(e.to_string()))?;
        let mut egress = Vec::with_capacity(links.len());
        for (i, l) in links.iter().enumerate() {
            let peer = &overlay.nodes()[l.peer.0 as usize];
            let addr = peer.addr.ok_or_else(|| {
                invalid(format!(
                    "neighbour {:?} has no address in the overlay file",
                    peer.id
                ))
            })?;
            let link = if l.emulation == LinkEmulation::TRANSPARENT {
                None
            } else {
                let rng = Rng::stream(seed, u64::from(node.0), i as u64);
                Some(EmulatedLink::new(l.emulation, rng).map_err(|e| invalid(e.to_string()))?)
            };
            egress.push(Egress { peer: addr, link });
        }
        Ok(NodeIo {
            socket,
            node,
            forwarder,
            egress,
            clock: Clock::new(),
            read_timeout: None,
            send_errors: 0,
            spare: Vec::new(),
            encode_buf: vec![0; MAX_PACKET_BYTES],
        })
    }

    /// This node.
    #[must_use]
    pub fn node(&self) -> NodeIx {
        self.node
    }

    /// The socket's address.
    ///
    /// # Errors
    /// As [`UdpSocket::local_addr`].
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// The time now on this node's clock.
    #[must_use]
    pub fn now(&self) -> Time {
        self.clock.now()
    }

    /// The forwarding table and its counters.
    #[must_use]
    pub fn forwarder(&self) -> &Forwarder {
        &self.forwarder
    }

    /// Counters of each emulated outgoing link (`None` for a transparent one).
    #[must_use]
    pub fn link_stats(&self) -> Vec<Option<LinkStats>> {
        self.egress
            .iter()
            .map(|e| e.link.as_ref().map(EmulatedLink::stats))
            .collect()
    }

    /// Datagrams the socket refused to send.
    #[must_use]
    pub fn send_errors(&self) -> u64 {
        self.send_errors
    }

    /// Sends one of this node's own datagrams on every link whose tag `fid` holds; returns
    /// the number of copies.
    pub fn send_on_fid(&mut self, fid: &Fid, datagram: &[u8]) -> u32 {
        let mask = self.forwarder.matching(fid);
        for i in mask.iter() {
            self.transmit(i, datagram);
        }
        mask.len()
    }

    /// Encodes `packet` and sends it on its FID (as [`send_on_fid`](Self::send_on_fid)); a
    /// packet that does not encode (a field over its limit) is counted as a send error.
    pub fn send_packet_on_fid(&mut self, packet: &Packet<'_>) {
        let mut buf = std::mem::take(&mut self.encode_buf);
        match packet.encode(&mut buf) {
            Ok(n) => {
                self.send_on_fid(&packet.fid, &buf[..n]);
            }
            Err(_) => self.send_errors += 1,
        }
        self.encode_buf = buf;
    }

    /// Encodes `packet` and sends it straight to `addr` (the slow path, D87).
    pub fn send_packet_to(&mut self, addr: SocketAddr, packet: &Packet<'_>) {
        let mut buf = std::mem::take(&mut self.encode_buf);
        match packet.encode(&mut buf) {
            Ok(n) => self.send_to(addr, &buf[..n]),
            Err(_) => self.send_errors += 1,
        }
        self.encode_buf = buf;
    }

    /// Sends a datagram straight to `addr` (the slow path to and from the rendezvous).
    pub fn send_to(&mut self, addr: SocketAddr, datagram: &[u8]) {
        if self.socket.send_to(datagram, addr).is_err() {
            self.send_errors += 1;
        }
    }

    fn transmit(&mut self, i: usize, datagram: &[u8]) {
        let now = self.clock.now();
        let e = &mut self.egress[i];
        match &mut e.link {
            None => {
                if self.socket.send_to(datagram, e.peer).is_err() {
                    self.send_errors += 1;
                }
            }
            Some(link) => {
                let mut copy = self.spare.pop().unwrap_or_default();
                copy.clear();
                copy.extend_from_slice(datagram);
                if let (_, Some(back)) = link.offer(now, datagram.len() as u64, copy) {
                    self.spare.push(back);
                }
            }
        }
    }

    /// Sends what the emulated links release by `now`; returns the next release.
    fn flush(&mut self, now: Time) -> Option<Time> {
        let mut next: Option<Time> = None;
        for e in &mut self.egress {
            let Some(link) = &mut e.link else { continue };
            while let Some(d) = link.pop_due(now) {
                if self.socket.send_to(&d, e.peer).is_err() {
                    self.send_errors += 1;
                }
                self.spare.push(d);
            }
            if let Some(t) = link.next_due() {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        next
    }

    fn wait_at_most(&mut self, wait: Duration) -> io::Result<()> {
        // A zero timeout means "block forever" to the socket; wait at least a microsecond.
        let wait = Some(wait.max(Duration::from_micros(1)));
        if self.read_timeout != wait {
            self.socket.set_read_timeout(wait)?;
            self.read_timeout = wait;
        }
        Ok(())
    }
}

/// What a node does with the datagrams addressed to it and with its timer.
pub trait Endpoint {
    /// A datagram for this node: a control message sent to its address, or a data message
    /// whose FID ended here.
    fn on_datagram(
        &mut self,
        io: &mut NodeIo,
        now: Time,
        from: SocketAddr,
        msg: MsgType,
        datagram: &[u8],
    );
    /// When [`on_timeout`](Self::on_timeout) is due, if ever.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// The timer expired.
    fn on_timeout(&mut self, _io: &mut NodeIo, _now: Time) {}
    /// Whether the node's work is finished (a download completed or failed).
    fn is_done(&self) -> bool {
        false
    }
}

/// A pure forwarding node: datagrams addressed to it are counted and dropped.
#[derive(Debug, Default, Clone, Copy)]
pub struct Relay {
    /// Control datagrams sent to this node, which has no rendezvous.
    pub stray: u64,
}

impl Endpoint for Relay {
    fn on_datagram(&mut self, _: &mut NodeIo, _: Time, _: SocketAddr, _: MsgType, _: &[u8]) {
        self.stray += 1;
    }
}

/// Runs the node until `stop` is set or the endpoint is done.
///
/// # Errors
/// The socket fails (other than a timeout or an ICMP error from a neighbour not yet up).
pub fn run(io: &mut NodeIo, endpoint: &mut dyn Endpoint, stop: &AtomicBool) -> io::Result<()> {
    let mut buf = vec![0u8; RECV_BUFFER_BYTES];
    loop {
        if stop.load(Ordering::Relaxed) || endpoint.is_done() {
            return Ok(());
        }
        let now = io.now();
        if endpoint.poll_timeout().is_some_and(|t| t <= now) {
            endpoint.on_timeout(io, now);
        }
        let next_release = io.flush(now);
        let deadline = [next_release, endpoint.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let wait = deadline.map_or(MAX_WAIT, |d| {
            let ps = d.saturating_since(now).as_ps();
            Duration::from_nanos(ps / 1000).min(MAX_WAIT)
        });
        io.wait_at_most(wait)?;
        match io.socket.recv_from(&mut buf) {
            Ok((n, from)) => {
                let now = io.now();
                let datagram = &mut buf[..n];
                match io.forwarder.route(datagram) {
                    Route::Local(msg) => endpoint.on_datagram(io, now, from, msg, datagram),
                    Route::Forward(mask) => {
                        for i in mask.iter() {
                            io.transmit(i, datagram);
                        }
                    }
                    Route::Drop => {}
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                        // A neighbour not listening yet answers with ICMP port unreachable.
                        | io::ErrorKind::ConnectionRefused
                ) => {}
            Err(e) => return Err(e),
        }
    }
}
