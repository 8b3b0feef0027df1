//! The topology manager (thesis §3.1, §4.2 step 2, §5): paths from each publisher to the
//! subscriber, their forward and reverse LIPSIN identifiers, and the `group_id`s that tell the
//! subscriber's congestion control which paths share a bottleneck.

use std::fmt;

use pathpool_core::Dur;
use pathpool_topo::{
    bottleneck_groups, disjoint_only, k_edge_disjoint_paths, k_shortest_paths, shared_link_groups,
    EdgeId, FbFactor, Fid, Graph, LinkTags, NodeIx, TagSpace, DEFAULT_K,
};

/// What a path's cost is (thesis §4.7: the prototype's TM ran Yen "with hop count as the
/// metric").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Every link costs 1.
    #[default]
    Hops,
    /// A link costs its propagation delay.
    Delay,
}

/// How the paths between one publisher and the subscriber are chosen (thesis §5.1, §11 E7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathPolicy {
    /// Yen's `k` shortest loopless paths (thesis §4.7); they may share links.
    KShortest {
        /// Paths per publisher.
        k: usize,
    },
    /// Yen's shortest paths, keeping each only if it shares no link with those kept before
    /// (thesis §5.1, "disjoint only"), until `k` are kept or `candidates` have been tried.
    DisjointOnly {
        /// Paths per publisher.
        k: usize,
        /// Yen candidates examined.
        candidates: usize,
    },
    /// `k` link-disjoint paths of least total cost (Bhandari; `k = 2` is the disjoint pair of
    /// thesis E7).
    KDisjoint {
        /// Paths per publisher.
        k: usize,
    },
}

/// How `group_id`s are assigned (thesis §5, paper §4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Assistance {
    /// No topological assistance: every path in group 0, so the congestion controller couples
    /// them all (the "no TM assistance" runs of thesis E5 and E7).
    None,
    /// Paths sharing any link, transitively, share a group (thesis §5.2).
    #[default]
    SharedLink,
    /// Paths sharing a friendliness bottleneck, transitively, share a group (paper eq. 2 with
    /// the given factor).
    Bottleneck(FbFactor),
}

/// Parameters of the topology manager.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TmConfig {
    /// How paths are chosen.
    pub policy: PathPolicy,
    /// What a path costs.
    pub metric: Metric,
    /// How `group_id`s are assigned.
    pub assistance: Assistance,
    /// Bits per LIPSIN link tag.
    pub lipsin_k: u32,
    /// Seed of the link tags (the same seed gives the same tags everywhere).
    pub lipsin_seed: u64,
}

impl Default for TmConfig {
    fn default() -> Self {
        TmConfig {
            policy: PathPolicy::KShortest { k: 1 },
            metric: Metric::Hops,
            assistance: Assistance::SharedLink,
            lipsin_k: DEFAULT_K,
            lipsin_seed: 0,
        }
    }
}

/// One path given to a subscriber: a FID pair and its group (thesis §4.4, FID_SET).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathInfo {
    /// The publisher at the far end (the subscriber is not told; the simulator and tests are).
    pub publisher: NodeIx,
    /// Links from the publisher to the subscriber.
    pub forward: Vec<EdgeId>,
    /// Links from the subscriber to the publisher (the forward links reversed).
    pub reverse: Vec<EdgeId>,
    /// LIPSIN identifier of `forward`, carried by requests for the replies.
    pub forward_fid: Fid,
    /// LIPSIN identifier of `reverse`, which routes requests.
    pub reverse_fid: Fid,
    /// Paths with equal `group_id` are controlled together.
    pub group_id: u32,
}

/// The paths of one subscription.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FidSet {
    /// Paths in publisher order, then in the policy's order for each publisher.
    pub paths: Vec<PathInfo>,
    /// Forward paths left out because a link had no usable reverse link.
    pub without_reverse: usize,
}

/// Why the topology manager cannot serve a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TmError {
    /// Per-edge data of the wrong length.
    EdgeData {
        /// Which data.
        what: &'static str,
        /// Edges in the graph.
        edges: usize,
        /// Values given.
        got: usize,
    },
    /// A rate that is negative or not a number.
    BadRate(EdgeId),
    /// A node outside the graph.
    UnknownNode(NodeIx),
    /// An edge outside the graph.
    UnknownEdge(EdgeId),
    /// No publisher has a usable path to the subscriber.
    NoPath {
        /// The subscriber.
        subscriber: NodeIx,
    },
    /// Bits per tag out of range.
    Lipsin(String),
}

impl fmt::Display for TmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TmError::EdgeData { what, edges, got } => {
                write!(f, "{what}: {got} values for a graph of {edges} edges")
            }
            TmError::BadRate(e) => {
                write!(f, "the rate of edge {} is not a non-negative number", e.0)
            }
            TmError::UnknownNode(n) => write!(f, "node {} is not in the topology", n.0),
            TmError::UnknownEdge(e) => write!(f, "edge {} is not in the topology", e.0),
            TmError::NoPath { subscriber } => write!(
                f,
                "no publisher has a usable path to and from node {}",
                subscriber.0
            ),
            TmError::Lipsin(e) => write!(f, "LIPSIN parameters: {e}"),
        }
    }
}

impl std::error::Error for TmError {}

/// The topology manager's view of the network and its path computation.
#[derive(Clone, Debug)]
pub struct TopologyManager {
    graph: Graph,
    rate_bps: Vec<f64>,
    delay: Vec<Dur>,
    up: Vec<bool>,
    /// Whether each node forwards traffic between others (hosts do not).
    transit: Vec<bool>,
    /// Edges that can never queue (a simulated wire of infinite rate), left out when paths
    /// are compared for shared links.
    queueless: Vec<bool>,
    /// The opposite direction of each edge, paired one to one in insertion order.
    reverse: Vec<Option<EdgeId>>,
    tags: LinkTags,
    config: TmConfig,
}

impl TopologyManager {
    /// A manager for `graph` with each edge's rate (bit/s) and propagation delay.
    ///
    /// # Errors
    /// Per-edge data of the wrong length, a bad rate, or bad LIPSIN parameters.
    pub fn new(
        graph: Graph,
        rate_bps: Vec<f64>,
        delay: Vec<Dur>,
        config: TmConfig,
    ) -> Result<Self, TmError> {
        let edges = graph.edge_count();
        for (what, got) in [("rates", rate_bps.len()), ("delays", delay.len())] {
            if got != edges {
                return Err(TmError::EdgeData { what, edges, got });
            }
        }
        if let Some(i) = rate_bps.iter().position(|r| r.is_nan() || *r < 0.0) {
            return Err(TmError::BadRate(EdgeId(i as u32)));
        }
        let space = TagSpace::new(config.lipsin_k, config.lipsin_seed)
            .map_err(|e| TmError::Lipsin(e.to_string()))?;
        let tags = LinkTags::new(&space, &graph);
        let reverse = pair_directions(&graph);
        Ok(TopologyManager {
            up: vec![true; edges],
            transit: vec![true; graph.node_count()],
            queueless: vec![false; edges],
            rate_bps,
            delay,
            reverse,
            tags,
            graph,
            config,
        })
    }

    /// The graph.
    #[must_use]
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
    /// The link tags (what every forwarding node holds of them).
    #[must_use]
    pub fn tags(&self) -> &LinkTags {
        &self.tags
    }
    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &TmConfig {
        &self.config
    }
    /// The other direction of edge `e`, if the graph has one.
    #[must_use]
    pub fn reverse_of(&self, e: EdgeId) -> Option<EdgeId> {
        self.reverse.get(e.0 as usize).copied().flatten()
    }

    /// Marks edge `e` usable or failed (link state from the forwarding nodes, thesis §3.1);
    /// the next [`paths`](Self::paths) avoids failed edges. Returns whether this changed it.
    ///
    /// # Errors
    /// If `e` is not an edge of the graph.
    pub fn set_edge_up(&mut self, e: EdgeId, up: bool) -> Result<bool, TmError> {
        let slot = self
            .up
            .get_mut(e.0 as usize)
            .ok_or(TmError::UnknownEdge(e))?;
        let changed = *slot != up;
        *slot = up;
        Ok(changed)
    }

    /// Lets `node` carry traffic between other nodes or not (an end host does not: paths only
    /// start or end there). Every node is a transit node at first.
    ///
    /// # Errors
    /// If `node` is not in the graph.
    pub fn set_transit(&mut self, node: NodeIx, transit: bool) -> Result<(), TmError> {
        *self
            .transit
            .get_mut(node.0 as usize)
            .ok_or(TmError::UnknownNode(node))? = transit;
        Ok(())
    }

    /// Marks `edge` as one that can never queue, so that sharing it does not put paths in
    /// one group. Only a driver that knows this should say it: the simulator for a link of
    /// infinite rate (decision D339); to the overlay an unset rate means only that it does
    /// not emulate one, and the real link below may well be the bottleneck.
    ///
    /// # Errors
    /// If `edge` is not in the graph.
    pub fn set_queueless(&mut self, edge: EdgeId, queueless: bool) -> Result<(), TmError> {
        *self
            .queueless
            .get_mut(edge.0 as usize)
            .ok_or(TmError::UnknownEdge(edge))? = queueless;
        Ok(())
    }

    /// The paths of a subscription: for each publisher, the policy's paths to the subscriber
    /// over working links, each with a working reverse; FIDs built; `group_id`s assigned
    /// over all of them (thesis §4.2 step 2, §5.3). A publisher at the subscriber's node or
    /// without a path contributes none.
    ///
    /// # Errors
    /// An unknown node, or no path at all.
    pub fn paths(&self, publishers: &[NodeIx], subscriber: NodeIx) -> Result<FidSet, TmError> {
        let nodes = self.graph.node_count() as u32;
        if let Some(&n) = publishers
            .iter()
            .chain([&subscriber])
            .find(|n| n.0 >= nodes)
        {
            return Err(TmError::UnknownNode(n));
        }
        let mut set = FidSet::default();
        let mut found: Vec<(NodeIx, Vec<EdgeId>, Vec<EdgeId>)> = Vec::new();
        for &p in publishers {
            for forward in self.forward_paths(p, subscriber) {
                match self.reversed(&forward) {
                    Some(reverse) => found.push((p, forward, reverse)),
                    None => set.without_reverse += 1,
                }
            }
        }
        if found.is_empty() {
            return Err(TmError::NoPath { subscriber });
        }
        let forwards: Vec<&[EdgeId]> = found.iter().map(|f| f.1.as_slice()).collect();
        // Data flows on the forward links, so they decide which paths compete (thesis §5.2).
        let groups = match self.config.assistance {
            Assistance::None => vec![0; forwards.len()],
            Assistance::SharedLink => {
                // A link that never queues is no bottleneck to share (decision D339): a
                // simulated host's wire to its router would otherwise put all of the host's
                // paths in one group.
                let queuing: Vec<Vec<EdgeId>> = forwards
                    .iter()
                    .map(|p| {
                        p.iter()
                            .copied()
                            .filter(|e| !self.queueless[e.0 as usize])
                            .collect()
                    })
                    .collect();
                shared_link_groups(&queuing)
            }
            Assistance::Bottleneck(factor) => {
                bottleneck_groups(&forwards, |e: EdgeId| self.rate_bps[e.0 as usize], factor)
            }
        };
        set.paths = found
            .into_iter()
            .zip(groups)
            .map(|((publisher, forward, reverse), group_id)| PathInfo {
                publisher,
                forward_fid: self.tags.fid(&forward),
                reverse_fid: self.tags.fid(&reverse),
                forward,
                reverse,
                group_id,
            })
            .collect();
        Ok(set)
    }

    fn forward_paths(&self, from: NodeIx, to: NodeIx) -> Vec<Vec<EdgeId>> {
        if from == to {
            return Vec::new();
        }
        let cost = |e: EdgeId| {
            let i = e.0 as usize;
            let tail = self.graph.ends(e).0;
            let usable = self.up[i]
                && self.reverse[i].is_some_and(|r| self.up[r.0 as usize])
                && (tail == from || self.transit[tail.0 as usize]);
            match (usable, self.config.metric) {
                (false, _) => f64::INFINITY,
                (true, Metric::Hops) => 1.0,
                (true, Metric::Delay) => self.delay[i].as_secs_f64(),
            }
        };
        // Both directions of a duplex link are one link for disjointness: a path's reverse
        // uses the opposite directions, so sharing either would couple the FID pairs.
        let link_of = |e: EdgeId| self.reverse_of(e).map_or(e.0, |r| e.0.min(r.0));
        match self.config.policy {
            PathPolicy::KShortest { k } => k_shortest_paths(&self.graph, from, to, k, cost),
            PathPolicy::DisjointOnly { k, candidates } => {
                let mut kept = disjoint_only(
                    k_shortest_paths(&self.graph, from, to, candidates.max(k), cost),
                    link_of,
                );
                kept.truncate(k);
                kept
            }
            PathPolicy::KDisjoint { k } => {
                k_edge_disjoint_paths(&self.graph, from, to, k, cost, link_of)
            }
        }
    }

    fn reversed(&self, forward: &[EdgeId]) -> Option<Vec<EdgeId>> {
        forward
            .iter()
            .rev()
            .map(|&e| self.reverse_of(e).filter(|r| self.up[r.0 as usize]))
            .collect()
    }
}

/// Pairs each edge with an edge of opposite ends, one to one, in insertion order (parallel
/// duplex links pair up in the order they were added).
fn pair_directions(g: &Graph) -> Vec<Option<EdgeId>> {
    let mut reverse = vec![None; g.edge_count()];
    for i in 0..g.edge_count() {
        if reverse[i].is_some() {
            continue;
        }
        let (a, b) = g.ends(EdgeId(i as u32));
        let partner =
            g.out_edges(b).iter().copied().find(|&r| {
                r.0 as usize != i && g.ends(r).1 == a && reverse[r.0 as usize].is_none()
            });
        if let Some(r) = partner {
            reverse[i] = Some(r);
            reverse[r.0 as usize] = Some(EdgeId(i as u32));
        }
    }
    reverse
}
