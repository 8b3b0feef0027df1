//! One node's NDN forwarder (issue 22; spec 004 §3.3): its faces, FIB, FAB, PIT and content
//! store, the per-prefix strategies that do not measure anything (best-route, multicast,
//! equal-weight), and PTP's path tags. Sans-IO: packets in with the time and the face they
//! came on, packets out through [`Forwarder::poll_transmit`].
//!
//! An Interest goes:
//! * a probe (PTP): past the content store (probes must reach a producer), into the PIT, and
//!   on by equal-weight, aggregated or not (probes never wait on another's Data);
//! * a tagged Interest: content store, PIT, then the top face of its tag is popped and,
//!   if the FIB entry of its flow (found through the FAB) has that face as a next hop and the
//!   face is up, it goes there with the rest of the tag; otherwise `ptp.fallback` decides:
//!   NACK(face-down) back (spec §4.C.2), or strip the tag and forward by name (§2.D);
//! * any other Interest: content store, PIT, the prefix's strategy.
//!
//! A Data pushes the face it arrived on onto its tag if it has one (a probe's; not the
//! application's face at the producer's node), folds (node, face) into its route label,
//! satisfies the PIT, and is stored. A content-store hit answers with the intermediate flag
//! set. A node that refuses an Interest with a NACK forgets its in-record.

use std::collections::VecDeque;

use pathpool_core::hash::{FxHashMap, FxHasher};
use pathpool_core::{Dur, Rng, Time};
use std::hash::Hasher;

use crate::fab::{Fab, FabKey};
use crate::fib::{Fib, FibEntryId};
use crate::name::{route_rank, Name};
use crate::packet::{Data, FaceId, Interest, Nack, NackReason};
use crate::paf::{Paf, PafConfig};
use crate::pit::{InterestOutcome, Pit};
use crate::rfa::Rfa;
use crate::shaper::Shaper;
use crate::store::ContentStore;

/// How a prefix's Interests choose among the FIB entry's next hops (the in-face excluded,
/// down faces skipped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// The cheapest next hop (default).
    #[default]
    BestRoute,
    /// Every next hop.
    Multicast,
    /// One next hop after the other, in turn (PTP's probes).
    EqualWeight,
    /// One next hop drawn with probability proportional to the inverse of its smoothed
    /// pending-Interest count (RFA, [`Rfa`]).
    Rfa,
    /// One next hop drawn by probabilities that fast Data reinforce and failures evaporate
    /// (PAF, [`Paf`]).
    Paf,
}

/// An Interest a measuring strategy (RFA, PAF) sent: where, when and by which.
#[derive(Clone, Copy, Debug)]
struct OutRecord {
    entry: FibEntryId,
    face: FaceId,
    sent_at: Time,
    paf: bool,
}

/// How the Interests a PIT entry sent were settled.
#[derive(Clone, Copy, Debug)]
enum Settled {
    /// Its Data came from this face at this time.
    Answered(FaceId, Time),
    /// It expired or was refused.
    Failed,
}

/// What a tagged Interest does when its popped face is no next hop or is down.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TagFallback {
    /// Answer NACK(face-down) (the paper's §4.C.2: the consumer replaces the path).
    #[default]
    Nack,
    /// Drop the tag and forward by name (the paper's §2.D, hybrid forwarding).
    Name,
}

/// How Data names record the route they took (mmTP over NDN, thesis §6.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Labeling {
    /// They do not (default).
    #[default]
    None,
    /// A branching node (two or more next hops for the name) appends `_R<k>` to a Data's
    /// name, k the rank of the face it arrived on among the next hops (1 first); an
    /// Interest whose last component is `_R<k>` is steered there by the branching node,
    /// which strips it.
    BranchingPostfix,
}

/// A forwarder's settings.
#[derive(Clone, Debug)]
pub struct ForwarderConfig {
    /// This node's number, folded into Data route labels.
    pub node: u32,
    /// Faces besides the application's (face 0): faces 1..=faces.
    pub faces: u32,
    /// FAB capacity (0: every lookup is an LPM) and key.
    pub fab: (usize, FabKey),
    /// Content store capacity in packets and admission probability, if the node caches.
    pub cs: Option<(usize, f64)>,
    /// PAF's constants.
    pub paf: PafConfig,
    /// FISP: per face (index = face id), one Interest every so often at most, shared fairly
    /// by the flows (`None` or missing: no shaping).
    pub shaping: Vec<Option<Dur>>,
    /// Route labels in Data names.
    pub labeling: Labeling,
    /// PTP's fallback for a tag that does not hold.
    pub fallback: TagFallback,
}

/// A packet a forwarder sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Packet {
    /// An Interest.
    Interest(Interest),
    /// A Data.
    Data(Data),
    /// A NACK.
    Nack(Nack),
}

/// What a forwarder counted besides its tables' own counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForwarderStats {
    /// NACKs it sent.
    pub nacks: u64,
    /// Tagged Interests whose popped face held.
    pub tags_followed: u64,
    /// Tagged Interests whose popped face did not.
    pub tags_broken: u64,
}

/// One node's forwarder.
#[derive(Clone, Debug)]
pub struct Forwarder {
    config: ForwarderConfig,
    up: Vec<bool>,
    fib: Fib,
    fab: Fab,
    pit: Pit,
    cs: Option<ContentStore>,
    /// Strategy by prefix (longest prefix wins; best-route without one).
    strategies: Vec<(Name, Strategy)>,
    /// Equal-weight's turn, by FIB entry.
    turn: FxHashMap<FibEntryId, usize>,
    /// RFA's pending-Interest counts.
    rfa: Rfa,
    /// PAF's probabilities.
    paf: Paf,
    /// Where RFA or PAF sent each pending Interest, by PIT key.
    measured_out: FxHashMap<(Name, bool), Vec<OutRecord>>,
    /// How many upstream faces each pending Interest went to and have not refused it, by PIT
    /// key: a NACK goes downstream only once every upstream refused (NFD's rule).
    upstreams: FxHashMap<(Name, bool), u32>,
    /// RFA's draws and the content store's admissions.
    rng: Rng,
    /// FISP's shapers, by face.
    shapers: Vec<Option<Shaper>>,
    out: VecDeque<(FaceId, Packet)>,
    stats: ForwarderStats,
}

impl Forwarder {
    /// A forwarder with every face up and empty tables, drawing from `rng`.
    #[must_use]
    pub fn new(config: ForwarderConfig, rng: Rng) -> Self {
        Forwarder {
            up: vec![true; config.faces as usize + 1],
            fib: Fib::new(),
            fab: Fab::new(config.fab.0, config.fab.1),
            pit: Pit::new(),
            cs: config.cs.map(|(c, a)| ContentStore::new(c, a)),
            strategies: Vec::new(),
            turn: FxHashMap::default(),
            rfa: Rfa::default(),
            paf: Paf::new(config.paf),
            measured_out: FxHashMap::default(),
            upstreams: FxHashMap::default(),
            rng,
            shapers: (0..=config.faces as usize)
                .map(|f| config.shaping.get(f).copied().flatten().map(Shaper::new))
                .collect(),
            out: VecDeque::new(),
            stats: ForwarderStats::default(),
            config,
        }
    }

    /// The FIB, to fill.
    pub fn fib_mut(&mut self) -> &mut Fib {
        &mut self.fib
    }

    /// The FIB.
    #[must_use]
    pub fn fib(&self) -> &Fib {
        &self.fib
    }

    /// The PIT.
    #[must_use]
    pub fn pit(&self) -> &Pit {
        &self.pit
    }

    /// The FAB.
    #[must_use]
    pub fn fab(&self) -> &Fab {
        &self.fab
    }

    /// The content store, if the node caches.
    #[must_use]
    pub fn cs(&self) -> Option<&ContentStore> {
        self.cs.as_ref()
    }

    /// Its counters.
    #[must_use]
    pub fn stats(&self) -> ForwarderStats {
        self.stats
    }

    /// Uses `strategy` for the names under `prefix`.
    pub fn set_strategy(&mut self, prefix: Name, strategy: Strategy) {
        self.strategies.retain(|(p, _)| *p != prefix);
        self.strategies.push((prefix, strategy));
    }

    /// Sets how Data names record their routes.
    pub fn set_labeling(&mut self, labeling: Labeling) {
        self.config.labeling = labeling;
    }

    /// Sets `face` up or down.
    pub fn set_face_up(&mut self, face: FaceId, up: bool) {
        self.up[face as usize] = up;
    }

    fn is_up(&self, face: FaceId) -> bool {
        self.up.get(face as usize).copied().unwrap_or(false)
    }

    fn strategy_for(&self, name: &Name) -> Strategy {
        self.strategies
            .iter()
            .filter(|(p, _)| p.is_prefix_of(name))
            .max_by_key(|(p, _)| p.len())
            .map_or(Strategy::BestRoute, |(_, s)| *s)
    }

    /// Refuses `interest`, which came on `face`; unless it is a duplicate (recorded for
    /// another face), its in-record goes.
    fn nack(&mut self, face: FaceId, interest: &Interest, reason: NackReason) {
        if reason != NackReason::Duplicate {
            self.pit
                .remove_in_record(&interest.name, interest.probe, face);
        }
        self.stats.nacks += 1;
        self.out.push_back((
            face,
            Packet::Nack(Nack {
                name: interest.name.clone(),
                nonce: interest.nonce,
                probe: interest.probe,
                reason,
            }),
        ));
    }

    /// An Interest arrived on `face` at `now`.
    pub fn on_interest(&mut self, now: Time, face: FaceId, mut interest: Interest) {
        if !interest.probe {
            if let Some(cs) = &mut self.cs {
                if let Some(hit) = cs.lookup(&interest.name) {
                    let mut data = hit.clone();
                    data.intermediate = true;
                    self.out.push_back((face, Packet::Data(data)));
                    return;
                }
            }
        }
        match self.pit.on_interest(now, &interest, face) {
            InterestOutcome::Duplicate => return self.nack(face, &interest, NackReason::Duplicate),
            InterestOutcome::Aggregated if !interest.probe => return,
            _ => {}
        }
        let flow = self.flow_of(&interest.name);
        let Some(entry) = self.fab.lookup(&flow, &self.fib) else {
            return self.nack(face, &interest, NackReason::NoRoute);
        };
        if let Some(rank) = self.steering(entry, &interest.name) {
            // A branching node: the last label says which next hop; it goes, stripped.
            let hop = self
                .fib
                .entry(entry)
                .next_hops
                .get(rank - 1)
                .map(|h| h.face);
            let mut stripped = interest.clone();
            stripped.name = interest.name.prefix(interest.name.len() - 1);
            return match hop.filter(|&f| f != face && self.is_up(f)) {
                Some(f) => self.send_interest(now, f, stripped),
                None => self.nack(face, &interest, NackReason::NoRoute),
            };
        }
        if interest.probe {
            return self.forward(now, face, entry, interest, Strategy::EqualWeight);
        }
        if let Some(next) = interest.tag.pop() {
            if self.fib.entry(entry).has_next_hop(next) && self.is_up(next) {
                self.stats.tags_followed += 1;
                self.send_interest(now, next, interest);
                return;
            }
            self.stats.tags_broken += 1;
            match self.config.fallback {
                TagFallback::Nack => return self.nack(face, &interest, NackReason::FaceDown),
                TagFallback::Name => interest.tag.clear(),
            }
        }
        let strategy = self.strategy_for(&interest.name);
        self.forward(now, face, entry, interest, strategy)
    }

    /// Sends `interest`, which came on `face`, to next hops of `entry` by `strategy`; NACK
    /// (no route) if no next hop is up besides the in-face.
    fn forward(
        &mut self,
        now: Time,
        face: FaceId,
        entry: FibEntryId,
        interest: Interest,
        strategy: Strategy,
    ) {
        let hops: Vec<FaceId> = self
            .fib
            .entry(entry)
            .next_hops
            .iter()
            .map(|h| h.face)
            .filter(|&f| f != face && self.is_up(f))
            .collect();
        if hops.is_empty() {
            return self.nack(face, &interest, NackReason::NoRoute);
        }
        match strategy {
            Strategy::BestRoute => self.send_interest(now, hops[0], interest),
            Strategy::Multicast => {
                for f in hops {
                    self.send_interest(now, f, interest.clone());
                }
            }
            Strategy::EqualWeight => {
                let turn = self.turn.entry(entry).or_insert(0);
                let f = hops[*turn % hops.len()];
                *turn = turn.wrapping_add(1);
                self.send_interest(now, f, interest);
            }
            Strategy::Rfa | Strategy::Paf => {
                let paf = strategy == Strategy::Paf;
                let f = if paf {
                    self.paf.sync(self.fib.version());
                    let all: Vec<FaceId> = self
                        .fib
                        .entry(entry)
                        .next_hops
                        .iter()
                        .map(|h| h.face)
                        .collect();
                    self.paf.pick(entry, &all, &hops, &mut self.rng)
                } else {
                    self.rfa.sync(self.fib.version());
                    let f = self.rfa.pick(entry, &hops, &mut self.rng);
                    self.rfa.sent(entry, f);
                    f
                };
                self.measured_out
                    .entry((interest.name.clone(), interest.probe))
                    .or_default()
                    .push(OutRecord {
                        entry,
                        face: f,
                        sent_at: now,
                        paf,
                    });
                self.send_interest(now, f, interest);
            }
        }
    }

    /// The flow name of `name`: without its route labels (if names carry them) and its SEQ.
    fn flow_of(&self, name: &Name) -> Name {
        match self.config.labeling {
            Labeling::None => name.flow_name(),
            Labeling::BranchingPostfix => name.without_labels().flow_name(),
        }
    }

    /// Whether this node is a branching one for `entry` (two or more next hops).
    fn branching(&self, entry: FibEntryId) -> bool {
        self.config.labeling == Labeling::BranchingPostfix
            && self.fib.entry(entry).next_hops.len() >= 2
    }

    /// The rank an Interest's last label asks this branching node for.
    fn steering(&self, entry: FibEntryId, name: &Name) -> Option<usize> {
        if !self.branching(entry) {
            return None;
        }
        name.components()
            .last()
            .and_then(|c| route_rank(c))
            .map(|k| k as usize)
    }

    /// Sends `interest` on `face` now, or when the face's shaper lets it.
    fn send_interest(&mut self, now: Time, face: FaceId, interest: Interest) {
        *self
            .upstreams
            .entry((interest.name.clone(), interest.probe))
            .or_default() += 1;
        let go = match self.shapers.get_mut(face as usize).and_then(Option::as_mut) {
            Some(shaper) => shaper.offer(now, interest.name.flow_name(), interest),
            None => Some(interest),
        };
        if let Some(i) = go {
            self.out.push_back((face, Packet::Interest(i)));
        }
    }

    /// The shaper of `face`, if it has one.
    #[must_use]
    pub fn shaper(&self, face: FaceId) -> Option<&Shaper> {
        self.shapers.get(face as usize).and_then(Option::as_ref)
    }

    /// The Interests RFA or PAF sent for `key` are no longer pending, as `how` says.
    fn settle(&mut self, key: &(Name, bool), how: Settled) {
        let Some(outs) = self.measured_out.remove(key) else {
            return;
        };
        self.rfa.sync(self.fib.version());
        self.paf.sync(self.fib.version());
        for o in outs {
            match (o.paf, how) {
                (false, _) => self.rfa.settled(o.entry, o.face),
                (true, Settled::Answered(f, now)) if f == o.face => {
                    self.paf
                        .reinforce(o.entry, o.face, now.saturating_since(o.sent_at));
                }
                (true, Settled::Answered(..)) => {}
                (true, Settled::Failed) => self.paf.evaporate(o.entry, o.face),
            }
        }
    }

    /// PAF's state.
    #[must_use]
    pub fn paf(&self) -> &Paf {
        &self.paf
    }

    /// RFA's state.
    #[must_use]
    pub fn rfa(&self) -> &Rfa {
        &self.rfa
    }

    /// A Data arrived on `face` at `now`.
    pub fn on_data(&mut self, now: Time, face: FaceId, mut data: Data) {
        // The producer's own node does not push the application's face: the tagged
        // Interest arrives there with an empty tag and goes to the producer by name.
        if let (Some(tag), true) = (&mut data.tag, face != 0) {
            tag.push(face);
        }
        let mut h = FxHasher::default();
        h.write_u64(data.route_label);
        h.write_u32(self.config.node);
        h.write_u32(face);
        data.route_label = h.finish();
        let probe = data.tag.is_some();
        let arrived = data.name.clone();
        let key = match self.config.labeling {
            Labeling::None => arrived.clone(),
            Labeling::BranchingPostfix => self.label(face, &mut data, probe),
        };
        let downstream = self.pit.on_data(now, &key, probe, data.intermediate);
        if self.config.labeling == Labeling::BranchingPostfix {
            // A steered Interest went upstream stripped of this node's label: under the
            // name the Data arrived with.
            self.upstreams.remove(&(arrived, probe));
        }
        self.upstreams.remove(&(key.clone(), probe));
        self.settle(&(key, probe), Settled::Answered(face, now));
        if downstream.is_empty() {
            return;
        }
        if let Some(cs) = &mut self.cs {
            cs.insert(&data, &mut self.rng);
        }
        for (f, flag) in downstream {
            let mut d = data.clone();
            d.intermediate = flag;
            self.out.push_back((f, Packet::Data(d)));
        }
    }

    /// At a branching node, appends `_R<k>` to `data`'s name for the next hop `face` it came
    /// from. Returns the name of the PIT entry it answers: its own, or if no Interest waits
    /// for it, the longest one with fewer trailing labels that one waits for (a downstream
    /// node that asked without steering), the PIT matching the extended name by prefix.
    fn label(&mut self, face: FaceId, data: &mut Data, probe: bool) -> Name {
        let flow = data.name.without_labels().flow_name();
        if let Some(entry) = self.fab.lookup(&flow, &self.fib) {
            if self.branching(entry) {
                if let Some(k) = self
                    .fib
                    .entry(entry)
                    .next_hops
                    .iter()
                    .position(|h| h.face == face)
                {
                    data.name = data.name.child(&format!("_R{}", k + 1));
                }
            }
        }
        let mut key = data.name.clone();
        while !self.pit.contains(&key, probe)
            && key
                .components()
                .last()
                .is_some_and(|c| route_rank(c).is_some())
        {
            key = key.prefix(key.len() - 1);
        }
        key
    }

    /// A NACK arrived on `face` at `now`. While another upstream face the Interest went to
    /// has not refused it, nothing more happens (that face may still bring the Data);
    /// otherwise it goes to every face the Interest is pending from, and the entry goes. At
    /// a branching node, the NACK of an Interest it steered (and stripped) refuses the
    /// labelled Interest it came from.
    pub fn on_nack(&mut self, now: Time, face: FaceId, mut nack: Nack) {
        let key = (nack.name.clone(), nack.probe);
        if let Some(left) = self.upstreams.get_mut(&key) {
            if *left > 1 {
                *left -= 1;
                return;
            }
            self.upstreams.remove(&key);
        }
        self.settle(&key, Settled::Failed);
        if let Some(steered) = self.steered_name(face, &nack) {
            nack.name = steered;
        }
        for f in self.pit.on_nack(now, &nack.name, nack.probe) {
            self.stats.nacks += 1;
            self.out.push_back((f, Packet::Nack(nack.clone())));
        }
    }

    /// At a branching node, the labelled name of the Interest whose stripped copy `nack`
    /// refuses on `face`, if such an Interest is pending and no unlabelled one is.
    fn steered_name(&mut self, face: FaceId, nack: &Nack) -> Option<Name> {
        if self.config.labeling != Labeling::BranchingPostfix
            || self.pit.contains(&nack.name, nack.probe)
        {
            return None;
        }
        let flow = nack.name.without_labels().flow_name();
        let entry = self.fab.lookup(&flow, &self.fib)?;
        if !self.branching(entry) {
            return None;
        }
        let k = self
            .fib
            .entry(entry)
            .next_hops
            .iter()
            .position(|h| h.face == face)?;
        let name = nack.name.child(&format!("_R{}", k + 1));
        self.pit.contains(&name, nack.probe).then_some(name)
    }

    /// The next packet to send, with its face.
    pub fn poll_transmit(&mut self) -> Option<(FaceId, Packet)> {
        self.out.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) is next due.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.shapers
            .iter()
            .flatten()
            .filter_map(Shaper::poll_timeout)
            .chain(self.pit.poll_timeout())
            .min()
    }

    /// Expires PIT in-records (nothing is sent; RFA counts what expired as settled, PAF as
    /// failed) and lets out the Interests the shapers now allow.
    pub fn handle_timeout(&mut self, now: Time) {
        for key in self.pit.handle_timeout(now) {
            self.upstreams.remove(&key);
            self.settle(&key, Settled::Failed);
        }
        for face in 0..self.shapers.len() {
            if let Some(shaper) = self.shapers[face].as_mut() {
                while let Some(i) = shaper.poll(now) {
                    self.out.push_back((face as FaceId, Packet::Interest(i)));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "forwarder_tests.rs"]
mod tests;
