//! mmTP downloads (`kind = "mmtp"`) and the routers' chunk caches they use: a subscriber and
//! its publishers as one element pair, with a request and a reply route per path of the
//! topology manager (thesis §4.1–4.2, §5).

use std::collections::{HashMap, HashSet};

use pathpool_core::{BufferSize, RttConfig, Time};
use pathpool_proto::mmtp::{
    ChunkCache, ContentId, Subscriber, SubscriberConfig, DEFAULT_BACKOFF_LIMIT,
};

use super::entry::Entry;
use super::net::{topology_manager, Net};
use super::tcp_params::{element_tcp_spec, resolve_tcp};
use super::{at, child, ix, k};
use crate::cache::{mmtp_hops, SimCache};
use crate::error::{format_path, PathSeg, SpecError};
use crate::mmtp_flow::{MmtpConn, MmtpPath, Outage};
use crate::packet::MAX_SUBFLOWS;
use crate::sim::{FlowMeta, Simulation, SubflowMeta};
use crate::spec::{FlowKind, MmtpFlowSpec, MmtpSpec, Scenario, TmSpec};
use crate::tm_control::{Download, PathKey};

/// Each content named so far: its size and chunk size, and the entry that first gave them.
pub(super) type Contents = HashMap<String, (u64, u32, Vec<PathSeg>)>;

/// The routers' chunk caches (`caches`), as elements between the links and the flows (so a
/// scenario without caches keeps its element indices, which order simultaneous events).
pub(super) fn add_caches(
    sim: &mut Simulation,
    net: &mut Net,
    sc: &Scenario,
    skip: &HashSet<usize>,
) -> Result<(), SpecError> {
    net.cache = vec![None; net.names.len()];
    for (i, c) in sc.caches.iter().enumerate() {
        if skip.contains(&i) {
            continue;
        }
        let here = at(&[k("caches"), ix(i)]);
        let n = net.node(&c.node, child(&here, "node"))?;
        if net.is_host[n.0 as usize] {
            return Err(SpecError::at(
                child(&here, "node"),
                format!(
                    "{:?} is a host; caches sit at routers, which forward the packets they see",
                    c.node
                ),
            ));
        }
        if net.cache[n.0 as usize].is_some() {
            return Err(SpecError::at(
                child(&here, "node"),
                format!("{:?} has a cache already", c.node),
            ));
        }
        if c.capacity.0 == 0 {
            return Err(SpecError::at(
                child(&here, "capacity"),
                "must be positive, e.g. \"10MB\"",
            ));
        }
        net.cache[n.0 as usize] = Some(sim.elements.add_cache(SimCache {
            node: c.node.clone(),
            cache: ChunkCache::new(c.capacity.0),
        }));
    }
    Ok(())
}

/// The subscriber's parameters from `mm` (at `path`), its retransmission timer `rtt`'s.
pub(super) fn subscriber_config(
    mm: &MmtpSpec,
    mut rtt: RttConfig,
    path: &[PathSeg],
) -> Result<SubscriberConfig, SpecError> {
    if mm.gap_threshold == Some(0) {
        return Err(SpecError::at(
            child(path, "gap_threshold"),
            "must be at least 1 reply",
        ));
    }
    // mmTP's own bound on the backoff (D117): a silent source is probed, not given up on.
    rtt.backoff_limit = Some(mm.backoff_limit.unwrap_or(DEFAULT_BACKOFF_LIMIT));
    let initial_window_chunks = mm.initial_window_chunks.unwrap_or(1);
    if initial_window_chunks == 0 {
        return Err(SpecError::at(
            child(path, "initial_window_chunks"),
            "must be at least 1",
        ));
    }
    Ok(SubscriberConfig {
        rtt,
        initial_window_chunks,
        first_chunk_with_metadata: mm.first_chunk_with_metadata.unwrap_or(true),
        selection: mm.selection.unwrap_or_default(),
        gap_threshold: mm.gap_threshold,
    })
}

/// An mmTP download (`kind = "mmtp"`), or `count` copies: a subscriber at `to` pulling
/// `size` bytes from the publishers (`from` or `sources`) over the topology manager's paths
/// (`tm`, default one shortest path per publisher), one subflow per path in the group the
/// manager assigns (thesis §4.2, §5). Chunks are `tcp.mss` bytes; requests and replies carry
/// `tcp.header` bytes of header.
pub(super) fn add_mmtp_flows(
    sim: &mut Simulation,
    entry: &Entry<'_>,
    f: &MmtpFlowSpec,
    ids: &mut HashSet<String>,
    contents: &mut Contents,
) -> Result<(), SpecError> {
    let (net, sc, here) = (entry.net, entry.sc, entry.here());
    let field = |name: &str| entry.field(name);
    let c = &f.common;
    let publishers: Vec<String> = match (&f.sources, c.from.is_empty()) {
        (Some(_), false) => {
            return Err(SpecError::at(
                field("sources"),
                "give either from (one publisher) or sources, not both",
            ))
        }
        (Some(list), true) if list.is_empty() => {
            return Err(SpecError::at(
                field("sources"),
                "give at least one publisher",
            ))
        }
        (Some(list), true) => list.clone(),
        (None, true) => {
            return Err(SpecError::at(
                field("from"),
                "missing: the publisher (or a list in sources)",
            ))
        }
        (None, false) => vec![c.from.clone()],
    };
    let to = net.host(&c.to, field("to"))?;
    let mut sources = Vec::with_capacity(publishers.len());
    for (i, name) in publishers.iter().enumerate() {
        let place = if f.sources.is_some() {
            let mut p = field("sources");
            p.push(ix(i));
            p
        } else {
            field("from")
        };
        // A publisher may be a router: a server at a node inside the network (thesis E7
        // places servers at AS nodes, decision D68); it keeps forwarding others' packets.
        let n = net.node(name, place.clone())?;
        if n == to {
            return Err(SpecError::at(place, "a publisher cannot be the subscriber"));
        }
        if sources.contains(&n) {
            return Err(SpecError::at(place, format!("{name:?} is listed twice")));
        }
        sources.push(n);
    }
    entry.starts_in_time(c)?;
    let mut outages = Vec::new();
    for (i, o) in f.outages.iter().flatten().enumerate() {
        let mut place = field("outages");
        place.push(ix(i));
        let Some(src) = publishers.iter().position(|n| *n == o.source) else {
            return Err(SpecError::at(
                child(&place, "source"),
                format!(
                    "{:?} is not a source of this download ({})",
                    o.source,
                    publishers.join(", ")
                ),
            ));
        };
        if o.stop <= o.start {
            return Err(SpecError::at(child(&place, "stop"), "must be after start"));
        }
        outages.push(Outage {
            source: src as u32,
            start: Time::ZERO + o.start,
            stop: Time::ZERO + o.stop,
        });
    }
    let spec = element_tcp_spec(sc, f.tcp.as_ref(), f.cc);
    let mut params = resolve_tcp(&spec, &field("tcp"))?;
    let mm = f.mmtp.clone().unwrap_or_default();
    if mm.max_routes.is_some() {
        return Err(SpecError::at(
            child(&field("mmtp"), "max_routes"),
            "is for mmTP over NDN (kind = \"ndn\", transport = \"mmtp\"); the topology \
             manager gives a download's paths (tm)",
        ));
    }
    let config = subscriber_config(&mm, params.sender.rtt, &field("mmtp"))?;
    let chunk_bytes = params.sender.mss;
    if chunk_bytes > u64::from(u32::MAX) {
        return Err(SpecError::at(
            child(&field("tcp"), "mss"),
            "too large for a chunk",
        ));
    }
    // WindowConfig counts segments: one chunk is one segment.
    params.window.initial_window = u64::from(config.initial_window_chunks);
    let size = match f.size {
        None => {
            return Err(SpecError::at(
                field("size"),
                "an mmTP download needs the content's size, e.g. size = \"12MB\"",
            ))
        }
        Some(BufferSize::Packets(n)) => n * chunk_bytes,
        Some(BufferSize::Bytes(b)) => b,
    };
    if size == 0 || size.div_ceil(chunk_bytes) > u64::from(u32::MAX) {
        return Err(SpecError::at(
            field("size"),
            "must be at least 1 byte and at most 2^32 - 1 chunks",
        ));
    }
    // One path per publisher unless told otherwise (thesis E1: "one overlay path to each").
    let tm = f.tm.clone().unwrap_or(TmSpec {
        k: 1,
        ..TmSpec::default()
    });
    let (manager, _) = topology_manager(net, &tm, &field("tm"))?;
    let set = manager.paths(&sources, to).map_err(|e| {
        SpecError::at(
            field("tm"),
            format!("{e} (paths need duplex links, and never cross another host)"),
        )
    })?;
    if set.paths.len() > MAX_SUBFLOWS as usize {
        return Err(SpecError::at(
            child(&field("tm"), "k"),
            format!("at most {MAX_SUBFLOWS} paths per download"),
        ));
    }
    entry.each_copy(sim, c, ids, |sim, copy| {
        let (id, start) = (copy.id, copy.start);
        let sub_elem = sim.elements.len() as u32;
        let pub_elem = sub_elem + 1;
        let mut paths = Vec::with_capacity(set.paths.len());
        let mut meta = Vec::with_capacity(set.paths.len());
        let conn_index = sim.elements.mmtp_conns.len() as u32;
        for p in &set.paths {
            let hops = |edges, end| mmtp_hops(edges, &net.graph, &net.elem, &net.cache, end);
            let request = hops(&p.reverse, pub_elem);
            let reply = hops(&p.forward, sub_elem);
            let request_route = sim.routes.add(&request.hops);
            let reply_route = sim.routes.add(&reply.hops);
            sim.cache_hops
                .register(conn_index, &request, request_route, &reply, reply_route);
            paths.push(MmtpPath {
                request_route,
                reply_route,
                source: sources.iter().position(|&s| s == p.publisher).unwrap_or(0) as u32,
                group: p.group_id,
                withdrawn: false,
            });
            meta.push(SubflowMeta {
                path: net.node_names(p.publisher, &p.forward),
                group: p.group_id,
                start,
                stop: None,
            });
        }
        if let Some(tm) = sim.tm.as_mut() {
            tm.downloads.push(Download {
                conn: conn_index,
                flow: sim.flows.len() as u32,
                sub_elem,
                pub_elem,
                sources: sources.clone(),
                subscriber: to,
                manager: manager.clone(),
                paths: set
                    .paths
                    .iter()
                    .map(|p| {
                        Some((
                            PathKey {
                                publisher: p.publisher,
                                forward: p.forward.clone(),
                            },
                            p.group_id,
                        ))
                    })
                    .collect(),
            });
        }
        let name = f.content.clone().unwrap_or_else(|| id.clone());
        let named_at = field(if f.content.is_some() { "content" } else { "id" });
        same_content(contents, &name, (size, chunk_bytes as u32), &here, named_at)?;
        let content = ContentId::from_name(&name);
        let conn = MmtpConn::new(
            Subscriber::new(content, config),
            params.cc.build_with(params.window, params.options),
            size,
            chunk_bytes as u32,
            paths,
            outages.clone(),
            params.header as u32,
            start,
        );
        assert_eq!(sim.elements.add_mmtp_conn(conn), (sub_elem, pub_elem));
        sim.flows.push(FlowMeta {
            id,
            kind: FlowKind::Mmtp,
            from: publishers.join(","),
            to: c.to.clone(),
            cc: Some(params.cc.name().to_string()),
            loss_recovery: Some(if mm.gap_threshold.is_some() {
                "mmtp-gap"
            } else {
                "mmtp-timer"
            }),
            start,
            stop: None,
            size: Some(size),
            source: pub_elem,
            sink: sub_elem,
            path: meta[0].path.clone(),
            subflows: meta,
            payload_fraction: chunk_bytes as f64 / (chunk_bytes as f64 + params.header as f64),
            data_route: None,
        });
        Ok(())
    })
}

/// Downloads of one content must agree on what it is: its size and chunk size, as the entry
/// that named it first (at `here`) gave them. A problem is reported at `named_at`.
fn same_content(
    contents: &mut Contents,
    name: &str,
    what: (u64, u32),
    here: &[PathSeg],
    named_at: Vec<PathSeg>,
) -> Result<(), SpecError> {
    match contents.get(name) {
        Some((bytes, chunk, first)) if (*bytes, *chunk) != what => Err(SpecError::at(
            named_at,
            format!(
                "content {name:?} is {bytes} bytes in chunks of {chunk} (given at {}); this \
                 download says {} bytes in chunks of {}: downloads of one content must agree \
                 on its size and tcp.mss",
                format_path(first),
                what.0,
                what.1
            ),
        )),
        Some(_) => Ok(()),
        None => {
            contents.insert(name.to_string(), (what.0, what.1, here.to_vec()));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{compile, diamond, error, ids};
    use crate::spec::FlowKind;

    fn download(extra: &str) -> String {
        diamond(&format!(
            "[[flows]]\nkind = \"mmtp\"\nto = \"b\"\nsize = \"1MB\"\n{extra}"
        ))
    }

    #[test]
    fn a_download_has_one_subflow_per_publisher_path() {
        let sim = compile(&download(
            "id = \"d\"\nsources = [\"a\", \"r2\"]\ncount = 2",
        ));
        assert_eq!(ids(&sim), ["d.0", "d.1"]);
        let f = &sim.flows[0];
        assert_eq!(f.kind, FlowKind::Mmtp);
        assert_eq!(f.from, "a,r2");
        assert_eq!(f.size, Some(1_000_000));
        assert_eq!(f.loss_recovery, Some("mmtp-timer"));
        let paths: Vec<String> = f.subflows.iter().map(|s| s.path.join(" ")).collect();
        assert_eq!(paths, ["a r1 b", "r2 b"]);
        // The subscriber is the sink, the publishers the next element.
        assert_eq!(f.source, f.sink + 1);
        let sim = compile(&download(
            "from = \"a\"\ntm = { k = 2 }\nmmtp = { gap_threshold = 3 }",
        ));
        assert_eq!(sim.flows[0].subflows.len(), 2);
        assert_eq!(sim.flows[0].loss_recovery, Some("mmtp-gap"));
    }

    #[test]
    fn publishers_sizes_and_options_are_checked() {
        let cases = [
            (
                "",
                "flows[0].from: missing: the publisher (or a list in sources)",
            ),
            (
                "from = \"a\"\nsources = [\"a\"]",
                "flows[0].sources: give either from (one publisher) or sources, not both",
            ),
            (
                "sources = []",
                "flows[0].sources: give at least one publisher",
            ),
            (
                "sources = [\"b\"]",
                "flows[0].sources[0]: a publisher cannot be the subscriber",
            ),
            (
                "sources = [\"a\", \"a\"]",
                "flows[0].sources[1]: \"a\" is listed twice",
            ),
            (
                "from = \"a\"\noutages = [{ source = \"r1\", start = \"1s\", stop = \"2s\" }]",
                "flows[0].outages[0].source: \"r1\" is not a source of this download (a)",
            ),
            (
                "from = \"a\"\noutages = [{ source = \"a\", start = \"2s\", stop = \"2s\" }]",
                "flows[0].outages[0].stop: must be after start",
            ),
            (
                "from = \"a\"\nmmtp = { gap_threshold = 0 }",
                "flows[0].mmtp.gap_threshold: must be at least 1 reply",
            ),
            (
                "from = \"a\"\nmmtp = { initial_window_chunks = 0 }",
                "flows[0].mmtp.initial_window_chunks: must be at least 1",
            ),
            (
                "from = \"a\"\nstart = \"10s\"",
                "flows[0].start: 10s is not before the end of the run (10s)",
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(error(&download(extra)), want, "{extra}");
        }
        let e = error(&download("from = \"a\"").replace("size = \"1MB\"\n", ""));
        assert!(
            e.starts_with("flows[0].size: an mmTP download needs the content's size"),
            "{e}"
        );
    }

    #[test]
    fn downloads_of_one_content_agree_on_it() {
        let two = |second: &str| {
            download(&format!(
                "from = \"a\"\ncontent = \"/c\"\n[[flows]]\nkind = \"mmtp\"\nfrom = \"a\"\nto = \"b\"\ncontent = \"/c\"\n{second}"
            ))
        };
        assert_eq!(compile(&two("size = \"1MB\"")).flows.len(), 2);
        let e = error(&two("size = \"2MB\""));
        assert!(
            e.starts_with("flows[1].content: content \"/c\" is 1000000 bytes in chunks of 1460 (given at flows[0]); this download says 2000000 bytes"),
            "{e}"
        );
    }

    #[test]
    fn caches_sit_at_routers_one_each() {
        let cache = |c: &str| download(&format!("from = \"a\"\n{c}"));
        compile(&cache("[[caches]]\nnode = \"r1\"\ncapacity = \"1MB\""));
        let e = error(&cache("[[caches]]\nnode = \"a\"\ncapacity = \"1MB\""));
        assert!(
            e.starts_with("caches[0].node: \"a\" is a host; caches sit at routers"),
            "{e}"
        );
        let e = error(&cache(
            "[[caches]]\nnode = \"r1\"\ncapacity = \"1MB\"\n[[caches]]\nnode = \"r1\"\ncapacity = \"1MB\"",
        ));
        assert_eq!(e, "caches[1].node: \"r1\" has a cache already");
        let e = error(&cache("[[caches]]\nnode = \"r1\"\ncapacity = \"0B\""));
        assert_eq!(e, "caches[0].capacity: must be positive, e.g. \"10MB\"");
        let e = error(&cache("[[caches]]\nnode = \"r9\"\ncapacity = \"1MB\""));
        assert!(e.starts_with("caches[0].node: unknown node \"r9\""), "{e}");
    }
}
