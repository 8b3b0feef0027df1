//! On-path chunk caches at routers (thesis §4.1–4.2; scenario `[[caches]]`), driving the
//! sans-IO [`ChunkCache`] of `pathpool-proto`, the same the UDP runtime's forwarding nodes use.
//!
//! A router has no element of its own in the simulator: packets follow flat source routes of
//! links. A cache is therefore an element that sits *in* the mmTP routes, after the link into
//! its router, and is crossed inside the event that brought a packet to it, as a wire is. What
//! it does with a packet depends on where in which route it sits, so each such hop is
//! registered by its position in the route table ([`CacheHops`]):
//!
//! * on a download's reply route, the cache keeps the reply and passes it on;
//! * on a request route, it answers from what it holds, starting the reply at the hop of the
//!   same download's reply route that leaves its router (LIPSIN's forward FID routes from any
//!   node of the path onwards; here the tail of the source route does), and the request goes
//!   no further; on a miss the request goes on to the publisher.
//!
//! Only mmTP routes cross caches; TCP and UDP routes never do.

use pathpool_core::hash::FxHashMap;
use pathpool_proto::mmtp::ChunkCache;
use pathpool_topo::{EdgeId, Graph};

/// One router's cache.
#[derive(Clone, Debug)]
pub(crate) struct SimCache {
    /// The router's name (for results).
    pub(crate) node: String,
    /// The cache; the simulator carries no payload, so nothing is kept with a chunk.
    pub(crate) cache: ChunkCache<()>,
}

/// What a cache does with the packets of one route hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CacheRole {
    /// A reply route: keep the reply.
    Store,
    /// A request route: answer a hit with a reply that starts at this position of the
    /// download's reply route.
    Answer { reply_from: u32 },
}

/// A cache hop of a route: the download whose route it is, and the role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CacheHop {
    pub(crate) conn: u32,
    pub(crate) role: CacheRole,
}

/// Every cache hop of the route table, by position.
#[derive(Clone, Debug, Default)]
pub(crate) struct CacheHops(FxHashMap<u32, CacheHop>);

impl CacheHops {
    /// The cache hop at route-table position `at`.
    #[inline]
    pub(crate) fn get(&self, at: u32) -> Option<CacheHop> {
        self.0.get(&at).copied()
    }

    /// Registers the cache hops of a download's request route (starting at `request_start`)
    /// and reply route (at `reply_start`), built by [`mmtp_hops`].
    pub(crate) fn register(
        &mut self,
        conn: u32,
        request: &MmtpHops,
        request_start: u32,
        reply: &MmtpHops,
        reply_start: u32,
    ) {
        for &(i, _) in &reply.caches {
            let role = CacheRole::Store;
            self.0.insert(reply_start + i, CacheHop { conn, role });
        }
        for &(i, cache) in &request.caches {
            // The reverse path crosses the forward path's nodes, so the same cache sits on
            // the reply route; its answer leaves from the hop after it there.
            let Some(&(j, _)) = reply.caches.iter().find(|&&(_, c)| c == cache) else {
                continue;
            };
            let role = CacheRole::Answer {
                reply_from: reply_start + j + 1,
            };
            self.0.insert(request_start + i, CacheHop { conn, role });
        }
    }
}

/// The hops of an mmTP route, with where its caches are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MmtpHops {
    /// Element of each hop: links, caches, and last the endpoint.
    pub(crate) hops: Vec<u32>,
    /// Position in `hops` and element of each cache.
    pub(crate) caches: Vec<(u32, u32)>,
}

/// The hops of an mmTP route over `edges` ending at element `end`: each link's element
/// (`edge_elem`), and after each link into a router with a cache (`node_cache`, by node) other
/// than the route's last node, that cache's element.
pub(crate) fn mmtp_hops(
    edges: &[EdgeId],
    graph: &Graph,
    edge_elem: &[u32],
    node_cache: &[Option<u32>],
    end: u32,
) -> MmtpHops {
    let mut out = MmtpHops {
        hops: Vec::with_capacity(edges.len() + 1),
        caches: Vec::new(),
    };
    for (k, &e) in edges.iter().enumerate() {
        out.hops.push(edge_elem[e.0 as usize]);
        let into = graph.ends(e).1;
        if k + 1 < edges.len() {
            if let Some(cache) = node_cache.get(into.0 as usize).copied().flatten() {
                out.caches.push((out.hops.len() as u32, cache));
                out.hops.push(cache);
            }
        }
    }
    out.hops.push(end);
    out
}
