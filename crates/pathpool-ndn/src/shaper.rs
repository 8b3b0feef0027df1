//! FISP, CHoPCoP's flow-aware Interest shaping (the PTP paper's [7] and its baseline Sol. 3;
//! spec 004 §5; issue 22): a face lets Interests out no faster than the Data they ask for
//! can come back over its link, one Interest per `interval` (a Data's wire size at the
//! reverse link's rate), and shares that rate max-min fairly among the flows (flow names)
//! that have Interests waiting, by serving their queues in turn. Data of one size make a
//! round-robin of Interests a max-min fair share of the Data rate (D321).

use std::collections::VecDeque;

use pathpool_core::hash::FxHashMap;
use pathpool_core::{Dur, Time};

use crate::name::Name;
use crate::packet::Interest;

/// Interests a flow may have waiting at one face; more are dropped (the consumer's timer
/// recovers them).
pub const SHAPER_FLOW_LIMIT: usize = 1000;

/// One face's shaper.
#[derive(Clone, Debug)]
pub struct Shaper {
    interval: Dur,
    next_free: Time,
    queues: FxHashMap<Name, VecDeque<Interest>>,
    /// The flows with Interests waiting, in the order they are served.
    turn: VecDeque<Name>,
    dropped: u64,
}

impl Shaper {
    /// A shaper letting one Interest out every `interval`.
    #[must_use]
    pub fn new(interval: Dur) -> Self {
        Shaper {
            interval,
            next_free: Time::ZERO,
            queues: FxHashMap::default(),
            turn: VecDeque::new(),
            dropped: 0,
        }
    }

    /// An Interest of `flow` to send at `now`: it goes at once if nothing waits and the
    /// face is free, else it waits in its flow's queue (or is dropped if that is full).
    pub fn offer(&mut self, now: Time, flow: Name, interest: Interest) -> Option<Interest> {
        if self.turn.is_empty() && now >= self.next_free {
            self.next_free = now + self.interval;
            return Some(interest);
        }
        let q = self.queues.entry(flow.clone()).or_default();
        if q.len() >= SHAPER_FLOW_LIMIT {
            self.dropped += 1;
            return None;
        }
        if q.is_empty() {
            self.turn.push_back(flow);
        }
        q.push_back(interest);
        None
    }

    /// The next waiting Interest if the face is free at `now`, from the flow whose turn it
    /// is.
    pub fn poll(&mut self, now: Time) -> Option<Interest> {
        if now < self.next_free {
            return None;
        }
        let flow = self.turn.pop_front()?;
        let q = self
            .queues
            .get_mut(&flow)
            .expect("a flow in turn has a queue");
        let interest = q.pop_front().expect("a flow in turn has an Interest");
        if q.is_empty() {
            self.queues.remove(&flow);
        } else {
            self.turn.push_back(flow);
        }
        self.next_free = self.next_free.max(now) + self.interval;
        Some(interest)
    }

    /// When the next waiting Interest may go, if one waits.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        (!self.turn.is_empty()).then_some(self.next_free)
    }

    /// Interests waiting.
    #[must_use]
    pub fn waiting(&self) -> usize {
        self.queues.values().map(VecDeque::len).sum()
    }

    /// Interests dropped because their flow's queue was full.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{prop_assert, prop_assert_eq, proptest};

    fn interest(flow: &str, k: u32) -> (Name, Interest) {
        let f = Name::parse(flow).unwrap();
        (f.clone(), Interest::new(f.child(&k.to_string()), k))
    }

    /// Everything offered at time 0, then released at each free moment.
    fn release_all(s: &mut Shaper, offered: &[(Name, Interest)]) -> Vec<(Time, Name, u32)> {
        let mut out = Vec::new();
        for (f, i) in offered {
            if let Some(i) = s.offer(Time::ZERO, f.clone(), i.clone()) {
                out.push((Time::ZERO, i.name.flow_name(), i.nonce));
            }
        }
        while let Some(t) = s.poll_timeout() {
            let i = s.poll(t).expect("due");
            out.push((t, i.name.flow_name(), i.nonce));
        }
        out
    }

    #[test]
    fn interests_leave_one_per_interval_and_flows_take_turns() {
        let mut s = Shaper::new(Dur::from_ms(10));
        let mut offered: Vec<(Name, Interest)> = (0..8).map(|k| interest("/a", k)).collect();
        offered.extend((0..2).map(|k| interest("/b", k)));
        let out = release_all(&mut s, &offered);
        let times: Vec<u64> = out.iter().map(|o| o.0.as_ps() / 10_000_000_000).collect();
        assert_eq!(times, (0..10).collect::<Vec<_>>());
        let flows: Vec<String> = out.iter().map(|o| o.1.to_string()).collect();
        assert_eq!(
            flows,
            ["/a", "/a", "/b", "/a", "/b", "/a", "/a", "/a", "/a", "/a"]
        );
    }

    proptest! {
        /// Releases are an interval apart at least, each flow's Interests keep their order,
        /// and nothing is lost below the flow limit.
        #[test]
        fn releases_are_spaced_and_each_flow_keeps_its_order(
            flows in proptest::collection::vec(0u8..4, 1..60),
        ) {
            let mut s = Shaper::new(Dur::from_ms(3));
            let offered: Vec<(Name, Interest)> = flows
                .iter()
                .enumerate()
                .map(|(k, f)| interest(&format!("/f{f}"), k as u32))
                .collect();
            let out = release_all(&mut s, &offered);
            prop_assert_eq!(out.len(), offered.len());
            for w in out.windows(2) {
                prop_assert!(w[1].0 >= w[0].0 + Dur::from_ms(3));
            }
            for f in 0..4u8 {
                let name = Name::parse(&format!("/f{f}")).unwrap();
                let sent: Vec<u32> = offered.iter().filter(|o| o.0 == name).map(|o| o.1.nonce).collect();
                let got: Vec<u32> = out.iter().filter(|o| o.1 == name).map(|o| o.2).collect();
                prop_assert_eq!(got, sent);
            }
        }
    }
}
