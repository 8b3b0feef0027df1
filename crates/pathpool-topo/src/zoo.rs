//! Topology import: Internet Topology Zoo GML files and the Topology Zoo JSON files of the
//! `topohub` Python package, read into one neutral [`Topology`] (thesis E7: the domain-scale
//! simulations run on 15 Topology Zoo networks, Table 4.2).
//!
//! A [`Topology`] is an undirected simple graph: self-loops and parallel links are dropped on
//! construction and counted (decision D50). It converts to a directed [`Graph`] with two edges
//! per link, gives each link a propagation delay from its length or its ends' coordinates
//! ([`DelayModel`], decision D49) and lists its access nodes, the nodes of degree 1 (thesis
//! E7).

use std::collections::{HashMap, HashSet};
use std::fmt;

use pathpool_core::Dur;

use crate::graph::{Graph, NodeIx};

/// Mean Earth radius in km (IUGG), used by [`great_circle_km`].
pub const EARTH_RADIUS_KM: f64 = 6371.0;

/// Deepest list nesting a GML file may have; deeper input is rejected rather than risk
/// exhausting the stack (Topology Zoo files nest three deep).
const MAX_GML_DEPTH: usize = 64;

/// An error reading a topology, naming the line where the input has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    /// The 1-based line of the input the error is about, when known.
    pub line: Option<usize>,
    /// What was wrong or expected.
    pub message: String,
}

impl ImportError {
    fn at(line: usize, message: impl Into<String>) -> Self {
        ImportError {
            line: Some(line),
            message: message.into(),
        }
    }
    fn new(message: impl Into<String>) -> Self {
        ImportError {
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for ImportError {}

/// A node of a [`Topology`].
#[derive(Clone, Debug, PartialEq)]
pub struct TopoNode {
    /// The node's label (GML `label`, topohub `name`), or its id when it has none.
    pub name: String,
    /// Latitude and longitude in degrees, when known.
    pub lat_lon: Option<(f64, f64)>,
}

/// An undirected link of a [`Topology`] between nodes `a` and `b` (indices into
/// [`Topology::nodes`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TopoLink {
    /// One end.
    pub a: usize,
    /// The other end.
    pub b: usize,
    /// The link's length in km when the source gives it (topohub's `dist`).
    pub length_km: Option<f64>,
}

/// How link propagation delays are derived (decision D49).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelayModel {
    /// Signal propagation speed in km/s.
    pub speed_km_per_s: f64,
    /// The delay of a link whose length is unknown (neither a given length nor coordinates
    /// for both ends).
    pub fallback: Dur,
}

impl DelayModel {
    /// Light in optical fibre: about 2/3 of c, 200 000 km/s (5 µs per km).
    pub const DEFAULT_SPEED_KM_PER_S: f64 = 200_000.0;
    /// 5 ms: the delay the thesis gives every intra-AS link in its Topology Zoo simulations
    /// (thesis E7).
    pub const DEFAULT_FALLBACK: Dur = Dur::from_ms(5);

    /// The propagation delay over `km` kilometres, rounded to the nearest picosecond.
    #[must_use]
    pub fn delay_for_km(&self, km: f64) -> Dur {
        Dur::from_secs_f64(km / self.speed_km_per_s)
    }
}

impl Default for DelayModel {
    fn default() -> Self {
        DelayModel {
            speed_km_per_s: Self::DEFAULT_SPEED_KM_PER_S,
            fallback: Self::DEFAULT_FALLBACK,
        }
    }
}

/// The great-circle distance in km between two points given as (latitude, longitude) in
/// degrees, by the haversine formula on a sphere of radius [`EARTH_RADIUS_KM`]. Uses `libm`,
/// so results are identical on every platform.
#[must_use]
pub fn great_circle_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (lat1, lat2) = (a.0.to_radians(), b.0.to_radians());
    let d_lat = lat2 - lat1;
    let d_lon = (b.1 - a.1).to_radians();
    let s_lat = libm::sin(d_lat / 2.0);
    let s_lon = libm::sin(d_lon / 2.0);
    let h = s_lat * s_lat + libm::cos(lat1) * libm::cos(lat2) * s_lon * s_lon;
    2.0 * EARTH_RADIUS_KM * libm::asin(libm::sqrt(h.min(1.0)))
}

/// An undirected network without self-loops or parallel links.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    name: String,
    nodes: Vec<TopoNode>,
    links: Vec<TopoLink>,
    dropped_self_loops: usize,
    dropped_parallel_links: usize,
}

impl Topology {
    /// A topology from its nodes and links, in order. Self-loops are dropped; of several
    /// links between the same two nodes (in either orientation) the first is kept, with its
    /// orientation and length (decision D50). The numbers dropped are kept.
    ///
    /// # Errors
    /// If a link names a node that does not exist, or has a negative or non-finite length, or
    /// a node has coordinates out of range.
    pub fn new(
        name: impl Into<String>,
        nodes: Vec<TopoNode>,
        links: impl IntoIterator<Item = TopoLink>,
    ) -> Result<Topology, ImportError> {
        for (i, node) in nodes.iter().enumerate() {
            if let Some(pos) = node.lat_lon {
                check_lat_lon(pos)
                    .map_err(|m| ImportError::new(format!("node {i} ({:?}): {m}", node.name)))?;
            }
        }
        let mut kept = Vec::new();
        let mut seen = HashSet::new();
        let (mut self_loops, mut parallel) = (0, 0);
        for (i, link) in links.into_iter().enumerate() {
            if link.a >= nodes.len() || link.b >= nodes.len() {
                return Err(ImportError::new(format!(
                    "link {i} joins nodes {} and {}, but there are {} nodes",
                    link.a,
                    link.b,
                    nodes.len()
                )));
            }
            if let Some(km) = link.length_km {
                if !(km.is_finite() && km >= 0.0) {
                    return Err(ImportError::new(format!("link {i} has length {km} km")));
                }
            }
            if link.a == link.b {
                self_loops += 1;
            } else if seen.insert((link.a.min(link.b), link.a.max(link.b))) {
                kept.push(link);
            } else {
                parallel += 1;
            }
        }
        Ok(Topology {
            name: name.into(),
            nodes,
            links: kept,
            dropped_self_loops: self_loops,
            dropped_parallel_links: parallel,
        })
    }

    /// The network's name (GML graph `label`, topohub graph `name`; may be empty).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The nodes, in input order.
    #[must_use]
    pub fn nodes(&self) -> &[TopoNode] {
        &self.nodes
    }
    /// The links kept, in input order.
    #[must_use]
    pub fn links(&self) -> &[TopoLink] {
        &self.links
    }
    /// How many self-loops the input had (dropped).
    #[must_use]
    pub fn dropped_self_loops(&self) -> usize {
        self.dropped_self_loops
    }
    /// How many links the input had beyond the first between the same two nodes (dropped).
    #[must_use]
    pub fn dropped_parallel_links(&self) -> usize {
        self.dropped_parallel_links
    }
    /// The number of links of each node.
    #[must_use]
    pub fn degrees(&self) -> Vec<usize> {
        let mut deg = vec![0; self.nodes.len()];
        for l in &self.links {
            deg[l.a] += 1;
            deg[l.b] += 1;
        }
        deg
    }
    /// The access nodes: the nodes of degree 1, in increasing order (thesis E7: "Access Node
    /// (AN) = node of degree 1"; clients attach there).
    #[must_use]
    pub fn access_nodes(&self) -> Vec<usize> {
        let deg = self.degrees();
        (0..self.nodes.len()).filter(|&i| deg[i] == 1).collect()
    }
    /// Density 2|E| / (|N|(|N| − 1)), the fraction of node pairs that are linked (thesis
    /// E7); 0 with fewer than two nodes.
    #[must_use]
    pub fn density(&self) -> f64 {
        let n = self.nodes.len() as f64;
        if n < 2.0 {
            return 0.0;
        }
        2.0 * self.links.len() as f64 / (n * (n - 1.0))
    }
    /// The length of link `i` in km: the length the source gave, else the great-circle
    /// distance between its ends when both have coordinates, else `None`.
    ///
    /// # Panics
    /// If `i` is not a link index.
    #[must_use]
    pub fn link_length_km(&self, i: usize) -> Option<f64> {
        let l = &self.links[i];
        l.length_km.or_else(|| {
            let a = self.nodes[l.a].lat_lon?;
            let b = self.nodes[l.b].lat_lon?;
            Some(great_circle_km(a, b))
        })
    }
    /// The propagation delay of link `i`: its length over the model's speed, or the model's
    /// fallback when the length is unknown. Co-located ends give zero.
    ///
    /// # Panics
    /// If `i` is not a link index.
    #[must_use]
    pub fn link_delay(&self, i: usize, model: &DelayModel) -> Dur {
        self.link_length_km(i)
            .map_or(model.fallback, |km| model.delay_for_km(km))
    }
    /// The directed graph: node `i` is `NodeIx(i)`, link `i` from `a` to `b` becomes edge
    /// `2i` (a → b) and edge `2i + 1` (b → a).
    #[must_use]
    pub fn to_graph(&self) -> Graph {
        let mut g = Graph::with_nodes(self.nodes.len());
        for l in &self.links {
            g.add_edge(NodeIx(l.a as u32), NodeIx(l.b as u32));
            g.add_edge(NodeIx(l.b as u32), NodeIx(l.a as u32));
        }
        g
    }
    /// The propagation delay of every edge of [`Topology::to_graph`], indexed by edge id.
    #[must_use]
    pub fn edge_delays(&self, model: &DelayModel) -> Vec<Dur> {
        (0..self.links.len())
            .flat_map(|i| {
                let d = self.link_delay(i, model);
                [d, d]
            })
            .collect()
    }
}

fn check_lat_lon((lat, lon): (f64, f64)) -> Result<(), String> {
    if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
        return Err(format!(
            "latitude {lat} and longitude {lon} are not a position (expected −90..90, −180..180)"
        ));
    }
    Ok(())
}

// ---- GML ----

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Key(String),
    Int(i64),
    Real(f64),
    Str(String),
    Open,
    Close,
}

fn describe(t: Option<&(Tok, usize)>) -> String {
    match t.map(|t| &t.0) {
        None => "the end of the input".into(),
        Some(Tok::Key(k)) => format!("the key '{k}'"),
        Some(Tok::Int(i)) => format!("the number {i}"),
        Some(Tok::Real(r)) => format!("the number {r}"),
        Some(Tok::Str(s)) => format!("the string {s:?}"),
        Some(Tok::Open) => "'['".into(),
        Some(Tok::Close) => "']'".into(),
    }
}

/// Splits GML text into tokens with their lines. GML (Himsolt, "GML: A portable Graph File
/// Format") is a list of `key value` pairs; a value is an integer, a real, a string in double
/// quotes (which may span lines and has no escape for `"`) or a list in brackets. `#` starts a
/// comment running to the end of the line.
fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, ImportError> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            '#' => while chars.next_if(|&(_, c)| c != '\n').is_some() {},
            '[' => out.push((Tok::Open, line)),
            ']' => out.push((Tok::Close, line)),
            '"' => {
                let first = line;
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None => {
                            return Err(ImportError::at(first, "a string is not closed by '\"'"))
                        }
                        Some((_, '"')) => break,
                        Some((_, c)) => {
                            if c == '\n' {
                                line += 1;
                            }
                            s.push(c);
                        }
                    }
                }
                out.push((Tok::Str(decode_entities(&s)), first));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut end = start + c.len_utf8();
                while let Some((i, c)) =
                    chars.next_if(|&(_, c)| c.is_ascii_alphanumeric() || c == '_')
                {
                    end = i + c.len_utf8();
                }
                out.push((Tok::Key(text[start..end].to_string()), line));
            }
            c if c.is_ascii_digit() || matches!(c, '-' | '+' | '.') => {
                let mut end = start + 1;
                while let Some((i, _)) = chars.next_if(|&(_, c)| {
                    c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')
                }) {
                    end = i + 1;
                }
                let word = &text[start..end];
                let tok = if let Ok(i) = word.parse::<i64>() {
                    Tok::Int(i)
                } else {
                    match word.parse::<f64>() {
                        Ok(r) if r.is_finite() => Tok::Real(r),
                        _ => {
                            return Err(ImportError::at(
                                line,
                                format!("expected a number, found '{word}'"),
                            ))
                        }
                    }
                };
                out.push((tok, line));
            }
            c => {
                return Err(ImportError::at(
                    line,
                    format!("unexpected character {c:?} (expected a key, a value, '[' or ']')"),
                ))
            }
        }
    }
    Ok(out)
}

/// Replaces the character references Topology Zoo files use (`&amp;`, `&#34;`, …) by their
/// characters; anything else is kept as written.
fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        // Entity names are short: look for the ';' among the next few characters only, so a
        // long string full of '&' stays linear.
        let semicolon = rest.char_indices().take(12).find(|&(_, c)| c == ';');
        let decoded = semicolon.and_then(|(j, _)| {
            let name = &rest[1..j];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => name
                    .strip_prefix('#')
                    .and_then(|n| match n.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => n.parse().ok(),
                    })
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, j + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[derive(Debug)]
enum Value {
    Int(i64),
    Real(f64),
    Str(String),
    List(Vec<Entry>),
}

#[derive(Debug)]
struct Entry {
    key: String,
    value: Value,
    line: usize,
}

/// Parses `key value` pairs from `toks[*pos..]` up to the `]` closing a list opened on line
/// `open` (or to the end of the input at the top level, `open == None`).
fn parse_list(
    toks: &[(Tok, usize)],
    pos: &mut usize,
    open: Option<(usize, &str)>,
    depth: usize,
) -> Result<Vec<Entry>, ImportError> {
    let mut entries = Vec::new();
    loop {
        let here = toks.get(*pos);
        let key = match (here, open) {
            (None, None) => return Ok(entries),
            (None, Some((line, key))) => {
                return Err(ImportError::at(
                    toks.last().map_or(line, |t| t.1),
                    format!("expected ']' to close '{key} [' opened on line {line}, found the end of the input"),
                ))
            }
            (Some((Tok::Close, _)), Some(_)) => {
                *pos += 1;
                return Ok(entries);
            }
            (Some((Tok::Key(k), _)), _) => k.clone(),
            (Some((_, line)), _) => {
                return Err(ImportError::at(
                    *line,
                    format!("expected a key, found {}", describe(here)),
                ))
            }
        };
        let line = here.map_or(0, |t| t.1);
        *pos += 1;
        let value = match toks.get(*pos) {
            Some((Tok::Int(i), _)) => Value::Int(*i),
            Some((Tok::Real(r), _)) => Value::Real(*r),
            Some((Tok::Str(s), _)) => Value::Str(s.clone()),
            Some((Tok::Open, _)) => {
                if depth >= MAX_GML_DEPTH {
                    return Err(ImportError::at(
                        line,
                        format!("lists nest deeper than {MAX_GML_DEPTH} levels"),
                    ));
                }
                *pos += 1;
                Value::List(parse_list(toks, pos, Some((line, &key)), depth + 1)?)
            }
            other => {
                return Err(ImportError::at(
                    other.map_or(line, |t| t.1),
                    format!("expected a value after '{key}', found {}", describe(other)),
                ))
            }
        };
        if !matches!(value, Value::List(_)) {
            *pos += 1;
        }
        entries.push(Entry { key, value, line });
    }
}

fn find<'a>(entries: &'a [Entry], key: &str) -> Option<&'a Entry> {
    entries.iter().find(|e| e.key == key)
}

/// A node or edge end id, as text: GML ids are integers, but strings are accepted (so `0` and
/// `"0"` are the same id).
fn id_of(e: &Entry, what: &str) -> Result<String, ImportError> {
    match &e.value {
        Value::Int(i) => Ok(i.to_string()),
        Value::Str(s) => Ok(s.clone()),
        _ => Err(ImportError::at(
            e.line,
            format!("expected an integer {what}, found {}", kind(&e.value)),
        )),
    }
}

fn number_of(e: &Entry) -> Result<f64, ImportError> {
    match e.value {
        Value::Int(i) => Ok(i as f64),
        Value::Real(r) => Ok(r),
        _ => Err(ImportError::at(
            e.line,
            format!(
                "expected a number for '{}', found {}",
                e.key,
                kind(&e.value)
            ),
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Int(_) => "an integer",
        Value::Real(_) => "a real",
        Value::Str(_) => "a string",
        Value::List(_) => "a list",
    }
}

/// Reads an Internet Topology Zoo GML file: the first `graph [ ... ]`, its `node [ id label
/// Latitude Longitude ]` and `edge [ source target ]` lists. Other keys, at any depth, are
/// ignored; a node's name is its `label`, or its id without one. Links are undirected whatever
/// the graph's `directed` key says (each direction of a link is a parallel link, dropped:
/// decision D50). GML gives no link lengths; delays come from the coordinates.
///
/// # Errors
/// With the line and what was expected, on malformed GML (unclosed lists or strings, a key
/// without a value, bad numbers), a missing `graph`, a node without an integer `id` or with a
/// duplicate one, a node with only one coordinate or coordinates out of range, or an edge
/// whose `source` or `target` is missing or not a node id. Never panics.
pub fn parse_gml(text: &str) -> Result<Topology, ImportError> {
    let toks = tokenize(text)?;
    let mut pos = 0;
    let top = parse_list(&toks, &mut pos, None, 0)?;
    let graph = find(&top, "graph")
        .ok_or_else(|| ImportError::new("expected 'graph [ ... ]' at the top level, found none"))?;
    let Value::List(entries) = &graph.value else {
        return Err(ImportError::at(
            graph.line,
            format!(
                "expected 'graph' to be a list '[ ... ]', found {}",
                kind(&graph.value)
            ),
        ));
    };
    let name = match find(entries, "label").map(|e| &e.value) {
        Some(Value::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let mut nodes = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut edges = Vec::new();
    for e in entries {
        let list = match (&e.value, e.key.as_str()) {
            (Value::List(list), "node" | "edge") => list,
            (v, "node" | "edge") => {
                return Err(ImportError::at(
                    e.line,
                    format!("expected '{} [ ... ]', found {}", e.key, kind(v)),
                ))
            }
            _ => continue,
        };
        if e.key == "node" {
            let id = find(list, "id")
                .ok_or_else(|| ImportError::at(e.line, "expected an 'id' in this node"))?;
            let id = id_of(id, "node id")?;
            let name = match find(list, "label").map(|l| &l.value) {
                Some(Value::Str(s)) => s.clone(),
                Some(Value::Int(i)) => i.to_string(),
                Some(Value::Real(r)) => r.to_string(),
                _ => id.clone(),
            };
            let lat = find(list, "Latitude").map(number_of).transpose()?;
            let lon = find(list, "Longitude").map(number_of).transpose()?;
            let lat_lon = match (lat, lon) {
                (Some(lat), Some(lon)) => {
                    check_lat_lon((lat, lon)).map_err(|m| ImportError::at(e.line, m))?;
                    Some((lat, lon))
                }
                (None, None) => None,
                _ => {
                    return Err(ImportError::at(
                        e.line,
                        "expected both 'Latitude' and 'Longitude' or neither",
                    ))
                }
            };
            if index.insert(id.clone(), nodes.len()).is_some() {
                return Err(ImportError::at(
                    e.line,
                    format!("node id {id} is used by an earlier node"),
                ));
            }
            nodes.push(TopoNode { name, lat_lon });
        } else {
            let end = |key: &str| -> Result<String, ImportError> {
                let v = find(list, key).ok_or_else(|| {
                    ImportError::at(e.line, format!("expected a '{key}' in this edge"))
                })?;
                id_of(v, key)
            };
            edges.push((end("source")?, end("target")?, e.line));
        }
    }
    let mut links = Vec::with_capacity(edges.len());
    for (source, target, line) in edges {
        let node = |id: &str, what: &str| {
            index.get(id).copied().ok_or_else(|| {
                ImportError::at(line, format!("edge {what} {id} is not the id of a node"))
            })
        };
        links.push(TopoLink {
            a: node(&source, "source")?,
            b: node(&target, "target")?,
            length_km: None,
        });
    }
    Topology::new(name, nodes, links)
}

// ---- topohub JSON ----

/// Reads a Topology Zoo file of the `topohub` Python package (`topohub/data/topozoo/NAME.json`):
/// a networkx node-link document with `nodes` `[{id, name, pos: [longitude, latitude]}]` and
/// `edges` (or networkx's default `links`) `[{source, target, dist}]`, `dist` in km. Ids may be
/// strings or numbers; `name`, `pos` and `dist` are optional; other keys are ignored. Links
/// are undirected whatever `directed` says, and parallel links are dropped whatever
/// `multigraph` says (decision D50). A link's `dist` is its length (topohub computes it from
/// the coordinates, on a sphere of radius 6372.8 km); without one it comes from the
/// coordinates. topohub's networks are cleaned versions of the Zoo's GML files: nodes without
/// coordinates are left out with their links, and parallel links are merged (decision D51).
///
/// # Errors
/// On invalid JSON (with serde_json's line and column), or when `nodes` or `edges` is missing
/// or an element has the wrong shape, naming the element (`edges[3]`). Never panics.
pub fn parse_topohub_json(text: &str) -> Result<Topology, ImportError> {
    use serde_json::Value as J;
    let doc: J =
        serde_json::from_str(text).map_err(|e| ImportError::new(format!("invalid JSON: {e}")))?;
    let J::Object(doc) = doc else {
        return Err(ImportError::new("expected a JSON object at the top level"));
    };
    let name = doc
        .get("graph")
        .and_then(|g| g.get("name"))
        .and_then(J::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(J::Array(raw_nodes)) = doc.get("nodes") else {
        return Err(ImportError::new("expected an array 'nodes'"));
    };
    let Some(J::Array(raw_edges)) = doc.get("edges").or_else(|| doc.get("links")) else {
        return Err(ImportError::new("expected an array 'edges' (or 'links')"));
    };
    let id_text = |v: &J| match v {
        J::String(s) => Some(s.clone()),
        J::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let mut nodes = Vec::with_capacity(raw_nodes.len());
    let mut index = HashMap::new();
    for (i, n) in raw_nodes.iter().enumerate() {
        let at = |m: &str| ImportError::new(format!("nodes[{i}]: {m}"));
        let id = n
            .get("id")
            .and_then(id_text)
            .ok_or_else(|| at("expected an 'id' (string or number)"))?;
        let name = match n.get("name") {
            None | Some(J::Null) => id.clone(),
            Some(J::String(s)) => s.clone(),
            Some(_) => return Err(at("expected 'name' to be a string")),
        };
        let lat_lon = match n.get("pos") {
            None | Some(J::Null) => None,
            Some(J::Array(p)) if p.len() == 2 => match (p[0].as_f64(), p[1].as_f64()) {
                (Some(lon), Some(lat)) => Some((lat, lon)),
                _ => return Err(at("expected 'pos' to be [longitude, latitude]")),
            },
            Some(_) => return Err(at("expected 'pos' to be [longitude, latitude]")),
        };
        if index.insert(id.clone(), i).is_some() {
            return Err(at(&format!("node id {id:?} is used by an earlier node")));
        }
        nodes.push(TopoNode { name, lat_lon });
    }
    let mut links = Vec::with_capacity(raw_edges.len());
    for (i, e) in raw_edges.iter().enumerate() {
        let at = |m: &str| ImportError::new(format!("edges[{i}]: {m}"));
        let end = |key: &str| {
            let id = e
                .get(key)
                .and_then(id_text)
                .ok_or_else(|| at(&format!("expected a '{key}' node id")))?;
            index
                .get(&id)
                .copied()
                .ok_or_else(|| at(&format!("'{key}' {id:?} is not the id of a node")))
        };
        let length_km = match e.get("dist") {
            None | Some(J::Null) => None,
            Some(d) => Some(
                d.as_f64()
                    .ok_or_else(|| at("expected 'dist' to be a number of km"))?,
            ),
        };
        links.push(TopoLink {
            a: end("source")?,
            b: end("target")?,
            length_km,
        });
    }
    Topology::new(name, nodes, links)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::EdgeId;
    use proptest::prelude::*;

    /// A small GML file in the Topology Zoo style with what the parser must cope with:
    /// comments, unknown keys at every level, nested lists, strings with spaces, an entity,
    /// a node without coordinates, a parallel link (both orientations) and a self-loop.
    const GML: &str = r#"# written by hand for the tests
graph [
  DateObtained "14/01/11"
  Network "Test Net"
  label "Testnet"
  hierarchic 1
  extra [ nested [ deeper 1 ] list "a b" ]
  node [
    id 0
    label "Amsterdam &amp; Co"
    Country "Netherlands"
    Longitude 4.88969
    Internal 1
    Latitude 52.37403
  ]
  node [
    id 1
    label "London"
    Longitude -0.12574
    Latitude 51.50853
    graphics [ x 1.5 y -2 ]
  ]
  node [
    id 2
    label "Nowhere"
    Internal 0
  ]
  node [ id 3 Latitude 48.85341 Longitude 2.3488 ]
  edge [ source 0 target 1 LinkLabel "10 Gbps" id "e0" ]
  edge [ source 1 target 0 ]
  edge [ source 1 target 2 ]
  edge [ source 2 target 2 ]
  edge [ source 3 target 0 ]
]
"#;

    #[test]
    fn gml_fixture() {
        let t = parse_gml(GML).unwrap();
        assert_eq!(t.name(), "Testnet");
        let names: Vec<&str> = t.nodes().iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["Amsterdam & Co", "London", "Nowhere", "3"]);
        assert_eq!(t.nodes()[0].lat_lon, Some((52.37403, 4.88969)));
        assert_eq!(t.nodes()[2].lat_lon, None);
        let ends: Vec<(usize, usize)> = t.links().iter().map(|l| (l.a, l.b)).collect();
        assert_eq!(ends, [(0, 1), (1, 2), (3, 0)]);
        assert_eq!((t.dropped_parallel_links(), t.dropped_self_loops()), (1, 1));
        assert_eq!(t.degrees(), [2, 2, 1, 1]);
        assert_eq!(t.access_nodes(), [2, 3]);
        assert!((t.density() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn graph_and_delays() {
        let t = parse_gml(GML).unwrap();
        let g = t.to_graph();
        assert_eq!((g.node_count(), g.edge_count()), (4, 6));
        assert_eq!(g.ends(EdgeId(2)), (NodeIx(1), NodeIx(2)));
        assert_eq!(g.ends(EdgeId(3)), (NodeIx(2), NodeIx(1)));
        // Amsterdam–London: 356.93 km on the sphere (the haversine formula evaluated
        // independently in Python), 1.785 ms at 200 000 km/s.
        let km = t.link_length_km(0).unwrap();
        assert!((km - 356.930_636).abs() < 1e-5, "{km}");
        let model = DelayModel::default();
        let d = t.link_delay(0, &model);
        assert!((d.as_secs_f64() - km / 200_000.0).abs() < 1e-12);
        // Nowhere has no coordinates: the fallback.
        assert_eq!(t.link_length_km(1), None);
        assert_eq!(t.link_delay(1, &model), Dur::from_ms(5));
        let delays = t.edge_delays(&model);
        assert_eq!(delays.len(), 6);
        assert_eq!((delays[0], delays[1], delays[2]), (d, d, Dur::from_ms(5)));
        let slow = DelayModel {
            speed_km_per_s: 100_000.0,
            fallback: Dur::from_ms(1),
        };
        assert_eq!(slow.delay_for_km(100.0), Dur::from_ms(1));
        assert_eq!(t.link_delay(1, &slow), Dur::from_ms(1));
    }

    #[test]
    fn great_circle_distances() {
        assert_eq!(great_circle_km((10.0, 20.0), (10.0, 20.0)), 0.0);
        // A quarter of a meridian and half the equator.
        let quarter = std::f64::consts::FRAC_PI_2 * EARTH_RADIUS_KM;
        assert!((great_circle_km((0.0, 0.0), (90.0, 0.0)) - quarter).abs() < 1e-9);
        assert!((great_circle_km((0.0, -90.0), (0.0, 90.0)) - 2.0 * quarter).abs() < 1e-9);
        assert!((great_circle_km((0.0, 179.5), (0.0, -179.5)) - quarter / 90.0).abs() < 1e-9);
    }

    fn gml_error(text: &str) -> (Option<usize>, String) {
        let e = parse_gml(text).unwrap_err();
        (e.line, e.message)
    }

    #[test]
    fn gml_errors_name_the_line() {
        let (line, msg) = gml_error("graph [\n node [ id 0 ]\n node [ id 1\n");
        assert_eq!(line, Some(3));
        assert!(
            msg.contains("expected ']' to close 'node [' opened on line 3"),
            "{msg}"
        );
        let (line, msg) = gml_error("graph [\n node [ id 0 ]\n edge [ source 0 target 7 ]\n]");
        assert_eq!(line, Some(3));
        assert_eq!(msg, "edge target 7 is not the id of a node");
        let (line, msg) = gml_error("graph [\n node [ label \"x\" ]\n]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(2), "expected an 'id' in this node")
        );
        let (line, msg) = gml_error("graph [\n node [ id 0 ]\n node [ id 0 ]\n]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(3), "node id 0 is used by an earlier node")
        );
        let (line, msg) = gml_error("graph [\n node [ id 0 Latitude 1.0 ]\n]");
        assert_eq!(line, Some(2));
        assert!(msg.contains("both 'Latitude' and 'Longitude'"));
        let (line, msg) = gml_error("graph [\n node [ id 0 Latitude 91 Longitude 0 ]\n]");
        assert_eq!(line, Some(2));
        assert!(msg.contains("not a position"), "{msg}");
        let (line, msg) = gml_error("graph [\n\n label \"never closed\n ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(3), "a string is not closed by '\"'")
        );
        let (line, msg) = gml_error("graph [ x 1.2.3 ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(1), "expected a number, found '1.2.3'")
        );
        let (line, msg) = gml_error("graph [ node [ id 0 ]\n edge [ source 0 ]\n]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(2), "expected a 'target' in this edge")
        );
        let (line, msg) = gml_error("graph [\n label ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(2), "expected a value after 'label', found ']'")
        );
        let (line, msg) = gml_error("graph [ 12 ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(1), "expected a key, found the number 12")
        );
        let (line, msg) = gml_error("graph [ ] ]");
        assert_eq!((line, msg.as_str()), (Some(1), "expected a key, found ']'"));
        let (line, msg) = gml_error("graph [ node 3 ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(1), "expected 'node [ ... ]', found an integer")
        );
        let (line, msg) = gml_error("creator \"x\"");
        assert_eq!(line, None);
        assert!(msg.contains("'graph [ ... ]'"));
        let (line, _) = gml_error("graph [ a ! ]");
        assert_eq!(line, Some(1));
        let deep = "graph [ ".to_string() + &"a [ ".repeat(100) + &"] ".repeat(101);
        assert!(gml_error(&deep).1.contains("nest deeper"));
    }

    #[test]
    fn gml_ids_and_labels_are_flexible() {
        let t = parse_gml(
            "graph [ directed 1 node [ id \"a\" ] node [ id -4 label 12 ] \
             edge [ source \"a\" target -4 ] edge [ target \"a\" source -4 ] ]",
        )
        .unwrap();
        assert_eq!(t.nodes()[0].name, "a");
        assert_eq!(t.nodes()[1].name, "12");
        assert_eq!(t.links().len(), 1);
        assert_eq!(t.dropped_parallel_links(), 1);
        assert_eq!(
            decode_entities("a &#34;T&#34; &#x41; &bogus; & &amp"),
            "a \"T\" A &bogus; & &amp"
        );
    }

    /// A topohub file cut down by hand: string ids, [lon, lat] positions, `dist` in km and
    /// the extra keys topohub writes.
    const JSON: &str = r#"{
"directed": false,
"multigraph": false,
"graph": {"name": "tiny", "demands": {}, "stats": {"nodes": 3}},
"nodes": [
  {"name": "Houston", "pos": [-95.36, 29.76], "id": "0"},
  {"name": "Princeton", "pos": [-74.66, 40.35], "id": "1"},
  {"id": "2"}
],
"edges": [
  {"dist": 2174.5, "ecmp_fwd": {"uni": 1.0}, "source": "0", "target": "1"},
  {"source": "2", "target": "1"},
  {"source": "1", "target": "0", "dist": 1.0},
  {"source": "2", "target": "2"}
]
}"#;

    #[test]
    fn topohub_fixture() {
        let t = parse_topohub_json(JSON).unwrap();
        assert_eq!(t.name(), "tiny");
        assert_eq!(t.nodes()[0].lat_lon, Some((29.76, -95.36)));
        assert_eq!(t.nodes()[2].name, "2");
        assert_eq!(t.links().len(), 2);
        assert_eq!((t.dropped_parallel_links(), t.dropped_self_loops()), (1, 1));
        assert_eq!(t.link_length_km(0), Some(2174.5));
        // 2174.5 km at 200 000 km/s.
        assert_eq!(
            t.link_delay(0, &DelayModel::default()),
            Dur::from_ns(10_872_500)
        );
        assert_eq!(t.access_nodes(), [0, 2]);
        // networkx's default key for links, numeric ids.
        let t = parse_topohub_json(
            r#"{"nodes": [{"id": 1}, {"id": 2}], "links": [{"source": 1, "target": 2}]}"#,
        )
        .unwrap();
        assert_eq!(t.links().len(), 1);
        assert_eq!(t.link_delay(0, &DelayModel::default()), Dur::from_ms(5));
    }

    #[test]
    fn topohub_errors_name_the_element() {
        let err = |s: &str| parse_topohub_json(s).unwrap_err().to_string();
        assert!(err("{").starts_with("invalid JSON: "));
        assert_eq!(err("[]"), "expected a JSON object at the top level");
        assert_eq!(err(r#"{"edges": []}"#), "expected an array 'nodes'");
        assert_eq!(
            err(r#"{"nodes": []}"#),
            "expected an array 'edges' (or 'links')"
        );
        assert_eq!(
            err(r#"{"nodes": [{"name": "x"}], "edges": []}"#),
            "nodes[0]: expected an 'id' (string or number)"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id": 0, "pos": [1]}], "edges": []}"#),
            "nodes[0]: expected 'pos' to be [longitude, latitude]"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id": 0}], "edges": [{"source": 0, "target": 1}]}"#),
            "edges[0]: 'target' \"1\" is not the id of a node"
        );
        assert_eq!(
            err(
                r#"{"nodes": [{"id": 0}, {"id": 1}], "edges": [{"source": 0, "target": 1, "dist": -2}]}"#
            ),
            "link 0 has length -2 km"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id": 0, "pos": [200, 0]}], "edges": []}"#),
            "node 0 (\"0\"): latitude 0 and longitude 200 are not a position (expected −90..90, −180..180)"
        );
    }

    #[test]
    fn topology_new_checks_links() {
        let node = || TopoNode {
            name: String::new(),
            lat_lon: None,
        };
        let link = |a, b| TopoLink {
            a,
            b,
            length_km: None,
        };
        let e = Topology::new("x", vec![node(), node()], [link(0, 2)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "link 0 joins nodes 0 and 2, but there are 2 nodes"
        );
        let t = Topology::new("x", vec![node()], []).unwrap();
        assert_eq!(t.density(), 0.0);
        assert!(t.access_nodes().is_empty());
    }

    /// Words garbled GML is made of.
    const GML_WORDS: &[&str] = &[
        "graph",
        "node",
        "edge",
        "id",
        "source",
        "target",
        "label",
        "Latitude",
        "Longitude",
        "[",
        "]",
        "0",
        "1",
        "-3.5e2",
        "\"",
        "\"a b\"",
        "#",
        "\n",
        "&#",
        "1e999",
        "é",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        #[test]
        fn gml_never_panics_on_arbitrary_text(s in "\\PC*") {
            let _ = parse_gml(&s);
        }

        #[test]
        fn gml_never_panics_on_gml_like_tokens(
            toks in proptest::collection::vec(
                proptest::sample::select(GML_WORDS),
                0..60,
            )
        ) {
            let _ = parse_gml(&toks.join(" "));
        }

        #[test]
        fn gml_never_panics_on_a_garbled_fixture(
            cuts in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..8),
        ) {
            let mut bytes = GML.as_bytes().to_vec();
            for (at, b) in cuts {
                let i = at.index(bytes.len());
                match b % 3 {
                    0 => { bytes.remove(i); }
                    1 => bytes[i] = b"[]\"#0-. x\n"[usize::from(b) % 10],
                    _ => bytes.truncate(i),
                }
                if bytes.is_empty() {
                    break;
                }
            }
            let _ = parse_gml(&String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn topohub_never_panics(s in "\\PC*") {
            let _ = parse_topohub_json(&s);
        }
    }
}
