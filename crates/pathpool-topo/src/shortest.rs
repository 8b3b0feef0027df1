//! Single-pair shortest paths (Dijkstra).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::graph::{EdgeId, Graph, NodeIx};

#[derive(PartialEq)]
struct Entry {
    cost: f64,
    hops: u32,
    node: NodeIx,
}
impl Eq for Entry {}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on (cost, hops, node).
        o.cost
            .total_cmp(&self.cost)
            .then(o.hops.cmp(&self.hops))
            .then(o.node.cmp(&self.node))
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The least-cost path from `src` to `dst` as a list of edges, or `None` if `dst` is
/// unreachable. `cost(e)` must be non-negative and finite; edges with an infinite cost are
/// not used. Among equal-cost paths the one with fewer hops wins, then the one found first
/// (edge insertion order), so the result is deterministic.
pub fn shortest_path(
    g: &Graph,
    src: NodeIx,
    dst: NodeIx,
    cost: impl Fn(EdgeId) -> f64,
) -> Option<Vec<EdgeId>> {
    let n = g.node_count();
    let mut best: Vec<(f64, u32)> = vec![(f64::INFINITY, u32::MAX); n];
    let mut via: Vec<Option<EdgeId>> = vec![None; n];
    let mut done = vec![false; n];
    let mut heap = BinaryHeap::new();
    best[src.0 as usize] = (0.0, 0);
    heap.push(Entry {
        cost: 0.0,
        hops: 0,
        node: src,
    });
    while let Some(Entry {
        cost: c,
        hops,
        node,
    }) = heap.pop()
    {
        let u = node.0 as usize;
        if done[u] {
            continue;
        }
        done[u] = true;
        if node == dst {
            break;
        }
        for &e in g.out_edges(node) {
            let w = cost(e);
            if !w.is_finite() {
                continue;
            }
            let (_, to) = g.ends(e);
            let v = to.0 as usize;
            let cand = (c + w, hops + 1);
            let cur = best[v];
            let better = cand.0 < cur.0 || (cand.0 == cur.0 && cand.1 < cur.1);
            if !done[v] && better {
                best[v] = cand;
                via[v] = Some(e);
                heap.push(Entry {
                    cost: cand.0,
                    hops: cand.1,
                    node: to,
                });
            }
        }
    }
    if !done[dst.0 as usize] {
        return None;
    }
    let mut path = Vec::new();
    let mut at = dst;
    while at != src {
        let e = via[at.0 as usize]?;
        path.push(e);
        at = g.ends(e).0;
    }
    path.reverse();
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn line_and_shortcut() -> Graph {
        // 0 -> 1 -> 2 -> 3 and a shortcut 0 -> 3 of weight 5.
        let mut g = Graph::with_nodes(4);
        g.add_edge(NodeIx(0), NodeIx(1));
        g.add_edge(NodeIx(1), NodeIx(2));
        g.add_edge(NodeIx(2), NodeIx(3));
        g.add_edge(NodeIx(0), NodeIx(3));
        g
    }

    #[test]
    fn hop_count_takes_the_shortcut_weight_takes_the_line() {
        let g = line_and_shortcut();
        let hops = shortest_path(&g, NodeIx(0), NodeIx(3), |_| 1.0).unwrap();
        assert_eq!(hops, vec![EdgeId(3)]);
        let w = |e: EdgeId| if e.0 == 3 { 5.0 } else { 1.0 };
        let weighted = shortest_path(&g, NodeIx(0), NodeIx(3), w).unwrap();
        assert_eq!(weighted, vec![EdgeId(0), EdgeId(1), EdgeId(2)]);
    }

    #[test]
    fn unreachable_and_trivial() {
        let g = line_and_shortcut();
        assert_eq!(shortest_path(&g, NodeIx(3), NodeIx(0), |_| 1.0), None);
        assert_eq!(
            shortest_path(&g, NodeIx(2), NodeIx(2), |_| 1.0),
            Some(vec![])
        );
    }

    #[test]
    fn equal_cost_ties_prefer_fewer_hops_then_insertion_order() {
        let mut g = Graph::with_nodes(4);
        let a = g.add_edge(NodeIx(0), NodeIx(1));
        let b = g.add_edge(NodeIx(1), NodeIx(3));
        g.add_edge(NodeIx(0), NodeIx(2));
        g.add_edge(NodeIx(2), NodeIx(3));
        assert_eq!(
            shortest_path(&g, NodeIx(0), NodeIx(3), |_| 1.0),
            Some(vec![a, b])
        );
        // A two-hop path of cost 2 against a three-hop path of cost 2: fewer hops win.
        let c = g.add_edge(NodeIx(0), NodeIx(3));
        let cost = |e: EdgeId| if e == c { 2.0 } else { 1.0 };
        assert_eq!(shortest_path(&g, NodeIx(0), NodeIx(3), cost), Some(vec![c]));
    }

    /// All simple paths by depth-first search: the brute-force reference.
    fn brute_force(g: &Graph, s: NodeIx, t: NodeIx, w: &[f64]) -> Option<f64> {
        fn go(
            g: &Graph,
            u: NodeIx,
            t: NodeIx,
            w: &[f64],
            seen: &mut Vec<bool>,
            c: f64,
            best: &mut Option<f64>,
        ) {
            if u == t {
                *best = Some(best.map_or(c, |b: f64| b.min(c)));
                return;
            }
            for &e in g.out_edges(u) {
                let v = g.ends(e).1;
                if !seen[v.0 as usize] {
                    seen[v.0 as usize] = true;
                    go(g, v, t, w, seen, c + w[e.0 as usize], best);
                    seen[v.0 as usize] = false;
                }
            }
        }
        let mut seen = vec![false; g.node_count()];
        seen[s.0 as usize] = true;
        let mut best = None;
        go(g, s, t, w, &mut seen, 0.0, &mut best);
        best
    }

    proptest! {
        #[test]
        fn matches_brute_force_on_small_graphs(
            n in 2usize..7,
            edges in proptest::collection::vec((0u32..7, 0u32..7, 1u32..10), 0..20),
        ) {
            let mut g = Graph::with_nodes(n);
            let mut w = Vec::new();
            for (a, b, c) in edges {
                let (a, b) = (a % n as u32, b % n as u32);
                if a != b {
                    g.add_edge(NodeIx(a), NodeIx(b));
                    w.push(f64::from(c));
                }
            }
            for t in 1..n as u32 {
                let got = shortest_path(&g, NodeIx(0), NodeIx(t), |e| w[e.0 as usize]);
                let want = brute_force(&g, NodeIx(0), NodeIx(t), &w);
                match (got, want) {
                    (None, None) => {}
                    (Some(p), Some(c)) => {
                        let cost: f64 = p.iter().map(|e| w[e.0 as usize]).sum();
                        prop_assert_eq!(cost, c);
                        // The path is connected from 0 to t.
                        let mut at = NodeIx(0);
                        for e in &p {
                            prop_assert_eq!(g.ends(*e).0, at);
                            at = g.ends(*e).1;
                        }
                        prop_assert_eq!(at, NodeIx(t));
                    }
                    (a, b) => prop_assert!(false, "dijkstra {:?} vs brute force {:?}", a, b),
                }
            }
        }
    }
}
