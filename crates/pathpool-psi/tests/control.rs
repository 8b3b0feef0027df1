//! The control plane end to end: names, matching, paths, FIDs that forward along them, and
//! group_ids.

use pathpool_core::Dur;
use pathpool_psi::{
    Assistance, ContentName, Matching, PathPolicy, Psi, Rendezvous, TmConfig, TopologyManager,
};
use pathpool_topo::{EdgeId, FbFactor, Fid, Graph, NodeIx};

/// Duplex links between numbered nodes; link i is edges 2i (a→b) and 2i+1 (b→a).
fn duplex(n: usize, links: &[(u32, u32)]) -> Graph {
    let mut g = Graph::with_nodes(n);
    for &(a, b) in links {
        g.add_edge(NodeIx(a), NodeIx(b));
        g.add_edge(NodeIx(b), NodeIx(a));
    }
    g
}

fn manager(
    n: usize,
    links: &[(u32, u32)],
    rates: Option<Vec<f64>>,
    config: TmConfig,
) -> TopologyManager {
    let g = duplex(n, links);
    let edges = g.edge_count();
    let rates = rates.unwrap_or_else(|| vec![1e7; edges]);
    TopologyManager::new(g, rates, vec![Dur::from_ms(5); edges], config).unwrap()
}

/// Follows a FID from `from` as LIPSIN forwarding nodes would (every matching out-link),
/// returning the edges crossed, breadth first, up to `ttl` hops.
fn flood(tm: &TopologyManager, from: NodeIx, fid: &Fid, ttl: usize) -> Vec<EdgeId> {
    let mut frontier = vec![from];
    let mut crossed = Vec::new();
    for _ in 0..ttl {
        let mut next = Vec::new();
        for n in frontier {
            for e in tm.tags().forward(n, fid) {
                crossed.push(e);
                next.push(tm.graph().ends(e).1);
            }
        }
        frontier = next;
    }
    crossed
}

#[test]
fn a_multisource_subscription_gets_working_fid_pairs_and_groups() {
    // Publisher 1 reaches the subscriber 0 through routers 3 and 5 (1-3-0, 1-5-0), publisher
    // 2 through router 4 (2-4-0): three paths sharing no link.
    let links = [(1, 3), (3, 0), (2, 4), (4, 0), (1, 5), (5, 0)];
    let config = TmConfig {
        policy: PathPolicy::KShortest { k: 2 },
        ..TmConfig::default()
    };
    let mut rv = Rendezvous::new();
    let name = ContentName::new("/films/a.bin").unwrap();
    rv.publish(&name, NodeIx(1));
    rv.publish(&name, NodeIx(2));
    let psi = Psi {
        rendezvous: rv,
        tm: manager(6, &links, None, config),
    };
    let set = psi
        .subscribe(&name, NodeIx(0), Matching::Multisource { max_sources: 4 })
        .unwrap();
    let pubs: Vec<u32> = set.paths.iter().map(|p| p.publisher.0).collect();
    assert_eq!(pubs, vec![1, 1, 2]);
    let groups: Vec<u32> = set.paths.iter().map(|p| p.group_id).collect();
    assert_eq!(groups, vec![0, 1, 2]);
    let ends = |e: EdgeId| psi.tm.graph().ends(e);
    for p in &set.paths {
        assert_eq!(ends(p.forward[0]).0, p.publisher);
        assert_eq!(ends(*p.forward.last().unwrap()).1, NodeIx(0));
        assert_eq!(ends(p.reverse[0]).0, NodeIx(0));
        assert_eq!(ends(*p.reverse.last().unwrap()).1, p.publisher);
        // Each FID leads exactly along its path (12 links, 256-bit filters: no false
        // positive here; the rate in general is measured in pathpool-topo's tests).
        assert_eq!(flood(&psi.tm, p.publisher, &p.forward_fid, 8), p.forward);
        assert_eq!(flood(&psi.tm, NodeIx(0), &p.reverse_fid, 8), p.reverse);
    }
    let one = psi.subscribe(&name, NodeIx(0), Matching::Single).unwrap();
    assert_eq!(one.paths.len(), 2);
    assert!(one.paths.iter().all(|p| p.publisher == NodeIx(1)));
}

#[test]
fn shared_links_group_paths_unless_assistance_is_off_or_the_link_is_not_a_bottleneck() {
    // Two paths from 1 to 0 that meet on the last link 2-0 (edges 8, 9): 1-3-2-0, 1-4-2-0.
    let links = [(1, 3), (3, 2), (1, 4), (4, 2), (2, 0)];
    let groups = |rates: Option<Vec<f64>>, assistance| -> Vec<u32> {
        let config = TmConfig {
            policy: PathPolicy::KShortest { k: 2 },
            assistance,
            ..TmConfig::default()
        };
        manager(5, &links, rates, config)
            .paths(&[NodeIx(1)], NodeIx(0))
            .unwrap()
            .paths
            .iter()
            .map(|p| p.group_id)
            .collect()
    };
    assert_eq!(groups(None, Assistance::SharedLink), vec![0, 0]);
    assert_eq!(groups(None, Assistance::None), vec![0, 0]);
    // Equal rates: the shared link limits both paths, a friendliness bottleneck.
    let fb = Assistance::Bottleneck(FbFactor::PathsOnLink);
    assert_eq!(groups(None, fb), vec![0, 0]);
    // A shared link ten times faster than the rest is not one (eq. 2, factor 3/2).
    let mut fast = vec![1e7; 10];
    fast[8] = 1e8;
    fast[9] = 1e8;
    assert_eq!(groups(Some(fast), fb), vec![0, 1]);
    // A shared link the driver marks as never queuing (the simulator's wires) is not shared
    // (D339); an infinite rate alone is only an unknown one (the overlay's), still shared.
    let mut wire = vec![1e7; 10];
    wire[8] = f64::INFINITY;
    wire[9] = f64::INFINITY;
    let marked = |assistance| -> Vec<u32> {
        let config = TmConfig {
            policy: PathPolicy::KShortest { k: 2 },
            assistance,
            ..TmConfig::default()
        };
        let mut tm = manager(5, &links, Some(wire.clone()), config);
        tm.set_queueless(EdgeId(8), true).unwrap();
        tm.set_queueless(EdgeId(9), true).unwrap();
        let set = tm.paths(&[NodeIx(1)], NodeIx(0)).unwrap();
        set.paths.iter().map(|p| p.group_id).collect()
    };
    assert_eq!(marked(Assistance::SharedLink), vec![0, 1]);
    assert_eq!(marked(Assistance::None), vec![0, 0]);
    assert_eq!(
        groups(Some(wire.clone()), Assistance::SharedLink),
        vec![0, 0]
    );
    // Disjoint paths under "no assistance" are still one group: the over-cautious case of
    // thesis E5b.
    let apart = [(1, 3), (3, 0), (1, 4), (4, 0)];
    let config = TmConfig {
        policy: PathPolicy::KShortest { k: 2 },
        assistance: Assistance::None,
        ..TmConfig::default()
    };
    let set = manager(5, &apart, None, config)
        .paths(&[NodeIx(1)], NodeIx(0))
        .unwrap();
    assert_eq!(
        set.paths.iter().map(|p| p.group_id).collect::<Vec<_>>(),
        vec![0, 0]
    );
}

#[test]
fn disjoint_policies_and_failures() {
    // A square 1-2-0 / 1-3-0 with a chord 2-3.
    let links = [(1, 2), (2, 0), (1, 3), (3, 0), (2, 3)];
    let with = |policy| {
        manager(
            4,
            &links,
            None,
            TmConfig {
                policy,
                ..TmConfig::default()
            },
        )
    };
    let set = with(PathPolicy::KDisjoint { k: 2 })
        .paths(&[NodeIx(1)], NodeIx(0))
        .unwrap();
    assert_eq!(set.paths.len(), 2);
    let mut used: Vec<u32> = set
        .paths
        .iter()
        .flat_map(|p| p.forward.iter().map(|e| e.0 / 2))
        .collect();
    let before = used.len();
    used.sort_unstable();
    used.dedup();
    assert_eq!(used.len(), before, "the two paths share no link");
    let groups: Vec<u32> = set.paths.iter().map(|p| p.group_id).collect();
    assert_eq!(groups, vec![0, 1]);

    let only = with(PathPolicy::DisjointOnly {
        k: 3,
        candidates: 10,
    });
    assert_eq!(only.paths(&[NodeIx(1)], NodeIx(0)).unwrap().paths.len(), 2);

    // Fail one direction of link 2-0 (edge 3): the TM routes around it, because a path
    // needs both directions.
    let mut tm = with(PathPolicy::KShortest { k: 1 });
    let first = tm.paths(&[NodeIx(1)], NodeIx(0)).unwrap().paths[0]
        .forward
        .clone();
    assert_eq!(first, vec![EdgeId(0), EdgeId(2)]);
    assert!(tm.set_edge_up(EdgeId(3), false).unwrap());
    assert!(!tm.set_edge_up(EdgeId(3), false).unwrap());
    let again = tm.paths(&[NodeIx(1)], NodeIx(0)).unwrap().paths[0]
        .forward
        .clone();
    assert_eq!(again, vec![EdgeId(4), EdgeId(6)]);
    tm.set_edge_up(EdgeId(6), false).unwrap();
    let e = tm.paths(&[NodeIx(1)], NodeIx(0)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no publisher has a usable path to and from node 0"
    );
    assert!(tm.set_edge_up(EdgeId(99), true).is_err());
}

#[test]
fn end_hosts_do_not_carry_transit_traffic() {
    // 1-2-0 is the short way, but 2 is a host; the TM takes 1-3-4-0 instead.
    let links = [(1, 2), (2, 0), (1, 3), (3, 4), (4, 0)];
    let mut tm = manager(5, &links, None, TmConfig::default());
    let first = tm.paths(&[NodeIx(1)], NodeIx(0)).unwrap().paths[0]
        .forward
        .clone();
    assert_eq!(first, vec![EdgeId(0), EdgeId(2)]);
    tm.set_transit(NodeIx(2), false).unwrap();
    let around = tm.paths(&[NodeIx(1)], NodeIx(0)).unwrap().paths[0]
        .forward
        .clone();
    assert_eq!(around, vec![EdgeId(4), EdgeId(6), EdgeId(8)]);
    // A non-transit publisher or subscriber still sends and receives.
    tm.set_transit(NodeIx(1), false).unwrap();
    tm.set_transit(NodeIx(0), false).unwrap();
    assert_eq!(
        tm.paths(&[NodeIx(1)], NodeIx(0)).unwrap().paths[0].forward,
        around
    );
    assert!(tm.set_transit(NodeIx(9), false).is_err());
}

#[test]
fn bad_input_is_reported() {
    let g = duplex(2, &[(0, 1)]);
    let e = TopologyManager::new(
        g.clone(),
        vec![1.0],
        vec![Dur::ZERO; 2],
        TmConfig::default(),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "rates: 1 values for a graph of 2 edges");
    let e = TopologyManager::new(
        g.clone(),
        vec![1.0, f64::NAN],
        vec![Dur::ZERO; 2],
        TmConfig::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the rate of edge 1 is not a non-negative number"
    );
    let bad_k = TmConfig {
        lipsin_k: 0,
        ..TmConfig::default()
    };
    assert!(TopologyManager::new(g, vec![1.0; 2], vec![Dur::ZERO; 2], bad_k).is_err());
    let tm = manager(2, &[(0, 1)], None, TmConfig::default());
    assert_eq!(
        tm.paths(&[NodeIx(5)], NodeIx(0)).unwrap_err().to_string(),
        "node 5 is not in the topology"
    );
    let psi = Psi {
        rendezvous: Rendezvous::new(),
        tm,
    };
    let name = ContentName::new("/a/b").unwrap();
    let e = psi
        .subscribe(&name, NodeIx(0), Matching::Single)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "no publisher of /a/b is known to the rendezvous"
    );
}
