//! Topology import: Internet Topology Zoo GML files, the Topology Zoo JSON files of the
//! `topohub` Python package and Rocketfuel ISP maps, read into one neutral [`Topology`]
//! (thesis E7: the domain-scale simulations run on 15 Topology Zoo networks, Table 4.2; the
//! INRPP document's detour census runs on nine Rocketfuel maps, its Table 1).
//!
//! A [`Topology`] is an undirected simple graph: self-loops and parallel links are dropped on
//! construction and counted (decision D50). It converts to a directed [`Graph`] with two edges
//! per link, gives each link a propagation delay from its length or its ends' coordinates
//! ([`DelayModel`], decision D49) and lists its access nodes, the nodes of degree 1 (thesis
//! E7).

use std::collections::HashSet;
use std::fmt;

use pathpool_core::Dur;

use crate::graph::{Graph, NodeIx};

mod gml;
mod rocketfuel;
mod topohub;

pub use gml::parse_gml;
pub use rocketfuel::{parse_rocketfuel, RocketfuelMap};
pub use topohub::parse_topohub_json;

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

/// A position's latitude and longitude, checked (both file formats give them).
fn check_lat_lon((lat, lon): (f64, f64)) -> Result<(), String> {
    if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
        return Err(format!(
            "latitude {lat} and longitude {lon} are not a position (expected −90..90, −180..180)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn great_circle_distances() {
        assert_eq!(great_circle_km((10.0, 20.0), (10.0, 20.0)), 0.0);
        // A quarter of a meridian and half the equator.
        let quarter = std::f64::consts::FRAC_PI_2 * EARTH_RADIUS_KM;
        assert!((great_circle_km((0.0, 0.0), (90.0, 0.0)) - quarter).abs() < 1e-9);
        assert!((great_circle_km((0.0, -90.0), (0.0, 90.0)) - 2.0 * quarter).abs() < 1e-9);
        assert!((great_circle_km((0.0, 179.5), (0.0, -179.5)) - quarter / 90.0).abs() < 1e-9);
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
}
