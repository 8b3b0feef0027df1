//! The mmTP subscriber of `pathpool get`: subscribes through the rendezvous, opens one
//! subflow per FID pair of the answer in the coupling groups it gives, drives the sans-IO
//! [`Subscriber`] (the one the simulator drives) with datagrams and the wall clock, writes
//! chunks into a temporary file at their offsets, checks the whole file against the
//! metadata's SHA-256 and only then renames it to its final name.

use std::fmt;
use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use pathpool_cc::{AnyController, CcKind, CcOptions, WindowConfig};
use pathpool_core::{Dur, Time};
use pathpool_proto::mmtp::{
    ContentId, Delivery, IntegrityError, Metadata, Reply, Subscriber, SubscriberConfig,
};
use pathpool_psi::{ContentName, Matching};
use pathpool_topo::{Fid, NodeIx};
use pathpool_wire::{Message, MsgType, Packet, PathFids, Subscribe};

use crate::node::{Endpoint, NodeIo};
use crate::part_file::PartFile;
use crate::rv::HOP_LIMIT;

/// How a download is made.
#[derive(Debug, Clone)]
pub struct GetConfig {
    /// The item.
    pub name: ContentName,
    /// Where the file goes; it appears under this name only once complete and verified.
    pub out: PathBuf,
    /// The congestion controller of the subflows (NMCC by default: paths alone in their group
    /// run uncoupled, a group runs NMCC).
    pub cc: CcKind,
    /// One publisher or several.
    pub matching: Matching,
    /// The subscriber's parameters.
    pub subscriber: SubscriberConfig,
    /// Failure when no new chunk arrives for this long (no reachable source).
    pub stall_timeout: Dur,
    /// Failure when the rendezvous answers no SUBSCRIBE for this long.
    pub rendezvous_timeout: Dur,
    /// Use at most this many of each publisher's paths (the first ones of the FID set);
    /// `None` uses every path the topology manager gives.
    pub paths_per_source: Option<usize>,
}

impl GetConfig {
    /// NMCC, multisource from up to 8 publishers, the default subscriber, 10 s stall timeout,
    /// 5 s for the rendezvous.
    #[must_use]
    pub fn new(name: ContentName, out: PathBuf) -> Self {
        GetConfig {
            name,
            out,
            cc: CcKind::Nmcc,
            matching: Matching::Multisource { max_sources: 8 },
            subscriber: SubscriberConfig::default(),
            stall_timeout: Dur::from_secs(10),
            rendezvous_timeout: Dur::from_secs(5),
            paths_per_source: None,
        }
    }
}

/// Why a download failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GetError {
    /// The rendezvous refused the subscription (unknown name, no path), with its text.
    Refused(String),
    /// The rendezvous did not answer.
    NoRendezvous,
    /// No chunk arrived for the stall timeout: no source is reachable.
    NoSource,
    /// The downloaded bytes do not match the metadata's SHA-256.
    Integrity(String),
    /// The output file could not be written.
    Io(String),
}

impl fmt::Display for GetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GetError::Refused(t) => write!(f, "the rendezvous refused the subscription: {t}"),
            GetError::NoRendezvous => write!(f, "the rendezvous did not answer"),
            GetError::NoSource => write!(f, "no reachable source: no chunk arrived in time"),
            GetError::Integrity(t) => write!(f, "integrity check failed: {t}"),
            GetError::Io(t) => write!(f, "writing the file: {t}"),
        }
    }
}

impl std::error::Error for GetError {}

/// Where a download is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GetState {
    /// Waiting for the FID set.
    Subscribing,
    /// Transferring.
    Downloading,
    /// Complete, verified and renamed.
    Done,
    /// Given up.
    Failed(GetError),
}

/// A download's progress, for a progress bar.
#[derive(Debug, Clone, PartialEq)]
pub struct GetProgress {
    /// Payload bytes received (first copies only).
    pub bytes: u64,
    /// The content's size, once known.
    pub size: Option<u64>,
    /// First-copy payload bytes per publisher node, in the order of the FID set.
    pub per_source: Vec<(NodeIx, u64)>,
    /// Each path of the FID set, in its order.
    pub per_path: Vec<PathProgress>,
    /// Time since the subscription was sent.
    pub elapsed: Dur,
}

/// How one path (subflow) of a download is doing.
#[derive(Clone, Debug, PartialEq)]
pub struct PathProgress {
    /// The publisher at its far end.
    pub publisher: NodeIx,
    /// The FID the replies come back on (what `Overlay::route_of` traces).
    pub forward_fid: Fid,
    /// First-copy payload bytes that came back on it.
    pub bytes: u64,
    /// Requests sent on it (chunks, metadata, re-requests and probes).
    pub requests: u64,
    /// Requests presumed lost: by timer (given back to the other paths) or by gap (D86).
    pub lost: u64,
}

/// The subscriber endpoint of a node.
pub struct GetEndpoint {
    config: GetConfig,
    node: NodeIx,
    rendezvous: SocketAddr,
    state: GetState,
    request_id: u32,
    subscriber: Subscriber,
    cc: AnyController,
    paths: Vec<PathFids>,
    part_path: PathBuf,
    file: Option<PartFile>,
    started: Option<Time>,
    last_subscribe: Option<Time>,
    last_progress: Time,
    finished: Option<Time>,
    bytes: u64,
    per_path: Vec<u64>,
    /// Chunks that arrived before the metadata (the subscriber accepts them: chunk 0 is
    /// requested with the metadata, and a reply can overtake another), written once the
    /// file exists.
    early: Vec<(u32, Vec<u8>)>,
}

impl fmt::Debug for GetEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetEndpoint")
            .field("name", &self.config.name)
            .field("state", &self.state)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

/// SUBSCRIBE is repeated this often until answered.
const SUBSCRIBE_RETRY: Dur = Dur::from_ms(500);

impl GetEndpoint {
    /// A download of `config.name` by `node`, asking `rendezvous`.
    #[must_use]
    pub fn new(config: GetConfig, node: NodeIx, rendezvous: SocketAddr) -> Self {
        let window = WindowConfig {
            initial_window: u64::from(config.subscriber.initial_window_chunks.max(1)),
            ..WindowConfig::default()
        };
        let part = part_path(&config.out);
        GetEndpoint {
            subscriber: Subscriber::new(
                ContentId::from_name(config.name.as_str()),
                config.subscriber,
            ),
            cc: config.cc.build_with(window, CcOptions::default()),
            // Random, so that a forged answer cannot guess it (issue 18); answers are also
            // MAC-checked.
            request_id: crate::keys::random_u32(),
            config,
            node,
            rendezvous,
            state: GetState::Subscribing,
            paths: Vec::new(),
            part_path: part,
            file: None,
            started: None,
            last_subscribe: None,
            last_progress: Time::ZERO,
            finished: None,
            bytes: 0,
            per_path: Vec::new(),
            early: Vec::new(),
        }
    }

    /// Where the download is.
    #[must_use]
    pub fn state(&self) -> &GetState {
        &self.state
    }

    /// The content's metadata, once received.
    #[must_use]
    pub fn metadata(&self) -> Option<&Metadata> {
        self.subscriber.metadata()
    }

    /// The subscriber state machine (its subflows and counters).
    #[must_use]
    pub fn subscriber(&self) -> &Subscriber {
        &self.subscriber
    }

    /// Time from the subscription to the end (complete or failed), once over.
    #[must_use]
    pub fn duration(&self) -> Option<Dur> {
        Some(self.finished?.saturating_since(self.started?))
    }

    /// The progress at `now`.
    #[must_use]
    pub fn progress(&self, now: Time) -> GetProgress {
        let mut per_source: Vec<(NodeIx, u64)> = Vec::new();
        for (p, &b) in self.paths.iter().zip(&self.per_path) {
            match per_source.iter_mut().find(|(n, _)| *n == p.publisher) {
                Some((_, total)) => *total += b,
                None => per_source.push((p.publisher, b)),
            }
        }
        let per_path = self
            .paths
            .iter()
            .zip(&self.per_path)
            .zip(self.subscriber.subflows())
            .map(|((p, &bytes), sf)| {
                let st = sf.stats();
                PathProgress {
                    publisher: p.publisher,
                    forward_fid: p.forward_fid,
                    bytes,
                    requests: st.requests,
                    lost: st.released + st.gap_losses,
                }
            })
            .collect();
        GetProgress {
            bytes: self.bytes,
            size: self.metadata().map(|m| m.size_bytes),
            per_source,
            per_path,
            elapsed: self.started.map_or(Dur::ZERO, |s| {
                self.finished.unwrap_or(now).saturating_since(s)
            }),
        }
    }

    fn fail(&mut self, now: Time, e: GetError) {
        self.file = None;
        let _ = fs::remove_file(&self.part_path);
        self.finished = Some(now);
        self.state = GetState::Failed(e);
    }

    fn subscribe(&mut self, io: &mut NodeIo, now: Time) {
        let packet = Packet::<4> {
            hop_limit: HOP_LIMIT,
            fid: Fid::default(),
            message: Message::Subscribe(Subscribe {
                request_id: self.request_id,
                subscriber: self.node,
                matching: self.config.matching,
                name: self.config.name.clone(),
                auth: pathpool_wire::ControlAuth::default(),
            }),
        };
        io.send_control_to(self.rendezvous, &packet);
        self.started.get_or_insert(now);
        self.last_subscribe = Some(now);
    }

    fn start(&mut self, now: Time, mut paths: Vec<PathFids>) {
        if let Some(k) = self.config.paths_per_source {
            let mut kept: Vec<(NodeIx, usize)> = Vec::new();
            paths.retain(|p| match kept.iter_mut().find(|(n, _)| *n == p.publisher) {
                Some((_, c)) if *c >= k => false,
                Some((_, c)) => {
                    *c += 1;
                    true
                }
                None => {
                    kept.push((p.publisher, 1));
                    k > 0
                }
            });
        }
        for p in &paths {
            self.subscriber.add_path(&mut self.cc, p.group_id);
        }
        self.per_path = vec![0; paths.len()];
        self.paths = paths;
        self.last_progress = now;
        self.state = GetState::Downloading;
    }

    fn transmit(&mut self, io: &mut NodeIo, now: Time) {
        while let Some(request) = self.subscriber.poll_transmit(now, &self.cc) {
            let Some(path) = self.paths.get(request.path().index()) else {
                continue;
            };
            io.send_packet_on_fid(&Packet::<4> {
                hop_limit: HOP_LIMIT,
                fid: path.reverse_fid,
                message: Message::from_request(request, path.forward_fid, path.ticket),
            });
        }
    }

    fn on_metadata(&mut self, now: Time) {
        let Some(size) = self.metadata().map(|m| m.size_bytes) else {
            return;
        };
        match PartFile::create(&self.part_path, size) {
            Ok(f) => {
                self.file = Some(f);
                for (index, payload) in std::mem::take(&mut self.early) {
                    self.write_chunk(now, index, &payload);
                }
            }
            Err(e) => {
                let e = GetError::Io(format!("{}: {e}", self.part_path.display()));
                self.fail(now, e);
            }
        }
    }

    fn store_chunk(&mut self, now: Time, index: u32, payload: &[u8], path: usize) {
        self.bytes += payload.len() as u64;
        if let Some(b) = self.per_path.get_mut(path) {
            *b += payload.len() as u64;
        }
        self.last_progress = now;
        if self.file.is_none() {
            self.early.push((index, payload.to_vec()));
            return;
        }
        self.write_chunk(now, index, payload);
    }

    fn write_chunk(&mut self, now: Time, index: u32, payload: &[u8]) {
        let (Some(file), Some(m)) = (&mut self.file, self.subscriber.metadata()) else {
            return;
        };
        if let Err(e) = file.write(m.chunk_offset(index), payload) {
            self.fail(now, GetError::Io(e));
        }
    }

    fn finish(&mut self, now: Time) {
        let (Some(file), Some(m)) = (self.file.take(), self.subscriber.metadata().cloned()) else {
            return;
        };
        // The writer hashed every byte as it wrote it (part_file.rs): the SHA-256 of what is
        // on disk, without reading the file again.
        let verified = file
            .finish()
            .map_err(GetError::Io)
            .and_then(|digest| {
                if digest == m.sha256 {
                    Ok(())
                } else {
                    Err(GetError::Integrity(
                        IntegrityError::HashMismatch {
                            expected: m.sha256,
                            actual: digest,
                        }
                        .to_string(),
                    ))
                }
            })
            .and_then(|()| {
                fs::rename(&self.part_path, &self.config.out)
                    .map_err(|e| GetError::Io(format!("{}: {e}", self.config.out.display())))
            });
        match verified {
            Ok(()) => {
                self.finished = Some(now);
                self.state = GetState::Done;
            }
            Err(e) => self.fail(now, e),
        }
    }

    fn on_reply(&mut self, io: &mut NodeIo, now: Time, reply: &Reply, payload: &[u8]) {
        let path = reply.path().index();
        match self.subscriber.handle_reply(now, reply, &mut self.cc) {
            Delivery::Metadata => self.on_metadata(now),
            Delivery::Chunk { index } => self.store_chunk(now, index, payload, path),
            Delivery::Duplicate | Delivery::Ignored | Delivery::Refused(_) => {}
        }
        if self.state != GetState::Downloading {
            return;
        }
        if self.subscriber.is_complete() {
            self.finish(now);
            return;
        }
        self.transmit(io, now);
    }
}

/// The path of the partial file of a download to `out`.
#[must_use]
pub fn part_path(out: &Path) -> PathBuf {
    let mut part = out.as_os_str().to_owned();
    part.push(".part");
    PathBuf::from(part)
}

impl Endpoint for GetEndpoint {
    fn on_datagram(
        &mut self,
        io: &mut NodeIo,
        now: Time,
        _from: SocketAddr,
        _msg: MsgType,
        datagram: &[u8],
    ) {
        let Ok(packet) = Packet::<4>::decode(datagram) else {
            return;
        };
        // Control answers count only with a valid MAC, timestamp and sender (issue 18).
        if pathpool_wire::is_control(packet.message.msg_type())
            && io.control_mut().open(datagram).is_err()
        {
            return;
        }
        match (&self.state, packet.message) {
            (GetState::Subscribing, Message::FidSet(set)) if set.request_id == self.request_id => {
                if set.paths.is_empty() {
                    self.fail(now, GetError::Refused("no path".into()));
                    return;
                }
                self.start(now, set.paths);
                self.transmit(io, now);
            }
            (GetState::Subscribing, Message::ControlError(e))
                if e.request_id == self.request_id =>
            {
                self.fail(now, GetError::Refused(e.text));
            }
            (GetState::Downloading, Message::MetadataReply(m)) => {
                let first = m.first_chunk.unwrap_or_default();
                for reply in m.replies() {
                    self.on_reply(io, now, &reply, first);
                }
            }
            (GetState::Downloading, Message::Chunk(c)) => {
                let payload = c.payload;
                self.on_reply(io, now, &Reply::Chunk(c.to_chunk()), payload);
            }
            (GetState::Downloading, Message::DataError(e)) => {
                self.on_reply(io, now, &Reply::Error(e), &[]);
            }
            _ => {}
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        match self.state {
            GetState::Subscribing => Some(
                self.last_subscribe
                    .map_or(Time::ZERO, |t| t + SUBSCRIBE_RETRY),
            ),
            GetState::Downloading => {
                let stall = self.last_progress + self.config.stall_timeout;
                Some(
                    self.subscriber
                        .poll_timeout()
                        .map_or(stall, |t| t.min(stall)),
                )
            }
            GetState::Done | GetState::Failed(_) => None,
        }
    }

    fn on_timeout(&mut self, io: &mut NodeIo, now: Time) {
        match self.state {
            GetState::Subscribing => {
                let waited = self.started.map_or(Dur::ZERO, |s| now.saturating_since(s));
                if waited >= self.config.rendezvous_timeout {
                    self.fail(now, GetError::NoRendezvous);
                } else if self
                    .last_subscribe
                    .is_none_or(|t| now >= t + SUBSCRIBE_RETRY)
                {
                    self.subscribe(io, now);
                }
            }
            GetState::Downloading => {
                if now >= self.last_progress + self.config.stall_timeout {
                    self.fail(now, GetError::NoSource);
                    return;
                }
                self.subscriber.handle_timeout(now, &mut self.cc);
                self.transmit(io, now);
            }
            GetState::Done | GetState::Failed(_) => {}
        }
    }

    fn is_done(&self) -> bool {
        matches!(self.state, GetState::Done | GetState::Failed(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::Overlay;
    use pathpool_proto::mmtp::{Echo, MetadataReply, PathIndex};
    use pathpool_wire::{ChunkMsg, FidSetMsg, MetadataReplyMsg};
    use std::net::UdpSocket;

    const PAIR: &str = r#"
security = "off"
rendezvous = "p"
nodes = [{ id = "p", transit = false }, { id = "s", transit = false }]
links = [{ between = ["p", "s"] }]
"#;

    fn encode(message: Message<'_>) -> Vec<u8> {
        Packet::<4> {
            hop_limit: HOP_LIMIT,
            fid: Fid::default(),
            message,
        }
        .to_vec()
        .unwrap()
    }

    /// The subscriber accepts a chunk that overtakes the metadata; its payload must still
    /// reach the file (it was lost before: the download then failed its integrity check).
    #[test]
    fn a_chunk_before_the_metadata_is_kept() {
        let mut overlay = Overlay::from_toml(PAIR, "pair").unwrap();
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        let s = overlay.node("s").unwrap();
        let p = overlay.node("p").unwrap();
        overlay.set_addr(s, sock.local_addr().unwrap());
        overlay.set_addr(p, peer.local_addr().unwrap());
        let mut io = NodeIo::with_socket(&overlay, s, sock, 1).unwrap();
        let dir = std::env::temp_dir().join(format!("pathpool-early-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let out = dir.join("out.bin");
        let name = ContentName::new("/t/x").unwrap();
        let content: Vec<u8> = (0..2500u32).map(|i| (i * 7) as u8).collect();
        let metadata = Metadata::for_content(&content, 1000, "x");
        let mut ep = GetEndpoint::new(
            GetConfig::new(name.clone(), out.clone()),
            s,
            peer.local_addr().unwrap(),
        );
        let from = peer.local_addr().unwrap();
        let now = Time::from_ms(1);
        ep.on_timeout(&mut io, now);
        let set = FidSetMsg {
            request_id: ep.request_id,
            name,
            paths: vec![PathFids {
                publisher: p,
                group_id: 0,
                forward_fid: Fid::default(),
                reverse_fid: Fid::default(),
                ticket: pathpool_wire::Ticket::default(),
            }],
            auth: pathpool_wire::ControlAuth::default(),
        };
        ep.on_datagram(
            &mut io,
            now,
            from,
            MsgType::FidSet,
            &encode(Message::FidSet(set)),
        );
        assert_eq!(ep.state(), &GetState::Downloading);
        let content_id = ContentId::from_name("/t/x");
        let echo = Echo {
            sent_at: now,
            retransmission: false,
        };
        let chunk = |i: usize| {
            let payload = &content[i * 1000..((i + 1) * 1000).min(content.len())];
            encode(Message::Chunk(ChunkMsg {
                content: content_id,
                index: i as u32,
                path: PathIndex(0),
                echo,
                payload,
            }))
        };
        // Chunk 0 first, then the metadata, then the rest.
        ep.on_datagram(&mut io, now, from, MsgType::Chunk, &chunk(0));
        let reply = MetadataReply {
            content: content_id,
            path: PathIndex(0),
            echo,
            metadata,
        };
        let meta = encode(Message::MetadataReply(MetadataReplyMsg {
            reply,
            first_chunk: None,
        }));
        ep.on_datagram(&mut io, now, from, MsgType::MetadataReply, &meta);
        ep.on_datagram(&mut io, now, from, MsgType::Chunk, &chunk(1));
        ep.on_datagram(&mut io, now, from, MsgType::Chunk, &chunk(2));
        assert_eq!(ep.state(), &GetState::Done, "{ep:?}");
        assert_eq!(fs::read(&out).unwrap(), content);
        let _ = fs::remove_dir_all(&dir);
    }
}
