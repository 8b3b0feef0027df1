//! The master's reliability in multipath TFRC (Tse §4.3.2, spec 003 §4.3.2): each feedback
//! carries the receiver's NACK list and what it received; a NACKed connection packet is
//! resent, on another subflow when there is one, ahead of new data and within that subflow's
//! rate; later NACKs for it are ignored until `nack_expiry_rtts` RTTs after the resend and
//! then count as a new loss (decisions D250, D251).

use std::collections::{HashMap, HashSet, VecDeque};

use pathpool_core::{Dur, Time};

use super::{reported_received, MpFeedback};
use crate::reassembly::merge_range;

/// Which subflow a NACKed packet is resent on (Tse: "on a different path than the original
/// when possible"; which one is open, spec 003 §4.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResendSubflow {
    /// The subflow with the highest paced rate other than the one whose transmission was
    /// NACKed (the spec's recommendation); that one if it is the only subflow.
    #[default]
    HighestRateOther,
    /// The subflow whose transmission was NACKed.
    Same,
}

/// Tse's NACK expiry: 1 RTT for the resend's acknowledgement plus at least 0.5 RTT for the
/// last duplicate NACK (spec 003 §4.3.2).
pub const DEFAULT_NACK_EXPIRY_RTTS: f64 = 1.5;

/// What one subflow sent, by subflow sequence number from `first_seq` on.
#[derive(Debug, Clone, Default)]
struct SentLog {
    first_seq: u64,
    /// (connection sequence number, send time) of each transmission.
    entries: VecDeque<(u64, Time)>,
}

/// The master's reliability state: what each subflow sent, what the receiver reported,
/// the resend queues and the NACK table.
#[derive(Debug, Clone)]
pub struct Reliability {
    expiry_rtts: f64,
    choice: ResendSubflow,
    logs: Vec<SentLog>,
    /// Connection packets to resend, per subflow, each with the subflow of the NACKed copy.
    queues: Vec<VecDeque<(u64, usize)>>,
    queued: HashSet<u64>,
    /// The NACK table: resent connection packets and when NACKs for them expire.
    resent: HashMap<u64, Time>,
    cumulative: u64,
    above_gap: Vec<(u64, u64)>,
    next_new: u64,
    resends: u64,
}

impl Reliability {
    /// For `subflows` subflows; NACKs expire `expiry_rtts` RTTs after a resend.
    #[must_use]
    pub fn new(subflows: usize, expiry_rtts: f64, choice: ResendSubflow) -> Reliability {
        Reliability {
            expiry_rtts,
            choice,
            logs: vec![SentLog::default(); subflows],
            queues: vec![VecDeque::new(); subflows],
            queued: HashSet::new(),
            resent: HashMap::new(),
            cumulative: 0,
            above_gap: Vec::new(),
            next_new: 0,
            resends: 0,
        }
    }

    /// The connection sequence number new data gets next.
    #[must_use]
    pub fn next_new_seq(&self) -> u64 {
        self.next_new
    }

    /// Resends sent so far.
    #[must_use]
    pub fn resends(&self) -> u64 {
        self.resends
    }

    /// Whether the receiver reported connection packet `g` received.
    #[must_use]
    pub fn received(&self, g: u64) -> bool {
        reported_received(self.cumulative, &self.above_gap, g)
    }

    /// Whether every connection packet sent so far was reported received.
    #[must_use]
    pub fn all_received(&self) -> bool {
        self.cumulative >= self.next_new
    }

    /// Whether subflow `i` has a resend waiting.
    #[must_use]
    pub fn has_resend(&self, i: usize) -> bool {
        !self.queues[i].is_empty()
    }

    /// The next resend queued for subflow `i` (the connection packet and the subflow whose
    /// copy was NACKed); packets reported received meanwhile are dropped from the queue.
    pub fn pop_resend(&mut self, i: usize) -> Option<(u64, usize)> {
        while let Some((g, orig)) = self.queues[i].pop_front() {
            self.queued.remove(&g);
            if !self.received(g) {
                return Some((g, orig));
            }
        }
        None
    }

    /// Subflow `i` sent its packet `seq` at `now`, carrying connection packet `g` (new data
    /// when `g` is [`Reliability::next_new_seq`]). A resend starts the NACK expiry of `g`:
    /// `expiry_rtts` times the larger of `rtt_orig` (the RTT of the subflow whose copy was
    /// NACKed) and `rtt_now` (this subflow's), decision D251.
    pub fn on_sent(&mut self, now: Time, i: usize, seq: u64, g: u64, rtt_orig: Dur, rtt_now: Dur) {
        let log = &mut self.logs[i];
        if log.entries.is_empty() {
            log.first_seq = seq;
        }
        debug_assert_eq!(log.first_seq + log.entries.len() as u64, seq);
        log.entries.push_back((g, now));
        if g == self.next_new {
            self.next_new += 1;
        } else {
            self.resends += 1;
            let rtt = rtt_orig.max(rtt_now).as_secs_f64();
            let expires = now.saturating_add(Dur::from_secs_f64(self.expiry_rtts * rtt));
            self.resent.insert(g, expires);
        }
    }

    /// The connection packet subflow `i`'s packet `seq` carried, unless it is no longer
    /// logged (then it was reported received).
    fn carried(&self, i: usize, seq: u64) -> Option<u64> {
        let log = self.logs.get(i)?;
        let idx = seq.checked_sub(log.first_seq)?;
        log.entries.get(idx as usize).map(|e| e.0)
    }

    /// A feedback arrived at `now`: records what the receiver reported and queues a resend
    /// for each NACK that names a connection packet not received, not queued and not resent
    /// within its expiry; `rates` are the subflows' paced rates (to choose where). Returns
    /// how many resends were queued.
    pub fn on_feedback(&mut self, now: Time, fb: &MpFeedback, rates: &[f64]) -> usize {
        // Feedback from different subflows can arrive out of order: what was received only
        // grows, so reports are merged.
        self.cumulative = self.cumulative.max(fb.cumulative);
        for &(s, e) in &fb.above_gap {
            merge_range(&mut self.above_gap, s, e);
        }
        let cum = self.cumulative;
        if let Some(first) = self.above_gap.first().copied().filter(|r| r.0 <= cum) {
            self.cumulative = cum.max(first.1);
            self.above_gap.remove(0);
        }
        let cum = self.cumulative;
        self.above_gap.retain(|r| r.1 > cum);
        self.prune();
        let mut queued = 0;
        for nack in &fb.nacks {
            let orig = nack.subflow as usize;
            let Some(g) = self.carried(orig, nack.seq) else {
                continue;
            };
            if self.received(g) || self.queued.contains(&g) {
                continue;
            }
            if self.resent.get(&g).is_some_and(|&expires| now < expires) {
                continue;
            }
            self.resent.remove(&g);
            let to = self.choose(orig, rates);
            self.queues[to].push_back((g, orig));
            self.queued.insert(g);
            queued += 1;
        }
        queued
    }

    fn choose(&self, orig: usize, rates: &[f64]) -> usize {
        match self.choice {
            ResendSubflow::Same => orig,
            ResendSubflow::HighestRateOther => (0..self.logs.len())
                .filter(|&j| j != orig)
                .max_by(|&a, &b| rates[a].total_cmp(&rates[b]).then(b.cmp(&a)))
                .unwrap_or(orig),
        }
    }

    /// Drops what the receiver reported received from the logs and the NACK table.
    fn prune(&mut self) {
        let cum = self.cumulative;
        for log in &mut self.logs {
            while log.entries.front().is_some_and(|e| e.0 < cum) {
                log.entries.pop_front();
                log.first_seq += 1;
            }
        }
        if self.resent.len() > 64 {
            self.resent.retain(|&g, _| g >= cum);
        }
    }

    /// Connection packets the tail-loss rule may resend: not reported received, not
    /// queued, each with the time its wait ends (its latest copy's send time plus
    /// `expiry_rtts` RTTs of that copy's subflow, and no earlier than a NACK expiry) and the
    /// subflow of that copy.
    fn tail_pending(&self, rtts: &[Dur]) -> Vec<(u64, Time, usize)> {
        let mut latest: HashMap<u64, (Time, usize)> = HashMap::new();
        for (i, log) in self.logs.iter().enumerate() {
            for &(g, at) in &log.entries {
                let e = latest.entry(g).or_insert((at, i));
                if at >= e.0 {
                    *e = (at, i);
                }
            }
        }
        latest
            .into_iter()
            .filter(|&(g, _)| !self.received(g) && !self.queued.contains(&g))
            .map(|(g, (at, i))| {
                let wait = Dur::from_secs_f64(self.expiry_rtts * rtts[i].as_secs_f64());
                let mut ready = at.saturating_add(wait);
                if let Some(&expires) = self.resent.get(&g) {
                    ready = ready.max(expires);
                }
                (g, ready, i)
            })
            .collect()
    }

    /// The tail-loss rule (decision D251): with no new data left, a subflow whose turn has
    /// come resends the lowest connection packet that is not reported received, not queued,
    /// not within a NACK expiry, and whose latest copy went out at least `expiry_rtts` RTTs
    /// of its subflow ago (`rtts`). Losses among the last packets of a subflow, which no
    /// three later packets follow, are repaired so. Returns the packet and the subflow of its
    /// latest copy.
    #[must_use]
    pub fn tail_candidate(&self, now: Time, rtts: &[Dur]) -> Option<(u64, usize)> {
        self.tail_pending(rtts)
            .into_iter()
            .filter(|&(_, ready, _)| ready <= now)
            .min_by_key(|&(g, _, _)| g)
            .map(|(g, _, i)| (g, i))
    }

    /// When [`Reliability::tail_candidate`] next finds a packet (now or in the past if it
    /// finds one now), if any is pending.
    #[must_use]
    pub fn next_tail_time(&self, rtts: &[Dur]) -> Option<Time> {
        self.tail_pending(rtts).into_iter().map(|p| p.1).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptfrc::Nack;
    use pathpool_cc::Feedback;

    fn fb(nacks: &[(u32, u64)], cumulative: u64) -> MpFeedback {
        MpFeedback {
            subflow: 0,
            tfrc: Feedback {
                timestamp_echo: Time::ZERO,
                echo_delay: Dur::ZERO,
                x_recv_bytes_per_s: 0.0,
                loss_event_rate: 0.0,
                losses_last_rtt: 0,
            },
            nacks: nacks
                .iter()
                .map(|&(subflow, seq)| Nack { subflow, seq })
                .collect(),
            cumulative,
            above_gap: Vec::new(),
            connection_loss_event_rate: None,
        }
    }

    const RTT: Dur = Dur::from_ms(100);

    /// Issue 20, acceptance 1: NACKs within 1.5 RTT of a resend are ignored; a later one
    /// resends, on another subflow.
    #[test]
    fn nacks_within_the_expiry_are_ignored_and_a_later_one_resends_elsewhere() {
        let mut r = Reliability::new(2, DEFAULT_NACK_EXPIRY_RTTS, ResendSubflow::default());
        // Subflow 1 sends connection packets 0..10 as its packets 0..10.
        for k in 0..10 {
            r.on_sent(Time::from_ms(k), 1, k, k, RTT, RTT);
        }
        let rates = [2.0e5, 1.0e5];
        // Its packet 3 is NACKed: resent on subflow 0, the other (and faster) one.
        assert_eq!(
            r.on_feedback(Time::from_ms(200), &fb(&[(1, 3)], 3), &rates),
            1
        );
        assert!(!r.has_resend(1));
        assert_eq!(r.pop_resend(0), Some((3, 1)));
        r.on_sent(Time::from_ms(300), 0, 0, 3, RTT, RTT);
        // Duplicate NACKs for it (feedback on every subflow) within 1.5 × 100 ms: ignored.
        for at in [300, 350, 449] {
            assert_eq!(
                r.on_feedback(Time::from_ms(at), &fb(&[(1, 3)], 3), &rates),
                0,
                "{at}"
            );
        }
        // 1.5 RTT after the resend a NACK for it is a new loss report. The resend was subflow
        // 0's packet 0: it is resent on the other subflow, 1.
        assert_eq!(
            r.on_feedback(Time::from_ms(450), &fb(&[(0, 0)], 3), &rates),
            1
        );
        assert_eq!(r.pop_resend(1), Some((3, 0)));
        assert_eq!(r.resends(), 1);
        // A NACK naming the first copy again, while this resend is queued: ignored.
        r.queues[1].push_back((3, 0));
        r.queued.insert(3);
        assert_eq!(
            r.on_feedback(Time::from_ms(460), &fb(&[(1, 3)], 3), &rates),
            0
        );
    }

    #[test]
    fn the_expiry_uses_the_larger_rtt_and_received_packets_are_never_resent() {
        let mut r = Reliability::new(2, 1.5, ResendSubflow::HighestRateOther);
        r.on_sent(Time::ZERO, 0, 0, 0, RTT, RTT);
        r.on_sent(Time::ZERO, 0, 1, 1, RTT, RTT);
        // Resent on subflow 1 (RTT 400 ms) of a copy on subflow 0 (100 ms): 600 ms expiry.
        r.on_sent(Time::from_ms(100), 1, 0, 0, RTT, Dur::from_ms(400));
        let rates = [1.0, 1.0];
        assert_eq!(
            r.on_feedback(Time::from_ms(699), &fb(&[(0, 0)], 0), &rates),
            0
        );
        assert_eq!(
            r.on_feedback(Time::from_ms(700), &fb(&[(0, 0)], 0), &rates),
            1
        );
        // Once reported received (cumulative 2), a queued resend is dropped and NACKs for
        // it name nothing.
        assert_eq!(
            r.on_feedback(Time::from_ms(800), &fb(&[(0, 1)], 2), &rates),
            0
        );
        assert_eq!(r.pop_resend(1), None);
        assert!(r.all_received());
    }

    #[test]
    fn same_subflow_choice_and_the_tail_rule() {
        let mut r = Reliability::new(2, 1.5, ResendSubflow::Same);
        for k in 0..3 {
            r.on_sent(Time::ZERO, 0, k, k, RTT, RTT);
        }
        assert_eq!(
            r.on_feedback(Time::from_ms(10), &fb(&[(0, 1)], 0), &[5.0, 9.0]),
            1
        );
        assert_eq!(r.pop_resend(0), Some((1, 0)));
        r.on_sent(Time::from_ms(20), 0, 3, 1, RTT, RTT);
        // Packet 0 arrived; 1 was resent at 20 ms; 2 (the last, no three packets after it)
        // waits 1.5 RTT from its send.
        let mut report = fb(&[], 1);
        report.above_gap = vec![(1, 2)];
        r.on_feedback(Time::from_ms(30), &report, &[5.0, 9.0]);
        let rtts = [RTT, RTT];
        assert_eq!(r.tail_candidate(Time::from_ms(149), &rtts), None);
        assert_eq!(r.next_tail_time(&rtts), Some(Time::from_ms(150)));
        assert_eq!(r.tail_candidate(Time::from_ms(150), &rtts), Some((2, 0)));
        assert!(r.received(1) && !r.received(2));
    }
}
