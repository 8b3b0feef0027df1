//! `group_id` assignment checked against naive pairwise versions on random path sets: the
//! thesis rule (shared links) and the paper's friendliness-bottleneck rule (eq. 2).

#[path = "common/naive_group.rs"]
mod naive;

use pathpool_topo::{
    bottleneck_groups, k_shortest_paths, shared_link_groups, EdgeId, FbFactor, Graph, NodeIx,
};
use proptest::prelude::*;

/// The paper rule the slow way (§4.1.1–4.1.2): for every link, scan all paths for it; if two
/// or more use it, compute eq. 2 from each one's narrowest other link; FB links relate all
/// their paths; then the transitive closure.
fn naive_bottleneck_groups(paths: &[Vec<u32>], rate: &dyn Fn(u32) -> f64, f: FbFactor) -> Vec<u32> {
    let k = paths.len();
    let mut related = vec![vec![false; k]; k];
    for &l in paths.iter().flatten() {
        let on: Vec<usize> = (0..k).filter(|&p| paths[p].contains(&l)).collect();
        if on.len() < 2 {
            continue;
        }
        let widest_other = on
            .iter()
            .map(|&p| {
                paths[p]
                    .iter()
                    .filter(|&&m| m != l)
                    .map(|&m| rate(m))
                    .fold(f64::INFINITY, f64::min)
            })
            .fold(f64::NEG_INFINITY, f64::max);
        let factor = match f {
            FbFactor::PathsOnLink => (on.len() as f64 + 1.0) / 2.0,
            FbFactor::AllPaths => (k as f64 + 1.0) / 2.0,
            FbFactor::Fixed(x) => x,
        };
        let not_fb = widest_other.is_finite() && rate(l) > widest_other * factor;
        if !not_fb {
            for &p in &on {
                for &q in &on {
                    related[p][q] = true;
                }
            }
        }
    }
    naive::closure(&related)
}

/// A random graph and up to three Yen paths between each of a few random node pairs, as link
/// ids: the edge id, or edge id / 2 when `duplex` (both directions of a link added in turn).
fn path_set() -> impl Strategy<Value = Vec<Vec<u32>>> {
    (
        3usize..9,
        proptest::collection::vec((0u32..9, 0u32..9, 1u32..4), 2..24),
        proptest::collection::vec((0u32..9, 0u32..9, 1usize..4), 1..5),
        any::<bool>(),
    )
        .prop_map(|(n, edges, pairs, duplex)| {
            let mut g = Graph::with_nodes(n);
            let mut w = Vec::new();
            for (a, b, c) in edges {
                let (a, b) = (NodeIx(a % n as u32), NodeIx(b % n as u32));
                if a != b {
                    g.add_edge(a, b);
                    w.push(f64::from(c));
                    if duplex {
                        g.add_edge(b, a);
                        w.push(f64::from(c));
                    }
                }
            }
            let link = |e: EdgeId| if duplex { e.0 / 2 } else { e.0 };
            pairs
                .into_iter()
                .flat_map(|(s, t, m)| {
                    let (s, t) = (NodeIx(s % n as u32), NodeIx(t % n as u32));
                    k_shortest_paths(&g, s, t, m, |e| w[e.0 as usize])
                })
                .map(|p| p.into_iter().map(link).collect())
                .collect()
        })
}

/// Arbitrary link lists: repeated links, empty paths and heavy overlap.
fn raw_path_set() -> impl Strategy<Value = Vec<Vec<u32>>> {
    proptest::collection::vec(proptest::collection::vec(0u32..30, 0..8), 0..10)
}

fn factor() -> impl Strategy<Value = FbFactor> {
    prop_oneof![
        Just(FbFactor::PathsOnLink),
        Just(FbFactor::AllPaths),
        (0u32..5).prop_map(|x| FbFactor::Fixed(f64::from(x) / 2.0)),
    ]
}

proptest! {
    /// The O(k·h) hash-table method gives exactly the naive pairwise grouping (same ids).
    #[test]
    fn shared_link_groups_match_naive(
        paths in prop_oneof![path_set(), raw_path_set()],
    ) {
        prop_assert_eq!(shared_link_groups(&paths), naive::naive_shared_link_groups(&paths));
    }

    /// The eq. 2 grouping matches the naive per-link evaluation, for every factor and rates
    /// with ties and zeros; and it refines the thesis grouping (paths it couples share a link
    /// transitively).
    #[test]
    fn bottleneck_groups_match_naive_and_refine_shared_link_groups(
        paths in prop_oneof![path_set(), raw_path_set()],
        rates in proptest::collection::vec(0u32..6, 30),
        f in factor(),
    ) {
        let rate = |l: u32| f64::from(rates[l as usize % rates.len()]) * 10.0;
        let got = bottleneck_groups(&paths, rate, f);
        prop_assert_eq!(&got, &naive_bottleneck_groups(&paths, &rate, f));
        let coarse = shared_link_groups(&paths);
        for p in 0..paths.len() {
            for q in 0..paths.len() {
                prop_assert!(got[p] != got[q] || coarse[p] == coarse[q]);
            }
        }
    }
}
