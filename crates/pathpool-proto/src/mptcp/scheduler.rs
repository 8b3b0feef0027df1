//! Packet schedulers: which subflow gets the next segment of connection data.

use std::fmt;
use std::str::FromStr;

use pathpool_core::Dur;
use serde::{Deserialize, Serialize};

/// A subflow the scheduler may choose: it has sent everything it was given and its window
/// has room for another segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The subflow's index in the connection.
    pub(crate) subflow: usize,
    /// Its smoothed RTT, if it has measured one.
    pub(crate) srtt: Option<Dur>,
}

/// The scheduling policy, by the name scenario files use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Scheduler {
    /// Lowest smoothed RTT first among the subflows with window space (the Linux MPTCP
    /// default scheduler). A subflow that has not measured an RTT yet counts as fastest, so
    /// a new subflow is tried at once (Linux starts `srtt_us` at 0 likewise); ties go to the
    /// lower subflow index.
    #[default]
    LowestRtt,
    /// Each subflow with window space in turn, starting after the one chosen last.
    RoundRobin,
}

impl Scheduler {
    /// Every scheduler.
    pub const ALL: &'static [Scheduler] = &[Scheduler::LowestRtt, Scheduler::RoundRobin];

    /// The name scenario files use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::LowestRtt => "lowest-rtt",
            Scheduler::RoundRobin => "round-robin",
        }
    }

    /// Picks one of `candidates` (`None` if there is none); `last` is the subflow chosen
    /// last time.
    #[must_use]
    pub(crate) fn pick(
        self,
        candidates: impl IntoIterator<Item = Candidate>,
        last: Option<usize>,
    ) -> Option<usize> {
        let after = last.map_or(0, |l| l + 1);
        candidates
            .into_iter()
            .min_by_key(|c| match self {
                Scheduler::LowestRtt => (false, c.srtt.unwrap_or(Dur::ZERO), c.subflow),
                Scheduler::RoundRobin => (c.subflow < after, Dur::ZERO, c.subflow),
            })
            .map(|c| c.subflow)
    }
}

impl fmt::Display for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scheduler {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Scheduler::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Scheduler::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown scheduler {s:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}

impl Serialize for Scheduler {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Scheduler {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(subflow: usize, srtt_ms: Option<u64>) -> Candidate {
        Candidate {
            subflow,
            srtt: srtt_ms.map(Dur::from_ms),
        }
    }

    #[test]
    fn lowest_rtt_prefers_unmeasured_then_fastest_then_lowest_index() {
        let s = Scheduler::LowestRtt;
        assert_eq!(
            s.pick([c(0, Some(50)), c(1, Some(20)), c(2, Some(30))], None),
            Some(1)
        );
        assert_eq!(s.pick([c(0, Some(50)), c(3, None)], None), Some(3));
        assert_eq!(s.pick([c(2, Some(20)), c(1, Some(20))], None), Some(1));
        assert_eq!(s.pick([], None), None);
    }

    #[test]
    fn round_robin_starts_after_the_last_choice() {
        let s = Scheduler::RoundRobin;
        let all = [c(0, None), c(1, None), c(2, None)];
        assert_eq!(s.pick(all, None), Some(0));
        assert_eq!(s.pick(all, Some(0)), Some(1));
        assert_eq!(s.pick(all, Some(2)), Some(0));
        assert_eq!(s.pick([c(0, None), c(2, None)], Some(0)), Some(2));
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_allowed_ones() {
        for &k in Scheduler::ALL {
            assert_eq!(k.name().parse::<Scheduler>().unwrap(), k);
        }
        let e = "fastest".parse::<Scheduler>().unwrap_err();
        assert!(e.contains("lowest-rtt, round-robin"), "{e}");
    }
}
