//! The PTP consumer (spec 004 §3–§4; issue 22): it fetches SEQs 0..packets of one content
//! with probes and path-tagged Interests, and controls each path with MPCCP.
//!
//! * **Probing.** Every `probe_interval` (0.1 s: the paper's 10 a second) a probe fetches the
//!   next new SEQ, all run long; a probe's Data brings a tag, and a new tag becomes a path
//!   ([`PathSet`]) with its MPCCP window in slow start.
//! * **Sending.** An in-use path sends while its Interests in flight + 1 ≤ cwnd: first the
//!   SEQs lost on it (the lost Data may be cached on it), then SEQs whose path broke or whose
//!   probe went unanswered, then new ones.
//! * **Data.** A producer Data (flag 0) gives an RTT sample (Karn: not for a resent SEQ) and
//!   runs loss detection by order ([`PathOrder`]); losses cut the window once, otherwise the
//!   window grows. A Data from an intermediate node (flag 1) only marks its SEQ received and
//!   grows the window. Both lower the path's in-flight count, as detected losses do.
//! * **Timeouts.** Each Interest has its path's RTO when it left (RFC 6298): on expiry the
//!   SEQ is resent on that path and MPCCP cuts to 1, at most once per RTO, and only that cut
//!   backs the RTO off, as TCP's one timer backs off once per expiry (D329). An unanswered
//!   probe's SEQ is resent on a path after `probe_timeout`.
//! * **NACKs.** A NACK disables its path (replaced within the path set's rules); the SEQs in
//!   flight on it go to the other paths.
//!
//! Sans-IO: the caller sends what [`PtpConsumer::poll_transmit`] returns, hands in Data,
//! NACKs and the time, and asks [`PtpConsumer::poll_timeout`] when to call again.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use pathpool_cc::{Mpccp, MpccpConfig};
use pathpool_core::hash::FxHashMap;
use pathpool_core::rtt::{RttConfig, RttEstimator};
use pathpool_core::{Dur, Rng, Time};

use super::order::{LossDetection, PathOrder};
use super::paths::{PathChange, PathSet, PathSetConfig};

/// The PTP consumer's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PtpConfig {
    /// SEQs to fetch: 0..packets.
    pub packets: u64,
    /// Time between probes (0.1 s: 10 a second).
    pub probe_interval: Dur,
    /// How long a probe waits for its Data before its SEQ is fetched on a path (an
    /// Interest's lifetime, 4 s).
    pub probe_timeout: Dur,
    /// N and T.
    pub paths: PathSetConfig,
    /// MPCCP's β, rtt_ref and RTT scaling.
    pub mpccp: MpccpConfig,
    /// When a producer Data declares the earlier Interests lost.
    pub loss_detection: LossDetection,
    /// The retransmission timer (RFC 6298; the scenario's `[tcp]` bounds).
    pub rtt: RttConfig,
}

impl Default for PtpConfig {
    fn default() -> Self {
        PtpConfig {
            packets: 0,
            probe_interval: Dur::from_ms(100),
            probe_timeout: Dur::from_secs(4),
            paths: PathSetConfig::default(),
            mpccp: MpccpConfig::default(),
            loss_detection: LossDetection::One,
            rtt: RttConfig::default(),
        }
    }
}

/// An Interest to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtpRequest {
    /// A probe (no tag, probe bit) for `seq`.
    Probe {
        /// The SEQ.
        seq: u64,
    },
    /// `seq` on path `path`, with its tag.
    Tagged {
        /// The SEQ.
        seq: u64,
        /// The path.
        path: usize,
        /// The path's tag (the first hop's face on top, the last element).
        tag: Vec<u32>,
    },
}

/// What the consumer counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtpStats {
    /// Probes sent.
    pub probes: u64,
    /// Tagged Interests sent (resends included).
    pub interests: u64,
    /// Resends (after a loss, a timeout, a NACK or an unanswered probe).
    pub resends: u64,
    /// SEQs found lost by order.
    pub losses: u64,
    /// Interest timeouts.
    pub timeouts: u64,
    /// NACKs received.
    pub nacks: u64,
    /// Data received from intermediate nodes (flag 1).
    pub intermediate: u64,
    /// Data that answered nothing pending (already received).
    pub duplicates: u64,
}

/// Where and when a SEQ was last asked for.
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// `None` for a probe.
    path: Option<usize>,
    sent_at: Time,
    deadline: Time,
    /// Asked for more than once (Karn: no RTT sample).
    resent: bool,
}

/// One PTP download.
#[derive(Clone, Debug)]
pub struct PtpConsumer {
    config: PtpConfig,
    next_new: u64,
    received: Vec<bool>,
    received_count: u64,
    mpccp: Mpccp,
    order: PathOrder,
    paths: PathSet,
    rtts: Vec<RttEstimator>,
    /// SEQs lost on each path, to resend there first.
    resend_on: Vec<VecDeque<u64>>,
    /// SEQs to resend on any path.
    resend_any: VecDeque<u64>,
    pending: FxHashMap<u64, Pending>,
    /// (deadline, SEQ) of every request; stale ones are skipped.
    deadlines: BinaryHeap<Reverse<(Time, u64)>>,
    /// SEQs ever asked for (to tell a resend).
    asked: Vec<bool>,
    next_probe: Time,
    /// The path that sends first next time (round-robin over the in-use paths).
    turn: usize,
    stats: PtpStats,
}

impl PtpConsumer {
    /// A download of `config.packets` SEQs starting at `now`: the first probe leaves at once.
    #[must_use]
    pub fn new(config: PtpConfig, now: Time) -> Self {
        let n = usize::try_from(config.packets).unwrap_or(usize::MAX);
        PtpConsumer {
            next_new: 0,
            received: vec![false; n],
            received_count: 0,
            mpccp: Mpccp::new(config.mpccp),
            order: PathOrder::new(config.loss_detection),
            paths: PathSet::new(config.paths, now),
            rtts: Vec::new(),
            resend_on: Vec::new(),
            resend_any: VecDeque::new(),
            pending: FxHashMap::default(),
            deadlines: BinaryHeap::new(),
            asked: vec![false; n],
            next_probe: now,
            turn: 0,
            stats: PtpStats::default(),
            config,
        }
    }

    /// Whether every SEQ has arrived.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.received_count == self.config.packets
    }

    /// SEQs received.
    #[must_use]
    pub fn received(&self) -> u64 {
        self.received_count
    }

    /// The window law's state.
    #[must_use]
    pub fn mpccp(&self) -> &Mpccp {
        &self.mpccp
    }

    /// The paths.
    #[must_use]
    pub fn paths(&self) -> &PathSet {
        &self.paths
    }

    /// Interests in flight on path `p`.
    #[must_use]
    pub fn in_flight(&self, p: usize) -> u64 {
        self.order.in_flight(p)
    }

    /// The path `seq` is pending on (`None` for a probe's, or if it is not pending).
    #[must_use]
    pub fn pending_path(&self, seq: u64) -> Option<usize> {
        self.pending.get(&seq).and_then(|p| p.path)
    }

    /// Its counters.
    #[must_use]
    pub fn stats(&self) -> PtpStats {
        self.stats
    }

    fn is_received(&self, seq: u64) -> bool {
        self.received.get(seq as usize).copied().unwrap_or(true)
    }

    /// A new SEQ, if one is left.
    fn take_new(&mut self) -> Option<u64> {
        (self.next_new < self.config.packets).then(|| {
            self.next_new += 1;
            self.next_new - 1
        })
    }

    /// Records that `seq` leaves now on `path` (`None`: a probe).
    fn record(&mut self, now: Time, seq: u64, path: Option<usize>) {
        let resent = std::mem::replace(&mut self.asked[seq as usize], true);
        if resent {
            self.stats.resends += 1;
        }
        let wait = match path {
            Some(p) => {
                self.order.on_send(p, seq);
                self.rtts[p].rto()
            }
            None => self.config.probe_timeout,
        };
        let deadline = now + wait;
        self.pending.insert(
            seq,
            Pending {
                path,
                sent_at: now,
                deadline,
                resent,
            },
        );
        self.deadlines.push(Reverse((deadline, seq)));
    }

    /// The next Interest to send at `now`, if a probe is due or a path has room.
    pub fn poll_transmit(&mut self, now: Time) -> Option<PtpRequest> {
        if now >= self.next_probe && self.next_new < self.config.packets {
            self.next_probe = now + self.config.probe_interval;
            let seq = self.take_new()?;
            self.record(now, seq, None);
            self.stats.probes += 1;
            return Some(PtpRequest::Probe { seq });
        }
        let in_use: Vec<usize> = self.paths.in_use().collect();
        for k in 0..in_use.len() {
            let p = in_use[(self.turn + k) % in_use.len()];
            if (self.order.in_flight(p) + 1) as f64 > self.mpccp.path(p).cwnd {
                continue;
            }
            let Some(seq) = self.next_seq_for(p) else {
                continue;
            };
            self.turn = (self.turn + k + 1) % in_use.len();
            self.record(now, seq, Some(p));
            self.stats.interests += 1;
            let tag = self.paths.paths()[p].tag.clone();
            return Some(PtpRequest::Tagged { seq, path: p, tag });
        }
        None
    }

    /// What path `p` sends next: a SEQ lost on it, one to resend anywhere, or a new one.
    fn next_seq_for(&mut self, p: usize) -> Option<u64> {
        while let Some(seq) = self.resend_on[p].pop_front() {
            if !self.is_received(seq) && !self.pending.contains_key(&seq) {
                return Some(seq);
            }
        }
        while let Some(seq) = self.resend_any.pop_front() {
            if !self.is_received(seq) && !self.pending.contains_key(&seq) {
                return Some(seq);
            }
        }
        self.take_new()
    }

    /// A new path's place in every per-path table.
    fn add_path(&mut self, in_use: bool) {
        let p = self.mpccp.add_path();
        self.mpccp.set_in_use(p, in_use);
        self.rtts.push(RttEstimator::new(self.config.rtt));
        self.resend_on.push(VecDeque::new());
    }

    fn apply(&mut self, changes: Vec<PathChange>) {
        for c in changes {
            match c {
                PathChange::Started(p) => self.mpccp.set_in_use(p, true),
                PathChange::Stopped(p) => {
                    self.mpccp.set_in_use(p, false);
                    // What waited on it goes to the others.
                    let lost: Vec<u64> = self.resend_on[p].drain(..).collect();
                    self.resend_any.extend(lost);
                }
            }
        }
    }

    /// The Data of `seq` arrived at `now` with `payload_bytes`, from an intermediate node
    /// if `intermediate`, with `tag` if it answers a probe.
    pub fn on_data(
        &mut self,
        now: Time,
        seq: u64,
        payload_bytes: u64,
        intermediate: bool,
        tag: Option<&[u32]>,
    ) {
        let Some(pending) = self.pending.remove(&seq) else {
            self.stats.duplicates += 1;
            return;
        };
        if intermediate {
            self.stats.intermediate += 1;
        }
        if !self.is_received(seq) {
            self.received[seq as usize] = true;
            self.received_count += 1;
        }
        let Some(p) = pending.path else {
            // A probe's Data: its tag may be a new path, whose RTT the probe measured.
            if let Some(tag) = tag {
                let sample = (!pending.resent).then(|| now.saturating_since(pending.sent_at));
                if let Some(q) = self.paths.on_probe_tag(tag) {
                    let in_use = self.paths.paths()[q].in_use;
                    self.add_path(in_use);
                    if let Some(r) = sample {
                        self.rtts[q].on_sample(r);
                        if let Some(s) = self.rtts[q].srtt() {
                            self.mpccp.set_srtt(q, s);
                        }
                    }
                }
                // The path selection's latency: every probe's RTT on its tag.
                if let (Some(q), Some(r)) = (self.paths.find(tag), sample) {
                    self.paths.on_rtt(q, r);
                }
            }
            return;
        };
        self.paths.on_data(p, payload_bytes);
        let r = self.order.on_data(seq, !intermediate);
        if !intermediate && !pending.resent {
            let r = now.saturating_since(pending.sent_at);
            self.rtts[p].on_sample(r);
            self.paths.on_rtt(p, r);
            if let Some(s) = self.rtts[p].srtt() {
                self.mpccp.set_srtt(p, s);
            }
        }
        if r.lost.is_empty() {
            self.mpccp.on_data(p, !intermediate);
        } else {
            self.stats.losses += r.lost.len() as u64;
            self.mpccp.on_loss(p);
            for s in r.lost {
                self.pending.remove(&s);
                self.resend_on[p].push_back(s);
            }
        }
    }

    /// A NACK for `seq` arrived at `now`: its path is disabled (and replaced within the path
    /// set's rules) and its SEQs go to the other paths.
    pub fn on_nack(&mut self, now: Time, seq: u64, rng: &mut Rng) {
        let Some(pending) = self.pending.remove(&seq) else {
            return;
        };
        self.stats.nacks += 1;
        self.resend_any.push_back(seq);
        let Some(p) = pending.path else {
            return;
        };
        self.order.on_timeout(seq);
        let changes = self.paths.on_nack(now, p, rng);
        let in_flight: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, x)| x.path == Some(p))
            .map(|(&s, _)| s)
            .collect();
        let mut in_flight = in_flight;
        in_flight.sort_unstable();
        for s in in_flight {
            self.pending.remove(&s);
            self.order.on_timeout(s);
            self.resend_any.push_back(s);
        }
        self.apply(changes);
    }

    /// Path `p`'s retransmission timeout now (its back-off included).
    #[must_use]
    pub fn rto(&self, p: usize) -> Dur {
        self.rtts[p].rto()
    }

    /// When [`handle_timeout`](Self::handle_timeout) is next due.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        let probe = (self.next_new < self.config.packets).then_some(self.next_probe);
        let deadline = self.deadlines.peek().map(|Reverse((t, _))| *t);
        [probe, deadline, Some(self.paths.poll_timeout())]
            .into_iter()
            .flatten()
            .min()
            .filter(|_| !self.is_complete())
    }

    /// Expired requests are given up and resent; the path set reviews its paths.
    pub fn handle_timeout(&mut self, now: Time, rng: &mut Rng) {
        while let Some(&Reverse((t, seq))) = self.deadlines.peek() {
            if t > now {
                break;
            }
            self.deadlines.pop();
            let Some(pending) = self.pending.get(&seq).copied() else {
                continue;
            };
            if pending.deadline != t {
                continue;
            }
            self.pending.remove(&seq);
            self.stats.timeouts += 1;
            match pending.path {
                None => self.resend_any.push_back(seq),
                Some(p) => {
                    self.order.on_timeout(seq);
                    let rto = self.rtts[p].rto();
                    if self.mpccp.on_timeout(p, now, rto) {
                        self.rtts[p].back_off();
                    }
                    self.resend_on[p].push_back(seq);
                }
            }
        }
        let changes = self.paths.handle_timeout(now, rng);
        self.apply(changes);
    }
}

#[cfg(test)]
#[path = "ptp_tests.rs"]
mod tests;
