//! A forwarding node's on-path chunk cache (`cache = "64MB"` on a node of the overlay file, or
//! `pathpool fn --cache 64MB`): the sans-IO [`ChunkCache`] the simulator's routers use,
//! driven with the datagrams the node forwards (thesis §4.1–4.2; `docs/mmtp.md`, D116).
//!
//! Wire version 2 (issue 18, item 2): the cache keeps only what it has verified. A metadata
//! reply is believed only if it is signed by the publisher key the overlay file gives for the
//! publisher it names; chunks (pages and data) of that content and version are stored only if
//! they verify against a verified parent, through the same hash tree as the subscriber's,
//! and everything is keyed by content and version, so no reply can take the place of another
//! ("first wins" is gone). A chunk request is answered from here, on the forward FID it
//! carries, for the version it names, with its token, path and echo; it then goes no further.
//! A metadata request is answered with the verified metadata learnt last for its content
//! (signed by its publisher, so the subscriber checks it as it would the publisher's own
//! reply; D156). A request is answered only if its FID ticket verifies under the overlay key
//! (issue 18, item 3): a cache answers for the publisher, so it must not become the amplifier
//! a forged forward FID would make of the publisher (D169). Everything else passes untouched,
//! as do datagrams that do not decode.

use pathpool_proto::mmtp::{CacheStats, ChunkCache, ContentId, Part, Request};
use pathpool_topo::{NodeIx, DEFAULT_TTL};
use pathpool_wire::auth::{OverlayKey, PublicKey};
use pathpool_wire::hash_tree::{Check, Verifier};
use pathpool_wire::{
    ChunkMsg, DataPrefix, Message, MetadataReplyMsg, Packet, SignedMetadata, Ticket,
};

use crate::overlay::{Overlay, SecurityMode};

/// Most contents (versions) whose verified metadata a cache remembers; the oldest goes first.
/// Each holds its verified pages, 1/34 of its size with 1119-byte chunks.
pub const MAX_VERIFIED_CONTENTS: usize = 64;

/// What a cache trusts: the overlay file's publisher keys.
#[derive(Clone, Debug, Default)]
pub struct CacheTrust {
    /// Whether anything is verified.
    pub security: SecurityMode,
    /// Publisher keys by node.
    pub keys: Vec<(NodeIx, PublicKey)>,
    /// The overlay key, which checks requests' FID tickets (none: tickets are not checked).
    pub overlay_key: Option<OverlayKey>,
    /// The clock skew allowed when checking a ticket's expiry, seconds.
    pub max_skew_s: u64,
}

impl CacheTrust {
    /// The overlay file's mode and keys.
    #[must_use]
    pub fn from_overlay(overlay: &Overlay) -> Self {
        CacheTrust {
            security: overlay.security_mode(),
            keys: (0..overlay.nodes().len())
                .filter_map(|i| {
                    let n = NodeIx(i as u32);
                    overlay.public_key(n).map(|k| (n, *k))
                })
                .collect(),
            overlay_key: overlay.overlay_key().cloned(),
            max_skew_s: overlay.security().max_skew_s(),
        }
    }

    /// Whether a request's ticket lets this cache answer it on `fid` for the publisher the
    /// ticket names (with security on and a key; otherwise every request may be answered).
    fn ticket_ok(&self, ticket: &Ticket, fid: &pathpool_topo::Fid) -> bool {
        match (&self.overlay_key, self.security) {
            (Some(key), SecurityMode::On) => ticket
                .verify(
                    key,
                    ticket.publisher,
                    fid,
                    crate::security::unix_now_s(),
                    self.max_skew_s,
                )
                .is_ok(),
            _ => true,
        }
    }

    fn trusts(&self, m: &SignedMetadata) -> bool {
        self.keys
            .iter()
            .any(|(n, k)| *n == m.publisher && m.verify(k))
    }
}

/// Counters of what the cache refused to store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefusedStats {
    /// Metadata replies whose signature did not verify (or sizes did not agree).
    pub metadata: u64,
    /// Chunks that failed verification.
    pub invalid_chunks: u64,
    /// Chunks of a content or version without verified metadata, or whose parent page was
    /// not verified.
    pub unverifiable_chunks: u64,
    /// Requests not answered because their FID ticket did not verify (they go on to the
    /// publisher, which drops them too).
    pub bad_ticket: u64,
}

/// A content and version whose metadata verified.
#[derive(Debug)]
struct Known {
    content: ContentId,
    version: u64,
    metadata: SignedMetadata,
    /// `None` with security off.
    verifier: Option<Verifier>,
}

/// A node's cache: verified chunk payloads by content, version and index.
#[derive(Debug)]
pub struct NodeCache {
    cache: ChunkCache<Box<[u8]>>,
    trust: CacheTrust,
    known: Vec<Known>,
    refused: RefusedStats,
}

/// The key the sans-IO cache files a chunk under: content and version mixed into one id.
/// Only versions of verified metadata are ever stored, so a collision would need two signed
/// contents whose ids and versions combine alike (probability 2⁻⁶⁴ per pair).
fn key(content: ContentId, version: u64) -> ContentId {
    ContentId(content.0.rotate_left(29) ^ version)
}

impl NodeCache {
    /// An empty cache of `capacity_bytes` trusting `trust`.
    #[must_use]
    pub fn new(capacity_bytes: u64, trust: CacheTrust) -> Self {
        NodeCache {
            cache: ChunkCache::new(capacity_bytes),
            trust,
            known: Vec::new(),
            refused: RefusedStats::default(),
        }
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> &CacheStats {
        self.cache.stats()
    }

    /// What it refused to store.
    #[must_use]
    pub fn refused(&self) -> RefusedStats {
        self.refused
    }

    /// The capacity and the bytes held now.
    #[must_use]
    pub fn occupancy(&self) -> (u64, u64) {
        (self.cache.capacity_bytes(), self.cache.used_bytes())
    }

    fn known(&mut self, content: ContentId, version: u64) -> Option<&mut Known> {
        self.known
            .iter_mut()
            .find(|k| k.content == content && k.version == version)
    }

    fn learn(&mut self, m: &SignedMetadata) {
        let (content, version) = (m.content(), m.version());
        if self.known(content, version).is_some() {
            return;
        }
        let verifier = match (self.trust.security, m.validate()) {
            (SecurityMode::Off, Ok(_)) => None,
            (SecurityMode::On, Ok(Some(shape))) if self.trust.trusts(m) => {
                Some(Verifier::new(shape, m.root))
            }
            _ => {
                self.refused.metadata += 1;
                return;
            }
        };
        if self.known.len() >= MAX_VERIFIED_CONTENTS {
            self.known.remove(0);
        }
        self.known.push(Known {
            content,
            version,
            metadata: m.clone(),
            verifier,
        });
    }

    fn store(&mut self, prefix: &DataPrefix, index: u32, payload: &[u8]) {
        let Some(k) = self.known(prefix.content, prefix.version) else {
            self.refused.unverifiable_chunks += 1;
            return;
        };
        if let Some(v) = &mut k.verifier {
            match v.check(index, payload) {
                Check::Valid => {}
                Check::Invalid => {
                    self.refused.invalid_chunks += 1;
                    return;
                }
                Check::ParentMissing { .. } => {
                    self.refused.unverifiable_chunks += 1;
                    return;
                }
            }
        }
        let chunk = pathpool_proto::mmtp::Chunk {
            content: key(prefix.content, prefix.version),
            index,
            path: prefix.path,
            echo: prefix.echo,
            payload_bytes: u32::try_from(payload.len()).unwrap_or(u32::MAX),
        };
        self.cache.store_chunk(&chunk, payload.into());
    }

    /// A datagram the node is about to forward: keeps a verified reply; answers a chunk
    /// request it can, by handing `send` the reply packet, and then returns `true` (the
    /// request must not be forwarded).
    pub fn handle_forwarded(&mut self, datagram: &[u8], mut send: impl FnMut(&Packet<'_>)) -> bool {
        let Ok(packet) = Packet::decode(datagram) else {
            return false;
        };
        match packet.message {
            Message::Chunk(c) => {
                self.store(&c.prefix, c.index, c.payload);
                false
            }
            Message::MetadataReply(m) => {
                self.learn(&m.metadata);
                if let Some(payload) = m.first_chunk {
                    self.store(&m.prefix, 0, payload);
                }
                false
            }
            Message::ChunkRequest(r) => {
                let prefix = r.prefix();
                if self.known(prefix.content, prefix.version).is_none() {
                    return false;
                }
                if !self.trust.ticket_ok(&r.ticket, &r.forward_fid) {
                    self.refused.bad_ticket += 1;
                    return false;
                }
                let request = Request::Chunk(pathpool_proto::mmtp::ChunkRequest {
                    content: key(prefix.content, prefix.version),
                    ..r.request
                });
                let Some(hit) = self.cache.answer(&request) else {
                    return false;
                };
                let (Part::Chunk(index), Some(payload)) = (hit.reply.part(), hit.data) else {
                    return false;
                };
                send(&Packet {
                    hop_limit: DEFAULT_TTL,
                    fid: r.forward_fid,
                    message: Message::Chunk(ChunkMsg {
                        prefix,
                        index,
                        payload,
                    }),
                });
                true
            }
            Message::MetadataRequest(r) => {
                let prefix = r.prefix();
                if !self.trust.ticket_ok(&r.ticket, &r.forward_fid) {
                    self.refused.bad_ticket += 1;
                    return false;
                }
                let Some(k) = self
                    .known
                    .iter()
                    .rev()
                    .find(|k| k.content == prefix.content)
                else {
                    return false;
                };
                let metadata = k.metadata.clone();
                let prefix = DataPrefix {
                    version: k.version,
                    ..prefix
                };
                let mut first_chunk: Option<Box<[u8]>> = None;
                if r.first_chunk {
                    let chunk0 = Request::Chunk(pathpool_proto::mmtp::ChunkRequest {
                        content: key(prefix.content, prefix.version),
                        index: 0,
                        path: prefix.path,
                        echo: prefix.echo,
                    });
                    if !self.cache.contains(pathpool_proto::mmtp::ChunkId {
                        content: key(prefix.content, prefix.version),
                        part: Part::Chunk(0),
                    }) {
                        return false;
                    }
                    first_chunk = self.cache.answer(&chunk0).and_then(|h| h.data.cloned());
                }
                send(&Packet {
                    hop_limit: DEFAULT_TTL,
                    fid: r.forward_fid,
                    message: Message::MetadataReply(MetadataReplyMsg {
                        prefix,
                        metadata,
                        first_chunk: first_chunk.as_deref(),
                    }),
                });
                true
            }
            _ => false,
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use pathpool_core::Time;
    use pathpool_proto::mmtp::{ChunkRequest, Echo, MetadataRequest, PathIndex};
    use pathpool_psi::ContentName;
    use pathpool_topo::Fid;
    use pathpool_wire::auth::PublisherKey;
    use pathpool_wire::hash_tree::{leaf_hash, HashTree};
    use pathpool_wire::{ChunkRequestMsg, MetadataRequestMsg, Ticket};

    const CB: u32 = 64;

    fn echo(ps: u64) -> Echo {
        Echo {
            sent_at: Time::from_ps(ps),
            retransmission: false,
        }
    }

    fn fid(bit: usize) -> Fid {
        let mut f = Fid::default();
        f.set_bit(bit);
        f
    }

    /// A content of 300 bytes (5 chunks, 6 pages) signed by node 1 with `key`.
    fn content(key: &PublisherKey) -> (Vec<u8>, HashTree, SignedMetadata) {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 11) as u8).collect();
        let leaves = data
            .chunks(CB as usize)
            .enumerate()
            .map(|(i, c)| leaf_hash(i as u64, c))
            .collect();
        let tree = HashTree::from_leaves(leaves, CB).unwrap();
        let mut m = SignedMetadata {
            name: ContentName::new("/t/c").unwrap(),
            publisher: NodeIx(1),
            size_bytes: 300,
            chunk_bytes: CB,
            data_chunks: 5,
            pages: tree.shape().pages(),
            root: tree.root(),
            content_hash: *blake3::hash(&data).as_bytes(),
            description: String::new(),
            signature: [0; 64],
        };
        m.sign(key).unwrap();
        (data, tree, m)
    }

    fn prefix(m: &SignedMetadata, token: u64, path: u32, e: Echo) -> DataPrefix {
        DataPrefix {
            content: m.content(),
            version: m.version(),
            token,
            path: PathIndex(path),
            echo: e,
        }
    }

    fn bytes(message: Message<'_>) -> Vec<u8> {
        Packet::<4> {
            hop_limit: 9,
            fid: fid(1),
            message,
        }
        .to_vec()
        .unwrap()
    }

    fn reply(m: &SignedMetadata) -> Vec<u8> {
        bytes(Message::MetadataReply(MetadataReplyMsg {
            prefix: prefix(m, 5, 0, echo(1)),
            metadata: m.clone(),
            first_chunk: None,
        }))
    }

    fn chunk(m: &SignedMetadata, index: u32, payload: &[u8]) -> Vec<u8> {
        bytes(Message::Chunk(ChunkMsg {
            prefix: prefix(m, 5, 0, echo(1)),
            index,
            payload,
        }))
    }

    fn request(m: &SignedMetadata, index: u32, token: u64) -> Vec<u8> {
        bytes(Message::ChunkRequest(ChunkRequestMsg {
            request: ChunkRequest {
                content: m.content(),
                index,
                path: PathIndex(3),
                echo: echo(42),
            },
            version: m.version(),
            token,
            ticket: Ticket::issue(&overlay_key(), NodeIx(1), &fid(7), u32::MAX),
            forward_fid: fid(7),
        }))
    }

    /// The overlay key of these tests' caches.
    fn overlay_key() -> OverlayKey {
        OverlayKey::from_bytes([3; 32])
    }

    fn answers(cache: &mut NodeCache, datagram: &[u8]) -> Vec<Vec<u8>> {
        let mut sent = Vec::new();
        let answered = cache.handle_forwarded(datagram, |p| sent.push(p.to_vec().unwrap()));
        assert_eq!(answered, !sent.is_empty());
        sent
    }

    fn trusting(key: &PublisherKey) -> NodeCache {
        NodeCache::new(
            1 << 20,
            CacheTrust {
                security: SecurityMode::On,
                keys: vec![(NodeIx(1), key.public())],
                overlay_key: Some(overlay_key()),
                max_skew_s: 30,
            },
        )
    }

    /// Pages and chunks that verify are kept and served with the asker's token, path and
    /// echo; a forged chunk at the same index is refused and does not replace them.
    #[test]
    fn verified_chunks_are_served_and_forged_ones_refused() {
        let key = PublisherKey::from_seed([1; 32]);
        let (data, tree, m) = content(&key);
        let mut cache = trusting(&key);
        let pages = tree.shape().pages();
        assert!(answers(&mut cache, &reply(&m)).is_empty());
        for i in 0..pages {
            answers(&mut cache, &chunk(&m, i, tree.page(i).unwrap()));
        }
        answers(&mut cache, &chunk(&m, pages + 4, b"forged"));
        answers(&mut cache, &chunk(&m, pages + 4, &data[256..]));
        assert_eq!(cache.refused().invalid_chunks, 1);
        let sent = answers(&mut cache, &request(&m, pages + 4, 99));
        let want = Packet::<4> {
            hop_limit: DEFAULT_TTL,
            fid: fid(7),
            message: Message::Chunk(ChunkMsg {
                prefix: prefix(&m, 99, 3, echo(42)),
                index: pages + 4,
                payload: &data[256..],
            }),
        }
        .to_vec()
        .unwrap();
        assert_eq!(sent, vec![want]);
        // A request for another version passes on.
        let mut other = m.clone();
        other.root[0] ^= 1;
        assert!(answers(&mut cache, &request(&other, pages + 4, 99)).is_empty());
    }

    /// A request whose ticket was not issued for its forward FID (a forged FID towards a
    /// victim) is not answered from the cache, although the cache holds the chunk: the cache
    /// answers for the publisher and must not amplify for an attacker (issue 18, item 3).
    #[test]
    fn a_request_with_a_forged_ticket_is_not_answered() {
        let key = PublisherKey::from_seed([1; 32]);
        let (data, tree, m) = content(&key);
        let mut cache = trusting(&key);
        let pages = tree.shape().pages();
        answers(&mut cache, &reply(&m));
        for i in 0..pages {
            answers(&mut cache, &chunk(&m, i, tree.page(i).unwrap()));
        }
        answers(&mut cache, &chunk(&m, pages, &data[..CB as usize]));
        let honest = Ticket::issue(&overlay_key(), NodeIx(1), &fid(7), u32::MAX);
        let forged = |ticket: Ticket, forward: Fid| {
            bytes(Message::ChunkRequest(ChunkRequestMsg {
                request: ChunkRequest {
                    content: m.content(),
                    index: pages,
                    path: PathIndex(3),
                    echo: echo(42),
                },
                version: m.version(),
                token: 5,
                ticket,
                forward_fid: forward,
            }))
        };
        // The honest ticket on another (the victim's) FID; no ticket at all; an expired one.
        assert!(answers(&mut cache, &forged(honest, fid(9))).is_empty());
        assert!(answers(&mut cache, &forged(Ticket::default(), fid(9))).is_empty());
        let expired = Ticket::issue(&overlay_key(), NodeIx(1), &fid(7), 1_000);
        assert!(answers(&mut cache, &forged(expired, fid(7))).is_empty());
        assert_eq!(cache.refused().bad_ticket, 3);
        // The same request with its own ticket is answered.
        assert_eq!(answers(&mut cache, &forged(honest, fid(7))).len(), 1);
    }

    /// Metadata signed by an untrusted key is not learnt, so nothing of its content is kept
    /// and no request for it is answered (the v1 cache kept the first reply it saw).
    #[test]
    fn forged_metadata_poisons_nothing() {
        let key = PublisherKey::from_seed([1; 32]);
        let forger = PublisherKey::from_seed([2; 32]);
        let (_, tree, forged) = content(&forger);
        let mut cache = trusting(&key);
        answers(&mut cache, &reply(&forged));
        assert_eq!(cache.refused().metadata, 1);
        answers(&mut cache, &chunk(&forged, 0, tree.page(0).unwrap()));
        assert_eq!(cache.refused().unverifiable_chunks, 1);
        assert_eq!(cache.stats().stored, 0);
        assert!(answers(&mut cache, &request(&forged, 0, 1)).is_empty());
        let meta_request = bytes(Message::MetadataRequest(MetadataRequestMsg {
            request: MetadataRequest {
                content: forged.content(),
                path: PathIndex(0),
                echo: echo(3),
            },
            token: 8,
            first_chunk: false,
            ticket: Ticket::issue(&overlay_key(), NodeIx(1), &fid(4), u32::MAX),
            forward_fid: fid(4),
        }));
        assert!(answers(&mut cache, &meta_request).is_empty());
        // The genuine metadata is learnt and answers the same request.
        let (_, _, m) = content(&key);
        answers(&mut cache, &reply(&m));
        let sent = answers(&mut cache, &meta_request);
        let Message::MetadataReply(r) = Packet::<4>::decode(&sent[0]).unwrap().message else {
            panic!("not a metadata reply");
        };
        assert_eq!((r.metadata, r.prefix.token), (m, 8));
    }

    #[test]
    fn undecodable_datagrams_pass() {
        let mut cache = trusting(&PublisherKey::from_seed([1; 32]));
        assert!(answers(&mut cache, b"not a packet").is_empty());
        assert_eq!(cache.stats().stored, 0);
    }
}
