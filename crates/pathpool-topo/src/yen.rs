//! The k shortest loopless paths between two nodes (Yen, "Finding the k shortest loopless
//! paths in a network", Management Science 17(11), 1971).

use std::collections::HashSet;

use crate::graph::{EdgeId, Graph, NodeIx};
use crate::shortest::shortest_path;

/// Cost, hop count and edges of a candidate, ordered for a deterministic choice: least cost,
/// then fewest hops, then the smaller edge sequence.
type Candidate = (f64, usize, Vec<EdgeId>);

fn better(a: &Candidate, b: &Candidate) -> bool {
    a.0.total_cmp(&b.0)
        .then(a.1.cmp(&b.1))
        .then_with(|| a.2.cmp(&b.2))
        .is_lt()
}

/// Up to `k` loopless paths from `src` to `dst` in increasing cost, each a list of edges.
/// `cost(e)` must be non-negative; edges with an infinite cost are never used. Fewer than `k`
/// paths are returned when fewer exist. Ties are broken by hop count, then by edge ids, so
/// the result is deterministic.
pub fn k_shortest_paths(
    g: &Graph,
    src: NodeIx,
    dst: NodeIx,
    k: usize,
    cost: impl Fn(EdgeId) -> f64,
) -> Vec<Vec<EdgeId>> {
    let path_cost = |p: &[EdgeId]| p.iter().map(|&e| cost(e)).sum::<f64>();
    let mut found: Vec<Vec<EdgeId>> = Vec::new();
    if k == 0 || src == dst {
        return found;
    }
    let Some(first) = shortest_path(g, src, dst, &cost) else {
        return found;
    };
    found.push(first);
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut seen: HashSet<Vec<EdgeId>> = found.iter().cloned().collect();
    while found.len() < k {
        let last = found.last().expect("at least one path").clone();
        // Nodes of the last path, in order: node i is where edge i leaves.
        let mut nodes = vec![src];
        nodes.extend(last.iter().map(|&e| g.ends(e).1));
        for i in 0..last.len() {
            let spur = nodes[i];
            let root = &last[..i];
            // Edges leaving the spur node along a found path with this root are banned, and
            // so are the root's nodes (other than the spur node): the result stays loopless.
            let banned_edges: HashSet<EdgeId> = found
                .iter()
                .filter(|p| p.len() > i && p[..i] == *root)
                .map(|p| p[i])
                .collect();
            let banned_nodes: HashSet<NodeIx> = nodes[..i].iter().copied().collect();
            let spur_cost = |e: EdgeId| {
                let (a, b) = g.ends(e);
                if banned_edges.contains(&e)
                    || banned_nodes.contains(&a)
                    || banned_nodes.contains(&b)
                {
                    f64::INFINITY
                } else {
                    cost(e)
                }
            };
            let Some(spur_path) = shortest_path(g, spur, dst, spur_cost) else {
                continue;
            };
            let mut total = root.to_vec();
            total.extend(spur_path);
            if seen.insert(total.clone()) {
                candidates.push((path_cost(&total), total.len(), total));
            }
        }
        let Some(best) = (0..candidates.len()).reduce(|a, b| {
            if better(&candidates[b], &candidates[a]) {
                b
            } else {
                a
            }
        }) else {
            break;
        };
        found.push(candidates.swap_remove(best).2);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every loopless path from `src` to `dst` with its cost, by depth-first search.
    fn all_paths(g: &Graph, src: NodeIx, dst: NodeIx, cost: &[f64]) -> Vec<(f64, Vec<EdgeId>)> {
        fn go(
            g: &Graph,
            at: NodeIx,
            dst: NodeIx,
            cost: &[f64],
            visited: &mut Vec<NodeIx>,
            path: &mut Vec<EdgeId>,
            out: &mut Vec<(f64, Vec<EdgeId>)>,
        ) {
            if at == dst {
                out.push((path.iter().map(|e| cost[e.0 as usize]).sum(), path.clone()));
                return;
            }
            for &e in g.out_edges(at) {
                let b = g.ends(e).1;
                if visited.contains(&b) || cost[e.0 as usize].is_infinite() {
                    continue;
                }
                visited.push(b);
                path.push(e);
                go(g, b, dst, cost, visited, path, out);
                path.pop();
                visited.pop();
            }
        }
        let mut out = Vec::new();
        go(g, src, dst, cost, &mut vec![src], &mut Vec::new(), &mut out);
        out
    }

    fn graph(n: usize, edges: &[(u32, u32)]) -> Graph {
        let mut g = Graph::with_nodes(n);
        for &(a, b) in edges {
            g.add_edge(NodeIx(a), NodeIx(b));
        }
        g
    }

    #[test]
    fn yen_example_graph() {
        // C=0 D=1 E=2 F=3 G=4 H=5, the example of the Wikipedia article on Yen's algorithm:
        // the three shortest C→H paths cost 5 (C-E-F-H), 7 (C-E-G-H) and 8 (C-D-F-H).
        let edges = [
            (0, 1),
            (0, 2),
            (1, 3),
            (2, 1),
            (2, 3),
            (2, 4),
            (3, 4),
            (3, 5),
            (4, 5),
        ];
        let costs = [3.0, 2.0, 4.0, 1.0, 2.0, 3.0, 2.0, 1.0, 2.0];
        let g = graph(6, &edges);
        let paths = k_shortest_paths(&g, NodeIx(0), NodeIx(5), 3, |e| costs[e.0 as usize]);
        let c: Vec<f64> = paths
            .iter()
            .map(|p| p.iter().map(|e| costs[e.0 as usize]).sum())
            .collect();
        assert_eq!(c, vec![5.0, 7.0, 8.0]);
        assert_eq!(paths[0], vec![EdgeId(1), EdgeId(4), EdgeId(7)]);
    }

    #[test]
    fn fewer_paths_than_asked_and_degenerate_cases() {
        let g = graph(3, &[(0, 1), (1, 2)]);
        assert_eq!(
            k_shortest_paths(&g, NodeIx(0), NodeIx(2), 5, |_| 1.0).len(),
            1
        );
        assert!(k_shortest_paths(&g, NodeIx(2), NodeIx(0), 2, |_| 1.0).is_empty());
        assert!(k_shortest_paths(&g, NodeIx(0), NodeIx(2), 0, |_| 1.0).is_empty());
    }

    proptest! {
        /// On small random graphs with integer costs, the k paths returned are loopless,
        /// distinct, go from src to dst, and their costs are the k smallest of all loopless
        /// paths (found by exhaustive search).
        #[test]
        fn matches_brute_force(
            n in 2usize..7,
            raw in proptest::collection::vec((0u32..7, 0u32..7, 1u32..5), 1..20),
            k in 1usize..6,
        ) {
            let edges: Vec<(u32, u32)> = raw
                .iter()
                .map(|&(a, b, _)| (a % n as u32, b % n as u32))
                .filter(|(a, b)| a != b)
                .collect();
            let costs: Vec<f64> = raw
                .iter()
                .filter(|&&(a, b, _)| a % n as u32 != b % n as u32)
                .map(|&(_, _, c)| f64::from(c))
                .collect();
            let g = graph(n, &edges);
            let (src, dst) = (NodeIx(0), NodeIx(n as u32 - 1));
            let got = k_shortest_paths(&g, src, dst, k, |e| costs[e.0 as usize]);
            let mut all = all_paths(&g, src, dst, &costs);
            all.sort_by(|a, b| a.0.total_cmp(&b.0));
            prop_assert_eq!(got.len(), k.min(all.len()));
            let got_costs: Vec<f64> = got
                .iter()
                .map(|p| p.iter().map(|e| costs[e.0 as usize]).sum())
                .collect();
            let want: Vec<f64> = all.iter().take(k).map(|p| p.0).collect();
            prop_assert_eq!(got_costs, want);
            let distinct: HashSet<&Vec<EdgeId>> = got.iter().collect();
            prop_assert_eq!(distinct.len(), got.len());
            for p in &got {
                prop_assert_eq!(g.ends(p[0]).0, src);
                prop_assert_eq!(g.ends(*p.last().unwrap()).1, dst);
                let mut nodes = vec![src];
                for w in p.windows(2) {
                    prop_assert_eq!(g.ends(w[0]).1, g.ends(w[1]).0);
                }
                nodes.extend(p.iter().map(|&e| g.ends(e).1));
                let unique: HashSet<&NodeIx> = nodes.iter().collect();
                prop_assert_eq!(unique.len(), nodes.len(), "loopless");
            }
        }
    }
}
