//! A stateless mmTP publisher serving one file from disk (`pathpool publish`; thesis §4.1
//! design choice 2: "sources keep no transport state"). Every request is answered from the
//! request alone; chunks are read from the file straight into the datagram, so the file is
//! never held in memory.

use std::fs::File;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::os::unix::fs::FileExt;
use std::path::Path;

use pathpool_core::{Dur, Time};
use pathpool_proto::mmtp::{
    ContentId, ContentStore, Metadata, MetadataReply, Publisher, Reply, Request,
};
use pathpool_psi::ContentName;
use pathpool_topo::{Fid, NodeIx};
use pathpool_wire::{
    chunk_payload_offset, encode_chunk_header, Message, MetadataReplyMsg, MsgType, Packet, Publish,
    MAX_PACKET_BYTES,
};
use sha2::{Digest, Sha256};

use crate::node::{Endpoint, NodeIo};
use crate::rv::HOP_LIMIT;

/// Default chunk size: 1135 bytes, so that a chunk's datagram is 1200 bytes with 256-bit
/// FIDs (65 bytes of header and chunk fields), a size every path carries unfragmented.
pub const DEFAULT_CHUNK_BYTES: u32 = 1135;

/// How often a publisher repeats its PUBLISH (the slow path is plain UDP: a lost
/// announcement, or a rendezvous restarted, is repaired by the next one).
pub const ANNOUNCE_INTERVAL: Dur = Dur::from_secs(1);

/// One file as mmTP content: its metadata (with the SHA-256 computed once, by streaming) and
/// the open file.
#[derive(Debug)]
pub struct FileStore {
    file: File,
    content: ContentId,
    metadata: Metadata,
}

impl FileStore {
    /// Opens `path` as the content `name`, in chunks of `chunk_bytes`.
    ///
    /// # Errors
    /// The file cannot be read, is empty, or has more chunks than mmTP can count.
    pub fn open(path: &Path, name: &ContentName, chunk_bytes: u32) -> io::Result<FileStore> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        if chunk_bytes == 0 || chunk_bytes as usize + chunk_payload_offset::<4>() > MAX_PACKET_BYTES
        {
            return Err(invalid(format!(
                "chunk size {chunk_bytes} B: must be 1 to {} B",
                MAX_PACKET_BYTES - chunk_payload_offset::<4>()
            )));
        }
        let mut file = File::open(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        let mut block = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut block)?;
            if n == 0 {
                break;
            }
            hasher.update(&block[..n]);
            size += n as u64;
        }
        if size == 0 {
            return Err(invalid(format!("{}: the file is empty", path.display())));
        }
        let metadata = Metadata::new(
            size,
            chunk_bytes,
            hasher.finalize().into(),
            &format!("{name} ({size} bytes)"),
        );
        metadata
            .validate()
            .map_err(|e| invalid(format!("{}: {e}", path.display())))?;
        Ok(FileStore {
            file,
            content: ContentId::from_name(name.as_str()),
            metadata,
        })
    }

    /// The content's id on the wire.
    #[must_use]
    pub fn content(&self) -> ContentId {
        self.content
    }

    /// Reads chunk `index` into `out`, which must be its length.
    fn read_into(&self, index: u32, out: &mut [u8]) -> io::Result<()> {
        self.file
            .read_exact_at(out, self.metadata.chunk_offset(index))
    }
}

/// Bytes a publisher reads from its file at once: Linux's default read-ahead window
/// (`read_ahead_kb` = 128), about 115 chunks of 1135 bytes.
pub const READ_AHEAD_BYTES: usize = 128 << 10;

/// A window of the file held in memory, so that consecutive chunks cost one `pread` between
/// them instead of one each (a `pread` per chunk was the publisher's largest cost, D108).
/// Requests come mostly in ascending runs (Algorithm 1 hands each subflow the next idle
/// chunks); any other chunk just moves the window.
#[derive(Debug, Default)]
struct ReadAhead {
    data: Vec<u8>,
    /// Where `data` starts in the file.
    start: u64,
}

impl ReadAhead {
    /// Copies chunk `index` of `store` into `out` (its length), reading the window from the
    /// chunk on when the chunk is not all in it.
    fn read(&mut self, store: &FileStore, index: u32, out: &mut [u8]) -> io::Result<()> {
        let offset = store.metadata.chunk_offset(index);
        let end = offset + out.len() as u64;
        let held_to = self.start + self.data.len() as u64;
        if offset < self.start || end > held_to {
            let len =
                (store.metadata.size_bytes - offset).min(READ_AHEAD_BYTES.max(out.len()) as u64);
            self.data.resize(len as usize, 0);
            self.start = offset;
            if let Err(e) = store.file.read_exact_at(&mut self.data, offset) {
                self.data.clear();
                return Err(e);
            }
        }
        let from = (offset - self.start) as usize;
        out.copy_from_slice(&self.data[from..from + out.len()]);
        Ok(())
    }
}

impl ContentStore for FileStore {
    fn metadata(&self, content: ContentId) -> Option<&Metadata> {
        (content == self.content).then_some(&self.metadata)
    }

    fn read_chunk(&self, content: ContentId, index: u32, out: &mut Vec<u8>) -> io::Result<()> {
        let len = self
            .metadata(content)
            .and_then(|m| m.chunk_len(index))
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such chunk"))?;
        let start = out.len();
        out.resize(start + len as usize, 0);
        self.read_into(index, &mut out[start..])
    }
}

/// Counters of a publisher.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PublisherStats {
    /// Metadata requests answered.
    pub metadata: u64,
    /// Chunks sent.
    pub chunks: u64,
    /// Payload bytes sent.
    pub payload_bytes: u64,
    /// Requests refused (unknown content, index out of range).
    pub refused: u64,
    /// Datagrams that were not valid requests.
    pub ignored: u64,
    /// Chunks the file could not give.
    pub read_errors: u64,
    /// Requests whose FID ticket did not verify (forged or expired forward FID): dropped
    /// unanswered, so a forged FID cannot turn the publisher into an amplifier.
    pub bad_ticket: u64,
}

/// The publisher endpoint of a node.
#[derive(Debug)]
pub struct PublisherEndpoint {
    publisher: Publisher<FileStore>,
    name: ContentName,
    node: NodeIx,
    rendezvous: SocketAddr,
    next_announce: Time,
    buf: Vec<u8>,
    read_ahead: ReadAhead,
    stats: PublisherStats,
}

impl PublisherEndpoint {
    /// Publishes `store` as `name` from `node`, announcing it to `rendezvous`.
    #[must_use]
    pub fn new(store: FileStore, name: ContentName, node: NodeIx, rendezvous: SocketAddr) -> Self {
        PublisherEndpoint {
            publisher: Publisher::new(store),
            name,
            node,
            rendezvous,
            next_announce: Time::ZERO,
            buf: vec![0; MAX_PACKET_BYTES],
            read_ahead: ReadAhead::default(),
            stats: PublisherStats::default(),
        }
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> PublisherStats {
        self.stats
    }

    /// The content's metadata.
    #[must_use]
    pub fn metadata(&self) -> &Metadata {
        &self.publisher.store().metadata
    }

    fn send_message(io: &mut NodeIo, fid: &Fid, message: Message<'_>) {
        io.send_packet_on_fid(&Packet {
            hop_limit: HOP_LIMIT,
            fid: *fid,
            message,
        });
    }

    fn answer(&mut self, io: &mut NodeIo, request: Request, forward_fid: &Fid) {
        match self.publisher.respond(&request) {
            Reply::Chunk(chunk) => {
                let start = chunk_payload_offset::<4>();
                let end = start + chunk.payload_bytes as usize;
                let store = self.publisher.store();
                if self
                    .read_ahead
                    .read(store, chunk.index, &mut self.buf[start..end])
                    .is_err()
                {
                    self.stats.read_errors += 1;
                    return;
                }
                if let Ok(n) = encode_chunk_header(&mut self.buf, HOP_LIMIT, forward_fid, &chunk) {
                    io.send_on_fid(forward_fid, &self.buf[..n]);
                    self.stats.chunks += 1;
                    self.stats.payload_bytes += u64::from(chunk.payload_bytes);
                }
            }
            Reply::Metadata(reply) => {
                self.stats.metadata += 1;
                let reply: MetadataReply = reply;
                let message = Message::MetadataReply(MetadataReplyMsg {
                    reply,
                    first_chunk: None,
                });
                Self::send_message(io, forward_fid, message);
            }
            Reply::Error(e) => {
                self.stats.refused += 1;
                Self::send_message(io, forward_fid, Message::DataError(e));
            }
        }
    }
}

impl Endpoint for PublisherEndpoint {
    fn on_datagram(
        &mut self,
        io: &mut NodeIo,
        _now: Time,
        _from: SocketAddr,
        _msg: MsgType,
        datagram: &[u8],
    ) {
        let Ok(packet) = Packet::<4>::decode(datagram) else {
            self.stats.ignored += 1;
            return;
        };
        // Wire version 2: a request is answered only on a forward FID the topology manager
        // issued for this publisher (issue 18).
        let ticket_ok = |io: &NodeIo, ticket: &pathpool_wire::Ticket, fid: &Fid| {
            io.control().key().is_none_or(|key| {
                let skew = io.control().settings().max_skew_s();
                ticket
                    .verify(key, self.node, fid, crate::security::unix_now_s(), skew)
                    .is_ok()
            })
        };
        let ticketed = match &packet.message {
            Message::MetadataRequest(m) => ticket_ok(io, &m.ticket, &m.forward_fid),
            Message::ChunkRequest(c) => ticket_ok(io, &c.ticket, &c.forward_fid),
            _ => true,
        };
        if !ticketed {
            self.stats.bad_ticket += 1;
            return;
        }
        match packet.message {
            Message::MetadataRequest(m) => {
                // A combined request is answered by two datagrams: the metadata, then chunk
                // 0 (both carry the request's echo).
                for request in m.requests() {
                    self.answer(io, request, &m.forward_fid);
                }
            }
            Message::ChunkRequest(c) => {
                self.answer(io, Request::Chunk(c.request), &c.forward_fid);
            }
            _ => self.stats.ignored += 1,
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.next_announce)
    }

    fn on_timeout(&mut self, io: &mut NodeIo, now: Time) {
        if now < self.next_announce {
            return;
        }
        self.next_announce = now + ANNOUNCE_INTERVAL;
        let packet = Packet::<4> {
            hop_limit: HOP_LIMIT,
            fid: Fid::default(),
            message: Message::Publish(Publish {
                publisher: self.node,
                name: self.name.clone(),
                auth: pathpool_wire::ControlAuth::default(),
            }),
        };
        io.send_control_to(self.rendezvous, &packet);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks read through the window are the file's bytes, in any order, the short last one
    /// included.
    #[test]
    fn the_read_ahead_window_gives_every_chunk_in_any_order() {
        let dir = std::env::temp_dir().join(format!("pathpool-ra-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.bin");
        // Three windows and a bit, so the last chunk is short.
        let content: Vec<u8> = (0..3 * READ_AHEAD_BYTES + 777)
            .map(|i| (i * 13 + i / 4099) as u8)
            .collect();
        std::fs::write(&path, &content).unwrap();
        let name = ContentName::new("/t/ra").unwrap();
        let store = FileStore::open(&path, &name, 1135).unwrap();
        let m = store.metadata.clone();
        let n = m.chunk_count;
        let mut order: Vec<u32> = (0..n).collect();
        order.extend((0..n).rev());
        let mut rng = pathpool_core::Rng::seed_from_u64(3);
        order.extend((0..n).map(|_| rng.below(u64::from(n)) as u32));
        let mut ra = ReadAhead::default();
        for index in order {
            let start = m.chunk_offset(index) as usize;
            let len = m.chunk_len(index).unwrap() as usize;
            let mut out = vec![0; len];
            ra.read(&store, index, &mut out).unwrap();
            assert_eq!(out, &content[start..start + len], "chunk {index}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
