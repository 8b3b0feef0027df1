//! SACK loss recovery (RFC 6675) for [`TcpSender`]: what the sender does with each ACK and
//! what it sends next when `TcpSenderConfig::sack` is on.
//!
//! Outside recovery the sender sends in sequence, skipping what the receiver SACKed (a
//! go-back-N after a timeout resends only the holes it has heard of since), with the pipe (the
//! unSACKed bytes in `[snd_una, snd_nxt)`) in place of `snd_nxt − snd_una`: this is Limited
//! Transmit as RFC 6675 §5 step 3 writes it. An ACK that SACKs new bytes is a duplicate
//! (§2); DupThresh of them, or `IsLost(HighACK + 1)`, start recovery (§5 step 4): ssthresh and
//! cwnd from half the flight, the first hole resent at once, then segments chosen by
//! `NextSeg` whenever `cwnd − pipe ≥ 1 SMSS` (step C). The cumulative ACK of RecoveryPoint
//! ends it (step A). Every ACK of new data restarts the retransmission timer (RFC 6298 §5.3);
//! a timeout forgets the scoreboard (RFC 2018 §8) and recovery may not start again until
//! everything outstanding then is acknowledged (RFC 6675 §5.1).

use pathpool_cc::{CongestionEvent, MultipathController, RecoveryAck};
use pathpool_core::Time;

use super::super::scoreboard::{Marks, NextSeg, Scoreboard};
use super::super::segment::{AckSegment, DataSegment, SackBlocks};
use super::TcpSender;

/// The sender's SACK state.
#[derive(Clone, Debug, Default)]
pub(super) struct SackState {
    board: Scoreboard,
    /// One past HighRxt: the highest byte retransmitted in this recovery.
    high_rxt: u64,
    /// RescueRxt (RFC 6675 §2), once set in this recovery.
    rescue_rxt: Option<u64>,
    /// After a timeout: recovery may not start before `snd_una` reaches it (§5.1).
    rto_recovery_point: Option<u64>,
    /// Every unSACKed byte below it is lost (`IsLost`), as of the last ACK.
    lost_below: u64,
    /// RFC 6675 `pipe`, set on each ACK (`SetPipe`) and raised by what is sent.
    pub(super) pipe: u64,
}

impl SackState {
    /// A timeout: forget the scoreboard and recovery's marks.
    pub(super) fn on_timeout(&mut self, snd_max: u64) {
        self.board.clear();
        self.rescue_rxt = None;
        self.rto_recovery_point = Some(snd_max);
        self.pipe = 0;
    }
}

impl TcpSender {
    fn sack_state(&mut self) -> &mut SackState {
        self.sack.as_deref_mut().expect("a SACK sender")
    }

    /// RFC 6675 §5: an arriving ACK. Out of line, as every SACK path here: a sender without
    /// SACK pays one test of `self.sack` for it.
    #[inline(never)]
    pub(super) fn handle_ack_sack<C: MultipathController>(
        &mut self,
        now: Time,
        ack: &AckSegment,
        sack: &SackBlocks,
        cc: &mut C,
    ) {
        let (una, max) = (self.snd_una.max(ack.ack), self.snd_max);
        let newly_sacked = self.sack_state().board.update(sack.as_slice(), una, max);
        if ack.ack > self.snd_una {
            self.sack_state().board.advance(ack.ack);
            self.dupacks = 0;
            self.on_new_ack_sack(now, ack, cc);
        }
        let outstanding = self.snd_una < self.snd_max;
        if newly_sacked > 0 && !self.in_recovery && outstanding {
            self.dupacks += 1;
            self.refresh_pipe();
            let lost = self.sack_state().lost_below > self.snd_una;
            let after_rto = self
                .sack_state()
                .rto_recovery_point
                .is_some_and(|r| self.snd_una < r);
            if (self.dupacks >= self.config.dupack_threshold || lost) && !after_rto {
                self.enter_sack_recovery(cc);
            }
        }
        self.refresh_pipe();
    }

    fn on_new_ack_sack<C: MultipathController>(&mut self, now: Time, ack: &AckSegment, cc: &mut C) {
        let acked = ack.ack - self.snd_una;
        self.snd_una = ack.ack;
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        let sample = self.take_rtt_sample(now, ack);
        if self
            .sack_state()
            .rto_recovery_point
            .is_some_and(|r| self.snd_una >= r)
        {
            self.sack_state().rto_recovery_point = None;
        }
        if self.in_recovery {
            if self.recover.is_some_and(|r| ack.ack >= r) {
                // Step A: the cumulative ACK of RecoveryPoint ends recovery.
                self.in_recovery = false;
                self.refresh_pipe();
                let flight = self.pipe_bytes();
                cc.on_recovery_ack(
                    self.path,
                    RecoveryAck::Full {
                        flight_bytes: flight,
                    },
                );
            }
        } else {
            self.refresh_pipe();
            self.report_ack(
                now,
                acked,
                sample,
                ack.one_way_delay(),
                self.pipe_bytes(),
                cc,
            );
        }
        self.rto_deadline = (self.snd_una < self.snd_max).then(|| now + self.rtt.rto());
    }

    /// Step 4: fast retransmit and loss recovery.
    fn enter_sack_recovery<C: MultipathController>(&mut self, cc: &mut C) {
        let flight = self.loss_flight(cc);
        self.recover = Some(self.snd_max);
        self.in_recovery = true;
        self.retransmit_pending = true;
        self.stats.fast_recoveries += 1;
        let una = self.snd_una;
        let s = self.sack_state();
        s.high_rxt = una;
        s.rescue_rxt = None;
        cc.on_congestion_event(
            self.path,
            CongestionEvent::SackRecovery {
                flight_bytes: flight,
            },
        );
    }

    /// The marks `SetPipe` and `NextSeg` read.
    fn marks(&self, s: &SackState) -> Marks {
        Marks {
            high_ack: self.snd_una,
            high_data: self.snd_max,
            high_rxt: if self.in_recovery {
                s.high_rxt.max(self.snd_una)
            } else {
                self.snd_una
            },
        }
    }

    /// `SetPipe` in recovery; outside it, the unSACKed bytes sent since `snd_una` (after a
    /// timeout, those resent since: the rest are presumed lost, as Linux marks them).
    fn refresh_pipe(&mut self) {
        let (mss, dupthresh) = (self.config.mss, self.config.dupack_threshold);
        let (una, nxt, in_recovery) = (self.snd_una, self.snd_nxt, self.in_recovery);
        let marks = self.marks(self.sack.as_deref().expect("a SACK sender"));
        let s = self.sack_state();
        s.lost_below = s.board.lost_below(una, dupthresh, mss);
        s.pipe = if in_recovery {
            s.board.pipe(marks, s.lost_below)
        } else {
            s.board.unsacked_in(una, nxt)
        };
    }

    /// Bytes the window allows beyond the pipe; in recovery only whole segments (step C).
    /// When the next byte is new data, the receive window bounds it too.
    #[inline(never)]
    pub(super) fn sack_room<C: MultipathController>(&self, s: &SackState, cc: &C) -> u64 {
        let mut room = self.send_window(cc).saturating_sub(s.pipe);
        if self.snd_nxt == self.snd_max {
            room = room.min(self.rwnd_room());
        }
        if self.in_recovery && room < self.config.mss {
            0
        } else {
            room
        }
    }

    /// New bytes the receive window allows: it bounds `snd_max − snd_una`, whatever is SACKed.
    fn rwnd_room(&self) -> u64 {
        self.config
            .rwnd_bytes
            .saturating_sub(self.snd_max - self.snd_una)
    }

    /// Whether rule 2 of `NextSeg` may send new data now: the application has some and the
    /// receive window allows it.
    fn new_data_allowed(&self) -> bool {
        let len = self.segment_len(self.snd_max);
        len > 0 && len <= self.rwnd_room()
    }

    /// What loss recovery sends next (`NextSeg`), if the window allows a segment.
    fn next_in_recovery<C: MultipathController>(&self, cc: &C) -> Option<NextSeg> {
        let s = self.sack.as_deref()?;
        if self.sack_room(s, cc) == 0 {
            return None;
        }
        let rescue_allowed = s.rescue_rxt.is_none_or(|r| self.snd_una > r);
        s.board.next_seg(
            self.marks(s),
            s.lost_below,
            self.config.mss,
            self.new_data_allowed(),
            rescue_allowed,
        )
    }

    /// The next in-sequence segment outside recovery, `(seq, len)`, skipping SACKed bytes.
    fn next_in_sequence(&self) -> (u64, u64) {
        let s = self.sack.as_deref().expect("a SACK sender");
        let (seq, next_sacked) = s.board.skip_sacked(self.snd_nxt);
        let len = self.segment_len(seq);
        (seq, next_sacked.map_or(len, |n| len.min(n - seq)))
    }

    /// Room for an in-sequence segment at `seq`: the window less the pipe, and for new data
    /// the receive window.
    fn in_sequence_room<C: MultipathController>(&self, seq: u64, cc: &C) -> u64 {
        let s = self.sack.as_deref().expect("a SACK sender");
        let room = self.send_window(cc).saturating_sub(s.pipe);
        if seq >= self.snd_max {
            room.min(self.rwnd_room())
        } else {
            room
        }
    }

    /// [`TcpSender::can_transmit`] with SACK.
    #[inline(never)]
    pub(super) fn can_transmit_sack<C: MultipathController>(&self, cc: &C) -> bool {
        if self.retransmit_pending && self.segment_len(self.snd_una) > 0 {
            return true;
        }
        if self.in_recovery {
            return self.next_in_recovery(cc).is_some();
        }
        let (seq, len) = self.next_in_sequence();
        len > 0 && len <= self.in_sequence_room(seq, cc)
    }

    /// [`TcpSender::poll_transmit`] with SACK.
    #[inline(never)]
    pub(super) fn poll_transmit_sack<C: MultipathController>(
        &mut self,
        now: Time,
        cc: &C,
    ) -> Option<DataSegment> {
        if self.retransmit_pending {
            // Step 4.3: resend the first hole; HighRxt and RescueRxt to its end.
            self.retransmit_pending = false;
            let una = self.snd_una;
            let (_, next_sacked) = self.sack_state().board.skip_sacked(una);
            let len = next_sacked.map_or(self.segment_len(una), |n| {
                self.segment_len(una).min(n - una)
            });
            if len > 0 {
                let s = self.sack_state();
                s.high_rxt = una + len;
                s.rescue_rxt = Some(una + len);
                return Some(self.emit(now, una, len, true));
            }
        }
        if self.in_recovery {
            return match self.next_in_recovery(cc)? {
                NextSeg::Lost(a, b) | NextSeg::Unsacked(a, b) => {
                    // Step C.2.
                    self.sack_state().high_rxt = b;
                    Some(self.emit(now, a, b - a, true))
                }
                NextSeg::NewData => {
                    let (seq, len) = (self.snd_max, self.segment_len(self.snd_max));
                    self.snd_nxt = seq + len;
                    self.snd_max = self.snd_nxt;
                    Some(self.emit(now, seq, len, false))
                }
                NextSeg::Rescue(a, b) => {
                    // Rule 4: RescueRxt to RecoveryPoint; HighRxt stays (step C.2).
                    let recover = self.recover.unwrap_or(self.snd_max);
                    self.sack_state().rescue_rxt = Some(recover);
                    Some(self.emit(now, a, b - a, true))
                }
            };
        }
        let (seq, len) = self.next_in_sequence();
        // SACKed bytes need no sending: move past them even when the window is closed.
        self.snd_nxt = seq;
        if len == 0 || len > self.in_sequence_room(seq, cc) {
            return None;
        }
        let retransmission = seq < self.snd_max;
        self.snd_nxt = seq + len;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Some(self.emit(now, seq, len, retransmission))
    }
}

#[cfg(test)]
#[path = "sack_tests.rs"]
mod tests;
