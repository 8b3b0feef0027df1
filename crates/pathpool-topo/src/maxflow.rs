//! The maximum flow from a set of sources to one sink, with the least total delay among the
//! maximum flows (issue 22: the "max flow" the PTP paper's utilization is measured against,
//! per link its theoretical load; spec 004 §6).
//!
//! Successive shortest paths on the residual graph (Bellman-Ford, so that the negative
//! costs of reverse edges need no potentials): each augmentation takes the least-delay path
//! that still has room and pushes as much as it holds; with integer capacities it ends at a
//! maximum flow, and one of least Σ flow·delay among them (the minimum-cost flow of that
//! value). Capacities are integers (bits per second) and delays integers (any unit), so
//! every machine computes the same flow.

use crate::graph::{EdgeId, Graph, NodeIx};

/// A maximum flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaxFlow {
    /// Its value: what reaches the sink.
    pub value: u64,
    /// The flow on each edge of the graph, by edge id.
    pub per_edge: Vec<u64>,
}

/// One residual arc: to, remaining capacity, cost, index of its reverse, the graph edge it
/// carries forward (`None` for a reverse arc or the super source's).
#[derive(Clone, Copy, Debug)]
struct Arc {
    to: usize,
    room: u64,
    cost: i64,
    rev: usize,
    edge: Option<EdgeId>,
}

/// An arc from `a` to `b` with `room` and `cost`, and its reverse (no room, −cost).
fn add_arc(
    arcs: &mut [Vec<Arc>],
    (a, b): (usize, usize),
    room: u64,
    cost: i64,
    edge: Option<EdgeId>,
) {
    let (ra, rb) = (arcs[b].len(), arcs[a].len());
    arcs[a].push(Arc {
        to: b,
        room,
        cost,
        rev: ra,
        edge,
    });
    arcs[b].push(Arc {
        to: a,
        room: 0,
        cost: -cost,
        rev: rb,
        edge: None,
    });
}

/// The maximum flow from `sources` to `sink` over `graph`, whose edge e has capacity
/// `capacity[e]` (below `u64::MAX`) and delay `delay[e]`, of least total delay among the
/// maximum flows. A source that is the sink contributes nothing.
///
/// # Panics
/// If `capacity` or `delay` does not have one value per edge.
#[must_use]
pub fn max_flow(
    graph: &Graph,
    capacity: &[u64],
    delay: &[u64],
    sources: &[NodeIx],
    sink: NodeIx,
) -> MaxFlow {
    let m = graph.edge_count();
    assert!(
        capacity.len() == m && delay.len() == m,
        "one capacity and delay per edge"
    );
    let n = graph.node_count() + 1;
    let source = n - 1;
    let mut arcs: Vec<Vec<Arc>> = vec![Vec::new(); n];
    for e in 0..m {
        let id = EdgeId(e as u32);
        let (a, b) = graph.ends(id);
        let cost = i64::try_from(delay[e]).unwrap_or(i64::MAX / 4);
        add_arc(
            &mut arcs,
            (a.0 as usize, b.0 as usize),
            capacity[e],
            cost,
            Some(id),
        );
    }
    for s in sources.iter().filter(|s| **s != sink) {
        add_arc(&mut arcs, (source, s.0 as usize), u64::MAX, 0, None);
    }
    let t = sink.0 as usize;
    let mut value = 0u64;
    loop {
        // Bellman-Ford from the super source over arcs with room.
        let mut dist = vec![i64::MAX; n];
        let mut via: Vec<Option<(usize, usize)>> = vec![None; n];
        dist[source] = 0;
        for _ in 0..n {
            let mut changed = false;
            for u in 0..n {
                if dist[u] == i64::MAX {
                    continue;
                }
                for (k, a) in arcs[u].iter().enumerate() {
                    if a.room > 0 && dist[u] + a.cost < dist[a.to] {
                        dist[a.to] = dist[u] + a.cost;
                        via[a.to] = Some((u, k));
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        if dist[t] == i64::MAX {
            break;
        }
        let mut push = u64::MAX;
        let mut v = t;
        while let Some((u, k)) = via[v] {
            push = push.min(arcs[u][k].room);
            v = u;
        }
        if push == 0 || push == u64::MAX {
            break;
        }
        let mut v = t;
        while let Some((u, k)) = via[v] {
            arcs[u][k].room -= push;
            let (to, rev) = (arcs[u][k].to, arcs[u][k].rev);
            arcs[to][rev].room = arcs[to][rev].room.saturating_add(push);
            v = u;
        }
        value = value.saturating_add(push);
    }
    let mut per_edge = vec![0u64; m];
    for list in &arcs {
        for a in list {
            if let Some(e) = a.edge {
                per_edge[e.0 as usize] = capacity[e.0 as usize] - a.room;
            }
        }
    }
    MaxFlow { value, per_edge }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn graph(n: usize, edges: &[(u32, u32)]) -> Graph {
        let mut g = Graph::with_nodes(n);
        for &(a, b) in edges {
            g.add_edge(NodeIx(a), NodeIx(b));
        }
        g
    }

    #[test]
    fn two_paths_add_up_and_the_faster_is_taken_on_a_tie() {
        // 0 → 1 → 3 (10, 1 ms a hop) and 0 → 2 → 3 (5, 5 ms).
        let g = graph(4, &[(0, 1), (1, 3), (0, 2), (2, 3)]);
        let f = max_flow(&g, &[10, 10, 5, 5], &[1, 1, 5, 5], &[NodeIx(0)], NodeIx(3));
        assert_eq!((f.value, f.per_edge.clone()), (15, vec![10, 10, 5, 5]));
        // Behind one 10-unit edge 4 → 0 both paths could carry it: the faster does.
        let g = graph(5, &[(0, 1), (1, 3), (0, 2), (2, 3), (4, 0)]);
        let f = max_flow(
            &g,
            &[10, 10, 10, 10, 10],
            &[1, 1, 5, 5, 1],
            &[NodeIx(4)],
            NodeIx(3),
        );
        assert_eq!((f.value, f.per_edge), (10, vec![10, 10, 0, 0, 10]));
    }

    #[test]
    fn several_sources_feed_one_sink() {
        // The PTP tree: producers 4 and 5 under 2, 6 under 3, consumer 0 behind 1.
        let g = graph(7, &[(4, 2), (5, 2), (6, 3), (2, 1), (3, 1), (1, 0)]);
        let f = max_flow(
            &g,
            &[3, 3, 4, 5, 5, 9],
            &[1; 6],
            &[NodeIx(4), NodeIx(5), NodeIx(6)],
            NodeIx(0),
        );
        assert_eq!(f.value, 9);
        assert_eq!(f.per_edge[5], 9);
        assert_eq!(f.per_edge[2], 4);
    }

    proptest! {
        /// The value is the capacity of a minimum cut (brute force over node sets), and the
        /// flow is one: within capacities and conserved at every inner node.
        #[test]
        fn the_value_is_the_minimum_cut_and_the_flow_is_conserved(
            edges in proptest::collection::vec((0u32..6, 0u32..6, 0u64..20, 1u64..9), 1..14),
        ) {
            let edges: Vec<(u32, u32, u64, u64)> =
                edges.into_iter().filter(|e| e.0 != e.1).collect();
            let g = graph(6, &edges.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>());
            let cap: Vec<u64> = edges.iter().map(|e| e.2).collect();
            let delay: Vec<u64> = edges.iter().map(|e| e.3).collect();
            let f = max_flow(&g, &cap, &delay, &[NodeIx(0), NodeIx(1)], NodeIx(5));
            let mut best = u64::MAX;
            for mask in 0u32..16 {
                // Nodes 0 and 1 on the source side, 5 on the sink side, 2..=4 by the mask.
                let side = |x: u32| x <= 1 || (x < 5 && mask & (1 << (x - 2)) != 0);
                let cut: u64 = edges
                    .iter()
                    .filter(|e| side(e.0) && !side(e.1))
                    .map(|e| e.2)
                    .sum();
                best = best.min(cut);
            }
            prop_assert_eq!(f.value, best);
            for (k, e) in edges.iter().enumerate() {
                prop_assert!(f.per_edge[k] <= e.2);
            }
            for node in 2..5u32 {
                let inflow: u64 = edges.iter().enumerate().filter(|(_, e)| e.1 == node).map(|(k, _)| f.per_edge[k]).sum();
                let outflow: u64 = edges.iter().enumerate().filter(|(_, e)| e.0 == node).map(|(k, _)| f.per_edge[k]).sum();
                prop_assert_eq!(inflow, outflow);
            }
        }
    }
}
