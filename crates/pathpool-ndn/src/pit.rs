//! The Pending Interest Table: Interests waiting for Data, by (name, probe bit), with the
//! faces they came from (issue 22; NFD's semantics where the paper is silent, spec 004 §2).
//!
//! * A new name: an entry, and the Interest goes on.
//! * The same name from a face not yet recorded: aggregated, not forwarded; the Data that
//!   answers it goes back with the intermediate flag set (PTP's "traffic aggregation" case).
//! * From a face already recorded: a retransmission, forwarded again.
//! * A nonce an entry holds from another face: a looping or duplicated Interest, refused
//!   with NACK(duplicate).
//! * A (name, nonce) whose entry was satisfied or refused in the last
//!   [`DEAD_NONCE_LIFETIME`] is a looping Interest (NFD's dead nonce list): refused with
//!   NACK(duplicate) too, so that a loop the FIB allows ends even after the Data came.
//! * Each in-record lasts its Interest's lifetime; an entry with none left is removed and
//!   nothing is sent. Data go to every live in-record of the exact name and remove the entry;
//!   Data nothing waits for are unsolicited and dropped.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use pathpool_core::hash::FxHashMap;
use pathpool_core::{Dur, Time};

use crate::name::Name;
#[cfg(test)]
use crate::packet::DEFAULT_LIFETIME;
use crate::packet::{FaceId, Interest};

/// How long a satisfied or refused Interest's (name, nonce) is remembered as dead: NFD's
/// default for its dead nonce list, 6 s.
pub const DEAD_NONCE_LIFETIME: Dur = Dur::from_secs(6);

/// What to do with an Interest after the PIT saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterestOutcome {
    /// A new entry: forward it.
    Forward,
    /// Another face asked first: wait for that one's Data.
    Aggregated,
    /// The same face again: forward it again.
    Retransmitted,
    /// Its nonce is pending from another face: answer NACK(duplicate), forward nothing.
    Duplicate,
}

/// What a PIT did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PitStats {
    /// The most entries it held at once.
    pub peak: usize,
    /// Interests aggregated.
    pub aggregations: u64,
    /// Interests refused as duplicates.
    pub duplicates: u64,
    /// In-records that expired unanswered.
    pub expired: u64,
    /// Data that matched no live in-record.
    pub unsolicited: u64,
}

#[derive(Clone, Debug)]
struct InRecord {
    face: FaceId,
    nonce: u32,
    expiry: Time,
    /// Its Interest was aggregated: its Data is flagged as from an intermediate node.
    aggregated: bool,
}

#[derive(Clone, Debug)]
struct Entry {
    key: (Name, bool),
    in_records: Vec<InRecord>,
}

/// One node's PIT.
#[derive(Clone, Debug, Default)]
pub struct Pit {
    slots: Vec<Option<Entry>>,
    free: Vec<u32>,
    index: FxHashMap<(Name, bool), u32>,
    /// (expiry, slot) of every in-record; stale ones are skipped when they come up.
    expiries: BinaryHeap<Reverse<(Time, u32)>>,
    /// The dead nonce list: (name, nonce) → until when, with the keys in insertion order
    /// (all live the same time, so the oldest expires first).
    dead: FxHashMap<(Name, u32), Time>,
    dead_order: VecDeque<(Time, (Name, u32))>,
    stats: PitStats,
}

impl Pit {
    /// An empty PIT.
    #[must_use]
    pub fn new() -> Self {
        Pit::default()
    }

    /// `interest` arrived on `face` at `now`.
    pub fn on_interest(&mut self, now: Time, interest: &Interest, face: FaceId) -> InterestOutcome {
        let key = (interest.name.clone(), interest.probe);
        let expiry = now + interest.lifetime;
        let record = |aggregated| InRecord {
            face,
            nonce: interest.nonce,
            expiry,
            aggregated,
        };
        let Some(&slot) = self.index.get(&key) else {
            self.prune_dead(now);
            if self
                .dead
                .contains_key(&(interest.name.clone(), interest.nonce))
            {
                self.stats.duplicates += 1;
                return InterestOutcome::Duplicate;
            }
            let entry = Entry {
                key: key.clone(),
                in_records: vec![record(false)],
            };
            let slot = match self.free.pop() {
                Some(s) => {
                    self.slots[s as usize] = Some(entry);
                    s
                }
                None => {
                    self.slots.push(Some(entry));
                    self.slots.len() as u32 - 1
                }
            };
            self.index.insert(key, slot);
            self.expiries.push(Reverse((expiry, slot)));
            self.stats.peak = self.stats.peak.max(self.index.len());
            return InterestOutcome::Forward;
        };
        let entry = self.slots[slot as usize]
            .as_mut()
            .expect("an indexed slot holds an entry");
        if entry
            .in_records
            .iter()
            .any(|r| r.nonce == interest.nonce && r.face != face)
        {
            self.stats.duplicates += 1;
            return InterestOutcome::Duplicate;
        }
        self.expiries.push(Reverse((expiry, slot)));
        if let Some(r) = entry.in_records.iter_mut().find(|r| r.face == face) {
            r.nonce = interest.nonce;
            r.expiry = expiry;
            return InterestOutcome::Retransmitted;
        }
        entry.in_records.push(record(true));
        self.stats.aggregations += 1;
        InterestOutcome::Aggregated
    }

    /// Data of `name` (a probe's if `probe`) arrived at `now`, flagged `intermediate`: the
    /// faces to send it to, each with its flag (set if the Data's is or the face's Interest
    /// was aggregated), in the order the faces asked. The entry is removed.
    pub fn on_data(
        &mut self,
        now: Time,
        name: &Name,
        probe: bool,
        intermediate: bool,
    ) -> Vec<(FaceId, bool)> {
        let Some(entry) = self.remove(&(name.clone(), probe)) else {
            self.stats.unsolicited += 1;
            return Vec::new();
        };
        self.bury(now, &entry);
        let (live, dead): (Vec<InRecord>, Vec<InRecord>) =
            entry.in_records.into_iter().partition(|r| r.expiry > now);
        self.stats.expired += dead.len() as u64;
        if live.is_empty() {
            self.stats.unsolicited += 1;
        }
        live.into_iter()
            .map(|r| (r.face, intermediate || r.aggregated))
            .collect()
    }

    /// A NACK for `name` (a probe's if `probe`) arrived at `now`: the faces whose Interests
    /// for it are alive, in the order they asked; the entry is removed.
    pub fn on_nack(&mut self, now: Time, name: &Name, probe: bool) -> Vec<FaceId> {
        let Some(entry) = self.remove(&(name.clone(), probe)) else {
            return Vec::new();
        };
        self.bury(now, &entry);
        entry
            .in_records
            .into_iter()
            .filter(|r| r.expiry > now)
            .map(|r| r.face)
            .collect()
    }

    /// Forgets `face`'s in-record for (`name`, `probe`), and the entry if it was the last
    /// (the node refused that Interest after recording it).
    pub fn remove_in_record(&mut self, name: &Name, probe: bool, face: FaceId) {
        let key = (name.clone(), probe);
        let Some(&slot) = self.index.get(&key) else {
            return;
        };
        let entry = self.slots[slot as usize]
            .as_mut()
            .expect("an indexed slot holds an entry");
        entry.in_records.retain(|r| r.face != face);
        if entry.in_records.is_empty() {
            self.remove(&key);
        }
    }

    /// Remembers the nonces of `entry`, satisfied or refused at `now`, as dead.
    fn bury(&mut self, now: Time, entry: &Entry) {
        self.prune_dead(now);
        let until = now + DEAD_NONCE_LIFETIME;
        for r in &entry.in_records {
            let key = (entry.key.0.clone(), r.nonce);
            self.dead.insert(key.clone(), until);
            self.dead_order.push_back((until, key));
        }
    }

    /// Forgets the dead nonces expired at `now`.
    fn prune_dead(&mut self, now: Time) {
        while let Some((t, _)) = self.dead_order.front() {
            if *t > now {
                break;
            }
            let (_, key) = self.dead_order.pop_front().expect("peeked");
            if self.dead.get(&key).is_some_and(|&u| u <= now) {
                self.dead.remove(&key);
            }
        }
    }

    /// Removes the entry for `key`, freeing its slot; returns it.
    fn remove(&mut self, key: &(Name, bool)) -> Option<Entry> {
        let slot = self.index.remove(key)?;
        self.free.push(slot);
        self.slots[slot as usize].take()
    }

    /// When the next in-record may expire.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.expiries.peek().map(|Reverse((t, _))| *t)
    }

    /// Removes the in-records expired at `now`, and the entries left with none, whose keys
    /// (name, probe bit) it returns; sends nothing.
    pub fn handle_timeout(&mut self, now: Time) -> Vec<(Name, bool)> {
        let mut removed = Vec::new();
        while let Some(&Reverse((t, slot))) = self.expiries.peek() {
            if t > now {
                break;
            }
            self.expiries.pop();
            let Some(entry) = self.slots[slot as usize].as_mut() else {
                continue;
            };
            let before = entry.in_records.len();
            entry.in_records.retain(|r| r.expiry > now);
            self.stats.expired += (before - entry.in_records.len()) as u64;
            if entry.in_records.is_empty() {
                let key = entry.key.clone();
                self.remove(&key);
                removed.push(key);
            }
        }
        removed
    }

    /// Whether an entry waits for (`name`, `probe`).
    #[must_use]
    pub fn contains(&self, name: &Name, probe: bool) -> bool {
        self.index.contains_key(&(name.clone(), probe))
    }

    /// Entries held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether it holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Its counters.
    #[must_use]
    pub fn stats(&self) -> PitStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathpool_core::Dur;
    use proptest::prelude::*;

    fn interest(nonce: u32) -> Interest {
        Interest::new(Name::parse("/c/A/5").unwrap(), nonce)
    }

    /// Issue 22, acceptance 1: /c/A/5 from face 1 is forwarded, from face 2 aggregated; the
    /// Data goes to face 1 with flag 0 and face 2 with flag 1 and empties the PIT; a nonce
    /// pending from another face is refused as a duplicate; at +4 s the entry is gone and a
    /// later Data is dropped.
    #[test]
    fn aggregation_flags_duplicates_and_expiry() {
        let mut pit = Pit::new();
        let t0 = Time::from_ms(100);
        let name = interest(0).name;
        assert_eq!(
            pit.on_interest(t0, &interest(1), 1),
            InterestOutcome::Forward
        );
        assert_eq!(
            pit.on_interest(t0, &interest(2), 2),
            InterestOutcome::Aggregated
        );
        assert_eq!(
            pit.on_data(t0, &name, false, false),
            [(1, false), (2, true)]
        );
        assert!(pit.is_empty());
        assert_eq!(
            pit.on_interest(t0, &interest(3), 1),
            InterestOutcome::Forward
        );
        assert_eq!(
            pit.on_interest(t0, &interest(3), 2),
            InterestOutcome::Duplicate
        );
        assert_eq!(
            pit.on_interest(t0, &interest(4), 1),
            InterestOutcome::Retransmitted
        );
        assert_eq!(pit.poll_timeout(), Some(t0 + Dur::from_secs(4)));
        pit.handle_timeout(t0 + Dur::from_secs(4));
        assert!(pit.is_empty());
        assert_eq!(pit.poll_timeout(), None);
        assert!(pit
            .on_data(t0 + Dur::from_secs(5), &name, false, false)
            .is_empty());
        let s = pit.stats();
        assert_eq!(
            (
                s.peak,
                s.aggregations,
                s.duplicates,
                s.expired,
                s.unsolicited
            ),
            (1, 1, 1, 1, 1)
        );
    }

    #[test]
    fn a_satisfied_nonce_is_dead_for_six_seconds() {
        let mut pit = Pit::new();
        let t0 = Time::from_ms(100);
        let name = interest(0).name;
        assert_eq!(
            pit.on_interest(t0, &interest(1), 1),
            InterestOutcome::Forward
        );
        assert_eq!(pit.on_data(t0, &name, false, false), [(1, false)]);
        // The same Interest comes back round a loop: refused, and no entry is made.
        let later = t0 + Dur::from_secs(1);
        assert_eq!(
            pit.on_interest(later, &interest(1), 2),
            InterestOutcome::Duplicate
        );
        assert!(pit.is_empty());
        // A new nonce is a new Interest; the old one is forgotten after 6 s.
        assert_eq!(
            pit.on_interest(later, &interest(2), 1),
            InterestOutcome::Forward
        );
        pit.on_data(later, &name, false, false);
        let after = t0 + DEAD_NONCE_LIFETIME;
        assert_eq!(
            pit.on_interest(after, &interest(1), 2),
            InterestOutcome::Forward
        );
    }

    #[test]
    fn probes_and_data_interests_wait_apart_and_a_flagged_data_stays_flagged() {
        let mut pit = Pit::new();
        let now = Time::from_ms(1);
        let mut probe = interest(1);
        probe.probe = true;
        assert_eq!(pit.on_interest(now, &probe, 1), InterestOutcome::Forward);
        assert_eq!(
            pit.on_interest(now, &interest(2), 1),
            InterestOutcome::Forward
        );
        assert_eq!(pit.len(), 2);
        assert_eq!(pit.on_data(now, &probe.name, true, true), [(1, true)]);
        assert_eq!(pit.len(), 1);
    }

    proptest! {
        /// Issue 22, acceptance 2: a Data reaches each face at most once, and only faces
        /// whose Interest for the name is alive.
        #[test]
        fn data_go_at_most_once_to_each_live_in_record(
            ops in proptest::collection::vec((0u32..4, 0u32..6, 0u64..3000, any::<bool>()), 1..40),
        ) {
            let mut pit = Pit::new();
            let name = interest(0).name;
            let mut now = Time::ZERO;
            // The latest Interest time of each face since the last Data.
            let mut asked: Vec<Option<Time>> = vec![None; 4];
            for (face, nonce, dt_ms, data) in ops {
                now += Dur::from_ms(dt_ms);
                pit.handle_timeout(now);
                if data {
                    let out = pit.on_data(now, &name, false, false);
                    let mut faces: Vec<u32> = out.iter().map(|o| o.0).collect();
                    faces.sort_unstable();
                    faces.dedup();
                    prop_assert_eq!(faces.len(), out.len());
                    for f in faces {
                        let t = asked[f as usize];
                        prop_assert!(t.is_some_and(|t| now < t + DEFAULT_LIFETIME));
                    }
                    asked = vec![None; 4];
                } else if pit.on_interest(now, &interest(nonce), face) != InterestOutcome::Duplicate {
                    asked[face as usize] = Some(now);
                }
            }
        }
    }
}
