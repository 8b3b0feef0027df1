//! A node of the overlay on a UDP socket and the wall clock: it forwards datagrams by their
//! FIDs through its links' emulation, and hands what is addressed to it to its endpoint (the
//! rendezvous, a publisher or a subscriber), a sans-IO state machine driven with the time.
//!
//! One thread per node, one socket per node: every neighbour sends to the node's address, and
//! the node sends to each neighbour's. The loop waits on the socket until the next timer (an
//! emulated link's next release or the endpoint's own), so an idle node costs nothing.
//!
//! Datagrams cross the socket in batches ([`UdpIo`], with GSO and GRO where the kernel has
//! them): after the first datagram the loop takes every one already waiting (up to
//! [`RECV_BATCH`] reads, a read with GRO being a burst from one sender), and what the node
//! sends meanwhile is queued per destination and leaves at the end of the round. A forwarding
//! node passes a burst whose datagrams all take the same transparent link on as it came,
//! without copying it.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pathpool_core::{Rng, Time};
use pathpool_topo::{Fid, NodeIx};
use pathpool_wire::{MsgType, Packet, MAX_PACKET_BYTES};

use crate::cache::{CacheTrust, NodeCache};
use crate::control_plane::ControlPlane;
use crate::emulation::{EmulatedLink, LinkStats};
use crate::forward::{Forwarder, Incoming, LinkMask, Route};
use crate::overlay::Overlay;
use crate::security::SecurityMode;
use crate::udp_io::{Offload, Received, UdpIo, MAX_SEGMENTS, RECV_BUFFER_BYTES};

/// Longest wait on the socket: how quickly a node notices a stop request.
pub const MAX_WAIT: Duration = Duration::from_millis(50);

/// Most reads in one round of the loop before the node sends what they produced.
pub const RECV_BATCH: usize = 64;

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
    udp: UdpIo,
    node: NodeIx,
    forwarder: Forwarder,
    egress: Vec<Egress>,
    clock: Clock,
    /// Packets of this node's own that did not encode (a field over its limit).
    unencodable: u64,
    forwarded_whole: u64,
    /// Buffers for the copies emulated links hold, kept for reuse.
    spare: Vec<Vec<u8>>,
    encode_buf: Vec<u8>,
    cache: Option<NodeCache>,
    /// What a cache of this node trusts (the overlay file's publisher keys).
    cache_trust: CacheTrust,
    /// The link each neighbour's address is the far end of: data datagrams are taken from
    /// these addresses only.
    peers: std::collections::HashMap<SocketAddr, usize>,
    control: ControlPlane,
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
    /// A neighbour has no address, the node has too many links, or security is on and the
    /// overlay has no key.
    pub fn with_socket(
        overlay: &Overlay,
        node: NodeIx,
        socket: UdpSocket,
        seed: u64,
    ) -> io::Result<NodeIo> {
        let links = overlay.node_links(node);
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        let security = overlay.security();
        if security.mode == SecurityMode::On && overlay.overlay_key().is_none() {
            return Err(invalid(format!(
                "security is on but no overlay key was loaded (the file {:?} beside the overlay \
                 file; `pathpool keygen --overlay FILE` creates it)",
                security.overlay_key_file
            )));
        }
        let control = ControlPlane::new(
            node,
            u32::try_from(overlay.nodes().len()).unwrap_or(u32::MAX),
            overlay.overlay_key().cloned(),
            security.clone(),
        );
        let forwarder = Forwarder::new(
            &links,
            overlay.nodes()[node.0 as usize].transit,
            overlay.forward_limits(),
        )
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
            // A link without emulation parameters still has a queue limit (the default one),
            // which cannot matter at an infinite rate: it sends at once, without the copy and
            // the bookkeeping of an emulated link (D108).
            let link = if l.emulation.is_transparent() {
                None
            } else {
                let rng = Rng::stream(seed, u64::from(node.0), i as u64);
                Some(EmulatedLink::new(l.emulation, rng).map_err(|e| invalid(e.to_string()))?)
            };
            egress.push(Egress { peer: addr, link });
        }
        let peers = egress
            .iter()
            .enumerate()
            .map(|(i, e)| (e.peer, i))
            .collect();
        Ok(NodeIo {
            udp: UdpIo::new(socket, Offload::Kernel),
            node,
            forwarder,
            egress,
            clock: Clock::new(),
            unencodable: 0,
            forwarded_whole: 0,
            spare: Vec::new(),
            encode_buf: vec![0; MAX_PACKET_BYTES],
            cache: overlay.nodes()[node.0 as usize]
                .cache_bytes
                .map(|c| NodeCache::new(c, CacheTrust::from_overlay(overlay))),
            cache_trust: CacheTrust::from_overlay(overlay),
            peers,
            control,
        })
    }

    /// The control plane: keys, timestamps and the counters of refused control messages.
    #[must_use]
    pub fn control(&self) -> &ControlPlane {
        &self.control
    }

    /// The control plane, to check a received control message
    /// ([`ControlPlane::open`]).
    pub fn control_mut(&mut self) -> &mut ControlPlane {
        &mut self.control
    }

    /// Encodes a control `packet`, seals it (sender, timestamp, MAC) and sends it straight to
    /// `addr` (the slow path, D87); one that does not encode is counted as a send error.
    pub fn send_control_to(&mut self, addr: SocketAddr, packet: &Packet<'_>) {
        let mut buf = std::mem::take(&mut self.encode_buf);
        match packet.encode(&mut buf) {
            Ok(n) if self.control.seal(&mut buf[..n]).is_ok() => self.send_to(addr, &buf[..n]),
            _ => self.unencodable += 1,
        }
        self.encode_buf = buf;
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
        self.udp.local_addr()
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

    /// Gives this node an on-path chunk cache of `capacity_bytes` (replacing the overlay
    /// file's), or none.
    pub fn set_cache(&mut self, capacity_bytes: Option<u64>) {
        let trust = &self.cache_trust;
        self.cache = capacity_bytes.map(|c| NodeCache::new(c, trust.clone()));
    }

    /// The node's chunk cache, if it has one.
    #[must_use]
    pub fn cache(&self) -> Option<&NodeCache> {
        self.cache.as_ref()
    }

    /// Counters of each emulated outgoing link (`None` for a transparent one).
    #[must_use]
    pub fn link_stats(&self) -> Vec<Option<LinkStats>> {
        self.egress
            .iter()
            .map(|e| e.link.as_ref().map(EmulatedLink::stats))
            .collect()
    }

    /// Datagrams the socket refused to send, and packets of this node's own that did not
    /// encode.
    #[must_use]
    pub fn send_errors(&self) -> u64 {
        self.udp.send_errors() + self.unencodable
    }

    /// Datagrams the kernel dropped at this node's full receive buffer, before the node could
    /// read them (as of its last read: [`UdpIo::receive_overflows`]).
    #[must_use]
    pub fn receive_overflows(&self) -> u64 {
        self.udp.receive_overflows()
    }

    /// Received buffers of several datagrams forwarded whole, without a copy (D110).
    #[must_use]
    pub fn forwarded_whole(&self) -> u64 {
        self.forwarded_whole
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
            Err(_) => self.unencodable += 1,
        }
        self.encode_buf = buf;
    }

    /// Encodes `packet` and sends it straight to `addr` (the slow path, D87).
    pub fn send_packet_to(&mut self, addr: SocketAddr, packet: &Packet<'_>) {
        let mut buf = std::mem::take(&mut self.encode_buf);
        match packet.encode(&mut buf) {
            Ok(n) => self.send_to(addr, &buf[..n]),
            Err(_) => self.unencodable += 1,
        }
        self.encode_buf = buf;
    }

    /// Sends a datagram straight to `addr` (the slow path to and from the rendezvous). Like
    /// every send, it leaves at the end of the loop's round, with the others to `addr`.
    pub fn send_to(&mut self, addr: SocketAddr, datagram: &[u8]) {
        self.udp.queue(addr, datagram);
    }

    /// Sends every queued datagram.
    pub fn send_queued(&mut self) {
        self.udp.send_queued();
    }

    /// Forwards a datagram on the links of `mask`, unless the node's cache answers it.
    fn forward(&mut self, mask: LinkMask, datagram: &[u8]) {
        if let Some(mut cache) = self.cache.take() {
            let answered = cache.handle_forwarded(datagram, |p| self.send_packet_on_fid(p));
            self.cache = Some(cache);
            if answered {
                return;
            }
        }
        for i in mask.iter() {
            self.transmit(i, datagram);
        }
    }

    /// Forwards a whole received buffer of `routes.len()` segments of `segment` bytes (the
    /// last may be shorter) as it is, in one GSO send, when every segment goes to the same
    /// single link and that link has no emulation: a forwarding node then copies nothing in
    /// user space (D110). Returns false, having sent nothing, in every other case, and always
    /// at a node with a cache, which must see every datagram.
    fn forward_whole(&mut self, buffer: &[u8], segment: usize, routes: &[Route]) -> bool {
        let Some(&Route::Forward(mask)) = routes.first() else {
            return false;
        };
        let Some(i) = mask.iter().next() else {
            return false;
        };
        if self.cache.is_some()
            || mask.len() != 1
            || self.egress[i].link.is_some()
            || routes.iter().any(|r| *r != Route::Forward(mask))
            || !self
                .udp
                .send_whole(self.egress[i].peer, buffer, segment, routes.len())
        {
            return false;
        }
        self.forwarded_whole += 1;
        true
    }

    fn transmit(&mut self, i: usize, datagram: &[u8]) {
        let e = &mut self.egress[i];
        match &mut e.link {
            None => {
                self.udp.queue(e.peer, datagram);
            }
            Some(link) => {
                // The clock is read only here: a transparent link needs no time.
                let now = self.clock.now();
                let mut copy = self.spare.pop().unwrap_or_default();
                copy.clear();
                copy.extend_from_slice(datagram);
                if let (_, Some(back)) = link.offer(now, datagram.len() as u64, copy) {
                    self.spare.push(back);
                }
            }
        }
    }

    /// Queues what the emulated links release by `now`, in the order of their release times
    /// across links (ties to the lower link), as datagrams leaving real links one after
    /// another would go on; returns the next release.
    fn flush(&mut self, now: Time) -> Option<Time> {
        loop {
            let due = (0..self.egress.len())
                .filter_map(|i| {
                    let at = self.egress[i].link.as_ref()?.next_due()?;
                    Some((at, i))
                })
                .min();
            match due {
                Some((at, i)) if at <= now => {
                    let peer = self.egress[i].peer;
                    if let Some(d) = self.egress[i].link.as_mut().and_then(|l| l.pop_due(now)) {
                        self.udp.queue(peer, &d);
                        self.spare.push(d);
                    }
                }
                next => return next.map(|(at, _)| at),
            }
        }
    }
}

/// What a node does with the datagrams addressed to it and with its timer. The methods are
/// named as the entry points of the sans-IO machines an endpoint drives (`handle_*` for what
/// arrives, `poll_*` for what the loop asks; D200).
pub trait Endpoint {
    /// A datagram for this node: a control message sent to its address, or a data message
    /// whose FID ended here.
    fn handle_datagram(
        &mut self,
        io: &mut NodeIo,
        now: Time,
        from: SocketAddr,
        msg: MsgType,
        datagram: &[u8],
    );
    /// When [`handle_timeout`](Self::handle_timeout) is due, if ever.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// The timer expired.
    fn handle_timeout(&mut self, _io: &mut NodeIo, _now: Time) {}
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
    fn handle_datagram(&mut self, _: &mut NodeIo, _: Time, _: SocketAddr, _: MsgType, _: &[u8]) {
        self.stray += 1;
    }
}

/// Runs the node until `stop` is set or the endpoint is done.
///
/// # Errors
/// The socket fails (other than a timeout or an ICMP error from a neighbour not yet up).
pub fn run(io: &mut NodeIo, endpoint: &mut dyn Endpoint, stop: &AtomicBool) -> io::Result<()> {
    let mut buf = vec![0u8; RECV_BUFFER_BYTES];
    let mut routes: Vec<Route> = Vec::with_capacity(MAX_SEGMENTS);
    loop {
        if stop.load(Ordering::Relaxed) || endpoint.is_done() {
            io.send_queued();
            return Ok(());
        }
        let now = io.now();
        if endpoint.poll_timeout().is_some_and(|t| t <= now) {
            endpoint.handle_timeout(io, now);
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
        io.send_queued();
        io.udp.set_wait(wait)?;
        // The first read waits (until the next timer at most); the others take only what is
        // already there.
        for k in 0..RECV_BATCH {
            let received = if k == 0 {
                io.udp.recv(&mut buf)?
            } else {
                io.udp.try_recv(&mut buf)?
            };
            let Some(Received {
                bytes: n,
                from,
                segment_bytes: segment,
            }) = received
            else {
                break;
            };
            // A timer that fell due while the loop waited or worked fires before the datagrams
            // read after it: they arrived (or were taken) after its deadline. Fired after them,
            // a retransmission always followed the requests the arriving replies triggered,
            // and at a shared drop-tail queue its reply always came after the burst that had
            // just filled it: a subflow at a window of one was locked out (D270).
            let now = io.now();
            if endpoint.poll_timeout().is_some_and(|t| t <= now) {
                endpoint.handle_timeout(io, now);
            }
            // Every segment is routed first (routing reads the header and decrements the hop
            // limit in place, nothing else), so that a buffer whose segments all go to one
            // link can leave whole. An empty datagram is one datagram too (counted as
            // malformed by the forwarder).
            routes.clear();
            let incoming = io
                .peers
                .get(&from)
                .map_or(Incoming::Stranger, |&i| Incoming::Link(i));
            if n == 0 {
                routes.push(io.forwarder.route(&mut buf[..0], incoming));
            }
            for datagram in buf[..n].chunks_mut(segment) {
                routes.push(io.forwarder.route(datagram, incoming));
            }
            if !io.forward_whole(&buf[..n], segment, &routes) {
                for (k, route) in routes.iter().enumerate() {
                    let start = (k * segment).min(n);
                    let datagram = &buf[start..(start + segment).min(n)];
                    match *route {
                        // Each datagram is handed over at its own time, even within one
                        // buffer: the subscriber orders its requests in flight by send time
                        // (D86), and requests sent for different replies of one buffer must
                        // not share a time.
                        Route::Local(msg) => {
                            let now = io.now();
                            endpoint.handle_datagram(io, now, from, msg, datagram);
                        }
                        Route::Forward(mask) => io.forward(mask, datagram),
                        Route::Drop => {}
                    }
                }
            }
        }
        io.send_queued();
    }
}

#[cfg(test)]
#[path = "node_tests.rs"]
mod tests;
