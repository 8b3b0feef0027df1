//! A stateless mmTP publisher serving one file from disk (`pathpool publish`; thesis §4.1
//! design choice 2: "sources keep no transport state"). Every request is answered from the
//! request alone; chunks are read from the file straight into the datagram, so the file is
//! never held in memory.
//!
//! Wire version 2 (issue 18): opening the file hashes it once into the hash tree of
//! `pathpool_wire::hash_tree` and signs the metadata with the publisher's key; the tree's
//! pages are served as chunks `0..P`, the data after them. Once the file is found changed
//! after it was published (its `fstat` differs, `publisher_reads.rs`), or always with
//! `ReadCheck::Hash`, every data chunk read from disk is checked against its leaf before it
//! is sent, and one that fails is answered with DATA_ERROR "content unavailable" (logged
//! once), never with bytes the signature does not cover (D153, D181).

use std::fs::File;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use pathpool_core::{Dur, Time};
use pathpool_proto::mmtp::{ContentId, ErrorKind, ErrorReply, Part, Request};
use pathpool_psi::ContentName;
use pathpool_topo::{Fid, NodeIx};
use pathpool_wire::auth::{OverlayKey, PublisherKey};
use pathpool_wire::hash_tree::{leaf_hash, Hash, HashTree};
use pathpool_wire::{
    chunk_payload_offset, encode_chunk_header, seal_data_error, DataErrorMsg, DataPrefix, Message,
    MetadataReplyMsg, MsgType, Packet, Publish, SignedMetadata, MAX_PACKET_BYTES,
};

use crate::node::{Endpoint, NodeIo};
use crate::publisher_reads::{FileIdentity, ReadAhead, ReadCheck};
use crate::rv::HOP_LIMIT;

/// Default chunk size: 1119 bytes, so that a chunk's datagram is 1200 bytes with 256-bit
/// FIDs (81 bytes of header and chunk fields in wire version 2), a size every path carries
/// unfragmented.
pub const DEFAULT_CHUNK_BYTES: u32 = 1119;

/// How often a publisher repeats its PUBLISH (the slow path is plain UDP: a lost
/// announcement, or a rendezvous restarted, is repaired by the next one).
pub const ANNOUNCE_INTERVAL: Dur = Dur::from_secs(1);

/// Bytes read from the file at once while hashing it when it is opened.
const HASH_BLOCK_BYTES: usize = 1 << 20;

/// One file as mmTP content: its signed metadata, its hash tree (security on) and the open
/// file.
#[derive(Debug)]
pub struct FileStore {
    file: File,
    path: PathBuf,
    content: ContentId,
    metadata: SignedMetadata,
    tree: Option<HashTree>,
    /// The file as it was hashed.
    identity: FileIdentity,
}

impl FileStore {
    /// Opens `path` as the content `name` published by `publisher`, in chunks of
    /// `chunk_bytes`, hashing it once: with `key`, into a hash tree whose root the metadata
    /// signed with `key` carries; without (security off), into the BLAKE3 hash of the whole
    /// file, unsigned.
    ///
    /// # Errors
    /// The file cannot be read, is empty, has more chunks than mmTP can count, or a chunk
    /// size outside 64 B (two hashes per page) to what a datagram holds.
    pub fn open(
        path: &Path,
        name: &ContentName,
        chunk_bytes: u32,
        publisher: NodeIx,
        key: Option<&PublisherKey>,
    ) -> io::Result<FileStore> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        let max = MAX_PACKET_BYTES - chunk_payload_offset::<4>();
        if !(64..=max as u32).contains(&chunk_bytes) {
            return Err(invalid(format!(
                "chunk size {chunk_bytes} B: must be 64 to {max} B"
            )));
        }
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
        let mut file = File::open(path).map_err(named)?;
        let before = FileIdentity::of(&file.metadata().map_err(named)?);
        // Blocks of whole chunks, so each leaf is hashed from one slice.
        let cb = chunk_bytes as usize;
        let mut block = vec![0u8; HASH_BLOCK_BYTES.div_ceil(cb) * cb];
        let mut leaves: Vec<Hash> = Vec::new();
        let mut whole = blake3::Hasher::new();
        let mut size = 0u64;
        loop {
            let n = read_full(&mut file, &mut block).map_err(named)?;
            if n == 0 {
                break;
            }
            if key.is_some() {
                for c in block[..n].chunks(cb) {
                    leaves.push(leaf_hash(leaves.len() as u64, c));
                }
            }
            // The whole content's hash, for the subscriber's check of the assembled file
            // (D181); BLAKE3 hashes a 1 MiB block many chunks at a time (SIMD).
            whole.update(&block[..n]);
            size += n as u64;
            if n < block.len() {
                break;
            }
        }
        if size == 0 {
            return Err(invalid(format!("{}: the file is empty", path.display())));
        }
        let identity = FileIdentity::of(&file.metadata().map_err(named)?);
        if identity != before || identity.len() != size {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                format!(
                    "{}: the file changed while it was being hashed; publish it once it is \
                     complete",
                    path.display()
                ),
            ));
        }
        let data_chunks = u32::try_from(size.div_ceil(u64::from(chunk_bytes)))
            .map_err(|_| invalid(format!("{}: too many chunks", path.display())))?;
        let tree = match key {
            Some(_) => Some(
                HashTree::from_leaves(leaves, chunk_bytes)
                    .map_err(|e| invalid(format!("{}: {e}", path.display())))?,
            ),
            None => None,
        };
        let mut metadata = SignedMetadata {
            name: name.clone(),
            publisher,
            size_bytes: size,
            chunk_bytes,
            data_chunks,
            pages: tree.as_ref().map_or(0, |t| t.shape().pages()),
            root: tree
                .as_ref()
                .map_or(*whole.finalize().as_bytes(), HashTree::root),
            content_hash: *whole.finalize().as_bytes(),
            description: format!("{name} ({size} bytes)"),
            signature: [0; 64],
        };
        if let Some(k) = key {
            metadata
                .sign(k)
                .map_err(|e| invalid(format!("{}: {e}", path.display())))?;
        }
        Ok(FileStore {
            file,
            path: path.to_path_buf(),
            content: ContentId::from_name(name.as_str()),
            metadata,
            tree,
            identity,
        })
    }

    /// The content's id on the wire.
    #[must_use]
    pub fn content(&self) -> ContentId {
        self.content
    }

    /// The signed metadata.
    #[must_use]
    pub fn metadata(&self) -> &SignedMetadata {
        &self.metadata
    }

    /// Byte offset of data chunk `index` in the file.
    fn offset(&self, index: u32) -> u64 {
        u64::from(index) * u64::from(self.metadata.chunk_bytes)
    }

    /// Length of data chunk `index`.
    fn data_len(&self, index: u32) -> Option<usize> {
        if index >= self.metadata.data_chunks {
            return None;
        }
        let left = self.metadata.size_bytes - self.offset(index);
        Some(left.min(u64::from(self.metadata.chunk_bytes)) as usize)
    }
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
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
    /// Chunks the file could not give, or gave other bytes than were published: answered
    /// "content unavailable".
    pub unavailable: u64,
    /// Requests whose FID ticket did not verify (forged or expired forward FID): dropped
    /// unanswered, so a forged FID cannot turn the publisher into an amplifier.
    pub bad_ticket: u64,
}

/// The publisher endpoint of a node.
#[derive(Debug)]
pub struct PublisherEndpoint {
    store: FileStore,
    name: ContentName,
    node: NodeIx,
    rendezvous: SocketAddr,
    overlay_key: Option<OverlayKey>,
    next_announce: Time,
    buf: Vec<u8>,
    read_ahead: ReadAhead,
    /// Whether a chunk was found changed (logged once).
    changed_logged: bool,
    stats: PublisherStats,
}

impl PublisherEndpoint {
    /// Publishes `store` as `name` from `node`, announcing it to `rendezvous`.
    #[must_use]
    pub fn new(store: FileStore, name: ContentName, node: NodeIx, rendezvous: SocketAddr) -> Self {
        PublisherEndpoint {
            read_ahead: ReadAhead::new(store.identity, ReadCheck::default()),
            store,
            name,
            node,
            rendezvous,
            overlay_key: None,
            next_announce: Time::ZERO,
            buf: vec![0; MAX_PACKET_BYTES],
            changed_logged: false,
            stats: PublisherStats::default(),
        }
    }

    /// Checks chunks read from disk as `check` says (default [`ReadCheck::Stat`]).
    #[must_use]
    pub fn with_read_check(mut self, check: ReadCheck) -> Self {
        self.read_ahead = ReadAhead::new(self.store.identity, check);
        self
    }

    /// Seals its DATA_ERRORs with `key`'s MAC, so subscribers believe them.
    #[must_use]
    pub fn with_overlay_key(mut self, key: Option<OverlayKey>) -> Self {
        self.overlay_key = key;
        self
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> PublisherStats {
        self.stats
    }

    /// The content's signed metadata.
    #[must_use]
    pub fn metadata(&self) -> &SignedMetadata {
        &self.store.metadata
    }

    fn send_message(io: &mut NodeIo, fid: &Fid, message: Message<'_>) {
        io.send_packet_on_fid(&Packet {
            hop_limit: HOP_LIMIT,
            fid: *fid,
            message,
        });
    }

    fn refuse(
        &mut self,
        io: &mut NodeIo,
        prefix: DataPrefix,
        part: Part,
        kind: ErrorKind,
        fid: &Fid,
    ) {
        self.stats.refused += 1;
        let packet = Packet::<4> {
            hop_limit: HOP_LIMIT,
            fid: *fid,
            message: Message::DataError(DataErrorMsg {
                error: ErrorReply {
                    content: prefix.content,
                    part,
                    path: prefix.path,
                    echo: prefix.echo,
                    kind,
                },
                version: prefix.version,
                token: prefix.token,
                publisher: self.node,
                mac: [0; 16],
            }),
        };
        let Ok(mut bytes) = packet.to_vec() else {
            return;
        };
        if let Some(key) = &self.overlay_key {
            seal_data_error(&mut bytes, key);
        }
        io.send_on_fid(fid, &bytes);
    }

    /// Fills `buf` at the payload offset with transfer chunk `index` (a page or data) and
    /// returns its length, or why it cannot be served.
    fn load(&mut self, index: u32) -> Result<usize, ErrorKind> {
        let start = chunk_payload_offset::<4>();
        let pages = self.store.metadata.pages;
        if index < pages {
            let page = self
                .store
                .tree
                .as_ref()
                .and_then(|t| t.page(index))
                .ok_or(ErrorKind::IndexOutOfRange)?;
            self.buf[start..start + page.len()].copy_from_slice(page);
            return Ok(page.len());
        }
        let data = index - pages;
        let len = self
            .store
            .data_len(data)
            .ok_or(ErrorKind::IndexOutOfRange)?;
        let out = &mut self.buf[start..start + len];
        let read = self.read_ahead.read(
            &self.store.file,
            self.store.metadata.size_bytes,
            self.store.offset(data),
            out,
        );
        if matches!(read, Ok(true)) {
            eprintln!(
                "publisher: {}: the file changed after it was published: checking every chunk \
                 read against the published hashes from now on",
                self.store.path.display()
            );
        }
        let intact = read.is_ok()
            && (!self.read_ahead.check_chunks()
                || self.store.tree.as_ref().is_none_or(|t| {
                    t.leaf(data).is_some_and(|leaf| {
                        blake3::Hash::from(*leaf)
                            == blake3::Hash::from(leaf_hash(u64::from(data), out))
                    })
                }));
        if !intact {
            self.stats.unavailable += 1;
            if !self.changed_logged {
                self.changed_logged = true;
                let why = match read {
                    Err(e) => e.to_string(),
                    Ok(_) => "its bytes differ from what was published".into(),
                };
                eprintln!(
                    "publisher: {}: data chunk {data}: {why}; the file changed or was truncated \
                     after it was published: answering \"content unavailable\" (republish it)",
                    self.store.path.display()
                );
            }
            return Err(ErrorKind::Unavailable);
        }
        Ok(len)
    }

    fn answer_chunk(&mut self, io: &mut NodeIo, prefix: DataPrefix, index: u32, fid: &Fid) {
        let m = &self.store.metadata;
        let part = Part::Chunk(index);
        if prefix.content != self.store.content {
            return self.refuse(io, prefix, part, ErrorKind::UnknownContent, fid);
        }
        if prefix.version != m.version() {
            return self.refuse(io, prefix, part, ErrorKind::DifferentVersion, fid);
        }
        match self.load(index) {
            Ok(len) => {
                if let Ok(n) =
                    encode_chunk_header(&mut self.buf, HOP_LIMIT, fid, prefix, index, len)
                {
                    io.send_on_fid(fid, &self.buf[..n]);
                    self.stats.chunks += 1;
                    self.stats.payload_bytes += len as u64;
                }
            }
            Err(kind) => self.refuse(io, prefix, part, kind, fid),
        }
    }

    fn answer(&mut self, io: &mut NodeIo, request: Request, prefix: DataPrefix, fid: &Fid) {
        match request {
            Request::Metadata(_) => {
                if prefix.content != self.store.content {
                    return self.refuse(io, prefix, Part::Metadata, ErrorKind::UnknownContent, fid);
                }
                self.stats.metadata += 1;
                let m = &self.store.metadata;
                let message = Message::MetadataReply(MetadataReplyMsg {
                    prefix: DataPrefix {
                        version: m.version(),
                        ..prefix
                    },
                    metadata: m.clone(),
                    first_chunk: None,
                });
                Self::send_message(io, fid, message);
            }
            Request::Chunk(c) => self.answer_chunk(io, prefix, c.index, fid),
        }
    }
}

impl Endpoint for PublisherEndpoint {
    fn handle_datagram(
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
                // 0 (both carry the request's echo), chunk 0 of the version just sent.
                let prefix = DataPrefix {
                    version: self.store.metadata.version(),
                    ..m.prefix()
                };
                for request in m.requests() {
                    self.answer(io, request, prefix, &m.forward_fid);
                }
            }
            Message::ChunkRequest(c) => {
                self.answer(io, Request::Chunk(c.request), c.prefix(), &c.forward_fid);
            }
            _ => self.stats.ignored += 1,
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.next_announce)
    }

    fn handle_timeout(&mut self, io: &mut NodeIo, now: Time) {
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
    use crate::publisher_reads::READ_AHEAD_BYTES;

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
        let key = PublisherKey::from_seed([1; 32]);
        let store = FileStore::open(&path, &name, 1135, NodeIx(0), Some(&key)).unwrap();
        assert!(store.metadata().verify(&key.public()));
        // 348 chunks of 1135 bytes, 35 hashes a page: 10 leaf pages and the root page.
        assert_eq!(store.metadata().data_chunks, 348);
        assert_eq!(store.metadata().validate().unwrap().unwrap().pages(), 11);
        let n = store.metadata().data_chunks;
        let mut order: Vec<u32> = (0..n).collect();
        order.extend((0..n).rev());
        let mut rng = pathpool_core::Rng::seed_from_u64(3);
        order.extend((0..n).map(|_| rng.below(u64::from(n)) as u32));
        let mut ra = ReadAhead::new(store.identity, ReadCheck::Stat);
        for index in order {
            let start = store.offset(index) as usize;
            let len = store.data_len(index).unwrap();
            let mut out = vec![0; len];
            let changed = ra
                .read(
                    &store.file,
                    store.metadata.size_bytes,
                    store.offset(index),
                    &mut out,
                )
                .unwrap();
            assert!(!changed);
            assert_eq!(out, &content[start..start + len], "chunk {index}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
