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
//! security = "on"              # default; "off" checks no signature, page or MAC
//! # (a publisher node's entry also gives public_key = "ed25519:<64 hex>")
//!
//! security = "on"             # wire version 2's checks (default on; docs/security.md)
//! overlay_key = "overlay.key"  # the overlay key file, beside this file (`pathpool keygen`)
//!
//! [[nodes]]
//! id = "p1"
//! public_key = "ed25519:…"     # the publisher's key (written by `pathpool keygen`)
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
use std::path::Path;

use pathpool_core::text::line_col;
use pathpool_core::{ByteSize, Dur, Rate};
use pathpool_psi::{TmSpec, TopologyManager};
use pathpool_topo::{EdgeId, Fid, Graph, NodeIx};
use pathpool_wire::auth::{OverlayKey, PublicKey};
use serde::Deserialize;

use crate::emulation::LinkEmulation;
pub use crate::security::SecurityMode;
use crate::security::{ForwardLimits, SecurityFields, SecuritySettings};

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
    #[serde(default)]
    security: Option<SecurityMode>,
    #[serde(default)]
    overlay_key: Option<String>,
    #[serde(default)]
    max_skew: Option<Dur>,
    #[serde(default)]
    publish_ttl: Option<Dur>,
    #[serde(default)]
    ticket_lifetime: Option<Dur>,
    #[serde(default)]
    max_publications_per_node: Option<usize>,
    #[serde(default)]
    max_publications: Option<usize>,
    #[serde(default)]
    max_fill: Option<f64>,
    #[serde(default)]
    max_hop_limit: Option<u8>,
}

/// Where [`Overlay`]'s constructors get the overlay key.
enum KeySource<'a> {
    /// None (the overlay cannot run with security on).
    Absent,
    /// This key.
    Given(OverlayKey),
    /// The overlay file's `overlay_key` entry, relative to this overlay file.
    File(&'a Path),
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
    #[serde(default)]
    public_key: Option<String>,
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

/// An overlay file that cannot be used: where and why, written as a scenario's errors are
/// (`file:line:col: links[2].rate: what is wrong`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlayError {
    /// The file (or the name the text was given under).
    pub source: String,
    /// 1-based line of the value at fault, when it could be located.
    pub line: Option<usize>,
    /// 1-based column.
    pub column: Option<usize>,
    /// The field, such as `links[2].between[1]` (empty for the whole file).
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for OverlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        pathpool_core::text::write_located(
            f,
            &self.source,
            self.line,
            self.column,
            &self.path,
            &self.message,
        )
    }
}

/// The line and column of the value at `path` (`links[2].between[1]`) in TOML `text`, or of
/// the deepest part of it that exists. (The simulator's scenario loader locates its fields
/// the same way.)
fn locate(text: &str, path: &str) -> Option<(usize, usize)> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut item = doc.as_item();
    let mut span = None;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, indices) = part.split_once('[').unwrap_or((part, ""));
        let mut steps: Vec<Result<usize, &str>> = vec![Err(name)];
        steps.extend(
            indices
                .split('[')
                .filter_map(|i| i.trim_end_matches(']').parse().ok())
                .map(Ok),
        );
        for step in steps {
            let next = match step {
                Err(k) => item.get(k),
                Ok(i) => item.get(i),
            };
            let Some(next) = next else {
                return span.map(|s: std::ops::Range<usize>| line_col(text, s.start));
            };
            item = next;
            let here = match item {
                toml_edit::Item::Value(v) => v.span(),
                toml_edit::Item::Table(t) => t.span(),
                toml_edit::Item::ArrayOfTables(a) => a.span(),
                toml_edit::Item::None => None,
            };
            span = here.or(span);
        }
    }
    span.map(|s| line_col(text, s.start))
}

/// A path as serde_path_to_error records it, written as users do: `links[2].rate`.
fn format_path(p: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut s = String::new();
    for seg in p.iter() {
        match seg {
            Segment::Seq { index } => s.push_str(&format!("[{index}]")),
            Segment::Map { key } => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(key);
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    s
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
    /// Its publisher key (`public_key = "ed25519:<hex>"`), which checks the metadata it signs.
    pub public_key: Option<PublicKey>,
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
    security: SecuritySettings,
    forward_limits: ForwardLimits,
    key: Option<OverlayKey>,
}

impl Overlay {
    /// Reads an overlay file's text; `source` names it in errors. No key is read: with
    /// security on, nodes refuse to run on it (use [`Overlay::load`] or
    /// [`Overlay::from_toml_with_key`]).
    ///
    /// # Errors
    /// Bad TOML, unknown or mistyped fields (with line and column), and unknown nodes,
    /// duplicate ids, addresses or links, self-links, bad emulation, `tm` or security settings
    /// (with the field's path).
    pub fn from_toml(text: &str, source: &str) -> Result<Overlay, OverlayError> {
        Self::build(text, source, KeySource::Absent)
    }

    /// As [`from_toml`](Self::from_toml), with `key` as the overlay key (tests, and tools
    /// that hold the key already). Ignored with `security = "off"`.
    ///
    /// # Errors
    /// As [`from_toml`](Self::from_toml).
    pub fn from_toml_with_key(
        text: &str,
        source: &str,
        key: OverlayKey,
    ) -> Result<Overlay, OverlayError> {
        Self::build(text, source, KeySource::Given(key))
    }

    /// Reads the overlay file `path` and, with security on, its overlay key.
    ///
    /// # Errors
    /// As [`from_toml`](Self::from_toml); the file unreadable; with security on, the key file
    /// missing (the error says to run `pathpool keygen --overlay FILE`), readable by others,
    /// or malformed.
    pub fn load(path: &Path) -> Result<Overlay, OverlayError> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| OverlayError {
            source: source.clone(),
            line: None,
            column: None,
            path: String::new(),
            message: e.to_string(),
        })?;
        Self::build(&text, &source, KeySource::File(path))
    }

    fn build(text: &str, source: &str, key: KeySource<'_>) -> Result<Overlay, OverlayError> {
        let err = |path: String, message: String| {
            let (line, column) = locate(text, &path).unzip();
            OverlayError {
                source: source.to_string(),
                line,
                column,
                path,
                message,
            }
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map(|s| line_col(text, s.start)).unzip();
            OverlayError {
                source: source.to_string(),
                line,
                column,
                path: String::new(),
                message: e.message().trim().to_string(),
            }
        })?;
        let spec: OverlaySpec = serde_path_to_error::deserialize(toml::Value::Table(table))
            .map_err(|e| {
                let message = e.inner().message().trim().to_string();
                let message = pathpool_core::text::UnknownName::parse(&message)
                    .map_or_else(|| message.clone(), |u| u.message());
                let mut path = format_path(e.path());
                let missing = message.starts_with("missing field");
                // A missing field is the containing table's; its line is the table's.
                if missing {
                    path.clear();
                }
                err(path, message)
            })?;
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
                let all = spec.nodes.iter().map(|n| n.id.as_str());
                let meant = pathpool_core::text::closest(name, all.clone())
                    .map_or(String::new(), |m| format!(" (did you mean {m:?}?)"));
                let mut names: Vec<&str> = all.take(12).collect();
                if spec.nodes.len() > 12 {
                    names.push("...");
                }
                err(
                    location,
                    format!(
                        "unknown node {name:?}{meant}; nodes are {}",
                        names.join(", ")
                    ),
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
                queue_packets: u64::MAX,
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
        let (security, forward_limits) = SecurityFields {
            security: spec.security,
            overlay_key: spec.overlay_key.clone(),
            max_skew: spec.max_skew,
            publish_ttl: spec.publish_ttl,
            ticket_lifetime: spec.ticket_lifetime,
            max_publications_per_node: spec.max_publications_per_node,
            max_publications: spec.max_publications,
            max_fill: spec.max_fill,
            max_hop_limit: spec.max_hop_limit,
        }
        .validate(spec.nodes.len())
        .map_err(|(field, message)| err(field.into(), message))?;
        let key = match (security.mode, key) {
            (SecurityMode::Off, _) | (_, KeySource::Absent) => None,
            (SecurityMode::On, KeySource::Given(k)) => Some(k),
            (SecurityMode::On, KeySource::File(overlay_file)) => {
                let file = crate::keys::overlay_dir(overlay_file).join(&security.overlay_key_file);
                Some(crate::keys::read_overlay_key(&file).map_err(|e| {
                    err(
                        "overlay_key".into(),
                        format!(
                            "{e}; `pathpool keygen --overlay {}` creates the keys                              (or set security = \"off\")",
                            overlay_file.display()
                        ),
                    )
                })?)
            }
        };
        // With the key, link tags depend on a secret: FIDs cannot be computed without it
        // (D165).
        config.lipsin_seed = key
            .as_ref()
            .map_or(spec.lipsin_seed, |k| k.lipsin_seed() ^ spec.lipsin_seed);
        if let Some(k) = spec.lipsin_k {
            config.lipsin_k = k;
        }
        let mut tm = TopologyManager::new(graph, rates, delays, config)
            .map_err(|e| err("lipsin_k".into(), e.to_string()))?;
        for (i, n) in spec.nodes.iter().enumerate() {
            tm.set_transit(NodeIx(i as u32), n.transit)
                .map_err(|e| err(format!("nodes[{i}]"), e.to_string()))?;
            if let Some(k) = &n.public_key {
                PublicKey::parse(k)
                    .map_err(|e| err(format!("nodes[{i}].public_key"), e.to_string()))?;
            }
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
        let mut public_keys = Vec::with_capacity(spec.nodes.len());
        for (i, n) in spec.nodes.iter().enumerate() {
            public_keys.push(
                n.public_key
                    .as_deref()
                    .map(PublicKey::parse)
                    .transpose()
                    .map_err(|e| err(format!("nodes[{i}].public_key"), e.to_string()))?,
            );
        }
        Ok(Overlay {
            nodes: spec
                .nodes
                .into_iter()
                .zip(public_keys)
                .map(|(n, public_key)| OverlayNode {
                    id: n.id,
                    addr: n.addr,
                    transit: n.transit,
                    cache_bytes: n.cache.map(ByteSize::bytes),
                    public_key,
                })
                .collect(),
            links,
            rendezvous,
            paths_per_publisher,
            tm,
            security,
            forward_limits,
            key,
        })
    }

    /// The security settings.
    #[must_use]
    pub fn security(&self) -> &SecuritySettings {
        &self.security
    }

    /// The overlay key, when security is on and it was loaded.
    #[must_use]
    pub fn overlay_key(&self) -> Option<&OverlayKey> {
        self.key.as_ref()
    }

    /// The forwarding bounds of every node.
    #[must_use]
    pub fn forward_limits(&self) -> ForwardLimits {
        self.forward_limits
    }

    /// Whether the overlay authenticates what it carries (`security`, default on).
    #[must_use]
    pub fn security_mode(&self) -> SecurityMode {
        self.security.mode
    }

    /// Sets the security mode (tests and benchmarks).
    pub fn set_security(&mut self, mode: SecurityMode) {
        self.security.mode = mode;
    }

    /// The publisher key of `node`, if the overlay file gives one.
    #[must_use]
    pub fn public_key(&self, node: NodeIx) -> Option<&PublicKey> {
        self.nodes.get(node.0 as usize)?.public_key.as_ref()
    }

    /// Gives `node` the publisher key `key` (tests and the testbed).
    pub fn set_public_key(&mut self, node: NodeIx, key: PublicKey) {
        if let Some(n) = self.nodes.get_mut(node.0 as usize) {
            n.public_key = Some(key);
        }
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

    /// The nodes a packet sent from `from` on `fid` visits until it reaches `to` (both
    /// included), following at each node the one outgoing link, other than back, whose tag the
    /// FID contains, as the forwarding nodes do; `None` if that is not one unambiguous route
    /// (a false positive of the Bloom filter, or a FID of another topology).
    #[must_use]
    pub fn route_of(&self, from: NodeIx, to: NodeIx, fid: &Fid) -> Option<Vec<NodeIx>> {
        let mut route = vec![from];
        let mut here = from;
        while here != to {
            if route.len() > self.nodes.len() {
                return None;
            }
            let previous = route.len().checked_sub(2).map(|i| route[i]);
            let mut next = self
                .node_links(here)
                .into_iter()
                .filter(|l| Some(l.peer) != previous && fid.contains(&l.tag));
            let step = next.next()?;
            if next.next().is_some() {
                return None;
            }
            here = step.peer;
            route.push(here);
        }
        Some(route)
    }
}

#[cfg(test)]
#[path = "overlay_tests.rs"]
mod tests;
