//! Client and server placement on an AS topology for the domain-scale experiments (thesis
//! §4.4 E7, Table 4.2): clients outside the AS on its access nodes (degree 1), two per
//! access node; servers inside the AS, 10–20% as many as clients, at random nodes; each
//! client on a 100 Mb/s access link and, when dual-homed, on a second, slower link to another
//! access node ("smartphone Wi-Fi + 4G"); access delays uniform in a range.
//!
//! Everything is drawn from one [`Rng`] in a fixed order that does not depend on the
//! options that only select what is used (dual-homing, the multipath share), so one seed
//! gives the same access nodes, servers and delays whatever the configuration: a run with
//! single-path clients and one with multipath clients are compared on the same placement
//! (decision D67).

use std::fmt;

use pathpool_core::Dur;
use pathpool_core::Rng;

use crate::zoo::Topology;

/// The placement rules (thesis E7); [`Default`] gives the thesis's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacementRules {
    /// Clients attached to every access node (thesis: two).
    pub clients_per_access_node: usize,
    /// The number of servers is `round(f · clients)` with `f` uniform in this range (thesis:
    /// "10–20% of clients"), at least one.
    pub server_fraction: (f64, f64),
    /// Access-link delays are uniform in `[lo, hi]` (thesis: 5 to 125, 250 or 500 ms).
    pub access_delay: (Dur, Dur),
    /// Whether clients get a second access link to another access node (thesis E7b).
    pub dual_homed: bool,
    /// Share of clients that run multipath transfers (thesis E7a: 50%); exactly
    /// `round(share · clients)` clients, chosen at random.
    pub multipath_share: f64,
}

impl Default for PlacementRules {
    fn default() -> Self {
        PlacementRules {
            clients_per_access_node: 2,
            server_fraction: (0.1, 0.2),
            access_delay: (Dur::from_ms(5), Dur::from_ms(125)),
            dual_homed: false,
            multipath_share: 1.0,
        }
    }
}

/// One client (outside the AS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Client {
    /// Its access node (a node index of the topology), on the primary access link.
    pub access_node: usize,
    /// Primary access link's one-way delay.
    pub access_delay: Dur,
    /// The second access node of a dual-homed client (another access node).
    pub second_access_node: Option<usize>,
    /// The second access link's one-way delay.
    pub second_access_delay: Option<Dur>,
    /// Index into [`Placement::servers`] of the server it downloads from.
    pub server: usize,
    /// Whether it runs a multipath transfer.
    pub multipath: bool,
}

/// Clients and servers placed on a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The node (index into the topology's nodes) each server sits at.
    pub servers: Vec<usize>,
    /// The clients, access node by access node (ascending node index).
    pub clients: Vec<Client>,
}

/// Why a topology cannot host a placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacementError {
    /// A rule is out of range; the field and why.
    BadRule(&'static str, String),
    /// The topology has no access node (no node of degree 1).
    NoAccessNode,
    /// Dual-homing needs two access nodes.
    OneAccessNode,
}

impl fmt::Display for PlacementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlacementError::BadRule(field, why) => write!(f, "{field}: {why}"),
            PlacementError::NoAccessNode => {
                f.write_str("the topology has no access node (node of degree 1)")
            }
            PlacementError::OneAccessNode => {
                f.write_str("dual-homed clients need two access nodes; the topology has one")
            }
        }
    }
}

impl std::error::Error for PlacementError {}

fn check_rules(r: &PlacementRules) -> Result<(), PlacementError> {
    let bad = |field, why: &str| Err(PlacementError::BadRule(field, why.to_string()));
    if r.clients_per_access_node == 0 {
        return bad("clients_per_access_node", "must be at least 1");
    }
    let (lo, hi) = r.server_fraction;
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi && hi <= 1.0) {
        return bad("server_fraction", "must be [lo, hi] with 0 < lo <= hi <= 1");
    }
    if r.access_delay.0 > r.access_delay.1 {
        return bad("access_delay", "must be [lo, hi] with lo <= hi");
    }
    if !(0.0..=1.0).contains(&r.multipath_share) {
        return bad("multipath_share", "must be between 0 and 1");
    }
    Ok(())
}

/// A uniform duration in `[lo, hi]`, to the nanosecond.
fn uniform_dur(rng: &mut Rng, (lo, hi): (Dur, Dur)) -> Dur {
    let lo_ns = lo.as_ps() / 1_000;
    let hi_ns = hi.as_ps() / 1_000;
    Dur::from_ns(lo_ns + rng.below(hi_ns - lo_ns + 1))
}

/// Places clients and servers on `topo` by `rules`, drawing from `rng` (thesis E7).
///
/// The draws, in order: the server fraction; the server nodes (distinct nodes while there
/// are enough, by a partial Fisher–Yates shuffle); for each client, its server, primary
/// delay, second access node (uniform among the other access nodes) and second delay; then
/// a shuffle choosing the multipath clients. Second access nodes and delays are drawn (and
/// dropped) for single-homed clients too, so the other draws do not depend on dual-homing.
///
/// # Errors
/// Rules out of range, a topology without access nodes, or dual-homing with only one.
pub fn place(
    topo: &Topology,
    rules: &PlacementRules,
    rng: &mut Rng,
) -> Result<Placement, PlacementError> {
    check_rules(rules)?;
    let ans = topo.access_nodes();
    if ans.is_empty() {
        return Err(PlacementError::NoAccessNode);
    }
    if rules.dual_homed && ans.len() < 2 {
        return Err(PlacementError::OneAccessNode);
    }
    let n_clients = ans.len() * rules.clients_per_access_node;
    let (lo, hi) = rules.server_fraction;
    let fraction = lo + (hi - lo) * rng.uniform();
    let n_servers = ((fraction * n_clients as f64).round() as usize).max(1);
    let n_nodes = topo.nodes().len();
    let mut pool: Vec<usize> = (0..n_nodes).collect();
    let mut servers = Vec::with_capacity(n_servers);
    for i in 0..n_servers {
        let j = i % n_nodes;
        if j == 0 && i > 0 {
            // More servers than nodes: start a new round of distinct nodes.
            pool = (0..n_nodes).collect();
        }
        let pick = j + rng.below((n_nodes - j) as u64) as usize;
        pool.swap(j, pick);
        servers.push(pool[j]);
    }
    let mut clients = Vec::with_capacity(n_clients);
    for (a, &an) in ans.iter().enumerate() {
        for _ in 0..rules.clients_per_access_node {
            let server = rng.below(n_servers as u64) as usize;
            let access_delay = uniform_dur(rng, rules.access_delay);
            let second = if ans.len() > 1 {
                let o = rng.below(ans.len() as u64 - 1) as usize;
                Some(ans[if o >= a { o + 1 } else { o }])
            } else {
                None
            };
            let second_delay = uniform_dur(rng, rules.access_delay);
            clients.push(Client {
                access_node: an,
                access_delay,
                second_access_node: second.filter(|_| rules.dual_homed),
                second_access_delay: second.filter(|_| rules.dual_homed).map(|_| second_delay),
                server,
                multipath: false,
            });
        }
    }
    let n_multipath = (rules.multipath_share * n_clients as f64).round() as usize;
    let mut order: Vec<usize> = (0..n_clients).collect();
    for i in (1..n_clients).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    for &c in &order[..n_multipath] {
        clients[c].multipath = true;
    }
    Ok(Placement { servers, clients })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zoo::{TopoLink, TopoNode};

    /// A ring of 6 with 4 leaves: access nodes 6, 7, 8, 9.
    fn topo() -> Topology {
        let nodes = (0..10)
            .map(|i| TopoNode {
                name: format!("n{i}"),
                lat_lon: None,
            })
            .collect();
        let mut links: Vec<TopoLink> = (0..6)
            .map(|i| TopoLink {
                a: i,
                b: (i + 1) % 6,
                length_km: None,
            })
            .collect();
        for (leaf, at) in [(6, 0), (7, 2), (8, 3), (9, 5)] {
            links.push(TopoLink {
                a: leaf,
                b: at,
                length_km: None,
            });
        }
        Topology::new("ring", nodes, links).unwrap()
    }

    #[test]
    fn rules_hold() {
        let t = topo();
        let rules = PlacementRules {
            dual_homed: true,
            multipath_share: 0.5,
            ..PlacementRules::default()
        };
        for seed in 0..200 {
            let p = place(&t, &rules, &mut Rng::seed_from_u64(seed)).unwrap();
            assert_eq!(p.clients.len(), 8, "two clients per access node");
            for an in [6, 7, 8, 9] {
                assert_eq!(p.clients.iter().filter(|c| c.access_node == an).count(), 2);
            }
            // 10–20% of 8 clients rounds to 1 or 2 servers.
            assert!((1..=2).contains(&p.servers.len()), "{}", p.servers.len());
            let mut s = p.servers.clone();
            s.dedup();
            assert_eq!(s.len(), p.servers.len(), "distinct server nodes");
            assert!(p.servers.iter().all(|&n| n < 10));
            for c in &p.clients {
                let second = c.second_access_node.unwrap();
                assert_ne!(second, c.access_node, "dual-homed ANs differ");
                assert!([6, 7, 8, 9].contains(&second));
                for d in [c.access_delay, c.second_access_delay.unwrap()] {
                    assert!(d >= Dur::from_ms(5) && d <= Dur::from_ms(125));
                }
                assert!(c.server < p.servers.len());
            }
            assert_eq!(p.clients.iter().filter(|c| c.multipath).count(), 4);
        }
    }

    #[test]
    fn server_counts_follow_the_fraction() {
        // 30 access nodes -> 60 clients -> 6 to 12 servers.
        let n = 31;
        let nodes = (0..n)
            .map(|i| TopoNode {
                name: format!("n{i}"),
                lat_lon: None,
            })
            .collect();
        let links = (1..n)
            .map(|i| TopoLink {
                a: 0,
                b: i,
                length_km: None,
            })
            .collect::<Vec<_>>();
        let star = Topology::new("star", nodes, links).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..300 {
            let p = place(
                &star,
                &PlacementRules::default(),
                &mut Rng::seed_from_u64(seed),
            )
            .unwrap();
            assert!((6..=12).contains(&p.servers.len()), "{}", p.servers.len());
            seen.insert(p.servers.len());
        }
        assert!(seen.len() >= 5, "the fraction varies: {seen:?}");
    }

    #[test]
    fn deterministic_and_independent_of_selection_options() {
        let t = topo();
        let single = PlacementRules::default();
        let dual = PlacementRules {
            dual_homed: true,
            ..single
        };
        let a = place(&t, &single, &mut Rng::seed_from_u64(7)).unwrap();
        let b = place(&t, &single, &mut Rng::seed_from_u64(7)).unwrap();
        assert_eq!(a, b);
        let c = place(&t, &dual, &mut Rng::seed_from_u64(7)).unwrap();
        assert_eq!(a.servers, c.servers);
        for (x, y) in a.clients.iter().zip(&c.clients) {
            assert_eq!(
                (x.access_node, x.access_delay, x.server),
                (y.access_node, y.access_delay, y.server)
            );
            assert!(x.second_access_node.is_none());
        }
        let d = place(&t, &single, &mut Rng::seed_from_u64(8)).unwrap();
        assert_ne!(a, d, "another seed, another placement");
    }

    #[test]
    fn bad_rules_and_topologies_are_named() {
        let t = topo();
        let e = place(
            &t,
            &PlacementRules {
                server_fraction: (0.3, 0.2),
                ..PlacementRules::default()
            },
            &mut Rng::seed_from_u64(1),
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("server_fraction"), "{e}");
        let e = place(
            &t,
            &PlacementRules {
                multipath_share: 1.5,
                ..PlacementRules::default()
            },
            &mut Rng::seed_from_u64(1),
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("multipath_share"), "{e}");
        let nodes = (0..3)
            .map(|i| TopoNode {
                name: format!("n{i}"),
                lat_lon: None,
            })
            .collect();
        let tri = Topology::new(
            "tri",
            nodes,
            (0..3).map(|i| TopoLink {
                a: i,
                b: (i + 1) % 3,
                length_km: None,
            }),
        )
        .unwrap();
        assert_eq!(
            place(&tri, &PlacementRules::default(), &mut Rng::seed_from_u64(1)),
            Err(PlacementError::NoAccessNode)
        );
    }
}
