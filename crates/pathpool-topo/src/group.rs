//! `group_id` assignment: which of a connection's paths a coupled congestion controller must
//! control together (paper §4.1.2, thesis §5.2–5.3).
//!
//! A path is a list of link ids of any hashable type (an [`EdgeId`](crate::EdgeId), or a link
//! number that names both directions of a duplex link; see [`crate::k_edge_disjoint_paths`]
//! for that convention). Two rules:
//!
//! * [`shared_link_groups`], the thesis rule (§5.2): paths that share any link are in one
//!   group, transitively.
//! * [`bottleneck_groups`], the paper rule (§4.1.1–4.1.2): paths that share a *friendliness
//!   bottleneck* (a shared link that limits their rate, eq. 2) are in one group, transitively.
//!
//! Both follow the thesis's O(k·h) method (§5.3) for k paths of h hops: one pass fills a hash
//! table keyed by link with the first path seen on it, and paths meeting on a link are merged
//! with a union-find, which is the "recursively merge groups sharing entries" of the text.
//!
//! Group ids are dense, `0..G`, numbered in the order of each group's first path: path 0 is
//! always in group 0, and the next path not in group 0 opens group 1 (decision D46). Each path
//! is in exactly one group; a group of one path runs uncoupled.

use std::collections::hash_map::Entry;
use std::hash::Hash;

use pathpool_core::hash::FxHashMap;

/// The factor `f` of eq. 2 (paper §4.1.1): a link `l` shared by paths `P(l)` is **not** a
/// friendliness bottleneck iff `b_l > max_{p ∈ P(l)} B_{p∖l} · f`, where `b_l` is the link's
/// available rate and `B_{p∖l}` the smallest rate on `p`'s other links. Decision D45.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum FbFactor {
    /// `(Z_l + 1) / 2` with `Z_l` the number of the connection's paths through `l`: eq. 2 as
    /// printed and its Fig. 1 derivation (a single-path flow shares the widest individual link
    /// with one subflow and `l` with `Z_l`). The default.
    #[default]
    PathsOnLink,
    /// `(k + 1) / 2` with `k` the number of paths in the set: the 4/2 that the paper prints for
    /// Fig. 2's three subflows, where each shared link carries two.
    AllPaths,
    /// A constant factor (non-negative).
    Fixed(f64),
}

impl FbFactor {
    fn value(self, on_link: u32, paths: usize) -> f64 {
        match self {
            FbFactor::PathsOnLink => (f64::from(on_link) + 1.0) / 2.0,
            FbFactor::AllPaths => (paths as f64 + 1.0) / 2.0,
            FbFactor::Fixed(f) => f,
        }
    }
}

/// A hash table keyed by link id.
///
/// Fx, not SipHash: SipHash's tens of cycles per link id otherwise dominate the O(k·h)
/// method at the sizes of interest (see `benches/group_id.rs`).
type LinkTable<L, V> = FxHashMap<L, V>;

/// Union-find over path indices; the root of a set is its smallest member.
struct UnionFind {
    parent: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
        }
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            // Path halving.
            let up = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = up;
            x = up;
        }
        x
    }

    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra < rb {
            self.parent[rb as usize] = ra;
        } else {
            self.parent[ra as usize] = rb;
        }
    }

    /// Dense group ids in the order of each group's first path (module docs).
    fn dense_ids(mut self) -> Vec<u32> {
        let n = self.parent.len();
        let mut ids = vec![0; n];
        let mut next = 0;
        for p in 0..n {
            let root = self.find(p as u32) as usize;
            // Roots are smallest members, so a non-root's root already has its id.
            if root == p {
                ids[p] = next;
                next += 1;
            } else {
                ids[p] = ids[root];
            }
        }
        ids
    }
}

/// The thesis rule (§5.2–5.3): paths that share at least one link get the same group id,
/// transitively (Fig. 4.8 / paper Fig. 3 (c): A–B and B–C sharing two different links make one
/// group A, B, C). O(k·h) expected: a hash table from link to the first path seen on it, and a
/// union-find. Returns one id per path (module docs for the numbering).
pub fn shared_link_groups<L, P>(paths: &[P]) -> Vec<u32>
where
    L: Copy + Eq + Hash,
    P: AsRef<[L]>,
{
    let total = paths.iter().map(|p| p.as_ref().len()).sum();
    let mut first: LinkTable<L, u32> =
        LinkTable::with_capacity_and_hasher(total, Default::default());
    let mut sets = UnionFind::new(paths.len());
    for (i, p) in paths.iter().enumerate() {
        for &l in p.as_ref() {
            match first.entry(l) {
                Entry::Occupied(o) => sets.union(*o.get(), i as u32),
                Entry::Vacant(v) => {
                    v.insert(i as u32);
                }
            }
        }
    }
    sets.dense_ids()
}

/// What the hash table holds per link for [`bottleneck_groups`].
struct LinkUse {
    /// The first path seen on the link, and the last (to count a path that repeats a link once).
    first: u32,
    last: u32,
    /// `Z_l`: distinct paths through the link.
    paths: u32,
    /// `b_l`.
    rate: f64,
    /// `max_p B_{p∖l}` over the paths seen so far.
    widest_other: f64,
    /// Eq. 2 is false: the link is a friendliness bottleneck.
    fb: bool,
}

/// The paper rule (§4.1.1–4.1.2): paths that share a friendliness bottleneck (FB) get the same
/// group id, transitively ("all paths that share a FB with each other (not necessarily the
/// same bottleneck) are marked with the same group_id"). A link is an FB when at least two
/// paths use it and eq. 2 is false for it (see [`FbFactor`]): `b_l ≤ max_p B_{p∖l} · f`, so the
/// link, not the paths' own narrowest links, limits the best single-path competitor.
///
/// `rate(l)` is the available rate `b_l` of link `l` (any unit, not NaN). A path made of `l`
/// alone has `B_{p∖l} = +∞`, so a shared link that is a path's only link is always an FB. A
/// zero-rate shared link is always an FB, and a path with a zero-rate link elsewhere never
/// makes a shared link an FB on its own (decision D47).
///
/// The FB test runs per link rather than per group of overlapping paths as the paper's §4.1.3
/// orders it: a group with one FB among several harmless shared links then couples only the
/// paths the FB joins (spec 002 §4.5). O(k·h) expected, as [`shared_link_groups`], plus one
/// pass per path for its two smallest rates. Ids as in the module docs.
pub fn bottleneck_groups<L, P>(paths: &[P], rate: impl Fn(L) -> f64, factor: FbFactor) -> Vec<u32>
where
    L: Copy + Eq + Hash,
    P: AsRef<[L]>,
{
    let total = paths.iter().map(|p| p.as_ref().len()).sum();
    let mut table: LinkTable<L, LinkUse> =
        LinkTable::with_capacity_and_hasher(total, Default::default());
    let mut rates = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let (i, p) = (i as u32, p.as_ref());
        rates.clear();
        rates.extend(p.iter().map(|&l| rate(l)));
        // The path's narrowest link (first of equals) and the narrowest of its other links:
        // B_{p∖l} is the first for every link but that one.
        let mut narrowest: Option<(L, f64)> = None;
        for (&l, &b) in p.iter().zip(&rates) {
            if narrowest.is_none_or(|(_, n)| b < n) {
                narrowest = Some((l, b));
            }
        }
        let Some((narrow_link, narrow_rate)) = narrowest else {
            continue;
        };
        let next_rate = p
            .iter()
            .zip(&rates)
            .filter(|(&l, _)| l != narrow_link)
            .fold(f64::INFINITY, |m, (_, &b)| m.min(b));
        for (&l, &b) in p.iter().zip(&rates) {
            let other = if l == narrow_link {
                next_rate
            } else {
                narrow_rate
            };
            match table.entry(l) {
                Entry::Occupied(mut o) => {
                    let u = o.get_mut();
                    if u.last != i {
                        u.last = i;
                        u.paths += 1;
                        u.widest_other = u.widest_other.max(other);
                    }
                }
                Entry::Vacant(v) => {
                    v.insert(LinkUse {
                        first: i,
                        last: i,
                        paths: 1,
                        rate: b,
                        widest_other: other,
                        fb: false,
                    });
                }
            }
        }
    }
    for u in table.values_mut() {
        let f = factor.value(u.paths, paths.len());
        // Eq. 2: not an FB iff b_l > max_p B_{p∖l} · f. An infinite B (a path with no other
        // link) is limited by this link whatever f is, which `∞ · 0 = NaN` would hide.
        let not_fb = u.widest_other.is_finite() && u.rate > u.widest_other * f;
        u.fb = u.paths >= 2 && !not_fb;
    }
    let mut sets = UnionFind::new(paths.len());
    for (i, p) in paths.iter().enumerate() {
        for l in p.as_ref() {
            let u = &table[l];
            if u.fb {
                sets.union(u.first, i as u32);
            }
        }
    }
    sets.dense_ids()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Fig. 3 of the paper (Fig. 4.8 of the thesis): three paths A, B, C from a source to a
    // destination, all links of the same rate, so every shared link is an FB by eq. 2
    // (b > b · 3/2 is false). Link names are numbers; A, B, C are paths 0, 1, 2.

    fn both_rules(paths: &[Vec<u32>]) -> (Vec<u32>, Vec<u32>) {
        (
            shared_link_groups(paths),
            bottleneck_groups(paths, |_| 100.0, FbFactor::default()),
        )
    }

    #[test]
    fn fig3a_disjoint_paths_get_three_groups() {
        let paths = vec![vec![1, 2, 3], vec![4, 5, 6], vec![7, 8, 9]];
        let (a, b) = both_rules(&paths);
        assert_eq!(a, vec![0, 1, 2]);
        assert_eq!(b, vec![0, 1, 2]);
    }

    #[test]
    fn fig3b_a_and_b_share_an_fb_c_alone() {
        let paths = vec![vec![1, 10, 3], vec![4, 10, 6], vec![7, 8, 9]];
        let (a, b) = both_rules(&paths);
        assert_eq!(a, vec![0, 0, 1]);
        assert_eq!(b, vec![0, 0, 1]);
    }

    #[test]
    fn fig3c_chained_fbs_make_one_group() {
        // A–B share link 10, B–C share link 20: one group even though A and C share nothing.
        let paths = vec![vec![1, 10, 3], vec![4, 10, 20], vec![7, 20, 9]];
        let (a, b) = both_rules(&paths);
        assert_eq!(a, vec![0, 0, 0]);
        assert_eq!(b, vec![0, 0, 0]);
    }

    #[test]
    fn fig3d_two_separate_fbs_make_two_groups() {
        // Four paths: A–B share link 10, C–D share link 20.
        let paths = vec![
            vec![1, 10, 3],
            vec![4, 10, 6],
            vec![7, 20, 9],
            vec![11, 20, 12],
        ];
        let (a, b) = both_rules(&paths);
        assert_eq!(a, vec![0, 0, 1, 1]);
        assert_eq!(b, vec![0, 0, 1, 1]);
        // Numbering follows the first path of each group, whatever the order.
        let reordered = vec![
            paths[2].clone(),
            paths[0].clone(),
            paths[3].clone(),
            paths[1].clone(),
        ];
        assert_eq!(shared_link_groups(&reordered), vec![0, 1, 0, 1]);
    }

    /// Fig. 1: three subflows on first links x1, x2, x3 then all on bn (Z = 3). bn is not an
    /// FB iff b_bn > b_xmax · (3 + 1)/2 = 2 · b_xmax.
    #[test]
    fn fig1_shared_link_wider_than_twice_the_widest_first_link_is_not_an_fb() {
        let paths = vec![vec![1, 0], vec![2, 0], vec![3, 0]];
        let rates = |bn: f64| move |l: u32| [bn, 10.0, 20.0, 30.0][l as usize];
        assert_eq!(
            bottleneck_groups(&paths, rates(61.0), FbFactor::default()),
            vec![0, 1, 2]
        );
        assert_eq!(
            bottleneck_groups(&paths, rates(60.0), FbFactor::default()),
            vec![0, 0, 0]
        );
        // The thesis rule couples them regardless.
        assert_eq!(shared_link_groups(&paths), vec![0, 0, 0]);
    }

    /// Fig. 2 as reconstructed in spec 002 §4.2: paths {x11, x21, x31}, {x12, x21, x32},
    /// {x13, x23, x32}; shared links x21 and x32 carry two paths each. The printed factor 4/2
    /// (`AllPaths`) and eq. 2's 3/2 (`PathsOnLink`) disagree when b_x21 lies between.
    #[test]
    fn fig2_factor_choice_matters_between_three_halves_and_two() {
        let (x11, x21, x31, x12, x32, x13, x23) = (0, 1, 2, 3, 4, 5, 6);
        let paths = vec![
            vec![x11, x21, x31],
            vec![x12, x21, x32],
            vec![x13, x23, x32],
        ];
        // B_{p∖x21} = max(min(10, 10), min(10, 100)) = 10; b_x21 = 17 is > 15 and ≤ 20.
        // x32 is wide (100 > 2 · 10) and never an FB.
        let rate = |l: u32| [10.0, 17.0, 10.0, 10.0, 100.0, 10.0, 10.0][l as usize];
        assert_eq!(
            bottleneck_groups(&paths, rate, FbFactor::PathsOnLink),
            vec![0, 1, 2]
        );
        assert_eq!(
            bottleneck_groups(&paths, rate, FbFactor::AllPaths),
            vec![0, 0, 1]
        );
        assert_eq!(
            bottleneck_groups(&paths, rate, FbFactor::Fixed(1.0)),
            vec![0, 1, 2]
        );
    }

    #[test]
    fn edge_cases_empty_repeated_and_zero_rates() {
        let none: Vec<Vec<u32>> = Vec::new();
        assert!(shared_link_groups(&none).is_empty());
        assert!(bottleneck_groups(&none, |_| 1.0, FbFactor::default()).is_empty());
        // An empty path and a path repeating a link are groups of their own.
        let paths = vec![vec![], vec![1, 1], vec![2]];
        assert_eq!(shared_link_groups(&paths), vec![0, 1, 2]);
        assert_eq!(
            bottleneck_groups(&paths, |_| 1.0, FbFactor::default()),
            vec![0, 1, 2]
        );
        // Two paths whose only link is the shared one: always an FB, even a very wide one.
        let single = vec![vec![5], vec![5]];
        assert_eq!(
            bottleneck_groups(&single, |_| 1e12, FbFactor::Fixed(0.0)),
            vec![0, 0]
        );
        // A zero-rate shared link is an FB; a path stuck at zero elsewhere does not make a
        // wider shared link one (D47).
        let two = vec![vec![1, 0], vec![2, 0]];
        let zero_shared = |l: u32| [0.0, 10.0, 10.0][l as usize];
        assert_eq!(
            bottleneck_groups(&two, zero_shared, FbFactor::default()),
            vec![0, 0]
        );
        let zero_elsewhere = |l: u32| [1.0, 0.0, 0.0][l as usize];
        assert_eq!(
            bottleneck_groups(&two, zero_elsewhere, FbFactor::default()),
            vec![0, 1]
        );
    }
}
