//! The detour census of the INRPP document's Table 1 (spec 001 §2): how many links of a
//! network have one-hop detours, and how many.
//!
//! The document's prose counts both "links" and "edge-to-edge paths", so both readings are
//! computed:
//! - [`link_census`]: the population is the undirected links; a link's count is its number of
//!   one-hop detours (the common neighbours of its ends).
//! - [`path_census`]: the population is one shortest path between every pair of edge routers
//!   (decision D274); a path's count is the number of one-hop detour sub-paths along it, the
//!   sum of its links' counts.
//!
//! Either way the table's second column is the share of the population with a count of at
//! least one, its next five split those by count (1, 2, 3, 4, 5 or more) and its last is the
//! largest number of detours of any one link.

use std::collections::VecDeque;

use crate::detour::{adjacency, detour_counts};
use crate::Topology;

/// One row of Table 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Census {
    /// Links or paths counted.
    pub population: usize,
    /// Those with at least one one-hop detour.
    pub with_detour: usize,
    /// Those with exactly 1, 2, 3, 4 and with 5 or more detours.
    pub by_count: [usize; 5],
    /// The largest number of one-hop detours of a single link.
    pub max_link_detours: usize,
}

impl Census {
    fn from_counts(counts: impl IntoIterator<Item = usize>, max_link_detours: usize) -> Self {
        let mut c = Census {
            population: 0,
            with_detour: 0,
            by_count: [0; 5],
            max_link_detours,
        };
        for k in counts {
            c.population += 1;
            if k > 0 {
                c.with_detour += 1;
                c.by_count[k.min(5) - 1] += 1;
            }
        }
        c
    }

    /// The share of the population with at least one detour, in percent (0 when empty).
    #[must_use]
    pub fn percent_with_detour(&self) -> f64 {
        percent(self.with_detour, self.population)
    }

    /// [`Census::by_count`] as percentages of [`Census::with_detour`] (0 when none).
    #[must_use]
    pub fn percent_by_count(&self) -> [f64; 5] {
        self.by_count.map(|k| percent(k, self.with_detour))
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Table 1 counting links.
#[must_use]
pub fn link_census(topology: &Topology) -> Census {
    let counts = detour_counts(topology);
    let max = counts.iter().copied().max().unwrap_or(0);
    Census::from_counts(counts, max)
}

/// Table 1 counting edge-to-edge paths: for every pair of nodes marked in `edge` that are
/// connected, the shortest path (fewest links) that a breadth-first search from the
/// lower-numbered node finds, exploring neighbours in increasing order (so ties always
/// resolve the same way).
///
/// # Panics
/// If `edge` does not have one entry per node.
#[must_use]
pub fn path_census(topology: &Topology, edge: &[bool]) -> Census {
    assert_eq!(edge.len(), topology.nodes().len(), "one edge flag per node");
    let adj = adjacency(topology);
    let link_counts = detour_counts(topology);
    let max = link_counts.iter().copied().max().unwrap_or(0);
    // The detour count of the link between two nodes, by the lower node's neighbour list.
    let mut count_of: Vec<Vec<usize>> = adj.iter().map(|l| vec![0; l.len()]).collect();
    for (l, &k) in topology.links().iter().zip(&link_counts) {
        for (u, v) in [(l.a, l.b), (l.b, l.a)] {
            let pos = adj[u]
                .binary_search(&v)
                .expect("a link's ends are neighbours");
            count_of[u][pos] = k;
        }
    }
    let n = adj.len();
    let mut path_counts = Vec::new();
    // Detours along the path from the source to each node, or `usize::MAX` while unreached.
    let mut along = vec![usize::MAX; n];
    let mut queue = VecDeque::new();
    for s in (0..n).filter(|&s| edge[s]) {
        along.fill(usize::MAX);
        along[s] = 0;
        queue.push_back(s);
        while let Some(u) = queue.pop_front() {
            for (pos, &v) in adj[u].iter().enumerate() {
                if along[v] == usize::MAX {
                    along[v] = along[u] + count_of[u][pos];
                    queue.push_back(v);
                }
            }
        }
        path_counts.extend(
            (s + 1..n)
                .filter(|&t| edge[t] && along[t] != usize::MAX)
                .map(|t| along[t]),
        );
    }
    Census::from_counts(path_counts, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_rocketfuel;

    /// VSNL (AS 4755), the smallest of the nine maps, as the document lists it: 11 routers,
    /// 12 links and one triangle (456–463–473), whose three links have one detour each.
    const VSNL: &str = "469 bb 471\n468 bb 112\n467 bb 472\n463 bb 456 462 473\n\
                        462 nbb 463\n472 bb 112 456 467\n473 bb 456 463\n470 bb 471\n\
                        471 bb 112 456 469 470\n456 bb 463 471 472 473\n112 bb 468 471 472\n";

    #[test]
    fn vsnl_links_as_in_table_1() {
        let m = parse_rocketfuel("VSNL", VSNL).unwrap();
        let c = link_census(&m.topology);
        assert_eq!(c.population, 12);
        assert_eq!(c.with_detour, 3);
        assert_eq!(format!("{:.2}", c.percent_with_detour()), "25.00");
        assert_eq!(c.percent_by_count(), [100.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(c.max_link_detours, 1);
    }

    /// A square a–b–c–d–a with the diagonal a–c: the diagonal has two detours (b and d),
    /// every side one. Edge routers b and d: their shortest path (b–a–d, found before
    /// b–c–d) crosses two links with one detour each.
    #[test]
    fn path_reading_sums_the_detours_along_one_shortest_path() {
        let m = parse_rocketfuel("sq", "1 bb 2 4 3\n2 nbb 1 3\n3 bb 2 4 1\n4 nbb 3 1\n").unwrap();
        let links = link_census(&m.topology);
        assert_eq!(
            (links.population, links.with_detour, links.by_count),
            (5, 5, [4, 1, 0, 0, 0])
        );
        let edge: Vec<bool> = m.backbone.iter().map(|b| !b).collect();
        let paths = path_census(&m.topology, &edge);
        assert_eq!(
            (paths.population, paths.with_detour, paths.by_count),
            (1, 1, [0, 1, 0, 0, 0])
        );
        assert_eq!(paths.max_link_detours, 2);
    }

    #[test]
    fn unreachable_pairs_and_empty_networks_count_nothing() {
        let m = parse_rocketfuel("two", "1 nbb 2\n2 nbb 1\n3 nbb\n").unwrap();
        let edge = vec![true; 3];
        let p = path_census(&m.topology, &edge);
        assert_eq!((p.population, p.with_detour), (1, 0));
        assert_eq!(p.percent_by_count(), [0.0; 5]);
        let e = parse_rocketfuel("none", "").unwrap();
        assert_eq!(link_census(&e.topology).percent_with_detour(), 0.0);
    }
}
