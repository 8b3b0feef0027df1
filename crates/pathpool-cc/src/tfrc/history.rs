//! The TFRC receiver's per-packet arrival history, wrap-safe or with the ns-2 bug (Tse
//! §3.2.3, spec §4.3.4).
//!
//! Both ns-2 TFRC modules kept arrivals in a fixed array indexed by sequence number modulo
//! its size (100,000) and never cleared a slot, so after a wrap a lost packet whose slot
//! still held an arrival from the previous pass looked received: p falls towards 0 and TFRC
//! takes an ever-growing share. Tse's fix resets slots older than one RTT; this history is
//! wrap-safe by tagging each slot with its sequence number, which answers the same question
//! exactly at any rate (decision D232).

use pathpool_core::Time;

/// Which arrival history the receiver keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistoryMode {
    /// Slots tagged with their sequence number: an old pass never answers for a new packet.
    #[default]
    WrapSafe,
    /// ns-2's fixed array: a slot answers "received" for any sequence number mapping to it
    /// once any packet of that slot arrived (Tse §3.2.3's bug, kept for `tse-tfrc-wraparound`).
    FixedArray,
}

/// ns-2's default history size, in packets (Tse §3.2.3).
pub const DEFAULT_HISTORY_SLOTS: usize = 100_000;

#[derive(Debug, Clone, Copy)]
struct Slot {
    seq: u64,
    arrived: bool,
    sent_at: Time,
}

/// Arrival records, one slot per sequence number modulo the capacity.
#[derive(Debug, Clone)]
pub struct ArrivalHistory {
    mode: HistoryMode,
    slots: Vec<Slot>,
}

impl ArrivalHistory {
    /// A history of `slots` slots (at least 1).
    #[must_use]
    pub fn new(mode: HistoryMode, slots: usize) -> ArrivalHistory {
        let empty = Slot {
            seq: 0,
            arrived: false,
            sent_at: Time::ZERO,
        };
        ArrivalHistory {
            mode,
            slots: vec![empty; slots.max(1)],
        }
    }

    fn index(&self, seq: u64) -> usize {
        (seq % self.slots.len() as u64) as usize
    }

    /// Packet `seq`, sent at `sent_at`, arrived.
    pub fn record(&mut self, seq: u64, sent_at: Time) {
        let i = self.index(seq);
        self.slots[i] = Slot {
            seq,
            arrived: true,
            sent_at,
        };
    }

    /// The send time of packet `seq` if the history says it arrived. With
    /// [`HistoryMode::FixedArray`] that is whatever arrival the slot last held.
    #[must_use]
    pub fn arrival(&self, seq: u64) -> Option<Time> {
        let slot = &self.slots[self.index(seq)];
        let valid = match self.mode {
            HistoryMode::WrapSafe => slot.arrived && slot.seq == seq,
            HistoryMode::FixedArray => slot.arrived,
        };
        valid.then_some(slot.sent_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_packet_after_a_wrap() {
        for (mode, want) in [
            (HistoryMode::WrapSafe, None),
            (HistoryMode::FixedArray, Some(Time::from_ms(7))),
        ] {
            let mut h = ArrivalHistory::new(mode, 10);
            h.record(7, Time::from_ms(7));
            assert_eq!(h.arrival(7), Some(Time::from_ms(7)));
            assert_eq!(h.arrival(6), None);
            // Packet 17 (slot 7 again) is lost: only the buggy history calls it received,
            // with the old packet's send time.
            assert_eq!(h.arrival(17), want, "{mode:?}");
            h.record(17, Time::from_ms(17));
            assert_eq!(h.arrival(17), Some(Time::from_ms(17)));
            assert_eq!(h.arrival(7).is_some(), mode == HistoryMode::FixedArray);
        }
    }
}
