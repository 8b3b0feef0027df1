//! Least-cost sets of disjoint paths between two nodes (Bhandari, "Survivable Networks:
//! Algorithms for Diverse Routing", Kluwer 1999; Suurballe and Tarjan, "A quick method for
//! finding shortest pairs of disjoint paths", Networks 14(2), 1984), and the thesis's
//! "disjoint only" policy for candidate paths (thesis §5.1, active assistance).
//!
//! # Method
//!
//! Bhandari's algorithm for k paths is successive shortest paths on a residual graph: find a
//! shortest path, reverse its edges with negated costs, find a shortest path in that graph
//! (it may run backwards along an earlier path's edge, which cancels that edge: the
//! "interlacing" edges Bhandari removes), and repeat. Each step is a min-cost-flow
//! augmentation of one unit, so after j steps the edges in use are a least-cost set of j
//! edge-disjoint paths. Dijkstra cannot take the negative edges directly; instead of
//! Bellman-Ford we keep Suurballe and Tarjan's node potentials (the distances of the previous
//! step), under which every residual edge has a non-negative reduced cost, so every step is a
//! plain Dijkstra: O(k·(e + n) log n) in all.
//!
//! # Links and directed edges
//!
//! [`Graph`] is directed. An undirected (duplex) link is two edges, `a → b` and `b → a`; two
//! paths that use one link in opposite directions are not link-disjoint in the usual sense of
//! the word for undirected topologies. Every function here therefore takes
//! `link_of: impl Fn(EdgeId) -> u32`, which names the link each edge belongs to; edges with
//! equal link ids count as one resource. `|e| e.0` makes every edge its own link (directed
//! disjointness). A link may hold at most the two opposite directions between one pair of
//! nodes: grouping other edges together (shared-risk groups) makes the problem NP-hard and is
//! rejected with a panic. Decision D44 in `docs/decisions.md`.
//!
//! Opposite directions of one link never both carry an optimal set with positive costs
//! (cancelling them is cheaper); with zero costs they might, so after the augmentations any
//! link used in both directions is cancelled, which keeps the cost and the number of paths.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};

use crate::graph::{EdgeId, Graph, NodeIx};

/// A unit-capacity arc of the flow network: either a graph edge or, in the node-split network,
/// the arc joining a node's two halves (`edge: None`).
struct Arc {
    from: usize,
    to: usize,
    cost: f64,
    edge: Option<EdgeId>,
    used: bool,
}

/// A flow network with unit capacities and non-negative costs.
struct Net {
    arcs: Vec<Arc>,
    out: Vec<Vec<usize>>,
    inc: Vec<Vec<usize>>,
}

impl Net {
    fn with_nodes(n: usize) -> Self {
        Net {
            arcs: Vec::new(),
            out: vec![Vec::new(); n],
            inc: vec![Vec::new(); n],
        }
    }

    fn add(&mut self, from: usize, to: usize, cost: f64, edge: Option<EdgeId>) {
        let a = self.arcs.len();
        self.arcs.push(Arc {
            from,
            to,
            cost,
            edge,
            used: false,
        });
        self.out[from].push(a);
        self.inc[to].push(a);
    }

    /// Sends up to `k` units from `s` to `t` at least cost by successive shortest paths; returns
    /// the number of units sent.
    fn min_cost_flow(&mut self, s: usize, t: usize, k: usize) -> usize {
        let n = self.out.len();
        // Potentials: zero is valid at the start because every cost is non-negative.
        let mut pot = vec![0.0; n];
        let mut sent = 0;
        while sent < k {
            let Some((dist, via)) = self.residual_dijkstra(s, t, &pot) else {
                break;
            };
            for v in 0..n {
                if dist[v].is_finite() {
                    pot[v] += dist[v];
                }
            }
            // Walk back from t: a forward step takes an arc, a backward step cancels it.
            let mut at = t;
            while at != s {
                let a = via[at].expect("reached nodes have a predecessor arc");
                let arc = &mut self.arcs[a];
                arc.used = !arc.used;
                at = if arc.used { arc.from } else { arc.to };
            }
            sent += 1;
        }
        sent
    }

    /// Dijkstra on the residual network with reduced costs `c + pot[u] − pot[v]`. Returns the
    /// reduced distances and, for each reached node, the arc it was reached by; `None` when `t`
    /// is unreachable. A node unreachable once stays unreachable (augmentations only add arcs
    /// between reached nodes), so its stale potential is never read.
    fn residual_dijkstra(
        &self,
        s: usize,
        t: usize,
        pot: &[f64],
    ) -> Option<(Vec<f64>, Vec<Option<usize>>)> {
        let n = self.out.len();
        let mut best: Vec<(f64, u32)> = vec![(f64::INFINITY, u32::MAX); n];
        let mut via: Vec<Option<usize>> = vec![None; n];
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        best[s] = (0.0, 0);
        heap.push(Entry {
            cost: 0.0,
            hops: 0,
            node: s,
        });
        while let Some(Entry {
            cost,
            hops,
            node: u,
        }) = heap.pop()
        {
            if done[u] {
                continue;
            }
            done[u] = true;
            let forward = self.out[u]
                .iter()
                .filter(|&&a| !self.arcs[a].used)
                .map(|&a| (a, self.arcs[a].to, self.arcs[a].cost));
            let backward = self.inc[u]
                .iter()
                .filter(|&&a| self.arcs[a].used)
                .map(|&a| (a, self.arcs[a].from, -self.arcs[a].cost));
            for (a, v, c) in forward.chain(backward) {
                // Reduced costs are non-negative in exact arithmetic; clamp rounding noise.
                let reduced = (c + pot[u] - pot[v]).max(0.0);
                let cand = (cost + reduced, hops + 1);
                let cur = best[v];
                if !done[v] && (cand.0 < cur.0 || (cand.0 == cur.0 && cand.1 < cur.1)) {
                    best[v] = cand;
                    via[v] = Some(a);
                    heap.push(Entry {
                        cost: cand.0,
                        hops: cand.1,
                        node: v,
                    });
                }
            }
        }
        done[t].then(|| (best.iter().map(|b| b.0).collect(), via))
    }

    /// Splits the flow into paths from `s` to `t`, each the graph edges of its arcs. Cycles
    /// (possible only with zero-cost arcs) are dropped. Arcs leaving a node are taken in the
    /// order they were added.
    fn decompose(&self, s: usize, t: usize, count: usize) -> Vec<Vec<EdgeId>> {
        let n = self.out.len();
        let mut left: Vec<Vec<usize>> = self
            .out
            .iter()
            .map(|arcs| {
                arcs.iter()
                    .rev()
                    .copied()
                    .filter(|&a| self.arcs[a].used)
                    .collect()
            })
            .collect();
        let mut paths = Vec::with_capacity(count);
        let mut at_step: Vec<Option<usize>> = vec![None; n];
        for _ in 0..count {
            let mut nodes = vec![s];
            let mut arcs: Vec<usize> = Vec::new();
            at_step[s] = Some(0);
            let mut at = s;
            while at != t {
                let a = left[at].pop().expect("flow is conserved at inner nodes");
                let v = self.arcs[a].to;
                if let Some(i) = at_step[v] {
                    // A cycle back to the walk's node i: forget it.
                    for &w in &nodes[i + 1..] {
                        at_step[w] = None;
                    }
                    nodes.truncate(i + 1);
                    arcs.truncate(i);
                } else {
                    at_step[v] = Some(nodes.len());
                    nodes.push(v);
                    arcs.push(a);
                }
                at = v;
            }
            for &w in &nodes {
                at_step[w] = None;
            }
            paths.push(arcs.iter().filter_map(|&a| self.arcs[a].edge).collect());
        }
        paths
    }
}

#[derive(PartialEq)]
struct Entry {
    cost: f64,
    hops: u32,
    node: usize,
}
impl Eq for Entry {}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on (cost, hops, node), as in `shortest_path`.
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

/// Sorts paths by cost, then hop count, then edge ids: the order every function here returns.
fn sorted(mut paths: Vec<Vec<EdgeId>>, cost: impl Fn(EdgeId) -> f64) -> Vec<Vec<EdgeId>> {
    let key = |p: &Vec<EdgeId>| (p.iter().map(|&e| cost(e)).sum::<f64>(), p.len());
    paths.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.total_cmp(&kb.0)
            .then(ka.1.cmp(&kb.1))
            .then_with(|| a.cmp(b))
    });
    paths
}

/// Checks the `link_of` convention (module docs) and returns, for every link used by two
/// edges, that pair.
///
/// # Panics
/// If a link id names more than two edges, or two edges that are not the opposite directions
/// between one pair of nodes.
fn link_pairs(g: &Graph, link_of: &impl Fn(EdgeId) -> u32) -> Vec<(EdgeId, EdgeId)> {
    let mut first: HashMap<u32, (EdgeId, Option<EdgeId>)> = HashMap::new();
    for e in (0..g.edge_count() as u32).map(EdgeId) {
        let slot = first.entry(link_of(e)).or_insert((e, None));
        if slot.0 == e {
            continue;
        }
        let ((a, b), (c, d)) = (g.ends(slot.0), g.ends(e));
        assert!(
            slot.1.is_none() && (a, b) == (d, c) && a != b,
            "link {} groups edges {:?} and {:?} that are not the two directions of one link",
            link_of(e),
            slot.0,
            e
        );
        slot.1 = Some(e);
    }
    let mut pairs: Vec<(EdgeId, EdgeId)> = first
        .into_values()
        .filter_map(|(a, b)| b.map(|b| (a, b)))
        .collect();
    pairs.sort_unstable();
    pairs
}

/// Up to `k` link-disjoint paths from `src` to `dst` with the least total cost (Bhandari's
/// algorithm iterated; module docs), each a list of edges, in increasing cost (ties: fewer
/// hops, then smaller edge ids). When fewer than `k` link-disjoint paths exist, as many as
/// exist are returned, again of least total cost. `cost(e)` must be non-negative; edges with
/// an infinite cost are never used. `link_of` names each edge's link (module docs; `|e| e.0`
/// for directed disjointness). The paths are loopless. Empty when `k == 0` or `src == dst`.
///
/// # Panics
/// If `link_of` groups edges other than the two directions of one link.
pub fn k_edge_disjoint_paths(
    g: &Graph,
    src: NodeIx,
    dst: NodeIx,
    k: usize,
    cost: impl Fn(EdgeId) -> f64,
    link_of: impl Fn(EdgeId) -> u32,
) -> Vec<Vec<EdgeId>> {
    let pairs = link_pairs(g, &link_of);
    if k == 0 || src == dst {
        return Vec::new();
    }
    let mut net = Net::with_nodes(g.node_count());
    // Arc index of each edge in the network, if its cost is finite.
    let mut arc_of = vec![None; g.edge_count()];
    for e in (0..g.edge_count() as u32).map(EdgeId) {
        let c = cost(e);
        if c.is_finite() {
            let (a, b) = g.ends(e);
            arc_of[e.0 as usize] = Some(net.arcs.len());
            net.add(a.0 as usize, b.0 as usize, c, Some(e));
        }
    }
    let (s, t) = (src.0 as usize, dst.0 as usize);
    let count = net.min_cost_flow(s, t, k);
    // A link carried both ways by zero-cost edges: cancel both directions (module docs).
    for (a, b) in pairs {
        if let (Some(x), Some(y)) = (arc_of[a.0 as usize], arc_of[b.0 as usize]) {
            if net.arcs[x].used && net.arcs[y].used {
                net.arcs[x].used = false;
                net.arcs[y].used = false;
            }
        }
    }
    sorted(net.decompose(s, t, count), cost)
}

/// The least-cost pair of link-disjoint paths from `src` to `dst` (Bhandari's algorithm;
/// [`k_edge_disjoint_paths`] with `k = 2`), cheaper path first; `None` when no such pair
/// exists. Arguments as for [`k_edge_disjoint_paths`].
///
/// # Panics
/// If `link_of` groups edges other than the two directions of one link.
pub fn disjoint_pair(
    g: &Graph,
    src: NodeIx,
    dst: NodeIx,
    cost: impl Fn(EdgeId) -> f64,
    link_of: impl Fn(EdgeId) -> u32,
) -> Option<[Vec<EdgeId>; 2]> {
    let mut paths = k_edge_disjoint_paths(g, src, dst, 2, cost, link_of);
    let second = paths.pop()?;
    let first = paths.pop()?;
    Some([first, second])
}

/// Up to `k` node-disjoint paths from `src` to `dst` (no node in common but the two ends) with
/// the least total cost: [`k_edge_disjoint_paths`] on the graph with every other node split
/// into an entry and an exit joined by one unit-capacity arc (Bhandari 1999, node splitting).
/// Node-disjoint paths are also link-disjoint under any `link_of` of the module's convention,
/// so this function takes none. Order and cost rules as for [`k_edge_disjoint_paths`].
pub fn k_node_disjoint_paths(
    g: &Graph,
    src: NodeIx,
    dst: NodeIx,
    k: usize,
    cost: impl Fn(EdgeId) -> f64,
) -> Vec<Vec<EdgeId>> {
    if k == 0 || src == dst {
        return Vec::new();
    }
    let n = g.node_count();
    let (s, t) = (src.0 as usize, dst.0 as usize);
    // Node v enters at v and, unless it is an end, leaves at n + v.
    let exit = |v: usize| if v == s || v == t { v } else { n + v };
    let mut net = Net::with_nodes(2 * n);
    for v in (0..n).filter(|&v| v != s && v != t) {
        net.add(v, n + v, 0.0, None);
    }
    for e in (0..g.edge_count() as u32).map(EdgeId) {
        let c = cost(e);
        if c.is_finite() {
            let (a, b) = g.ends(e);
            net.add(exit(a.0 as usize), b.0 as usize, c, Some(e));
        }
    }
    let count = net.min_cost_flow(s, t, k);
    sorted(net.decompose(s, t, count), cost)
}

/// The "disjoint only" policy (thesis §5.1): keeps, in order, each path that shares no link
/// with the paths kept before it. Greedy, so it can keep fewer paths than exist (a short path
/// can block a disjoint pair; [`k_edge_disjoint_paths`] does not have that problem). `link_of`
/// as in the module docs; a path whose own links repeat is still kept.
pub fn disjoint_only(paths: Vec<Vec<EdgeId>>, link_of: impl Fn(EdgeId) -> u32) -> Vec<Vec<EdgeId>> {
    let mut taken = HashSet::new();
    paths
        .into_iter()
        .filter(|p| {
            let free = p.iter().all(|&e| !taken.contains(&link_of(e)));
            if free {
                taken.extend(p.iter().map(|&e| link_of(e)));
            }
            free
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yen::k_shortest_paths;
    use proptest::prelude::*;

    fn own_link(e: EdgeId) -> u32 {
        e.0
    }

    fn total(p: &[Vec<EdgeId>], w: &[f64]) -> f64 {
        p.iter().flatten().map(|e| w[e.0 as usize]).sum()
    }

    /// The trap (Bhandari 1999, the classic example): s=0, a=1, b=2, t=3. The shortest path
    /// s-a-b-t (cost 3) uses the middle edge a-b that both disjoint paths s-a-t and s-b-t
    /// (cost 4 each) need to avoid, so taking the shortest path first leaves nothing.
    fn trap() -> (Graph, Vec<f64>) {
        let mut g = Graph::with_nodes(4);
        let mut w = Vec::new();
        for (a, b, c) in [
            (0, 1, 1.0),
            (1, 2, 1.0),
            (2, 3, 1.0),
            (1, 3, 3.0),
            (0, 2, 3.0),
        ] {
            g.add_edge(NodeIx(a), NodeIx(b));
            w.push(c);
        }
        (g, w)
    }

    #[test]
    fn trap_defeats_greedy_but_not_bhandari() {
        let (g, w) = trap();
        let (s, t) = (NodeIx(0), NodeIx(3));
        let cost = |e: EdgeId| w[e.0 as usize];
        let yen = k_shortest_paths(&g, s, t, 3, cost);
        assert_eq!(yen[0], vec![EdgeId(0), EdgeId(1), EdgeId(2)]);
        assert_eq!(disjoint_only(yen, own_link).len(), 1);
        let [p, q] = disjoint_pair(&g, s, t, cost, own_link).expect("a pair exists");
        assert_eq!(p, vec![EdgeId(0), EdgeId(3)]);
        assert_eq!(q, vec![EdgeId(4), EdgeId(2)]);
        assert_eq!(total(&[p, q], &w), 8.0);
    }

    /// The same trap with duplex links (two edges per link, link id = edge id / 2): the second
    /// path runs b → a against the first one's a → b, and the interlacing link is removed.
    #[test]
    fn undirected_trap_untangles_the_interlacing_link() {
        let (d, w1) = trap();
        let mut g = Graph::with_nodes(4);
        let mut w = Vec::new();
        for e in (0..d.edge_count() as u32).map(EdgeId) {
            let (a, b) = d.ends(e);
            g.add_edge(a, b);
            g.add_edge(b, a);
            w.extend([w1[e.0 as usize]; 2]);
        }
        let link = |e: EdgeId| e.0 / 2;
        let pair = disjoint_pair(&g, NodeIx(0), NodeIx(3), |e| w[e.0 as usize], link).unwrap();
        assert_eq!(pair[0], vec![EdgeId(0), EdgeId(6)]);
        assert_eq!(pair[1], vec![EdgeId(8), EdgeId(4)]);
        assert_eq!(total(&pair, &w), 8.0);
    }

    /// s=0 → a=1 → b=2 → t=3 (cost 2) with a zero-cost duplex link a–b, and s → b, a → t of
    /// cost 5. The second augmentation takes the fresh edge b → a (as cheap as cancelling
    /// a → b, and found first), so the flow crosses a–b both ways: two directed-disjoint
    /// paths, which must be untangled when the two directions are one link.
    #[test]
    fn a_zero_cost_link_used_both_ways_is_cancelled() {
        let mut g = Graph::with_nodes(4);
        let mut w = Vec::new();
        for (a, b, c) in [
            (0, 1, 1.0),
            (1, 2, 0.0),
            (2, 3, 1.0),
            (2, 1, 0.0),
            (0, 2, 5.0),
            (1, 3, 5.0),
        ] {
            g.add_edge(NodeIx(a), NodeIx(b));
            w.push(c);
        }
        let cost = |e: EdgeId| w[e.0 as usize];
        let link = |e: EdgeId| if e.0 == 3 { 1 } else { e.0 };
        let directed = k_edge_disjoint_paths(&g, NodeIx(0), NodeIx(3), 2, cost, own_link);
        assert_eq!(
            directed,
            vec![
                vec![EdgeId(0), EdgeId(1), EdgeId(2)],
                vec![EdgeId(4), EdgeId(3), EdgeId(5)]
            ]
        );
        let linked = k_edge_disjoint_paths(&g, NodeIx(0), NodeIx(3), 2, cost, link);
        assert_eq!(
            linked,
            vec![vec![EdgeId(0), EdgeId(5)], vec![EdgeId(4), EdgeId(2)]]
        );
        assert_eq!(total(&directed, &w), 12.0);
        assert_eq!(total(&linked, &w), 12.0);
    }

    /// A bow tie: every s–t route crosses the middle node m, through two disjoint edge pairs.
    #[test]
    fn node_disjoint_is_stricter_than_edge_disjoint() {
        // s=0 a=1 b=2 m=3 c=4 d=5 t=6, and x=7 for the detour below.
        let mut g = Graph::with_nodes(8);
        for (a, b) in [
            (0, 1),
            (0, 2),
            (1, 3),
            (2, 3),
            (3, 4),
            (3, 5),
            (4, 6),
            (5, 6),
        ] {
            g.add_edge(NodeIx(a), NodeIx(b));
        }
        let (s, t) = (NodeIx(0), NodeIx(6));
        assert_eq!(
            k_edge_disjoint_paths(&g, s, t, 3, |_| 1.0, own_link).len(),
            2
        );
        assert_eq!(k_node_disjoint_paths(&g, s, t, 3, |_| 1.0).len(), 1);
        // A detour b → x → d around m gives a second node-disjoint path.
        g.add_edge(NodeIx(2), NodeIx(7));
        g.add_edge(NodeIx(7), NodeIx(5));
        let paths = k_node_disjoint_paths(&g, s, t, 3, |_| 1.0);
        let nodes = |p: &[EdgeId]| p.iter().map(|&e| g.ends(e).1 .0).collect::<Vec<_>>();
        assert_eq!(paths.len(), 2);
        assert_eq!(nodes(&paths[0]), vec![1, 3, 4, 6]);
        assert_eq!(nodes(&paths[1]), vec![2, 7, 5, 6]);
    }

    #[test]
    fn degenerate_cases() {
        let (g, w) = trap();
        let (s, t) = (NodeIx(0), NodeIx(3));
        assert!(k_edge_disjoint_paths(&g, s, t, 0, |_| 1.0, own_link).is_empty());
        assert!(k_edge_disjoint_paths(&g, s, s, 2, |_| 1.0, own_link).is_empty());
        assert!(k_edge_disjoint_paths(&g, t, s, 2, |_| 1.0, own_link).is_empty());
        assert!(k_node_disjoint_paths(&g, t, s, 2, |_| 1.0).is_empty());
        // Infinite-cost edges are not used: without s → b only one path remains.
        let no_sb = |e: EdgeId| {
            if e.0 == 4 {
                f64::INFINITY
            } else {
                w[e.0 as usize]
            }
        };
        assert_eq!(disjoint_pair(&g, s, t, no_sb, own_link), None);
        assert_eq!(
            k_edge_disjoint_paths(&g, s, t, 5, no_sb, own_link),
            vec![vec![EdgeId(0), EdgeId(1), EdgeId(2)]]
        );
    }

    #[test]
    #[should_panic(expected = "not the two directions of one link")]
    fn a_link_of_two_parallel_edges_is_rejected() {
        let mut g = Graph::with_nodes(2);
        g.add_edge(NodeIx(0), NodeIx(1));
        g.add_edge(NodeIx(0), NodeIx(1));
        k_edge_disjoint_paths(&g, NodeIx(0), NodeIx(1), 2, |_| 1.0, |_| 0);
    }

    #[test]
    fn disjoint_only_keeps_paths_free_of_earlier_links() {
        let e = |ids: &[u32]| ids.iter().map(|&i| EdgeId(i)).collect::<Vec<_>>();
        let kept = disjoint_only(vec![e(&[0, 1]), e(&[2, 1]), e(&[3, 4]), e(&[5])], own_link);
        assert_eq!(kept, vec![e(&[0, 1]), e(&[3, 4]), e(&[5])]);
        // With links of two edges, edge 5 is edge 4's other direction.
        let kept = disjoint_only(vec![e(&[3, 4]), e(&[5])], |x| x.0 / 2);
        assert_eq!(kept, vec![e(&[3, 4])]);
    }

    /// Every loopless path from `src` to `dst`, by depth-first search.
    fn all_paths(g: &Graph, src: NodeIx, dst: NodeIx) -> Vec<Vec<EdgeId>> {
        fn go(
            g: &Graph,
            at: NodeIx,
            dst: NodeIx,
            visited: &mut Vec<NodeIx>,
            path: &mut Vec<EdgeId>,
            out: &mut Vec<Vec<EdgeId>>,
        ) {
            if at == dst {
                out.push(path.clone());
                return;
            }
            for &e in g.out_edges(at) {
                let b = g.ends(e).1;
                if !visited.contains(&b) {
                    visited.push(b);
                    path.push(e);
                    go(g, b, dst, visited, path, out);
                    path.pop();
                    visited.pop();
                }
            }
        }
        let mut out = Vec::new();
        go(g, src, dst, &mut vec![src], &mut Vec::new(), &mut out);
        out
    }

    /// The largest number (up to `k`) of pairwise compatible paths and their least total
    /// cost, by exhaustive search over subsets.
    fn best_set(
        paths: &[Vec<EdgeId>],
        w: &[f64],
        k: usize,
        compatible: &dyn Fn(&[EdgeId], &[EdgeId]) -> bool,
    ) -> (usize, f64) {
        struct Search<'a> {
            paths: &'a [Vec<EdgeId>],
            costs: Vec<f64>,
            k: usize,
            compatible: &'a dyn Fn(&[EdgeId], &[EdgeId]) -> bool,
            chosen: Vec<usize>,
            best: (usize, f64),
        }
        impl Search<'_> {
            fn go(&mut self, from: usize, cost: f64) {
                let n = self.chosen.len();
                if n > self.best.0 || (n == self.best.0 && cost < self.best.1) {
                    self.best = (n, cost);
                }
                if n == self.k {
                    return;
                }
                for i in from..self.paths.len() {
                    let p = &self.paths[i];
                    if self
                        .chosen
                        .iter()
                        .all(|&j| (self.compatible)(p, &self.paths[j]))
                    {
                        self.chosen.push(i);
                        self.go(i + 1, cost + self.costs[i]);
                        self.chosen.pop();
                    }
                }
            }
        }
        let mut search = Search {
            paths,
            costs: paths
                .iter()
                .map(|p| p.iter().map(|e| w[e.0 as usize]).sum())
                .collect(),
            k,
            compatible,
            chosen: Vec::new(),
            best: (0, 0.0),
        };
        search.go(0, 0.0);
        search.best
    }

    proptest! {
        /// On small random graphs mixing duplex links (two edges, one link id) and one-way
        /// edges, with integer costs including zero: the returned paths go from src to dst,
        /// are loopless, pairwise link-disjoint (node-disjoint for the node variant), sorted
        /// by cost, and as many and as cheap in total as the best set found by exhaustive
        /// search.
        #[test]
        fn matches_brute_force(
            n in 2usize..7,
            raw in proptest::collection::vec((0u32..7, 0u32..7, 0u32..3, 0u32..3, any::<bool>()), 1..12),
            k in 1usize..4,
        ) {
            let mut g = Graph::with_nodes(n);
            let mut w = Vec::new();
            let mut links = Vec::new();
            for (i, &(a, b, c1, c2, duplex)) in raw.iter().enumerate() {
                let (a, b) = (NodeIx(a % n as u32), NodeIx(b % n as u32));
                if a == b {
                    continue;
                }
                g.add_edge(a, b);
                w.push(f64::from(c1));
                links.push(i as u32);
                if duplex {
                    g.add_edge(b, a);
                    w.push(f64::from(c2));
                    links.push(i as u32);
                }
            }
            let (s, t) = (NodeIx(0), NodeIx(n as u32 - 1));
            let cost = |e: EdgeId| w[e.0 as usize];
            let link = |e: EdgeId| links[e.0 as usize];
            let all = all_paths(&g, s, t);
            let inner = |p: &[EdgeId]| -> Vec<NodeIx> {
                p.iter().map(|&e| g.ends(e).1).filter(|&v| v != t).collect()
            };
            let link_disjoint =
                |p: &[EdgeId], q: &[EdgeId]| p.iter().all(|&e| q.iter().all(|&f| link(e) != link(f)));
            let node_disjoint = |p: &[EdgeId], q: &[EdgeId]| {
                let (a, b) = (inner(p), inner(q));
                p != q && a.iter().all(|v| !b.contains(v))
            };
            let edge_ok: &dyn Fn(&[EdgeId], &[EdgeId]) -> bool = &link_disjoint;
            let node_ok: &dyn Fn(&[EdgeId], &[EdgeId]) -> bool = &node_disjoint;
            let cases = [
                (k_edge_disjoint_paths(&g, s, t, k, cost, link), edge_ok),
                (k_node_disjoint_paths(&g, s, t, k, cost), node_ok),
            ];
            for (got, ok) in cases {
                let want = best_set(&all, &w, k, ok);
                prop_assert_eq!(got.len(), want.0);
                prop_assert_eq!(total(&got, &w), want.1);
                for (i, p) in got.iter().enumerate() {
                    prop_assert!(all.contains(p), "{:?} is a loopless s-t path", p);
                    for q in &got[i + 1..] {
                        prop_assert!(ok(p, q), "{:?} and {:?} are disjoint", p, q);
                    }
                }
                let costs: Vec<f64> = got.iter().map(|p| total(std::slice::from_ref(p), &w)).collect();
                prop_assert!(costs.windows(2).all(|c| c[0] <= c[1]));
            }
        }
    }
}
