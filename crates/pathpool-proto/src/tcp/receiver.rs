//! The TCP receiver: reassembly, cumulative ACKs, SACK blocks, delayed ACKs and timestamp
//! echo.

use pathpool_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use super::segment::{AckSegment, DataSegment, SackBlocks};
use crate::reassembly::{Inserted, Reassembly};

/// Receiver parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpReceiverConfig {
    /// Delay ACKs: acknowledge every second full segment, or after `delack_timeout`
    /// (RFC 5681 §4.2, RFC 1122 §4.2.3.2). Out-of-order and gap-filling segments are always
    /// acknowledged at once.
    pub delayed_ack: bool,
    /// Longest an ACK may be delayed. RFC 5681 requires less than 500 ms; the default is
    /// Linux's 40 ms minimum (`TCP_DELACK_MIN`).
    pub delack_timeout: Dur,
    /// Report data held above a gap in SACK blocks (RFC 2018).
    #[serde(default)]
    pub sack: bool,
}

impl Default for TcpReceiverConfig {
    fn default() -> Self {
        TcpReceiverConfig {
            delayed_ack: false,
            delack_timeout: Dur::from_ms(40),
            sack: false,
        }
    }
}

/// Counters kept by the receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Data segments received, duplicates included.
    pub segments_received: u64,
    /// Segments that carried only bytes already received.
    pub duplicate_segments: u64,
    /// Segments that arrived above a gap.
    pub out_of_order_segments: u64,
    /// ACKs sent.
    pub acks_sent: u64,
}

/// A TCP receiver.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    config: TcpReceiverConfig,
    /// What has arrived; its cumulative point is RCV.NXT.
    received: Reassembly,
    /// RFC 7323 TS.Recent: the timestamp to echo.
    ts_recent: Time,
    /// RFC 7323 Last.ACK.sent.
    last_ack_sent: u64,
    /// In-order segments received since the last ACK (delayed ACKs).
    unacked_segments: u32,
    delack_deadline: Option<Time>,
    /// With SACK: the blocks the next ACK reports, most recently changed first.
    sack_blocks: SackBlocks,
    stats: ReceiverStats,
}

impl TcpReceiver {
    /// A receiver expecting byte 0.
    #[must_use]
    pub fn new(config: TcpReceiverConfig) -> Self {
        TcpReceiver {
            config,
            received: Reassembly::new(),
            ts_recent: Time::ZERO,
            last_ack_sent: 0,
            unacked_segments: 0,
            delack_deadline: None,
            sack_blocks: SackBlocks::EMPTY,
            stats: ReceiverStats::default(),
        }
    }

    /// Processes a data segment and returns the ACK to send now, if one is due.
    pub fn handle_segment(&mut self, now: Time, seg: &DataSegment) -> Option<AckSegment> {
        self.stats.segments_received += 1;
        // RFC 7323 §4.3 (3): remember the timestamp of the segment at the left window edge.
        if seg.seq <= self.last_ack_sent && seg.ts >= self.ts_recent {
            self.ts_recent = seg.ts;
        }
        let inserted = self.received.insert(seg.seq, seg.end());
        let Inserted::InOrder { filled_gap } = inserted else {
            // A duplicate, or above a gap and stored: ACK at once so the sender learns where
            // we are (RFC 5681 §4.2). One arm for both, so that they share the code.
            if inserted == Inserted::Duplicate {
                self.stats.duplicate_segments += 1;
            } else {
                self.stats.out_of_order_segments += 1;
            }
            if self.config.sack {
                self.note_sack_block(seg.seq);
            }
            return Some(self.ack_now(now));
        };
        if filled_gap {
            if self.config.sack {
                self.drop_acknowledged_blocks();
            }
            return Some(self.ack_now(now));
        }
        if !self.config.delayed_ack {
            return Some(self.ack_now(now));
        }
        self.unacked_segments += 1;
        if self.unacked_segments >= 2 {
            return Some(self.ack_now(now));
        }
        if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.config.delack_timeout);
        }
        None
    }

    /// RFC 2018 §4: the first block reports the contiguous data holding the segment that
    /// triggered the ACK; the others repeat the most recently reported blocks, less any the
    /// first now contains (it may have merged them). A segment wholly below the cumulative
    /// ACK changes nothing (D-SACK, RFC 2883, is not modelled).
    #[inline(never)]
    fn note_sack_block(&mut self, seq: u64) {
        let Some(first) = self.received.range_containing(seq) else {
            return;
        };
        let mut blocks = [(0, 0); SackBlocks::MAX];
        blocks[0] = first;
        let mut n = 1;
        for &b in self.sack_blocks.as_slice() {
            let inside_first = b.0 >= first.0 && b.1 <= first.1;
            if !inside_first && n < SackBlocks::MAX {
                blocks[n] = b;
                n += 1;
            }
        }
        self.sack_blocks = SackBlocks::from_blocks(&blocks[..n]);
    }

    /// The cumulative ACK moved: blocks it now covers are no longer reported (a stored range
    /// is absorbed whole, so a block is either wholly above it or wholly below).
    #[inline(never)]
    fn drop_acknowledged_blocks(&mut self) {
        let cumulative = self.received.cumulative();
        let mut blocks = [(0, 0); SackBlocks::MAX];
        let mut n = 0;
        for &b in self.sack_blocks.as_slice() {
            if b.0 > cumulative {
                blocks[n] = b;
                n += 1;
            }
        }
        self.sack_blocks = SackBlocks::from_blocks(&blocks[..n]);
    }

    fn ack_now(&mut self, now: Time) -> AckSegment {
        self.unacked_segments = 0;
        self.delack_deadline = None;
        self.last_ack_sent = self.received.cumulative();
        self.stats.acks_sent += 1;
        AckSegment::new(self.received.cumulative(), self.ts_recent).with_ts_val(now)
    }

    /// The SACK option to send with the ACK this receiver last returned (empty without SACK
    /// or with nothing held above a gap).
    #[must_use]
    pub fn sack_blocks(&self) -> &SackBlocks {
        &self.sack_blocks
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.delack_deadline
    }

    /// Sends a delayed ACK if its timer has expired.
    pub fn handle_timeout(&mut self, now: Time) -> Option<AckSegment> {
        match self.delack_deadline {
            Some(d) if now >= d => Some(self.ack_now(now)),
            _ => None,
        }
    }

    /// Bytes delivered in order to the application.
    #[must_use]
    pub fn delivered_bytes(&self) -> u64 {
        self.received.cumulative()
    }
    /// Ranges held above a gap.
    #[must_use]
    pub fn out_of_order_ranges(&self) -> &[(u64, u64)] {
        self.received.above_gap()
    }
    /// Counters.
    #[must_use]
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }
    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &TcpReceiverConfig {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn seg(seq: u64, len: u32, ts_ms: u64) -> DataSegment {
        DataSegment {
            seq,
            len,
            ts: Time::from_ms(ts_ms),
            retransmission: false,
        }
    }

    #[test]
    fn acks_every_in_order_segment_without_delayed_acks() {
        let mut rx = TcpReceiver::new(TcpReceiverConfig::default());
        let a = rx
            .handle_segment(Time::from_ms(5), &seg(0, 1000, 1))
            .unwrap();
        assert_eq!(
            a,
            AckSegment::new(1000, Time::from_ms(1)).with_ts_val(Time::from_ms(5))
        );
        assert_eq!(
            a.one_way_delay(),
            Some(Dur::from_ms(4)),
            "sent at 1 ms, in at 5"
        );
        let a = rx
            .handle_segment(Time::from_ms(6), &seg(1000, 1000, 2))
            .unwrap();
        assert_eq!(a.ack, 2000);
        assert_eq!(rx.delivered_bytes(), 2000);
    }

    #[test]
    fn out_of_order_gives_dupacks_echoing_the_older_timestamp() {
        let mut rx = TcpReceiver::new(TcpReceiverConfig::default());
        rx.handle_segment(Time::ZERO, &seg(0, 1000, 1));
        // 1000..2000 lost; 2000.. and 3000.. arrive.
        let a = rx.handle_segment(Time::ZERO, &seg(2000, 1000, 3)).unwrap();
        assert_eq!(
            a,
            AckSegment::new(1000, Time::from_ms(1)).with_ts_val(Time::ZERO)
        );
        let a = rx.handle_segment(Time::ZERO, &seg(3000, 1000, 4)).unwrap();
        assert_eq!(a.ack, 1000);
        assert_eq!(rx.out_of_order_ranges(), &[(2000, 4000)]);
        // The retransmission fills the gap: cumulative ACK jumps, echoing its timestamp.
        let a = rx.handle_segment(Time::ZERO, &seg(1000, 1000, 9)).unwrap();
        assert_eq!(
            a,
            AckSegment::new(4000, Time::from_ms(9)).with_ts_val(Time::ZERO)
        );
        assert_eq!(
            a.one_way_delay(),
            None,
            "echo later than the receiver's clock"
        );
        assert!(rx.out_of_order_ranges().is_empty());
        assert_eq!(rx.stats().out_of_order_segments, 2);
    }

    #[test]
    fn duplicates_are_acknowledged_at_once() {
        let mut rx = TcpReceiver::new(TcpReceiverConfig::default());
        rx.handle_segment(Time::ZERO, &seg(0, 1000, 1));
        let a = rx.handle_segment(Time::ZERO, &seg(0, 1000, 2)).unwrap();
        assert_eq!(a.ack, 1000);
        assert_eq!(rx.stats().duplicate_segments, 1);
    }

    #[test]
    fn delayed_acks_every_second_segment_or_timeout() {
        let cfg = TcpReceiverConfig {
            delayed_ack: true,
            delack_timeout: Dur::from_ms(40),
            sack: false,
        };
        let mut rx = TcpReceiver::new(cfg);
        assert_eq!(rx.handle_segment(Time::from_ms(1), &seg(0, 1000, 0)), None);
        assert_eq!(rx.poll_timeout(), Some(Time::from_ms(41)));
        let a = rx
            .handle_segment(Time::from_ms(2), &seg(1000, 1000, 1))
            .unwrap();
        // TS.Recent was taken from the first segment (the left edge), RFC 7323 §4.3.
        assert_eq!(
            a,
            AckSegment::new(2000, Time::from_ms(0)).with_ts_val(Time::from_ms(2))
        );
        assert_eq!(rx.poll_timeout(), None);
        assert_eq!(
            rx.handle_segment(Time::from_ms(3), &seg(2000, 1000, 2)),
            None
        );
        assert_eq!(rx.handle_timeout(Time::from_ms(42)), None, "not yet");
        let a = rx.handle_timeout(Time::from_ms(43)).unwrap();
        assert_eq!(a.ack, 3000);
    }

    #[test]
    fn delayed_acks_still_ack_gaps_at_once() {
        let cfg = TcpReceiverConfig {
            delayed_ack: true,
            ..Default::default()
        };
        let mut rx = TcpReceiver::new(cfg);
        assert!(rx.handle_segment(Time::ZERO, &seg(1000, 1000, 0)).is_some());
        assert!(
            rx.handle_segment(Time::ZERO, &seg(0, 1000, 0)).is_some(),
            "fills a gap"
        );
        assert_eq!(rx.delivered_bytes(), 2000);
    }

    fn sack_receiver() -> TcpReceiver {
        TcpReceiver::new(TcpReceiverConfig {
            sack: true,
            ..Default::default()
        })
    }

    /// RFC 2018 §5, case 2: the first of eight 500-byte segments from 5000 is lost; each later
    /// one is reported in one growing block.
    #[test]
    fn rfc2018_case_2_first_segment_lost() {
        let mut rx = sack_receiver();
        rx.handle_segment(Time::ZERO, &seg(0, 5000, 0));
        for k in 1..8 {
            let a = rx
                .handle_segment(Time::ZERO, &seg(5000 + k * 500, 500, 0))
                .unwrap();
            assert_eq!(a.ack, 5000);
            assert_eq!(rx.sack_blocks().as_slice(), &[(5500, 6000 + k * 500 - 500)]);
        }
    }

    /// RFC 2018 §5, cases 3 and 4: the 2nd, 4th, 6th and 8th segments are lost; the most
    /// recent block comes first; then the 4th arrives and merges two blocks, then the 2nd
    /// fills the first hole.
    #[test]
    fn rfc2018_cases_3_and_4_alternate_losses() {
        let mut rx = sack_receiver();
        rx.handle_segment(Time::ZERO, &seg(0, 5000, 0));
        let a = rx.handle_segment(Time::ZERO, &seg(5000, 500, 0)).unwrap();
        assert_eq!((a.ack, rx.sack_blocks().as_slice()), (5500, &[][..]));
        let a = rx.handle_segment(Time::ZERO, &seg(6000, 500, 0)).unwrap();
        assert_eq!(
            (a.ack, rx.sack_blocks().as_slice()),
            (5500, &[(6000, 6500)][..])
        );
        assert_eq!(
            rx.handle_segment(Time::ZERO, &seg(7000, 500, 0))
                .unwrap()
                .ack,
            5500
        );
        assert_eq!(rx.sack_blocks().as_slice(), &[(7000, 7500), (6000, 6500)]);
        assert_eq!(
            rx.handle_segment(Time::ZERO, &seg(8000, 500, 0))
                .unwrap()
                .ack,
            5500
        );
        assert_eq!(
            rx.sack_blocks().as_slice(),
            &[(8000, 8500), (7000, 7500), (6000, 6500)]
        );
        // Case 4: the 4th segment arrives out of order.
        let a = rx.handle_segment(Time::ZERO, &seg(6500, 500, 0)).unwrap();
        assert_eq!(a.ack, 5500);
        assert_eq!(rx.sack_blocks().as_slice(), &[(6000, 7500), (8000, 8500)]);
        // Then the 2nd: the cumulative ACK jumps and one block is left.
        let a = rx.handle_segment(Time::ZERO, &seg(5500, 500, 0)).unwrap();
        assert_eq!(a.ack, 7500);
        assert_eq!(rx.sack_blocks().as_slice(), &[(8000, 8500)]);
    }

    #[test]
    fn more_holes_than_blocks_reports_the_three_most_recent() {
        let mut rx = sack_receiver();
        for k in [1u64, 3, 5, 7] {
            rx.handle_segment(Time::ZERO, &seg(k * 100, 100, 0));
        }
        // A duplicate of an old block makes it the most recent again.
        assert_eq!(
            rx.handle_segment(Time::ZERO, &seg(100, 100, 0))
                .unwrap()
                .ack,
            0
        );
        assert_eq!(
            rx.sack_blocks().as_slice(),
            &[(100, 200), (700, 800), (500, 600)]
        );
        let mut plain = TcpReceiver::new(TcpReceiverConfig::default());
        plain.handle_segment(Time::ZERO, &seg(100, 100, 0));
        assert!(plain.sack_blocks().is_empty(), "no blocks without SACK");
    }

    proptest! {
        /// Whatever order and duplication segments arrive in, the receiver delivers exactly the
        /// prefix that is complete, the out-of-order ranges are sorted and disjoint, and the
        /// SACK blocks report them as RFC 2018 §4 asks.
        #[test]
        fn reassembly_delivers_the_complete_prefix(
            order in proptest::collection::vec(0u64..40, 1..120)
        ) {
            let mut rx = sack_receiver();
            let mut have = [false; 40];
            for i in &order {
                have[*i as usize] = true;
                let a = rx.handle_segment(Time::ZERO, &seg(i * 100, 100, 0));
                // Every SACK block is a whole range held above the cumulative ACK, and the
                // first holds the segment that triggered the ACK when it is above it.
                let a = a.expect("no delayed ACKs");
                for &b in rx.sack_blocks().as_slice() {
                    prop_assert!(rx.out_of_order_ranges().contains(&b));
                }
                if i * 100 >= a.ack {
                    let first = rx.sack_blocks().as_slice()[0];
                    prop_assert!(first.0 <= i * 100 && i * 100 < first.1);
                }
                let prefix = have.iter().take_while(|&&h| h).count() as u64 * 100;
                prop_assert_eq!(rx.delivered_bytes(), prefix);
                let r = rx.out_of_order_ranges();
                for w in r.windows(2) {
                    prop_assert!(w[0].1 < w[1].0);
                }
                prop_assert!(r.iter().all(|&(s, e)| s > prefix && s < e));
            }
        }
    }
}
