use super::*;
use crate::packet::DEFAULT_LIFETIME;
use crate::store::CsStats;

/// The PTP paper's tree (scenario 1): consumer 1, producers 5–8, links in this order. A
/// node's faces are its links numbered 1.. in this order.
const TREE: [(u32, u32); 7] = [(1, 2), (2, 3), (2, 4), (3, 5), (3, 6), (4, 7), (4, 8)];

/// The forwarders of a network and its links, and what reached the applications.
struct Net {
    nodes: Vec<Forwarder>,
    /// (node, face) → (peer node, peer face).
    links: FxHashMap<(u32, FaceId), (u32, FaceId)>,
    producers: Vec<u32>,
    /// (node, packet) reaching an application (face 0) that is not a producer's Interest.
    apps: Vec<(u32, Packet)>,
    /// (producer, Interest) served.
    served: Vec<(u32, Interest)>,
    /// Every (node, face) an Interest left by.
    sent: Vec<(u32, FaceId)>,
    now: Time,
}

fn n(s: &str) -> Name {
    Name::parse(s).unwrap()
}

impl Net {
    /// The tree with `/c` routed towards every producer (all paths), `cs` at node 3, and
    /// `fallback`.
    fn tree(cs: Option<(usize, f64)>, fallback: TagFallback) -> Net {
        Net::build(&TREE, &[5, 6, 7, 8], cs, fallback)
    }

    /// Nodes 1..=max joined by `edges` (each a link, faces numbered in this order), with
    /// `producers`, `cs` at node 3 and `fallback`; each node routes `/c` to every face
    /// whose side of the tree holds a producer (the graph must be a tree rooted at 1, each
    /// edge written parent first).
    fn build(
        edges: &[(u32, u32)],
        producers: &[u32],
        cs: Option<(usize, f64)>,
        fallback: TagFallback,
    ) -> Net {
        let mut faces: FxHashMap<u32, FaceId> = FxHashMap::default();
        let mut links = FxHashMap::default();
        for &(a, b) in edges {
            let fa = *faces.entry(a).and_modify(|f| *f += 1).or_insert(1);
            let fb = *faces.entry(b).and_modify(|f| *f += 1).or_insert(1);
            links.insert((a, fa), (b, fb));
            links.insert((b, fb), (a, fa));
        }
        let max = edges.iter().map(|e| e.0.max(e.1)).max().unwrap_or(1);
        let mut nodes: Vec<Forwarder> = (0..=max)
            .map(|k| {
                Forwarder::new(
                    ForwarderConfig {
                        node: k,
                        faces: faces.get(&k).copied().unwrap_or(0),
                        fab: (16, FabKey::Stored),
                        cs: if k == 3 { cs } else { None },
                        paf: crate::paf::PafConfig::default(),
                        shaping: Vec::new(),
                        labeling: Labeling::None,
                        fallback,
                    },
                    Rng::seed_from_u64(u64::from(k)),
                )
            })
            .collect();
        let c = n("/c");
        // Below each node, whether a producer is there.
        let below = |node: u32| {
            let mut stack = vec![node];
            let mut found = false;
            while let Some(x) = stack.pop() {
                found |= producers.contains(&x);
                stack.extend(edges.iter().filter(|e| e.0 == x).map(|e| e.1));
            }
            found
        };
        let mut ends: Vec<((u32, FaceId), u32)> =
            links.iter().map(|(&end, &(peer, _))| (end, peer)).collect();
        ends.sort_unstable();
        for ((node, face), peer) in ends {
            let child = edges.contains(&(node, peer));
            if child && below(peer) {
                nodes[node as usize].fib_mut().add_next_hop(&c, face, 0);
            }
        }
        for &p in producers {
            nodes[p as usize].fib_mut().add_next_hop(&c, 0, 0);
        }
        Net {
            nodes,
            links,
            producers: producers.to_vec(),
            apps: Vec::new(),
            served: Vec::new(),
            sent: Vec::new(),
            now: Time::from_ms(1),
        }
    }

    /// The consumer's application at node 1 sends `interest`; everything runs to rest.
    fn ask(&mut self, interest: Interest) {
        self.nodes[1].on_interest(self.now, 0, interest);
        self.run();
    }

    fn run(&mut self) {
        loop {
            let mut moved = false;
            for k in 1..self.nodes.len() as u32 {
                while let Some((face, pkt)) = self.nodes[k as usize].poll_transmit() {
                    moved = true;
                    if let Packet::Interest(_) = pkt {
                        self.sent.push((k, face));
                    }
                    if face == 0 {
                        self.at_app(k, pkt);
                        continue;
                    }
                    let (peer, pf) = self.links[&(k, face)];
                    let now = self.now;
                    let fw = &mut self.nodes[peer as usize];
                    match pkt {
                        Packet::Interest(i) => fw.on_interest(now, pf, i),
                        Packet::Data(d) => fw.on_data(now, pf, d),
                        Packet::Nack(x) => fw.on_nack(now, pf, x),
                    }
                }
            }
            if !moved {
                return;
            }
        }
    }

    /// A producer answers an Interest with 1024 bytes (and an empty tag for a probe).
    fn at_app(&mut self, node: u32, pkt: Packet) {
        match pkt {
            Packet::Interest(i) if self.producers.contains(&node) => {
                let mut d = Data::new(i.name.clone(), 1024);
                if i.probe {
                    d.tag = Some(Vec::new());
                }
                self.served.push((node, i));
                let now = self.now;
                self.nodes[node as usize].on_data(now, 0, d);
            }
            other => self.apps.push((node, other)),
        }
    }

    fn data_at_consumer(&self) -> Vec<&Data> {
        self.apps
            .iter()
            .filter_map(|(k, p)| match (k, p) {
                (1, Packet::Data(d)) => Some(d),
                _ => None,
            })
            .collect()
    }
}

fn probe(seq: u32) -> Interest {
    let mut i = Interest::new(n(&format!("/c/A/{seq}")), 1000 + seq);
    i.probe = true;
    i
}

/// Issue 22, acceptance 1 (tags, tree link order): probes spread by equal-weight reach the
/// four producers, node 2 sending them on faces 2, 3, 2, 3; the probe Data from 6 reaches 1
/// with [3, 2, 1] (top last).
#[test]
fn probes_find_the_four_paths_and_collect_their_tags() {
    let mut net = Net::tree(None, TagFallback::Nack);
    for seq in 0..4 {
        net.ask(probe(seq));
    }
    let at_2: Vec<FaceId> = net.sent.iter().filter(|s| s.0 == 2).map(|s| s.1).collect();
    assert_eq!(at_2, [2, 3, 2, 3]);
    let served: Vec<u32> = net.served.iter().map(|s| s.0).collect();
    assert_eq!(served, [5, 7, 6, 8]);
    let tags: Vec<Vec<FaceId>> = net
        .data_at_consumer()
        .iter()
        .map(|d| d.tag.clone().unwrap())
        .collect();
    assert_eq!(
        tags,
        [vec![2, 2, 1], vec![2, 3, 1], vec![3, 2, 1], vec![3, 3, 1]]
    );
    assert!(net.data_at_consumer().iter().all(|d| !d.intermediate));
}

/// Issue 22, acceptance 1: with the tag [3, 2, 1], nodes 1, 2 and 3 pop 1, 2 and 3, and the
/// Interest reaches 6 with an empty tag; its Data comes back from the producer (flag 0).
#[test]
fn a_tagged_interest_follows_its_tag_to_the_producer() {
    let mut net = Net::tree(None, TagFallback::Nack);
    let mut i = Interest::new(n("/c/A/9"), 7);
    i.tag = vec![3, 2, 1];
    net.ask(i);
    assert_eq!(net.sent, [(1, 1), (2, 2), (3, 3), (6, 0)]);
    assert_eq!(net.served.len(), 1);
    assert_eq!(net.served[0].0, 6);
    assert!(net.served[0].1.tag.is_empty());
    let got = net.data_at_consumer();
    assert_eq!(got.len(), 1);
    assert!(!got[0].intermediate && got[0].tag.is_none());
    assert_eq!(net.nodes[2].stats().tags_followed, 1);
}

/// Issue 22, acceptance 1: a down face on the tag's path answers NACK(face-down) with the
/// default fallback; with `"name"` the tag is dropped and the Interest goes by best route.
#[test]
fn a_down_face_answers_a_nack_or_falls_back_to_the_name() {
    let mut i = Interest::new(n("/c/A/9"), 7);
    i.tag = vec![3, 2, 1];
    let mut net = Net::tree(None, TagFallback::Nack);
    net.nodes[3].set_face_up(3, false);
    net.ask(i.clone());
    assert!(net.served.is_empty());
    let nacks: Vec<&Packet> = net.apps.iter().map(|(_, p)| p).collect();
    assert_eq!(
        nacks,
        [&Packet::Nack(Nack {
            name: n("/c/A/9"),
            nonce: 7,
            probe: false,
            reason: NackReason::FaceDown
        })]
    );
    assert!(net.nodes.iter().all(|f| f.pit().is_empty()));
    let mut net = Net::tree(None, TagFallback::Name);
    net.nodes[3].set_face_up(3, false);
    net.ask(i);
    assert_eq!(net.served.len(), 1);
    assert_eq!(net.served[0].0, 5);
    assert_eq!(net.nodes[3].stats().tags_broken, 1);
}

/// Issue 22, acceptance 1 (CS): node 3 answers a second Interest for a name it has stored,
/// with flag 1; a probe for it goes past the store to a producer.
#[test]
fn a_cache_hit_is_flagged_and_probes_never_hit() {
    let mut net = Net::tree(Some((10, 1.0)), TagFallback::Nack);
    let name = n("/c/A/3");
    net.ask(Interest::new(name.clone(), 1));
    net.ask(Interest::new(name.clone(), 2));
    let got = net.data_at_consumer();
    assert_eq!(got.len(), 2);
    assert!(!got[0].intermediate && got[1].intermediate);
    assert_eq!(net.served.len(), 1);
    let mut p = probe(3);
    p.name = name;
    net.ask(p);
    assert_eq!(net.served.len(), 2);
    assert_eq!(
        net.nodes[3].cs().unwrap().stats(),
        CsStats {
            hits: 1,
            misses: 1,
            insertions: 1,
            evictions: 0,
            refused: 0
        }
    );
}

/// Aggregation at node 2: a second consumer's Interest for a pending name waits, and its
/// Data is flagged; a nonce already pending from another face is refused; a name with no
/// route is refused; an in-record's lifetime is NFD's.
#[test]
fn aggregation_duplicates_and_no_route() {
    let mut net = Net::tree(None, TagFallback::Nack);
    let name = n("/c/A/4");
    net.nodes[2].on_interest(net.now, 1, Interest::new(name.clone(), 1));
    net.nodes[2].on_interest(net.now, 3, Interest::new(name.clone(), 2));
    net.nodes[2].on_interest(net.now, 2, Interest::new(name.clone(), 1));
    assert_eq!(net.nodes[2].pit().stats().aggregations, 1);
    let out: Vec<(FaceId, Packet)> = std::iter::from_fn(|| net.nodes[2].poll_transmit()).collect();
    assert_eq!(out.len(), 2);
    assert!(matches!(&out[1], (2, Packet::Nack(x)) if x.reason == NackReason::Duplicate));
    assert_eq!(
        net.nodes[2].poll_timeout(),
        Some(net.now + DEFAULT_LIFETIME)
    );
    net.nodes[1].on_interest(net.now, 0, Interest::new(n("/z/1"), 5));
    assert!(matches!(
        net.nodes[1].poll_transmit(),
        Some((0, Packet::Nack(x))) if x.reason == NackReason::NoRoute
    ));
}

/// RFA at node 2 (next hops 2 and 3), where face 2 answers at once and face 3 never does:
/// face 3's pending Interests pile up, its weight falls, and of the last 100 of 200
/// Interests almost all go to face 2. When the unanswered ones expire, RFA counts them as
/// settled.
#[test]
fn rfa_prefers_the_face_with_fewer_pending_interests() {
    let mut net = Net::tree(None, TagFallback::Nack);
    let node = &mut net.nodes[2];
    node.set_strategy(n("/c"), Strategy::Rfa);
    let now = net.now;
    let mut late_on_2 = 0;
    for k in 0..200 {
        node.on_interest(now, 1, Interest::new(n(&format!("/c/A/{k}")), k));
        let out: Vec<(FaceId, Packet)> = std::iter::from_fn(|| node.poll_transmit()).collect();
        for (f, p) in out {
            if let (2, Packet::Interest(i)) = (f, p) {
                late_on_2 += usize::from(k >= 100);
                node.on_data(now, 2, Data::new(i.name.clone(), 1024));
            }
        }
        while node.poll_transmit().is_some() {}
    }
    assert!(late_on_2 >= 90, "{late_on_2} of the last 100 on face 2");
    let e = node.fib().lpm(&n("/c/A")).unwrap();
    let before = node.rfa().avg_pi(e, 3);
    // Face 2 swings between 0 and 1 pending: its smoothed count settles at 0.09/0.19.
    assert!((node.rfa().avg_pi(e, 2) - 0.09 / 0.19).abs() < 0.01);
    assert!(before > 4.0 * node.rfa().avg_pi(e, 2), "{before}");
    node.handle_timeout(now + DEFAULT_LIFETIME);
    assert!(node.pit().is_empty());
    assert!(node.rfa().avg_pi(e, 3) < before);
}

/// PAF at node 2: face 2's Data come back in 10 ms, face 3's in 50 ms; face 2's
/// probability grows past 0.6. An Interest that expires evaporates its face.
#[test]
fn paf_reinforces_the_faster_face_and_evaporates_on_expiry() {
    let mut net = Net::tree(None, TagFallback::Nack);
    let node = &mut net.nodes[2];
    node.set_strategy(n("/c"), Strategy::Paf);
    let mut now = net.now;
    // (arrival, face, name) of the Data on their way back, in time order.
    let mut coming: Vec<(Time, FaceId, Name)> = Vec::new();
    for k in 0..200 {
        now += pathpool_core::Dur::from_ms(1);
        coming.sort_by_key(|c| std::cmp::Reverse(c.0));
        while coming.last().is_some_and(|c| c.0 <= now) {
            let (t, f, name) = coming.pop().unwrap();
            node.on_data(t, f, Data::new(name, 1024));
        }
        node.on_interest(now, 1, Interest::new(n(&format!("/c/A/{k}")), k));
        while let Some((f, p)) = node.poll_transmit() {
            if let Packet::Interest(i) = p {
                let rtt = pathpool_core::Dur::from_ms(if f == 2 { 10 } else { 50 });
                coming.push((now + rtt, f, i.name));
            }
        }
    }
    coming.sort_by_key(|c| std::cmp::Reverse(c.0));
    while let Some((t, f, name)) = coming.pop() {
        now = t;
        node.on_data(t, f, Data::new(name, 1024));
    }
    let e = node.fib().lpm(&n("/c/A")).unwrap();
    let p2 = node.paf().probability(e, 2).unwrap();
    assert!(p2 > 0.6, "{p2}");
    while node.poll_transmit().is_some() {}
    node.on_interest(now, 1, Interest::new(n("/c/A/x"), 999));
    let (f, _) = node.poll_transmit().unwrap();
    let before = node.paf().probability(e, f).unwrap();
    node.handle_timeout(now + DEFAULT_LIFETIME);
    let after = node.paf().probability(e, f).unwrap();
    assert!(
        (after - 0.9 * before).abs() < 1e-9 || after == 0.01,
        "{before} {after}"
    );
}

/// FISP at a face: one Interest every 10 ms, the flows waiting in turn; the forwarder asks
/// to be woken when the next may go.
#[test]
fn a_shaped_face_paces_interests_and_serves_flows_in_turn() {
    let mut node = Forwarder::new(
        ForwarderConfig {
            node: 1,
            faces: 2,
            fab: (16, FabKey::Stored),
            cs: None,
            fallback: TagFallback::Nack,
            paf: crate::paf::PafConfig::default(),
            shaping: vec![None, None, Some(pathpool_core::Dur::from_ms(10))],
            labeling: Labeling::None,
        },
        Rng::seed_from_u64(1),
    );
    node.fib_mut().add_next_hop(&n("/"), 2, 0);
    let t0 = Time::from_ms(100);
    for k in 0..4 {
        node.on_interest(t0, 1, Interest::new(n(&format!("/a/{k}")), k));
    }
    node.on_interest(t0, 1, Interest::new(n("/b/0"), 10));
    let mut sent: Vec<(Time, String)> = Vec::new();
    let mut now = t0;
    loop {
        while let Some((f, p)) = node.poll_transmit() {
            if let (2, Packet::Interest(i)) = (f, p) {
                sent.push((now, i.name.to_string()));
            }
        }
        match node.poll_timeout() {
            Some(t) if t < t0 + pathpool_core::Dur::from_secs(1) => {
                now = t;
                node.handle_timeout(now);
            }
            _ => break,
        }
    }
    let names: Vec<&str> = sent.iter().map(|s| s.1.as_str()).collect();
    assert_eq!(names, ["/a/0", "/a/1", "/b/0", "/a/2", "/a/3"]);
    let ms: Vec<u64> = sent
        .iter()
        .map(|s| (s.0.as_ps() / 1_000_000_000) - 100)
        .collect();
    assert_eq!(ms, [0, 10, 20, 30, 40]);
    assert_eq!(node.shaper(2).map(Shaper::waiting), Some(0));
}

/// mmTP over NDN's route labels on the diamond (FIB 2 → {3, 4, 5}, 3 → {4, 5},
/// 4 → 6, 5 → 6; producer 7 behind 6; links 1–2, 2–3, 2–4, 2–5, 3–4, 3–5, 4–6, 5–6, 6–7):
/// branching nodes 2 and 3 append `_R<k>` to the Data, so an unsteered Interest's Data
/// comes back named by its route; an Interest carrying labels is steered by them, each
/// branching node stripping the last.
#[test]
fn branching_nodes_label_data_and_steer_labelled_interests() {
    let edges = [
        (1, 2),
        (2, 3),
        (2, 4),
        (2, 5),
        (3, 4),
        (3, 5),
        (4, 6),
        (5, 6),
        (6, 7),
    ];
    let mut net = Net::build(&edges, &[7], None, TagFallback::Nack);
    // The diamond's FIB instead of the tree rule's.
    let c = n("/c");
    for (node, hops) in [
        (1u32, vec![1]),
        (2, vec![2, 3, 4]),
        (3, vec![2, 3]),
        (4, vec![3]),
        (5, vec![3]),
        (6, vec![3]),
        (7, vec![0]),
    ] {
        let fw = &mut net.nodes[node as usize];
        let old: Vec<FaceId> = fw
            .fib()
            .entries()
            .flat_map(|(_, e)| e.next_hops.iter().map(|h| h.face).collect::<Vec<_>>())
            .collect();
        for f in old {
            fw.fib_mut().remove_next_hop(&c, f);
        }
        for f in hops {
            fw.fib_mut().add_next_hop(&c, f, 0);
        }
    }
    for fw in &mut net.nodes {
        fw.set_labeling(Labeling::BranchingPostfix);
    }
    // Unsteered: best-route takes the first next hop at 2 (to 3) and at 3 (to 4).
    net.ask(Interest::new(n("/c/A/5"), 1));
    let got: Vec<String> = net
        .data_at_consumer()
        .iter()
        .map(|d| d.name.to_string())
        .collect();
    assert_eq!(got, ["/c/A/5/_R1/_R1"]);
    // Steered: at 2 the last label (rank 1, to 3), at 3 the next (rank 2, to 5).
    net.sent.clear();
    net.ask(Interest::new(n("/c/A/6/_R2/_R1"), 2));
    assert!(
        net.sent.contains(&(3, 3)) && net.sent.contains(&(5, 3)),
        "{:?}",
        net.sent
    );
    assert!(!net.sent.iter().any(|s| s.0 == 4));
    let got: Vec<String> = net
        .data_at_consumer()
        .iter()
        .map(|d| d.name.to_string())
        .collect();
    assert_eq!(got[1], "/c/A/6/_R2/_R1");
    assert!(net.nodes.iter().all(|f| f.pit().is_empty()));
    // A steered Interest whose next hop is down at 3 (face 3, to 5): node 3 refuses the
    // name it got, node 2 turns that into the labelled name it was asked for, and the
    // consumer gets the NACK of the Interest it sent.
    net.nodes[3].set_face_up(3, false);
    net.ask(Interest::new(n("/c/A/7/_R2/_R1"), 3));
    let nacks: Vec<String> = net
        .apps
        .iter()
        .filter_map(|(k, p)| match (k, p) {
            (1, Packet::Nack(x)) => Some(x.name.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(nacks, ["/c/A/7/_R2/_R1"]);
    assert!(net.nodes.iter().all(|f| f.pit().is_empty()));
}

mod properties {
    use super::{n, probe, FaceId, Interest, Net, TagFallback};
    use proptest::prelude::*;

    /// A random tree on nodes 1..=k: each node after the first hangs under an earlier one;
    /// the links in a random order. Producers: the leaves.
    fn trees() -> impl Strategy<Value = (Vec<(u32, u32)>, Vec<u32>)> {
        (2u32..10).prop_flat_map(|k| {
            let parents: Vec<BoxedStrategy<u32>> = (2..=k).map(|i| (1..i).boxed()).collect();
            (parents, Just(k)).prop_flat_map(|(parents, k)| {
                let edges: Vec<(u32, u32)> = parents
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| (p, i as u32 + 2))
                    .collect();
                let leaves: Vec<u32> = (2..=k)
                    .filter(|x| !edges.iter().any(|e| e.0 == *x))
                    .collect();
                (Just(edges).prop_shuffle(), Just(leaves))
            })
        })
    }

    proptest! {
        /// Issue 22, acceptance 2: pops reverse pushes. Probes by equal-weight reach every
        /// producer, and each probe's tag takes an Interest back to its producer, and only
        /// there.
        #[test]
        fn a_probes_tag_leads_back_to_its_producer((edges, leaves) in trees()) {
            let mut net = Net::build(&edges, &leaves, None, TagFallback::Nack);
            // Round-robin at every branching reaches a leaf after at most the product of
            // the branchings on its way: 16 in a tree of 9 nodes.
            for seq in 0..64 {
                net.ask(probe(seq));
            }
            let probes: Vec<(u32, Vec<FaceId>)> = net
                .served
                .iter()
                .map(|s| s.0)
                .zip(net.data_at_consumer().iter().map(|d| d.tag.clone().unwrap()))
                .collect();
            let mut reached: Vec<u32> = probes.iter().map(|p| p.0).collect();
            reached.sort_unstable();
            reached.dedup();
            prop_assert_eq!(&reached, &leaves);
            for (k, (producer, tag)) in probes.into_iter().enumerate() {
                net.served.clear();
                let mut i = Interest::new(n(&format!("/c/B/{k}")), 50 + k as u32);
                i.tag = tag;
                net.ask(i);
                prop_assert_eq!(net.served.len(), 1);
                prop_assert_eq!(net.served[0].0, producer);
                prop_assert!(net.served[0].1.tag.is_empty());
            }
        }
    }
}

#[test]
fn a_nack_goes_downstream_only_once_every_upstream_refused() {
    // Node 1 multicasts /c to faces 1 and 2; the Interest came from face 3.
    let mut f = Forwarder::new(
        ForwarderConfig {
            node: 1,
            faces: 3,
            fab: (16, FabKey::Stored),
            cs: None,
            paf: crate::paf::PafConfig::default(),
            shaping: Vec::new(),
            labeling: Labeling::None,
            fallback: TagFallback::Nack,
        },
        Rng::seed_from_u64(1),
    );
    f.fib_mut().add_next_hop(&n("/c"), 1, 1);
    f.fib_mut().add_next_hop(&n("/c"), 2, 2);
    f.set_strategy(n("/"), Strategy::Multicast);
    let now = Time::ZERO;
    f.on_interest(now, 3, Interest::new(n("/c/A/1"), 7));
    let out: Vec<FaceId> = std::iter::from_fn(|| f.poll_transmit())
        .map(|(x, _)| x)
        .collect();
    assert_eq!(out, [1, 2]);
    let nack = Nack {
        name: n("/c/A/1"),
        nonce: 7,
        probe: false,
        reason: NackReason::Duplicate,
    };
    f.on_nack(now, 1, nack.clone());
    assert!(f.poll_transmit().is_none(), "face 2 may still answer");
    assert_eq!(f.pit().len(), 1);
    f.on_nack(now, 2, nack);
    assert!(matches!(f.poll_transmit(), Some((3, Packet::Nack(_)))));
    assert_eq!(f.pit().len(), 0);
    // A probe's NACK finds the probe's entry, not a tagged Interest's of the same name.
    let mut probe = Interest::new(n("/c/A/2"), 8);
    probe.probe = true;
    f.on_interest(now, 3, probe);
    f.on_interest(now, 3, Interest::new(n("/c/A/2"), 9));
    while f.poll_transmit().is_some() {}
    assert_eq!(f.pit().len(), 2);
    for _ in 0..2 {
        f.on_nack(
            now,
            1,
            Nack {
                name: n("/c/A/2"),
                nonce: 8,
                probe: true,
                reason: NackReason::Duplicate,
            },
        );
    }
    assert!(matches!(f.poll_transmit(), Some((3, Packet::Nack(k))) if k.probe));
    assert!(f.pit().contains(&n("/c/A/2"), false));
    assert!(!f.pit().contains(&n("/c/A/2"), true));
}
