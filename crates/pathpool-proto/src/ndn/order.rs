//! The PTP consumer's loss detection by order (spec 004 §4.3–§4.6): each path remembers the
//! order its Interests left in; Data from the producer come back in that order on the path,
//! so when one arrives, the earlier Interests still unanswered are lost. Data from an
//! intermediate node (a cache, an aggregating PIT: the 1-bit flag) arrive early and prove
//! nothing, so they only mark their SEQ received. Received and lost Interests both leave the
//! path's in-flight count (§5.D.4: the consumer keeps out-of-order Data).

use std::collections::VecDeque;

use pathpool_core::hash::FxHashMap;

/// When a producer Data declares the earlier Interests lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossDetection {
    /// At once: every unanswered Interest sent before it (§5.C).
    #[default]
    One,
    /// At the next producer Data: every unanswered Interest sent before the latest-sent of
    /// the earlier producer Data (§5.E's variant for networks that reorder: an Interest is
    /// lost once two producer Data sent after it have come back).
    Two,
}

/// What a Data did to its path's order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// The path the SEQ was last sent on (`None`: not in flight, a late or unasked Data).
    pub path: Option<usize>,
    /// SEQs found lost on that path, in the order they were sent.
    pub lost: Vec<u64>,
}

#[derive(Clone, Debug, Default)]
struct Queue {
    /// (SEQ, answered) in send order; the answered prefix is dropped.
    sent: VecDeque<(u64, bool)>,
    /// Send number of `sent[0]`.
    base: u64,
    /// Interests sent and neither answered nor found lost.
    in_flight: u64,
    /// With [`LossDetection::Two`], the greatest send number of a producer Data so far.
    last_producer: Option<u64>,
}

/// Every path's order and the SEQ → (path, send number) map.
#[derive(Clone, Debug, Default)]
pub struct PathOrder {
    mode: LossDetection,
    queues: Vec<Queue>,
    seq_path: FxHashMap<u64, (usize, u64)>,
}

impl PathOrder {
    /// No path yet.
    #[must_use]
    pub fn new(mode: LossDetection) -> Self {
        PathOrder {
            mode,
            ..PathOrder::default()
        }
    }

    fn queue(&mut self, path: usize) -> &mut Queue {
        if self.queues.len() <= path {
            self.queues.resize_with(path + 1, Queue::default);
        }
        &mut self.queues[path]
    }

    /// The Interest for `seq` left on `path` (a new SEQ or a retransmission; its earlier
    /// send, if still in flight, no longer counts).
    pub fn on_send(&mut self, path: usize, seq: u64) {
        self.forget(seq);
        let q = self.queue(path);
        let n = q.base + q.sent.len() as u64;
        q.sent.push_back((seq, false));
        q.in_flight += 1;
        self.seq_path.insert(seq, (path, n));
    }

    /// Drops `seq`'s pending send, if any, from its path's count.
    fn forget(&mut self, seq: u64) {
        if let Some((path, n)) = self.seq_path.remove(&seq) {
            let q = &mut self.queues[path];
            if let Some(slot) = q.sent.get_mut((n - q.base) as usize) {
                if !slot.1 {
                    slot.1 = true;
                    q.in_flight -= 1;
                }
            }
            Self::trim(q);
        }
    }

    fn trim(q: &mut Queue) {
        while q.sent.front().is_some_and(|e| e.1) {
            q.sent.pop_front();
            q.base += 1;
        }
    }

    /// The Data of `seq` arrived, from the producer (`from_producer`) or an intermediate
    /// node: its path, and the SEQs that loss detection finds lost there (which leave the
    /// in-flight count and are forgotten; the caller requests them again).
    pub fn on_data(&mut self, seq: u64, from_producer: bool) -> Received {
        let Some((path, n)) = self.seq_path.remove(&seq) else {
            return Received::default();
        };
        let mode = self.mode;
        let q = &mut self.queues[path];
        let i = (n - q.base) as usize;
        q.sent[i].1 = true;
        q.in_flight -= 1;
        let before = if !from_producer {
            None
        } else {
            match mode {
                LossDetection::One => Some(n),
                LossDetection::Two => {
                    let previous = q.last_producer;
                    q.last_producer = Some(previous.map_or(n, |p| p.max(n)));
                    previous
                }
            }
        };
        let mut lost = Vec::new();
        if let Some(limit) = before {
            for k in 0..(limit.saturating_sub(q.base) as usize).min(q.sent.len()) {
                let (s, answered) = q.sent[k];
                if !answered {
                    q.sent[k].1 = true;
                    q.in_flight -= 1;
                    lost.push(s);
                }
            }
        }
        Self::trim(q);
        for s in &lost {
            self.seq_path.remove(s);
        }
        Received {
            path: Some(path),
            lost,
        }
    }

    /// `seq`'s Interest is given up (its timer expired): it leaves its path's in-flight count;
    /// returns that path.
    pub fn on_timeout(&mut self, seq: u64) -> Option<usize> {
        let path = self.seq_path.get(&seq).map(|&(p, _)| p);
        self.forget(seq);
        path
    }

    /// The path `seq` was last sent on, if it is in flight.
    #[must_use]
    pub fn path_of(&self, seq: u64) -> Option<usize> {
        self.seq_path.get(&seq).map(|&(p, _)| p)
    }

    /// Interests in flight on `path`.
    #[must_use]
    pub fn in_flight(&self, path: usize) -> u64 {
        self.queues.get(path).map_or(0, |q| q.in_flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Issue 22, acceptance 1: queue 3, 7, 9, 12; Data 7 from a cache, then producer Data 12
    /// find 3 and 9 lost; in flight 4 → 0.
    #[test]
    fn a_producer_data_finds_the_earlier_unanswered_lost() {
        let mut o = PathOrder::new(LossDetection::One);
        for s in [3, 7, 9, 12] {
            o.on_send(0, s);
        }
        assert_eq!(o.in_flight(0), 4);
        assert_eq!(
            o.on_data(7, false),
            Received {
                path: Some(0),
                lost: vec![]
            }
        );
        assert_eq!(o.in_flight(0), 3);
        assert_eq!(o.on_data(12, true).lost, [3, 9]);
        assert_eq!(o.in_flight(0), 0);
        assert_eq!(o.on_data(3, true), Received::default());
    }

    #[test]
    fn with_two_the_check_waits_for_the_next_producer_data() {
        let mut o = PathOrder::new(LossDetection::Two);
        for s in [1, 2, 3, 4, 5] {
            o.on_send(0, s);
        }
        // 2 overtook 1 (reordered): no loss yet, and 1 arrives in time.
        assert!(o.on_data(2, true).lost.is_empty());
        assert!(o.on_data(1, true).lost.is_empty());
        // 4 checks what was sent before 2; 5 what was sent before 4: 3 is lost.
        assert!(o.on_data(4, true).lost.is_empty());
        assert_eq!(o.on_data(5, true).lost, [3]);
        assert_eq!(o.in_flight(0), 0);
        // The rule at once would have found 1 lost at 2.
        let mut one = PathOrder::new(LossDetection::One);
        for s in [1, 2] {
            one.on_send(0, s);
        }
        assert_eq!(one.on_data(2, true).lost, [1]);
    }

    #[test]
    fn paths_keep_their_own_order_and_a_resend_moves_a_seq() {
        let mut o = PathOrder::new(LossDetection::One);
        o.on_send(0, 1);
        o.on_send(1, 2);
        o.on_send(0, 3);
        assert_eq!(o.on_data(2, true).lost, Vec::<u64>::new());
        o.on_send(1, 1);
        assert_eq!((o.in_flight(0), o.in_flight(1)), (1, 1));
        assert_eq!(o.on_data(3, true).lost, Vec::<u64>::new());
        assert_eq!(o.path_of(1), Some(1));
        assert_eq!(o.on_timeout(1), Some(1));
        assert_eq!((o.in_flight(0), o.in_flight(1)), (0, 0));
    }

    proptest! {
        /// Issue 22, acceptance 2: 0 ≤ in flight = sent − received − lost, per path.
        #[test]
        fn in_flight_is_sent_less_received_less_lost(
            ops in proptest::collection::vec((0u8..3, 0usize..3, 0u64..20, any::<bool>()), 0..200),
            two in any::<bool>(),
        ) {
            let mode = if two { LossDetection::Two } else { LossDetection::One };
            let mut o = PathOrder::new(mode);
            // Per path: SEQs in flight by the model.
            let mut model: Vec<Vec<u64>> = vec![Vec::new(); 3];
            for (op, path, seq, producer) in ops {
                match op {
                    0 => {
                        for m in &mut model {
                            m.retain(|&s| s != seq);
                        }
                        o.on_send(path, seq);
                        model[path].push(seq);
                    }
                    1 => {
                        let r = o.on_data(seq, producer);
                        if let Some(p) = r.path {
                            prop_assert!(model[p].contains(&seq));
                            model[p].retain(|&s| s != seq);
                            for l in &r.lost {
                                prop_assert!(model[p].contains(l));
                                model[p].retain(|s| s != l);
                            }
                        } else {
                            prop_assert!(model.iter().all(|m| !m.contains(&seq)));
                        }
                    }
                    _ => {
                        if let Some(p) = o.on_timeout(seq) {
                            model[p].retain(|&s| s != seq);
                        }
                    }
                }
                for (p, m) in model.iter().enumerate() {
                    prop_assert_eq!(o.in_flight(p), m.len() as u64);
                }
            }
        }
    }
}
