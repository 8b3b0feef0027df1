//! The SACK scoreboard of RFC 6675 §3–4: which bytes above the cumulative ACK the receiver
//! reported holding, and the routines the loss recovery of §5 asks of it (`IsLost`,
//! `SetPipe`, `NextSeg`).
//!
//! The scoreboard keeps SACKed ranges, not per-segment marks: `IsLost` is monotone (a byte
//! is lost when enough is SACKed above it, and then so is every byte below it), so the lost
//! bytes are exactly the holes below one boundary, and `SetPipe` and `NextSeg` become
//! sums and searches over the ranges. An ACK costs O(ranges), a handful in practice.

use crate::reassembly::merge_range;

/// SACKed byte ranges above the cumulative acknowledgement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scoreboard {
    /// Sorted, disjoint, non-adjacent `[start, end)` ranges, all above the cumulative ACK.
    ranges: Vec<(u64, u64)>,
}

/// The loss-recovery marks of RFC 6675 §2 that the scoreboard's routines read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Marks {
    /// HighACK: the cumulative acknowledgement (`snd_una`).
    pub(crate) high_ack: u64,
    /// One past HighData, the highest byte sent (`snd_max`).
    pub(crate) high_data: u64,
    /// One past HighRxt, the highest byte retransmitted in this recovery (HighACK outside).
    pub(crate) high_rxt: u64,
}

/// What `NextSeg` chose (RFC 6675 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NextSeg {
    /// Rule 1: retransmit `[start, end)`, presumed lost.
    Lost(u64, u64),
    /// Rule 2: send new data.
    NewData,
    /// Rule 3: retransmit `[start, end)`, not yet presumed lost but below SACKed data.
    Unsacked(u64, u64),
    /// Rule 4: the rescue retransmission `[start, end)`, holding the highest unSACKed byte.
    Rescue(u64, u64),
}

impl Scoreboard {
    /// Records the blocks of one ACK whose cumulative acknowledgement is `high_ack`, ignoring
    /// whatever lies at or below it or at or above `high_data` (never sent). Returns the
    /// bytes newly SACKed: an ACK with some is a "duplicate acknowledgment" in RFC 6675 §2's
    /// sense.
    pub(crate) fn update(&mut self, blocks: &[(u64, u64)], high_ack: u64, high_data: u64) -> u64 {
        let mut newly = 0;
        for &(s, e) in blocks {
            let (s, e) = (s.max(high_ack), e.min(high_data));
            if s < e {
                newly += merge_range(&mut self.ranges, s, e);
            }
        }
        newly
    }

    /// The cumulative ACK moved to `high_ack`: forget what it covers.
    pub(crate) fn advance(&mut self, high_ack: u64) {
        let gone = self.ranges.partition_point(|r| r.1 <= high_ack);
        self.ranges.drain(..gone);
        if let Some(first) = self.ranges.first_mut() {
            first.0 = first.0.max(high_ack);
        }
    }

    /// Forgets everything (RFC 2018 §8 after a timeout: the receiver may have reneged).
    pub(crate) fn clear(&mut self) {
        self.ranges.clear();
    }

    /// The SACKed ranges.
    #[cfg(test)]
    pub(crate) fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// One past the highest SACKed byte (`None` if nothing is).
    fn highest_sacked(&self) -> Option<u64> {
        self.ranges.last().map(|r| r.1)
    }

    /// SACKed bytes in `[a, b)`.
    fn sacked_in(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let i = self.ranges.partition_point(|r| r.1 <= a);
        self.ranges[i..]
            .iter()
            .take_while(|r| r.0 < b)
            .map(|r| r.1.min(b) - r.0.max(a))
            .sum()
    }

    /// Bytes in `[a, b)` not SACKed.
    pub(crate) fn unsacked_in(&self, a: u64, b: u64) -> u64 {
        b.saturating_sub(a) - self.sacked_in(a, b)
    }

    /// The boundary below which every unSACKed byte is lost (RFC 6675 `IsLost`): a byte is
    /// lost when `dupthresh` discontiguous SACKed ranges lie above it, or more than
    /// `(dupthresh − 1)·mss` SACKed bytes. Returns `high_ack` when nothing is lost.
    pub(crate) fn lost_below(&self, high_ack: u64, dupthresh: u32, mss: u64) -> u64 {
        let byte_limit = u64::from(dupthresh.saturating_sub(1)) * mss;
        let mut bytes = 0;
        for (k, r) in self.ranges.iter().rev().enumerate() {
            bytes += r.1 - r.0;
            if k + 1 >= dupthresh as usize || bytes > byte_limit {
                return r.0;
            }
        }
        high_ack
    }

    /// RFC 6675 `SetPipe`: every unSACKed byte sent and not lost counts once, and once more
    /// if it was retransmitted (below HighRxt).
    pub(crate) fn pipe(&self, m: Marks, lost_below: u64) -> u64 {
        self.unsacked_in(lost_below.max(m.high_ack), m.high_data)
            + self.unsacked_in(m.high_ack, m.high_rxt.min(m.high_data))
    }

    /// The first unSACKed byte at or above `from` and below `limit`, with the end of its hole
    /// (bounded by `limit`).
    fn first_hole(&self, from: u64, limit: u64) -> Option<(u64, u64)> {
        let mut s = from;
        let i = self.ranges.partition_point(|r| r.1 <= s);
        for r in &self.ranges[i..] {
            if r.0 > s {
                break;
            }
            s = r.1;
        }
        if s >= limit {
            return None;
        }
        let hole_end = self.ranges[i..]
            .iter()
            .find(|r| r.0 > s)
            .map_or(limit, |r| r.0)
            .min(limit);
        Some((s, hole_end))
    }

    /// RFC 6675 `NextSeg`: what loss recovery sends next, segments of at most `mss` bytes.
    /// `new_data` says whether rule 2 may send unsent data now (the application has some and
    /// the receive window allows it); `rescue_allowed` whether rule 4 may fire (HighACK is
    /// above RescueRxt, or it is undefined).
    pub(crate) fn next_seg(
        &self,
        m: Marks,
        lost_below: u64,
        mss: u64,
        new_data: bool,
        rescue_allowed: bool,
    ) -> Option<NextSeg> {
        let from = m.high_rxt.max(m.high_ack);
        // Rule 1: the first unSACKed byte not yet retransmitted, below the highest SACKed
        // byte, that IsLost.
        if let Some((s, e)) = self.first_hole(from, lost_below) {
            return Some(NextSeg::Lost(s, e.min(s + mss)));
        }
        // Rule 2.
        if new_data {
            return Some(NextSeg::NewData);
        }
        // Rule 3: as rule 1 without IsLost.
        if let Some(top) = self.highest_sacked() {
            if let Some((s, e)) = self.first_hole(from, top) {
                return Some(NextSeg::Unsacked(s, e.min(s + mss)));
            }
        }
        // Rule 4: one segment holding the highest unSACKed byte outstanding.
        if rescue_allowed {
            let top_unsacked = match self.ranges.last() {
                Some(r) if r.1 >= m.high_data => r.0,
                _ => m.high_data,
            };
            if top_unsacked > m.high_ack {
                let hole_start = self
                    .ranges
                    .iter()
                    .rev()
                    .find(|r| r.1 < top_unsacked)
                    .map_or(m.high_ack, |r| r.1);
                let start = hole_start.max(top_unsacked.saturating_sub(mss));
                return Some(NextSeg::Rescue(start, top_unsacked));
            }
        }
        None
    }

    /// If `seq` lies in a SACKed range, the end of that range (where a go-back-N
    /// retransmission continues); otherwise `seq`. Also the start of the next SACKed range
    /// above, which bounds the segment sent there.
    pub(crate) fn skip_sacked(&self, seq: u64) -> (u64, Option<u64>) {
        let i = self.ranges.partition_point(|r| r.1 <= seq);
        match self.ranges.get(i) {
            Some(r) if r.0 <= seq => (r.1, self.ranges.get(i + 1).map(|n| n.0)),
            Some(r) => (seq, Some(r.0)),
            None => (seq, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MSS: u64 = 1000;

    fn marks(high_ack: u64, high_data: u64, high_rxt: u64) -> Marks {
        Marks {
            high_ack,
            high_data,
            high_rxt,
        }
    }

    #[test]
    fn update_merges_and_counts_new_bytes() {
        let mut sb = Scoreboard::default();
        assert_eq!(sb.update(&[(2000, 3000)], 1000, 10_000), 1000);
        assert_eq!(sb.update(&[(2000, 3000)], 1000, 10_000), 0, "nothing new");
        assert_eq!(sb.update(&[(4000, 5000), (2000, 4000)], 1000, 10_000), 2000);
        assert_eq!(sb.ranges(), &[(2000, 5000)]);
        // Below the cumulative ACK or above what was sent: ignored.
        assert_eq!(sb.update(&[(0, 1500), (9000, 12_000)], 1000, 10_000), 1500);
        assert_eq!(sb.ranges(), &[(1000, 1500), (2000, 5000), (9000, 10_000)]);
        sb.advance(2500);
        assert_eq!(sb.ranges(), &[(2500, 5000), (9000, 10_000)]);
        sb.advance(9500);
        assert_eq!(sb.ranges(), &[(9500, 10_000)]);
    }

    /// Ten segments 0..10 sent, segments 1, 3 and 5 lost, the rest SACKed (DupThresh 3).
    fn three_holes() -> Scoreboard {
        let mut sb = Scoreboard::default();
        sb.update(&[(6000, 10_000), (4000, 5000), (2000, 3000)], 1000, 10_000);
        sb
    }

    #[test]
    fn is_lost_needs_three_ranges_or_more_than_two_segments_above() {
        let sb = three_holes();
        // Above segment 5 lie four SACKed segments (more than 2·SMSS): it is lost, and with
        // it every hole below.
        assert_eq!(sb.lost_below(1000, 3, MSS), 6000);
        // One SACKed segment above a hole: not lost; three discontiguous ranges: lost.
        let mut sb = Scoreboard::default();
        sb.update(&[(2000, 3000)], 1000, 10_000);
        assert_eq!(sb.lost_below(1000, 3, MSS), 1000);
        sb.update(&[(4000, 5000), (6000, 7000)], 1000, 10_000);
        assert_eq!(sb.lost_below(1000, 3, MSS), 2000);
        // Two segments SACKed in one range: exactly 2·SMSS, not more: not lost.
        let mut sb = Scoreboard::default();
        sb.update(&[(2000, 4000)], 1000, 10_000);
        assert_eq!(sb.lost_below(1000, 3, MSS), 1000);
    }

    #[test]
    fn set_pipe_counts_sent_not_lost_and_retransmitted_again() {
        let sb = three_holes();
        let lost = sb.lost_below(1000, 3, MSS);
        // Before any retransmission: the holes 1, 3, 5 are lost, nothing above them is
        // unSACKed: the pipe is empty.
        assert_eq!(sb.pipe(marks(1000, 10_000, 1000), lost), 0);
        // Segment 1 retransmitted: it is in the pipe.
        assert_eq!(sb.pipe(marks(1000, 10_000, 2000), lost), 1000);
        // New data 10..12 sent: not lost, in the pipe.
        assert_eq!(sb.pipe(marks(1000, 12_000, 2000), lost), 3000);
        // Segments 1 and 3 retransmitted (HighRxt past 4000): two segments again.
        assert_eq!(sb.pipe(marks(1000, 12_000, 4000), lost), 4000);
    }

    #[test]
    fn next_seg_follows_rules_1_to_4() {
        let sb = three_holes();
        let lost = sb.lost_below(1000, 3, MSS);
        let m = marks(1000, 10_000, 1000);
        assert_eq!(
            sb.next_seg(m, lost, MSS, true, true),
            Some(NextSeg::Lost(1000, 2000))
        );
        let m = marks(1000, 10_000, 2000);
        assert_eq!(
            sb.next_seg(m, lost, MSS, true, true),
            Some(NextSeg::Lost(3000, 4000))
        );
        let m = marks(1000, 10_000, 6000);
        assert_eq!(
            sb.next_seg(m, lost, MSS, true, true),
            Some(NextSeg::NewData),
            "every lost hole retransmitted: rule 2"
        );
        // A hole above the IsLost boundary: rule 3 when there is no new data.
        let mut sb = Scoreboard::default();
        sb.update(&[(2000, 3000)], 1000, 4000);
        let lost = sb.lost_below(1000, 3, MSS);
        assert_eq!(lost, 1000);
        let m = marks(1000, 4000, 1000);
        assert_eq!(
            sb.next_seg(m, lost, MSS, false, true),
            Some(NextSeg::Unsacked(1000, 2000))
        );
        // Rule 3 done (HighRxt 2000): the rescue holds the highest unSACKed byte, 3999.
        let m = marks(1000, 4000, 2000);
        assert_eq!(
            sb.next_seg(m, lost, MSS, false, true),
            Some(NextSeg::Rescue(3000, 4000))
        );
        assert_eq!(sb.next_seg(m, lost, MSS, false, false), None);
    }

    #[test]
    fn segments_stop_at_sacked_data() {
        let mut sb = Scoreboard::default();
        sb.update(&[(1500, 2000), (3000, 6000)], 1000, 10_000);
        let lost = sb.lost_below(1000, 3, MSS);
        assert_eq!(lost, 3000);
        let m = marks(1000, 10_000, 1000);
        assert_eq!(
            sb.next_seg(m, lost, MSS, false, true),
            Some(NextSeg::Lost(1000, 1500))
        );
        assert_eq!(sb.skip_sacked(1500), (2000, Some(3000)));
        assert_eq!(sb.skip_sacked(1200), (1200, Some(1500)));
        assert_eq!(sb.skip_sacked(6000), (6000, None));
    }

    proptest! {
        /// Against a byte map: SACKed bytes, the IsLost boundary (the literal definition,
        /// byte by byte) and SetPipe (the literal loop over every byte).
        #[test]
        fn routines_match_their_definitions_byte_by_byte(
            blocks in proptest::collection::vec((0u64..60, 1u64..8), 0..12),
            high_ack in 0u64..20,
            rxt in 0u64..70,
        ) {
            const UNIT: u64 = 10; // bytes per "segment" in this test
            let high_data = 70 * UNIT;
            let high_ack = high_ack * UNIT;
            let mut sb = Scoreboard::default();
            let mut sacked = vec![false; high_data as usize];
            for (s, l) in blocks {
                let (s, e) = (s * UNIT, (s + l).min(70) * UNIT);
                sb.update(&[(s, e)], high_ack, high_data);
                for b in s.max(high_ack)..e {
                    sacked[b as usize] = true;
                }
            }
            let high_rxt = (rxt * UNIT).max(high_ack).min(high_data);
            let is_lost = |x: u64| {
                let above: Vec<u64> = (x + 1..high_data).filter(|&b| sacked[b as usize]).collect();
                let runs = above.iter().enumerate()
                    .filter(|&(k, &b)| k == 0 || above[k - 1] + 1 != b).count();
                runs >= 3 || above.len() as u64 > 2 * UNIT
            };
            let lost = sb.lost_below(high_ack, 3, UNIT);
            let mut pipe = 0;
            for b in high_ack..high_data {
                if sacked[b as usize] {
                    continue;
                }
                prop_assert_eq!(is_lost(b), b < lost, "IsLost({})", b);
                if !is_lost(b) { pipe += 1; }
                if b < high_rxt { pipe += 1; }
            }
            prop_assert_eq!(sb.pipe(marks(high_ack, high_data, high_rxt), lost), pipe);
            prop_assert!(sb.ranges().windows(2).all(|w| w[0].1 < w[1].0));
        }
    }
}
