//! Link failures and the topology manager's answer to them (thesis §3.1, §4.2): the manager
//! learns the link state, recomputes the paths of every mmTP download, and re-sends the FID
//! sets that changed; the subscriber drops the subflows of withdrawn paths, starts subflows
//! on new ones, and moves regrouped ones to their new coupling group.
//!
//! One element of the simulation holds the schedule of failures and repairs and the
//! reactions due. A failure takes effect on the link at once; the downloads hear of it
//! `routing.tm_reaction` later (detection, computation and delivery as one delay, D107). A
//! download the change leaves without any path keeps its old subflows, which time out until
//! a repair gives it paths again.

use std::collections::VecDeque;

use pathpool_core::{Dur, Time};
use pathpool_psi::TopologyManager;
use pathpool_topo::{EdgeId, NodeIx};

use crate::cache::{mmtp_hops, MmtpHops};

/// The links (graph edges, equal to the simulator's link indices) that fail or are repaired
/// at one instant.
#[derive(Clone, Debug)]
pub(crate) struct LinkChange {
    pub(crate) at: Time,
    pub(crate) edges: Vec<EdgeId>,
    pub(crate) up: bool,
}

/// A path of a download as the topology manager identifies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PathKey {
    pub(crate) publisher: NodeIx,
    pub(crate) forward: Vec<EdgeId>,
}

/// What the topology manager keeps about one mmTP download.
#[derive(Clone, Debug)]
pub(crate) struct Download {
    /// Index of the download in the simulation's mmTP connections.
    pub(crate) conn: u32,
    /// Index of its flow in the results.
    pub(crate) flow: u32,
    /// Its subscriber's and its publishers' elements (ends of its routes).
    pub(crate) sub_elem: u32,
    pub(crate) pub_elem: u32,
    pub(crate) sources: Vec<NodeIx>,
    pub(crate) subscriber: NodeIx,
    /// The download's own manager (its `tm` table: policy, k, assistance).
    pub(crate) manager: TopologyManager,
    /// Each subflow's path and group, `None` once withdrawn (indices are the subflows').
    pub(crate) paths: Vec<Option<(PathKey, u32)>>,
}

/// A new path for a download: its key, group, and its routes' hops (links and caches).
#[derive(Clone, Debug)]
pub(crate) struct NewPath {
    pub(crate) key: PathKey,
    pub(crate) group: u32,
    pub(crate) source: u32,
    pub(crate) request: MmtpHops,
    pub(crate) reply: MmtpHops,
}

/// How one download's FID set changed.
#[derive(Clone, Debug, Default)]
pub(crate) struct PathUpdate {
    /// Subflows whose paths were withdrawn.
    pub(crate) removed: Vec<usize>,
    /// Subflows kept with another group.
    pub(crate) regrouped: Vec<(usize, u32)>,
    /// Paths to start subflows on, in the manager's order.
    pub(crate) added: Vec<NewPath>,
}

impl PathUpdate {
    pub(crate) fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.regrouped.is_empty() && self.added.is_empty()
    }
}

/// The failure schedule and the topology manager's pending reactions.
#[derive(Clone, Debug)]
pub(crate) struct TmControl {
    changes: Vec<LinkChange>,
    next_change: usize,
    reaction: Dur,
    /// Link states the downloads have not heard of yet, in time order.
    pending: VecDeque<(Time, Vec<EdgeId>, bool)>,
    pub(crate) downloads: Vec<Download>,
    /// The element of each link (graph edge).
    pub(crate) edge_elem: Vec<u32>,
    /// The cache element of each node that has one.
    node_cache: Vec<Option<u32>>,
    /// Every node's name (for the subflows' paths in the results).
    pub(crate) node_names: Vec<String>,
    /// FID sets re-sent (downloads whose paths changed), over the run.
    pub(crate) resent: u64,
}

impl TmControl {
    /// `changes` in time order.
    pub(crate) fn new(
        changes: Vec<LinkChange>,
        reaction: Dur,
        edge_elem: Vec<u32>,
        node_cache: Vec<Option<u32>>,
        node_names: Vec<String>,
    ) -> Self {
        debug_assert!(changes.windows(2).all(|w| w[0].at <= w[1].at));
        TmControl {
            changes,
            next_change: 0,
            reaction,
            pending: VecDeque::new(),
            downloads: Vec::new(),
            edge_elem,
            node_cache,
            node_names,
            resent: 0,
        }
    }

    /// When the element next has something to do.
    pub(crate) fn deadline(&self) -> Option<Time> {
        let change = self.changes.get(self.next_change).map(|c| c.at);
        let reaction = self.pending.front().map(|p| p.0);
        match (change, reaction) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The link changes due by `now` (to apply to the links), each queued for the
    /// downloads to hear of `reaction` later.
    pub(crate) fn take_changes(&mut self, now: Time) -> Vec<(EdgeId, bool)> {
        let mut out = Vec::new();
        while let Some(c) = self.changes.get(self.next_change) {
            if c.at > now {
                break;
            }
            out.extend(c.edges.iter().map(|&e| (e, c.up)));
            self.pending
                .push_back((c.at + self.reaction, c.edges.clone(), c.up));
            self.next_change += 1;
        }
        out
    }

    /// The new FID sets due by `now`: for each download whose paths changed, how.
    pub(crate) fn take_reactions(&mut self, now: Time) -> Vec<(usize, PathUpdate)> {
        let mut heard = false;
        while self.pending.front().is_some_and(|p| p.0 <= now) {
            let Some((_, edges, up)) = self.pending.pop_front() else {
                break;
            };
            for d in &mut self.downloads {
                for &e in &edges {
                    // The edges come from the scenario's links, so they exist.
                    let _ = d.manager.set_edge_up(e, up);
                }
            }
            heard = true;
        }
        if !heard {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, d) in self.downloads.iter_mut().enumerate() {
            let update = d.recompute(&self.edge_elem, &self.node_cache);
            if !update.is_empty() {
                out.push((i, update));
            }
        }
        self.resent += out.len() as u64;
        out
    }
}

impl Download {
    /// Asks the manager for the download's paths over the links it knows to work and compares
    /// them with the current ones; records the outcome.
    fn recompute(&mut self, edge_elem: &[u32], node_cache: &[Option<u32>]) -> PathUpdate {
        let mut update = PathUpdate::default();
        // No path at all: nothing to send (the thesis's manager answers a subscription it
        // cannot serve with an error; here the old subflows stay and time out, D107).
        let Ok(set) = self.manager.paths(&self.sources, self.subscriber) else {
            return update;
        };
        let keys: Vec<PathKey> = set
            .paths
            .iter()
            .map(|p| PathKey {
                publisher: p.publisher,
                forward: p.forward.clone(),
            })
            .collect();
        for (i, slot) in self.paths.iter_mut().enumerate() {
            if slot.as_ref().is_some_and(|(key, _)| !keys.contains(key)) {
                update.removed.push(i);
                *slot = None;
            }
        }
        for (p, key) in set.paths.iter().zip(keys) {
            let held = self
                .paths
                .iter_mut()
                .enumerate()
                .find(|(_, s)| s.as_ref().is_some_and(|(k, _)| *k == key));
            if let Some((i, Some((_, group)))) = held {
                if *group != p.group_id {
                    *group = p.group_id;
                    update.regrouped.push((i, p.group_id));
                }
                continue;
            }
            let graph = self.manager.graph();
            let hops = |edges: &[EdgeId], end| mmtp_hops(edges, graph, edge_elem, node_cache, end);
            update.added.push(NewPath {
                source: self
                    .sources
                    .iter()
                    .position(|&s| s == p.publisher)
                    .unwrap_or(0) as u32,
                group: p.group_id,
                request: hops(&p.reverse, self.pub_elem),
                reply: hops(&p.forward, self.sub_elem),
                key: key.clone(),
            });
            self.paths.push(Some((key, p.group_id)));
        }
        update
    }
}
