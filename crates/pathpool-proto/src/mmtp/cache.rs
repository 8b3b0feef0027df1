//! An on-path chunk cache (thesis §4.1 and Fig. 4.2: "the pull model plus named chunks allow
//! distributed on-path chunk-level caching"; §4.2: an on-path router that opportunistically
//! caches packets "can inspect fast-path subscriptions and answer immediately if it holds the
//! chunk").
//!
//! Sans-IO, as the endpoints: a forwarding node (simulated, or the UDP runtime's) shows the
//! cache every reply that passes through it ([`store_chunk`](ChunkCache::store_chunk),
//! [`store_metadata`](ChunkCache::store_metadata)) and asks it about every request
//! ([`answer`](ChunkCache::answer)). On a hit the node sends the returned reply on the
//! forward FID the request carries, which routes from any node of the path to the subscriber,
//! and drops the request; on a miss it forwards the request as usual.
//!
//! What is cached is what a publisher would send: the metadata chunk (`/content/mm`) and data
//! chunks, each under its full name ([`ChunkId`]). A reply from the cache copies the path and
//! the echo from the request exactly as a publisher's does, so the subscriber cannot tell them
//! apart; the thesis leaves a cache-origin flag to future work (§4.5, §10.2) and so do we
//! (decision D116). Replacement is least-recently-used, where a hit or a new copy of an entry
//! makes it the most recent, under a capacity in bytes: a chunk costs its payload, the
//! metadata its fields (49 bytes and the description, as on the wire: `docs/wire.md`).

use pathpool_core::hash::FxHashMap;

use super::message::{Chunk, ChunkId, Metadata, MetadataReply, Part, Reply, Request};

/// Bytes a cached metadata entry costs besides its description: size (8), chunk size (4),
/// chunk count (4), SHA-256 (32), description length (1), as the wire carries them.
const METADATA_FIXED_BYTES: u64 = 49;

/// "No entry" in the recency list.
const NIL: u32 = u32::MAX;

/// What a cache entry holds.
#[derive(Clone, Debug)]
enum Held<V> {
    Metadata(Metadata),
    Chunk { payload_bytes: u32, data: V },
}

/// One entry, linked into the recency list (most recent at the head).
#[derive(Clone, Debug)]
struct Entry<V> {
    id: ChunkId,
    held: Held<V>,
    cost_bytes: u64,
    /// Towards the head (more recent).
    newer: u32,
    /// Towards the tail (less recent).
    older: u32,
}

/// What a cache did since it was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Requests answered from the cache.
    pub hits: u64,
    /// Requests the cache could not answer (forwarded towards the publisher).
    pub misses: u64,
    /// Replies stored (new entries; a copy of an entry already held only refreshes it).
    pub stored: u64,
    /// Entries evicted to make room.
    pub evicted: u64,
    /// Replies not stored because they alone exceed the capacity.
    pub too_large: u64,
    /// Chunk payload bytes sent in answers.
    pub payload_bytes_served: u64,
}

/// A cache's answer to a request: the reply to send, and for a data chunk what the driver
/// stored with it (the payload, for a driver that carries bytes).
#[derive(Debug)]
pub struct Hit<'a, V> {
    /// The reply, with the request's path and echo.
    pub reply: Reply,
    /// The data stored with a chunk (`None` for the metadata).
    pub data: Option<&'a V>,
}

/// A least-recently-used cache of named chunks under a byte capacity. `V` is what the
/// driver keeps with a data chunk: its payload bytes in the UDP runtime, nothing (`()`) in the
/// simulator, which carries no payload.
#[derive(Clone, Debug)]
pub struct ChunkCache<V> {
    capacity_bytes: u64,
    used_bytes: u64,
    /// Position of each entry in `entries`.
    index: FxHashMap<ChunkId, u32>,
    /// The entries, in no order (a removed entry's slot is filled by the last one).
    entries: Vec<Entry<V>>,
    /// Most recently used entry.
    head: u32,
    /// Least recently used entry: the next to go.
    tail: u32,
    stats: CacheStats,
}

impl<V> ChunkCache<V> {
    /// An empty cache that holds at most `capacity_bytes` (see the module doc for what an
    /// entry costs).
    #[must_use]
    pub fn new(capacity_bytes: u64) -> Self {
        ChunkCache {
            capacity_bytes,
            used_bytes: 0,
            index: FxHashMap::default(),
            entries: Vec::new(),
            head: NIL,
            tail: NIL,
            stats: CacheStats::default(),
        }
    }

    /// The capacity in bytes.
    #[must_use]
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Bytes the entries cost now (never above the capacity).
    #[must_use]
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    /// Number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache holds nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// Whether the cache holds `id` (without making it more recent or counting a lookup).
    #[must_use]
    pub fn contains(&self, id: ChunkId) -> bool {
        self.index.contains_key(&id)
    }

    /// The cached parts from the most to the least recently used.
    pub fn recency_order(&self) -> impl Iterator<Item = ChunkId> + '_ {
        let mut at = self.head;
        std::iter::from_fn(move || {
            let e = self.entries.get(at as usize)?;
            at = e.older;
            Some(e.id)
        })
    }

    /// A data chunk passed through the node: keep it (with `data`) as the most recent entry,
    /// evicting the least recent ones as needed.
    pub fn store_chunk(&mut self, chunk: &Chunk, data: V) {
        let id = ChunkId {
            content: chunk.content,
            part: Part::Chunk(chunk.index),
        };
        let held = Held::Chunk {
            payload_bytes: chunk.payload_bytes,
            data,
        };
        self.store(id, held, u64::from(chunk.payload_bytes));
    }

    /// A metadata reply passed through the node: keep the metadata as the most recent entry.
    pub fn store_metadata(&mut self, reply: &MetadataReply) {
        let id = ChunkId {
            content: reply.content,
            part: Part::Metadata,
        };
        let cost = METADATA_FIXED_BYTES + reply.metadata.description.len() as u64;
        self.store(id, Held::Metadata(reply.metadata.clone()), cost);
    }

    /// The reply to `request` if the cache holds the part it asks for, which becomes the most
    /// recent entry; `None` (a miss) otherwise.
    pub fn answer(&mut self, request: &Request) -> Option<Hit<'_, V>> {
        let id = ChunkId {
            content: request.content(),
            part: request.part(),
        };
        let Some(&at) = self.index.get(&id) else {
            self.stats.misses += 1;
            return None;
        };
        self.stats.hits += 1;
        self.touch(at);
        let e = &self.entries[at as usize];
        let (content, path, echo) = (request.content(), request.path(), request.echo());
        Some(match &e.held {
            Held::Metadata(metadata) => Hit {
                reply: Reply::Metadata(MetadataReply {
                    content,
                    path,
                    echo,
                    metadata: metadata.clone(),
                }),
                data: None,
            },
            Held::Chunk {
                payload_bytes,
                data,
            } => {
                self.stats.payload_bytes_served += u64::from(*payload_bytes);
                let Part::Chunk(index) = id.part else {
                    unreachable!("a chunk entry is stored under a chunk's name")
                };
                Hit {
                    reply: Reply::Chunk(Chunk {
                        content,
                        index,
                        path,
                        echo,
                        payload_bytes: *payload_bytes,
                    }),
                    data: Some(data),
                }
            }
        })
    }

    fn store(&mut self, id: ChunkId, held: Held<V>, cost_bytes: u64) {
        if let Some(&at) = self.index.get(&id) {
            // The same name is the same bytes (thesis §4.3: chunks are self-named): only the
            // recency changes.
            self.touch(at);
            return;
        }
        if cost_bytes > self.capacity_bytes {
            self.stats.too_large += 1;
            return;
        }
        while self.used_bytes + cost_bytes > self.capacity_bytes {
            self.remove(self.tail);
            self.stats.evicted += 1;
        }
        let at = self.entries.len() as u32;
        self.entries.push(Entry {
            id,
            held,
            cost_bytes,
            newer: NIL,
            older: NIL,
        });
        self.index.insert(id, at);
        self.used_bytes += cost_bytes;
        self.link_at_head(at);
        self.stats.stored += 1;
    }

    /// Makes entry `at` the most recent.
    fn touch(&mut self, at: u32) {
        if self.head != at {
            self.unlink(at);
            self.link_at_head(at);
        }
    }

    fn link_at_head(&mut self, at: u32) {
        let old_head = self.head;
        {
            let e = &mut self.entries[at as usize];
            e.newer = NIL;
            e.older = old_head;
        }
        if old_head == NIL {
            self.tail = at;
        } else {
            self.entries[old_head as usize].newer = at;
        }
        self.head = at;
    }

    fn unlink(&mut self, at: u32) {
        let (newer, older) = {
            let e = &self.entries[at as usize];
            (e.newer, e.older)
        };
        if newer == NIL {
            self.head = older;
        } else {
            self.entries[newer as usize].older = older;
        }
        if older == NIL {
            self.tail = newer;
        } else {
            self.entries[older as usize].newer = newer;
        }
    }

    /// Removes entry `at`; the last entry moves into its slot.
    fn remove(&mut self, at: u32) {
        self.unlink(at);
        let gone = self.entries.swap_remove(at as usize);
        self.index.remove(&gone.id);
        self.used_bytes -= gone.cost_bytes;
        if let Some(moved) = self.entries.get(at as usize) {
            // The former last entry now lives at `at`: repoint its neighbours and the index.
            let (id, newer, older) = (moved.id, moved.newer, moved.older);
            self.index.insert(id, at);
            if newer == NIL {
                self.head = at;
            } else {
                self.entries[newer as usize].older = at;
            }
            if older == NIL {
                self.tail = at;
            } else {
                self.entries[older as usize].newer = at;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mmtp::{ChunkRequest, ContentId, Echo, MetadataRequest, PathIndex};
    use pathpool_core::Time;
    use proptest::prelude::*;

    const C: ContentId = ContentId(0xc0ffee);

    fn chunk(index: u32, payload_bytes: u32) -> Chunk {
        Chunk {
            content: C,
            index,
            path: PathIndex(9),
            echo: Echo {
                sent_at: Time::ZERO,
                retransmission: false,
            },
            payload_bytes,
        }
    }

    fn request(index: u32, path: u32, sent_ps: u64, retransmission: bool) -> Request {
        Request::Chunk(ChunkRequest {
            content: C,
            index,
            path: PathIndex(path),
            echo: Echo {
                sent_at: Time::from_ps(sent_ps),
                retransmission,
            },
        })
    }

    fn chunks_in_order(c: &ChunkCache<u32>) -> Vec<u32> {
        c.recency_order()
            .map(|id| match id.part {
                Part::Chunk(i) => i,
                Part::Metadata => u32::MAX,
            })
            .collect()
    }

    #[test]
    fn a_hit_is_the_publishers_reply_with_the_requests_path_and_echo() {
        let mut c = ChunkCache::new(10_000);
        c.store_chunk(&chunk(3, 1000), 0xab);
        let hit = c.answer(&request(3, 2, 77, true)).expect("held");
        assert_eq!(
            hit.reply,
            Reply::Chunk(Chunk {
                content: C,
                index: 3,
                path: PathIndex(2),
                echo: Echo {
                    sent_at: Time::from_ps(77),
                    retransmission: true
                },
                payload_bytes: 1000,
            })
        );
        assert_eq!(hit.data, Some(&0xab));
        assert!(c.answer(&request(4, 2, 78, false)).is_none());
        assert!(
            c.answer(&Request::Chunk(ChunkRequest {
                content: ContentId(1),
                index: 3,
                path: PathIndex(0),
                echo: Echo {
                    sent_at: Time::ZERO,
                    retransmission: false
                }
            }))
            .is_none(),
            "another content's chunk 3 is another name"
        );
        let s = c.stats();
        assert_eq!(
            (s.hits, s.misses, s.stored, s.payload_bytes_served),
            (1, 2, 1, 1000)
        );
    }

    #[test]
    fn metadata_is_cached_under_its_own_name() {
        let mut c: ChunkCache<()> = ChunkCache::new(1000);
        let metadata = Metadata::new(5000, 1000, [7; 32], "four");
        c.store_metadata(&MetadataReply {
            content: C,
            path: PathIndex(0),
            echo: Echo {
                sent_at: Time::ZERO,
                retransmission: false,
            },
            metadata: metadata.clone(),
        });
        assert_eq!(c.used_bytes(), 49 + 4);
        let ask = Request::Metadata(MetadataRequest {
            content: C,
            path: PathIndex(1),
            echo: Echo {
                sent_at: Time::from_ps(5),
                retransmission: false,
            },
        });
        let hit = c.answer(&ask).expect("held");
        assert_eq!(
            hit.reply,
            Reply::Metadata(MetadataReply {
                content: C,
                path: PathIndex(1),
                echo: Echo {
                    sent_at: Time::from_ps(5),
                    retransmission: false
                },
                metadata,
            })
        );
        assert!(hit.data.is_none());
        assert!(c.answer(&request(0, 1, 5, false)).is_none(), "no chunk 0");
    }

    #[test]
    fn the_least_recently_used_goes_first() {
        let mut c = ChunkCache::new(3000);
        for i in 0..3 {
            c.store_chunk(&chunk(i, 1000), i);
        }
        assert_eq!(chunks_in_order(&c), [2, 1, 0]);
        // A hit on 0 and a new copy of 1 make them recent: 2 is now the oldest.
        assert!(c.answer(&request(0, 0, 0, false)).is_some());
        c.store_chunk(&chunk(1, 1000), 1);
        assert_eq!(chunks_in_order(&c), [1, 0, 2]);
        c.store_chunk(&chunk(3, 1000), 3);
        assert_eq!(chunks_in_order(&c), [3, 1, 0]);
        // A chunk of 2000 bytes needs two evictions.
        c.store_chunk(&chunk(4, 2000), 4);
        assert_eq!(chunks_in_order(&c), [4, 3]);
        assert_eq!(c.used_bytes(), 3000);
        assert_eq!(c.stats().evicted, 3);
        assert_eq!(c.stats().stored, 5);
    }

    #[test]
    fn an_entry_larger_than_the_cache_is_not_stored() {
        let mut c = ChunkCache::new(999);
        c.store_chunk(&chunk(0, 500), 0);
        c.store_chunk(&chunk(1, 1000), 1);
        assert_eq!(chunks_in_order(&c), [0]);
        assert_eq!(c.stats().too_large, 1);
        let mut none: ChunkCache<u32> = ChunkCache::new(0);
        none.store_chunk(&chunk(0, 1), 0);
        assert!(none.is_empty());
    }

    /// A reference LRU: a vector from least to most recent.
    #[derive(Default)]
    struct Model {
        entries: Vec<(u32, u64)>,
    }

    proptest! {
        /// The cache holds exactly what a naive LRU holds, in the same order, within its
        /// capacity, and its hit and eviction counts agree.
        #[test]
        fn matches_a_naive_lru(
            capacity in 0u64..5000,
            ops in proptest::collection::vec((any::<bool>(), 0u32..40, 1u32..1500), 1..400),
        ) {
            let mut c = ChunkCache::new(capacity);
            let mut m = Model::default();
            let (mut hits, mut evicted) = (0, 0);
            for (store, index, size) in ops {
                if store {
                    let size = u64::from(size);
                    if let Some(p) = m.entries.iter().position(|e| e.0 == index) {
                        let e = m.entries.remove(p);
                        m.entries.push(e);
                    } else if size <= capacity {
                        while m.entries.iter().map(|e| e.1).sum::<u64>() + size > capacity {
                            m.entries.remove(0);
                            evicted += 1;
                        }
                        m.entries.push((index, size));
                    }
                    c.store_chunk(&chunk(index, size as u32), index);
                } else {
                    let held = m.entries.iter().position(|e| e.0 == index);
                    let got = c.answer(&request(index, 0, 0, false)).map(|h| *h.data.unwrap());
                    prop_assert_eq!(got, held.map(|_| index));
                    if let Some(p) = held {
                        hits += 1;
                        let e = m.entries.remove(p);
                        m.entries.push(e);
                    }
                }
                let want: Vec<u32> = m.entries.iter().rev().map(|e| e.0).collect();
                prop_assert_eq!(chunks_in_order(&c), want);
                prop_assert!(c.used_bytes() <= capacity);
                prop_assert_eq!(c.used_bytes(), m.entries.iter().map(|e| e.1).sum::<u64>());
            }
            prop_assert_eq!(c.stats().hits, hits);
            prop_assert_eq!(c.stats().evicted, evicted);
        }
    }
}
