//! The overlay file: the nodes of a PSI overlay over UDP, the links between them with their
//! optional emulation, and the topology manager's settings. `pathpool rv` computes paths,
//! FIDs and `group_id`s from it with the same [`TopologyManager`] the simulator uses; each
//! forwarding node reads its own links (their LIPSIN tags and neighbours' addresses) from it.
//!
//! ```toml
//! rendezvous = "rv"            # the node running the rendezvous and topology manager
//! lipsin_seed = 1              # optional: seed of the link tags (default 0)
//! lipsin_k = 5                 # optional: bits per tag (default 5)
//! tm = { policy = "k-shortest", k = 2, assistance = "shared-link" }
//!
//! [[nodes]]
//! id = "p1"
//! addr = "127.0.0.1:7001"      # optional for `pathpool testbed`, which assigns loopback ports
//! transit = false              # endpoints do not forward between others (default true)
//! cache = "64MB"               # an on-path chunk cache of this size (forwarding nodes only)
//!
//! [[links]]
//! between = ["p1", "f1"]
//! rate = "20Mbps"              # emulated in both directions; default "inf" (no limit)
//! delay = "10ms"               # default 0
//! loss = 0.01                  # default 0
//! queue = "100KB"              # drop-tail limit; default 1 MB
//! ```

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;

use pathpool_core::text::line_col;
use pathpool_core::{ByteSize, Dur, Rate};
use pathpool_psi::{TmSpec, TopologyManager};
use pathpool_topo::{EdgeId, Fid, Graph, NodeIx};
use serde::Deserialize;

use crate::emulation::LinkEmulation;

/// Most paths per publisher an overlay's topology manager gives (as the simulator's subflow
/// limit).
pub const MAX_PATHS: usize = 8;

/// Default drop-tail limit of an emulated link: 1 MB, about 40 ms at 200 Mb/s.
pub const DEFAULT_QUEUE_BYTES: u64 = 1_000_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OverlaySpec {
    rendezvous: String,
    #[serde(default)]
    lipsin_seed: u64,
    #[serde(default)]
    lipsin_k: Option<u32>,
    #[serde(default)]
    tm: TmSpec,
    nodes: Vec<NodeSpec>,
    #[serde(default)]
    links: Vec<LinkSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeSpec {
    id: String,
    #[serde(default)]
    addr: Option<SocketAddr>,
    #[serde(default = "yes")]
    transit: bool,
    #[serde(default)]
    cache: Option<ByteSize>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkSpec {
    between: [String; 2],
    #[serde(default)]
    rate: Option<Rate>,
    #[serde(default)]
    delay: Option<Dur>,
    #[serde(default)]
    loss: Option<f64>,
    #[serde(default)]
    queue: Option<ByteSize>,
}

/// An overlay file that cannot be used: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlayError {
    /// The file (or the name the text was given under).
    pub source: String,
    /// Where in it: `line L, column C` for syntax and type errors, else a field path such as
    /// `links[2].between[1]`.
    pub location: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for OverlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.source, self.location, self.message)
    }
}

impl std::error::Error for OverlayError {}

/// A node of the overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlayNode {
    /// Its name.
    pub id: String,
    /// Its UDP address, once known.
    pub addr: Option<SocketAddr>,
    /// Whether it forwards packets between others.
    pub transit: bool,
    /// Bytes of its on-path chunk cache, if it has one.
    pub cache_bytes: Option<u64>,
}

/// A link of the overlay: two directed edges, `2i` (from `ends.0`) and `2i + 1`.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlayLink {
    /// Its ends.
    pub ends: (NodeIx, NodeIx),
    /// The emulation applied by the sending node, the same in both directions.
    pub emulation: LinkEmulation,
}

/// One of a node's outgoing links, as its forwarding table holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeLink {
    /// The directed edge.
    pub edge: EdgeId,
    /// The neighbour at its far end.
    pub peer: NodeIx,
    /// The LIPSIN tag a FID must contain for a packet to take this link.
    pub tag: Fid,
    /// The emulation of this direction.
    pub emulation: LinkEmulation,
}

/// A validated overlay with its topology manager.
#[derive(Debug, Clone)]
pub struct Overlay {
    nodes: Vec<OverlayNode>,
    links: Vec<OverlayLink>,
    rendezvous: NodeIx,
    paths_per_publisher: usize,
    tm: TopologyManager,
}

impl Overlay {
    /// Reads an overlay file's text; `source` names it in errors.
    ///
    /// # Errors
    /// Bad TOML, unknown or mistyped fields (with line and column), and unknown nodes,
    /// duplicate ids, addresses or links, self-links, bad emulation or `tm` settings (with the
    /// field's path).
    pub fn from_toml(text: &str, source: &str) -> Result<Overlay, OverlayError> {
        let spec: OverlaySpec = toml::from_str(text).map_err(|e| {
            let location = e.span().map_or_else(
                || "file".to_string(),
                |s| {
                    let (line, col) = line_col(text, s.start);
                    format!("line {line}, column {col}")
                },
            );
            OverlayError {
                source: source.to_string(),
                location,
                message: e.message().to_string(),
            }
        })?;
        let err = |location: String, message: String| OverlayError {
            source: source.to_string(),
            location,
            message,
        };
        if spec.nodes.is_empty() {
            return Err(err("nodes".into(), "an overlay needs nodes".into()));
        }
        let mut index: HashMap<&str, NodeIx> = HashMap::new();
        let mut addrs: HashMap<SocketAddr, &str> = HashMap::new();
        for (i, n) in spec.nodes.iter().enumerate() {
            if n.id.is_empty() {
                return Err(err(format!("nodes[{i}].id"), "must not be empty".into()));
            }
            if index.insert(&n.id, NodeIx(i as u32)).is_some() {
                return Err(err(
                    format!("nodes[{i}].id"),
                    format!("{:?} is used by an earlier node", n.id),
                ));
            }
            if let Some(a) = n.addr {
                if let Some(other) = addrs.insert(a, &n.id) {
                    return Err(err(
                        format!("nodes[{i}].addr"),
                        format!("{a} is already the address of {other:?}"),
                    ));
                }
            }
        }
        let known = |name: &str, location: String| {
            index.get(name).copied().ok_or_else(|| {
                let mut names: Vec<&str> = spec.nodes.iter().map(|n| n.id.as_str()).collect();
                names.truncate(12);
                err(
                    location,
                    format!("unknown node {name:?}; nodes are {}", names.join(", ")),
                )
            })
        };
        let rendezvous = known(&spec.rendezvous, "rendezvous".into())?;
        let mut graph = Graph::with_nodes(spec.nodes.len());
        let mut links = Vec::with_capacity(spec.links.len());
        let mut seen = HashMap::new();
        let (mut rates, mut delays) = (Vec::new(), Vec::new());
        for (i, l) in spec.links.iter().enumerate() {
            let a = known(&l.between[0], format!("links[{i}].between[0]"))?;
            let b = known(&l.between[1], format!("links[{i}].between[1]"))?;
            if a == b {
                return Err(err(
                    format!("links[{i}].between"),
                    "a link joins two different nodes".into(),
                ));
            }
            if let Some(j) = seen.insert((a.min(b), a.max(b)), i) {
                return Err(err(
                    format!("links[{i}].between"),
                    format!("links[{j}] already joins these nodes"),
                ));
            }
            let emulation = LinkEmulation {
                rate: l.rate.unwrap_or(Rate::INFINITE),
                delay: l.delay.unwrap_or(Dur::ZERO),
                loss: l.loss.unwrap_or(0.0),
                queue_bytes: l.queue.map_or(DEFAULT_QUEUE_BYTES, ByteSize::bytes),
            };
            emulation
                .validate()
                .map_err(|e| err(format!("links[{i}].{}", e.field), e.message))?;
            graph.add_edge(a, b);
            graph.add_edge(b, a);
            let rate_bps = if emulation.rate.is_infinite() {
                f64::INFINITY
            } else {
                emulation.rate.bps() as f64
            };
            rates.extend([rate_bps; 2]);
            delays.extend([emulation.delay; 2]);
            links.push(OverlayLink {
                ends: (a, b),
                emulation,
            });
        }
        let (mut config, paths_per_publisher) = spec
            .tm
            .config(MAX_PATHS)
            .map_err(|e| err(format!("tm.{}", e.field), e.message))?;
        config.lipsin_seed = spec.lipsin_seed;
        if let Some(k) = spec.lipsin_k {
            config.lipsin_k = k;
        }
        let mut tm = TopologyManager::new(graph, rates, delays, config)
            .map_err(|e| err("lipsin_k".into(), e.to_string()))?;
        for (i, n) in spec.nodes.iter().enumerate() {
            tm.set_transit(NodeIx(i as u32), n.transit)
                .map_err(|e| err(format!("nodes[{i}]"), e.to_string()))?;
            match n.cache {
                Some(_) if !n.transit => {
                    return Err(err(
                        format!("nodes[{i}].cache"),
                        "only forwarding nodes cache (this node has transit = false)".into(),
                    ))
                }
                Some(c) if c.bytes() == 0 => {
                    return Err(err(
                        format!("nodes[{i}].cache"),
                        "must be positive, e.g. \"64MB\"".into(),
                    ))
                }
                _ => {}
            }
        }
        Ok(Overlay {
            nodes: spec
                .nodes
                .into_iter()
                .map(|n| OverlayNode {
                    id: n.id,
                    addr: n.addr,
                    transit: n.transit,
                    cache_bytes: n.cache.map(ByteSize::bytes),
                })
                .collect(),
            links,
            rendezvous,
            paths_per_publisher,
            tm,
        })
    }

    /// The nodes, indexed by [`NodeIx`].
    #[must_use]
    pub fn nodes(&self) -> &[OverlayNode] {
        &self.nodes
    }

    /// The links; link `i` is the directed edges `2i` and `2i + 1`.
    #[must_use]
    pub fn links(&self) -> &[OverlayLink] {
        &self.links
    }

    /// The node named `id`.
    #[must_use]
    pub fn node(&self, id: &str) -> Option<NodeIx> {
        self.nodes
            .iter()
            .position(|n| n.id == id)
            .map(|i| NodeIx(i as u32))
    }

    /// The node running the rendezvous and topology manager.
    #[must_use]
    pub fn rendezvous(&self) -> NodeIx {
        self.rendezvous
    }

    /// Paths the topology manager gives per publisher (`tm.k`).
    #[must_use]
    pub fn paths_per_publisher(&self) -> usize {
        self.paths_per_publisher
    }

    /// The topology manager, as `pathpool rv` runs it.
    #[must_use]
    pub fn topology_manager(&self) -> &TopologyManager {
        &self.tm
    }

    /// Gives every node without an address one on `ip`, from `first_port` upwards, skipping
    /// ports already given (what `pathpool testbed` does on loopback).
    pub fn assign_addresses(&mut self, ip: std::net::IpAddr, first_port: u16) {
        let taken: Vec<SocketAddr> = self.nodes.iter().filter_map(|n| n.addr).collect();
        let mut port = first_port;
        for n in &mut self.nodes {
            if n.addr.is_some() {
                continue;
            }
            while taken.contains(&SocketAddr::new(ip, port)) {
                port += 1;
            }
            n.addr = Some(SocketAddr::new(ip, port));
            port += 1;
        }
    }

    /// Sets the UDP address of `node`.
    pub fn set_addr(&mut self, node: NodeIx, addr: SocketAddr) {
        if let Some(n) = self.nodes.get_mut(node.0 as usize) {
            n.addr = Some(addr);
        }
    }

    /// The outgoing links of `node`: what its forwarding table holds.
    #[must_use]
    pub fn node_links(&self, node: NodeIx) -> Vec<NodeLink> {
        let g = self.tm.graph();
        g.out_edges(node)
            .iter()
            .map(|&edge| NodeLink {
                edge,
                peer: g.ends(edge).1,
                tag: self.tm.tags().tag(edge),
                emulation: self.links[edge.0 as usize / 2].emulation,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIAMOND: &str = r#"
rendezvous = "s"
lipsin_seed = 3
tm = { policy = "k-disjoint", k = 2 }

[[nodes]]
id = "p"
addr = "127.0.0.1:7000"
transit = false
[[nodes]]
id = "a"
[[nodes]]
id = "b"
[[nodes]]
id = "s"
transit = false

[[links]]
between = ["p", "a"]
rate = "20Mbps"
delay = "5ms"
[[links]]
between = ["p", "b"]
rate = "20Mbps"
loss = 0.01
[[links]]
between = ["a", "s"]
[[links]]
between = ["b", "s"]
queue = "64KB"
"#;

    fn load(text: &str) -> Result<Overlay, OverlayError> {
        Overlay::from_toml(text, "o.toml")
    }

    fn error(text: &str) -> String {
        load(text).unwrap_err().to_string()
    }

    #[test]
    fn a_diamond_gives_two_disjoint_paths_in_two_groups() {
        let o = load(DIAMOND).unwrap();
        assert_eq!(o.nodes().len(), 4);
        assert_eq!(o.rendezvous(), NodeIx(3));
        let p = o.node("p").unwrap();
        let s = o.node("s").unwrap();
        let set = o.topology_manager().paths(&[p], s).unwrap();
        assert_eq!(set.paths.len(), 2);
        assert_ne!(set.paths[0].group_id, set.paths[1].group_id);
        // A forwarding node's table matches the FIDs the topology manager hands out: the
        // forward FID of each path takes exactly that path's link out of p.
        for path in &set.paths {
            let first = path.forward[0];
            let taken: Vec<EdgeId> = o
                .node_links(p)
                .iter()
                .filter(|l| path.forward_fid.contains(&l.tag))
                .map(|l| l.edge)
                .collect();
            assert_eq!(taken, vec![first]);
        }
        let links = o.node_links(p);
        assert_eq!(links.len(), 2);
        assert_eq!(links[0].emulation.rate, Rate::from_mbps(20));
        assert_eq!(links[0].emulation.delay, Dur::from_ms(5));
        assert_eq!(links[1].emulation.loss, 0.01);
        assert_eq!(o.links()[3].emulation.queue_bytes, 64_000);
        assert_eq!(o.links()[2].emulation.queue_bytes, DEFAULT_QUEUE_BYTES);
    }

    #[test]
    fn testbed_addresses_skip_the_given_ones() {
        let mut o = load(DIAMOND).unwrap();
        o.assign_addresses("127.0.0.1".parse().unwrap(), 7000);
        let ports: Vec<u16> = o.nodes().iter().map(|n| n.addr.unwrap().port()).collect();
        assert_eq!(ports, vec![7000, 7001, 7002, 7003]);
    }

    #[test]
    fn errors_name_the_place_and_what_is_allowed() {
        assert_eq!(
            error(&DIAMOND.replace("between = [\"a\", \"s\"]", "between = [\"a\", \"x\"]")),
            "o.toml: links[2].between[1]: unknown node \"x\"; nodes are p, a, b, s"
        );
        assert_eq!(
            error(&DIAMOND.replace("loss = 0.01", "loss = 2.0")),
            "o.toml: links[1].loss: 2 is not a probability in [0, 1]"
        );
        assert_eq!(
            error(&DIAMOND.replace("id = \"b\"", "id = \"a\"")),
            "o.toml: nodes[2].id: \"a\" is used by an earlier node"
        );
        assert_eq!(
            error(&DIAMOND.replace("between = [\"b\", \"s\"]", "between = [\"s\", \"a\"]")),
            "o.toml: links[3].between: links[2] already joins these nodes"
        );
        assert_eq!(
            error(&DIAMOND.replace("between = [\"b\", \"s\"]", "between = [\"b\", \"b\"]")),
            "o.toml: links[3].between: a link joins two different nodes"
        );
        assert_eq!(
            error(&DIAMOND.replace("k = 2", "k = 9")),
            "o.toml: tm.k: must be between 1 and 8"
        );
        assert_eq!(
            error(&DIAMOND.replace("rendezvous = \"s\"", "rendezvous = \"z\"")),
            "o.toml: rendezvous: unknown node \"z\"; nodes are p, a, b, s"
        );
        let typo = error(&DIAMOND.replace("delay = \"5ms\"", "dleay = \"5ms\""));
        assert!(
            typo.starts_with("o.toml: line 21, column 1: unknown field `dleay`"),
            "{typo}"
        );
        let bad_rate =
            error(&DIAMOND.replace("rate = \"20Mbps\"\ndelay", "rate = \"fast\"\ndelay"));
        assert!(
            bad_rate.starts_with("o.toml: line 20, column 8:"),
            "{bad_rate}"
        );
        let dup_addr =
            error(&DIAMOND.replace("id = \"a\"", "id = \"a\"\naddr = \"127.0.0.1:7000\""));
        assert_eq!(
            dup_addr,
            "o.toml: nodes[1].addr: 127.0.0.1:7000 is already the address of \"p\""
        );
        assert_eq!(
            error(&DIAMOND.replace(
                "id = \"s\"\ntransit",
                "id = \"s\"\ncache = \"1MB\"\ntransit"
            )),
            "o.toml: nodes[3].cache: only forwarding nodes cache (this node has transit = false)"
        );
        assert_eq!(
            error(&DIAMOND.replace("id = \"b\"", "id = \"b\"\ncache = \"0B\"")),
            "o.toml: nodes[2].cache: must be positive, e.g. \"64MB\""
        );
        let cached = load(&DIAMOND.replace("id = \"b\"", "id = \"b\"\ncache = \"2MB\"")).unwrap();
        let caches: Vec<_> = cached.nodes().iter().map(|n| n.cache_bytes).collect();
        assert_eq!(caches, [None, None, Some(2_000_000), None]);
    }
}
