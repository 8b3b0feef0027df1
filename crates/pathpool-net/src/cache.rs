//! A forwarding node's on-path chunk cache (`cache = "64MB"` on a node of the overlay file, or
//! `pathpool fn --cache 64MB`): the sans-IO [`ChunkCache`] the simulator's routers use,
//! driven with the datagrams the node forwards (thesis §4.1–4.2; `docs/mmtp.md`, D116).
//!
//! Every mmTP reply the node forwards is kept with its payload; every request it forwards for
//! a part it holds is answered from here, on the forward FID the request carries (which
//! matches the links from this node onwards to the subscriber), and goes no further. A
//! metadata request that also asks for chunk 0 is answered only when both are held, so a
//! subscriber never gets half an answer. Everything else passes untouched, as do datagrams
//! that do not decode (the forwarder forwards on the header alone; the endpoints count
//! them).

use pathpool_proto::mmtp::{CacheStats, ChunkCache, ChunkId, Part, Reply, Request};
use pathpool_topo::DEFAULT_TTL;
use pathpool_wire::{ChunkMsg, Message, MetadataReplyMsg, Packet};

/// A node's cache: chunk payloads by name.
#[derive(Debug)]
pub struct NodeCache {
    cache: ChunkCache<Box<[u8]>>,
}

impl NodeCache {
    /// An empty cache of `capacity_bytes`.
    #[must_use]
    pub fn new(capacity_bytes: u64) -> Self {
        NodeCache {
            cache: ChunkCache::new(capacity_bytes),
        }
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> &CacheStats {
        self.cache.stats()
    }

    /// The capacity and the bytes held now.
    #[must_use]
    pub fn occupancy(&self) -> (u64, u64) {
        (self.cache.capacity_bytes(), self.cache.used_bytes())
    }

    /// A datagram the node is about to forward: keeps a reply; answers a request it can, by
    /// handing `send` the reply packet, and then returns `true` (the request must not be
    /// forwarded).
    pub fn on_forward(&mut self, datagram: &[u8], mut send: impl FnMut(&Packet<'_>)) -> bool {
        let Ok(packet) = Packet::decode(datagram) else {
            return false;
        };
        match packet.message {
            Message::Chunk(c) => {
                self.cache.store_chunk(&c.to_chunk(), c.payload.into());
                false
            }
            Message::MetadataReply(m) => {
                for reply in m.replies() {
                    match reply {
                        Reply::Metadata(r) => self.cache.store_metadata(&r),
                        Reply::Chunk(c) => {
                            if let Some(payload) = m.first_chunk {
                                self.cache.store_chunk(&c, payload.into());
                            }
                        }
                        Reply::Error(_) => {}
                    }
                }
                false
            }
            Message::ChunkRequest(r) => {
                let Some(hit) = self.cache.answer(&Request::Chunk(r.request)) else {
                    return false;
                };
                let (Reply::Chunk(chunk), Some(payload)) = (&hit.reply, hit.data) else {
                    return false;
                };
                let Ok(msg) = ChunkMsg::new(chunk, payload) else {
                    return false;
                };
                send(&Packet {
                    hop_limit: DEFAULT_TTL,
                    fid: r.forward_fid,
                    message: Message::Chunk(msg),
                });
                true
            }
            Message::MetadataRequest(r) => {
                let content = r.request.content;
                let held = |part| self.cache.contains(ChunkId { content, part });
                if !held(Part::Metadata) || (r.first_chunk && !held(Part::Chunk(0))) {
                    // Counted as a miss, as the publisher will answer it.
                    let _ = self.cache.answer(&Request::Metadata(r.request));
                    return false;
                }
                let Some(hit) = self.cache.answer(&Request::Metadata(r.request)) else {
                    return false;
                };
                let Reply::Metadata(reply) = hit.reply else {
                    return false;
                };
                let mut first_chunk: Option<Box<[u8]>> = None;
                if r.first_chunk {
                    let chunk0 = r.requests().nth(1);
                    if let Some(hit) = chunk0.and_then(|q| self.cache.answer(&q)) {
                        first_chunk = hit.data.cloned();
                    }
                }
                send(&Packet {
                    hop_limit: DEFAULT_TTL,
                    fid: r.forward_fid,
                    message: Message::MetadataReply(MetadataReplyMsg {
                        reply,
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
    use pathpool_proto::mmtp::{
        Chunk, ChunkRequest, ContentId, Echo, Metadata, MetadataReply, MetadataRequest, PathIndex,
    };
    use pathpool_topo::Fid;
    use pathpool_wire::{ChunkRequestMsg, MetadataRequestMsg};

    const C: ContentId = ContentId(77);

    fn echo(ps: u64, retransmission: bool) -> Echo {
        Echo {
            sent_at: Time::from_ps(ps),
            retransmission,
        }
    }

    fn fid(bit: usize) -> Fid {
        let mut f = Fid::default();
        f.set_bit(bit);
        f
    }

    fn bytes(p: &Packet<'_>) -> Vec<u8> {
        p.to_vec().unwrap()
    }

    fn chunk(index: u32, payload: &[u8]) -> Vec<u8> {
        let c = Chunk {
            content: C,
            index,
            path: PathIndex(0),
            echo: echo(1, false),
            payload_bytes: payload.len() as u32,
        };
        bytes(&Packet {
            hop_limit: 9,
            fid: fid(1),
            message: Message::Chunk(ChunkMsg::new(&c, payload).unwrap()),
        })
    }

    fn chunk_request(index: u32, path: u32, e: Echo, forward: Fid) -> Vec<u8> {
        bytes(&Packet {
            hop_limit: 9,
            fid: fid(2),
            message: Message::ChunkRequest(ChunkRequestMsg {
                request: ChunkRequest {
                    content: C,
                    index,
                    path: PathIndex(path),
                    echo: e,
                },
                ticket: pathpool_wire::Ticket::default(),
                forward_fid: forward,
            }),
        })
    }

    fn answers(cache: &mut NodeCache, datagram: &[u8]) -> (bool, Vec<Vec<u8>>) {
        let mut sent = Vec::new();
        let answered = cache.on_forward(datagram, |p| sent.push(bytes(p)));
        (answered, sent)
    }

    #[test]
    fn a_forwarded_chunk_answers_a_later_request_on_its_forward_fid() {
        let mut cache = NodeCache::new(1 << 20);
        assert_eq!(answers(&mut cache, &chunk(5, b"hello")), (false, vec![]));
        let (answered, sent) = answers(&mut cache, &chunk_request(5, 3, echo(42, true), fid(7)));
        assert!(answered);
        // The publisher's reply exactly: the request's path and echo, the stored bytes, on the
        // request's forward FID.
        let want = Chunk {
            content: C,
            index: 5,
            path: PathIndex(3),
            echo: echo(42, true),
            payload_bytes: 5,
        };
        let want = bytes(&Packet {
            hop_limit: DEFAULT_TTL,
            fid: fid(7),
            message: Message::Chunk(ChunkMsg::new(&want, b"hello").unwrap()),
        });
        assert_eq!(sent, vec![want]);
        // A chunk it does not hold passes on.
        assert_eq!(
            answers(&mut cache, &chunk_request(6, 3, echo(43, false), fid(7))),
            (false, vec![])
        );
        let s = cache.stats();
        assert_eq!((s.hits, s.misses, s.stored), (1, 1, 1));
    }

    #[test]
    fn a_metadata_request_with_chunk_0_is_answered_only_whole() {
        let mut cache = NodeCache::new(1 << 20);
        let metadata = Metadata::new(10, 8, [3; 32], "d");
        let reply = |first_chunk: Option<&[u8]>| {
            bytes(&Packet {
                hop_limit: 9,
                fid: fid(1),
                message: Message::MetadataReply(MetadataReplyMsg {
                    reply: MetadataReply {
                        content: C,
                        path: PathIndex(0),
                        echo: echo(1, false),
                        metadata: metadata.clone(),
                    },
                    first_chunk,
                }),
            })
        };
        let request = |first_chunk: bool| {
            bytes(&Packet {
                hop_limit: 9,
                fid: fid(2),
                message: Message::MetadataRequest(MetadataRequestMsg {
                    request: MetadataRequest {
                        content: C,
                        path: PathIndex(1),
                        echo: echo(9, false),
                    },
                    first_chunk,
                    ticket: pathpool_wire::Ticket::default(),
                    forward_fid: fid(4),
                }),
            })
        };
        // The metadata alone passed: a request for it and chunk 0 goes on to the publisher,
        // a request for the metadata alone is answered.
        assert!(!answers(&mut cache, &reply(None)).0);
        assert_eq!(answers(&mut cache, &request(true)), (false, vec![]));
        let (answered, sent) = answers(&mut cache, &request(false));
        assert!(answered);
        let got = Packet::decode(&sent[0]).unwrap();
        assert_eq!(got.fid, fid(4));
        let Message::MetadataReply(m) = got.message else {
            panic!("{got:?}")
        };
        assert_eq!((m.reply.path, m.reply.echo), (PathIndex(1), echo(9, false)));
        assert_eq!(m.reply.metadata, metadata);
        assert_eq!(m.first_chunk, None);
        // Chunk 0 came with a metadata reply: now the coalesced request is answered whole.
        assert!(!answers(&mut cache, &reply(Some(b"01234567"))).0);
        let (answered, sent) = answers(&mut cache, &request(true));
        assert!(answered);
        let Message::MetadataReply(m) = Packet::<4>::decode(&sent[0]).unwrap().message else {
            panic!()
        };
        assert_eq!(m.first_chunk, Some(&b"01234567"[..]));
    }

    #[test]
    fn other_and_undecodable_datagrams_pass() {
        let mut cache = NodeCache::new(1 << 20);
        assert_eq!(answers(&mut cache, b"not a packet"), (false, vec![]));
        let mut truncated = chunk(1, b"abc");
        truncated.pop();
        assert_eq!(answers(&mut cache, &truncated), (false, vec![]));
        assert_eq!(cache.stats().stored, 0);
    }
}
