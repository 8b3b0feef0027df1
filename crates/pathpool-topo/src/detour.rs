//! One-hop detours (INRPP document §2, §3.3 and §3.9): a detour of the link from `r` to `n`
//! is a path `r → d → n` through a neighbour `d` of `r` that is also a neighbour of `n`, a
//! triangle that a link-state protocol shows `r` from its neighbours' adjacencies. Only
//! one-hop detours are considered (§3.1).
//!
//! The INRPP router's detour interface table (the document's Table 4) and the detour census
//! of Rocketfuel maps (its Table 1, [`crate::census`]) both come from here.

use crate::Topology;

/// The sorted neighbour lists of an undirected graph: `adjacency[u]` are the nodes linked
/// with `u`, in increasing order, each once.
#[must_use]
pub fn adjacency(topology: &Topology) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); topology.nodes().len()];
    for l in topology.links() {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    for list in &mut adj {
        list.sort_unstable();
        list.dedup();
    }
    adj
}

/// The detour nodes of the link between `u` and `v`: their common neighbours, in increasing
/// order (`u` and `v` themselves excluded).
///
/// # Panics
/// If `u` or `v` is not a node of `adjacency`.
#[must_use]
pub fn detour_nodes(adjacency: &[Vec<usize>], u: usize, v: usize) -> Vec<usize> {
    let (a, b) = (&adjacency[u], &adjacency[v]);
    let (mut i, mut j) = (0, 0);
    let mut common = Vec::new();
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                if a[i] != u && a[i] != v {
                    common.push(a[i]);
                }
                i += 1;
                j += 1;
            }
        }
    }
    common
}

/// The number of one-hop detours of each link of `topology`, in link order.
#[must_use]
pub fn detour_counts(topology: &Topology) -> Vec<usize> {
    let adj = adjacency(topology);
    topology
        .links()
        .iter()
        .map(|l| detour_nodes(&adj, l.a, l.b).len())
        .collect()
}

/// One row of a router's detour interface table (the document's Table 4): the neighbour a
/// primary output interface leads to and the neighbours whose interfaces carry its detours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DetourRow {
    /// The primary next hop.
    pub primary: usize,
    /// The detour next hops, in increasing order; empty when the link has no detour (the
    /// table's "Null").
    pub detours: Vec<usize>,
}

/// The detour interface table of `router`: one row per neighbour, in increasing order.
///
/// # Panics
/// If `router` is not a node of `adjacency`.
#[must_use]
pub fn detour_table(adjacency: &[Vec<usize>], router: usize) -> Vec<DetourRow> {
    adjacency[router]
        .iter()
        .map(|&n| DetourRow {
            primary: n,
            detours: detour_nodes(adjacency, router, n),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TopoLink, TopoNode};

    fn topology(n: usize, links: &[(usize, usize)]) -> Topology {
        let nodes = (0..n)
            .map(|i| TopoNode {
                name: i.to_string(),
                lat_lon: None,
            })
            .collect();
        let links = links.iter().map(|&(a, b)| TopoLink {
            a,
            b,
            length_km: None,
        });
        Topology::new("t", nodes, links).unwrap()
    }

    /// The document's Fig. 3 and Table 4: router r reaches n on interface 1, d on interface
    /// 2 and a third neighbour x on interface 3; d and n are linked, x is linked to nothing
    /// else. Interface 1's detour is interface 2 (r → d → n), interface 2's is interface 1
    /// (r → n → d), interface 3 has none.
    #[test]
    fn table_4_from_figure_3() {
        let (r, n, d, x) = (0, 1, 2, 3);
        let t = topology(4, &[(r, n), (r, d), (r, x), (d, n)]);
        let adj = adjacency(&t);
        assert_eq!(
            detour_table(&adj, r),
            [
                DetourRow {
                    primary: n,
                    detours: vec![d]
                },
                DetourRow {
                    primary: d,
                    detours: vec![n]
                },
                DetourRow {
                    primary: x,
                    detours: vec![]
                },
            ]
        );
        assert_eq!(detour_counts(&t), [1, 1, 0, 1]);
    }

    #[test]
    fn a_complete_graph_gives_every_link_all_other_nodes() {
        let mut links = Vec::new();
        for a in 0..5 {
            for b in a + 1..5 {
                links.push((a, b));
            }
        }
        let t = topology(5, &links);
        let adj = adjacency(&t);
        assert!(detour_counts(&t).iter().all(|&c| c == 3));
        assert_eq!(detour_nodes(&adj, 4, 1), [0, 2, 3]);
    }
}
