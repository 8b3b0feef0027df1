//! The TCP sender: sequence space, loss detection, retransmission and the RTO timer.
//!
//! Window arithmetic belongs to the congestion controller (a [`MultipathController`] of which
//! this sender is one path); this file decides *when* something is lost or acknowledged and
//! *what* to send.

use pathpool_cc::{AckSample, CongestionEvent, MultipathController, RecoveryAck};
use pathpool_core::{Dur, PathId, RttConfig, RttEstimator, Time};
use serde::{Deserialize, Serialize};

use super::pipe::{DupAckedSegments, FlightEstimate};
use super::segment::{AckSegment, DataSegment, SackBlocks};
use sack_recovery::SackState;

/// Sender parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpSenderConfig {
    /// Maximum segment size (payload bytes per segment).
    pub mss: u64,
    /// Retransmission timer parameters.
    pub rtt: RttConfig,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2: 3).
    pub dupack_threshold: u32,
    /// The receiver's advertised window in bytes (`u64::MAX`: unlimited).
    pub rwnd_bytes: u64,
    /// Bytes the application sends in total (`None`: unlimited, a long-lived flow).
    pub data_bytes: Option<u64>,
    /// Limited transmit (RFC 3042): send a new segment on each of the first two duplicate
    /// ACKs.
    pub limited_transmit: bool,
    /// Which partial ACKs of a NewReno recovery restart the retransmission timer (RFC 6582
    /// §4).
    pub partial_ack_timer: PartialAckTimer,
    /// What a loss halves and what the sender reports as in flight.
    pub flight_estimate: FlightEstimate,
    /// Granularity of the retransmission timer: a deadline fires at the next multiple of it
    /// (in absolute time), as a timer checked on a periodic tick does (htsim scans every
    /// 10 ms; Linux fires on jiffies). Zero: exactly at the deadline.
    #[serde(default)]
    pub timer_granularity: Dur,
    /// SACK loss recovery (RFC 6675; the receiver must send SACK blocks, RFC 2018): the
    /// scoreboard decides what is lost and what to resend, and the pipe what may be sent. Off:
    /// NewReno (RFC 6582).
    #[serde(default)]
    pub sack: bool,
}

/// RFC 6582 §4's two variants of resetting the retransmission timer on partial ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartialAckTimer {
    /// Only the first partial ACK restarts it ("Impatient", RFC 6582's recommendation): a
    /// window with many losses ends in a timeout and go-back-N rather than one retransmission
    /// per RTT.
    #[default]
    Impatient,
    /// Every partial ACK restarts it ("Slow-but-Steady"): recovery repairs one hole per RTT
    /// and rarely times out (htsim's NewReno behaves so).
    SlowButSteady,
}

impl TcpSenderConfig {
    /// The loss recovery this configuration uses: `"sack"` (RFC 6675) or `"newreno"`
    /// (RFC 6582).
    #[must_use]
    pub fn loss_recovery(&self) -> &'static str {
        if self.sack {
            "sack"
        } else {
            "newreno"
        }
    }
}

impl Default for TcpSenderConfig {
    fn default() -> Self {
        TcpSenderConfig {
            mss: 1460,
            rtt: RttConfig::default(),
            dupack_threshold: 3,
            rwnd_bytes: u64::MAX,
            data_bytes: None,
            limited_transmit: false,
            partial_ack_timer: PartialAckTimer::Impatient,
            flight_estimate: FlightEstimate::Pipe,
            timer_granularity: Dur::ZERO,
            sack: false,
        }
    }
}

/// Counters kept by the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Segments retransmitted (fast retransmit, partial ACKs and go-back-N after a timeout).
    pub retransmissions: u64,
    /// Fast-recovery episodes entered.
    pub fast_recoveries: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
}

/// A TCP sender for one path of a connection.
#[derive(Clone, Debug)]
pub struct TcpSender {
    config: TcpSenderConfig,
    path: PathId,
    /// Oldest unacknowledged byte.
    snd_una: u64,
    /// Next byte to send (moves back to `snd_una` after a timeout: go-back-N).
    snd_nxt: u64,
    /// One past the highest byte ever sent.
    snd_max: u64,
    /// One past the last byte the application will send.
    data_end: u64,
    /// NewReno's `recover` (RFC 6582 §3.2), held as one past the highest byte sent when it was
    /// set, like FreeBSD's `snd_recover`; `None` until the first loss.
    recover: Option<u64>,
    in_recovery: bool,
    /// Whether a partial ACK already reset the timer in this recovery (RFC 6582 §3.2 step 3).
    partial_ack_seen: bool,
    dupacks: u32,
    /// Segments reported by duplicate ACKs and not yet covered by a cumulative ACK.
    dup_acked: DupAckedSegments,
    /// The segment at `snd_una` must be retransmitted next, regardless of the window.
    retransmit_pending: bool,
    /// `snd_una` when the timer last fired, to tell a repeated timeout (RFC 5681 §3.1).
    last_timeout_una: Option<u64>,
    rto_deadline: Option<Time>,
    rtt: RttEstimator,
    stats: SenderStats,
    /// SACK loss recovery's state, when `config.sack` (boxed: NewReno senders stay small).
    sack: Option<Box<SackState>>,
}

impl TcpSender {
    /// A sender for `path` of some connection-level controller; it is ready to send at once.
    #[must_use]
    pub fn new(config: TcpSenderConfig, path: PathId) -> Self {
        TcpSender {
            config,
            path,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_end: config.data_bytes.unwrap_or(u64::MAX),
            recover: None,
            in_recovery: false,
            partial_ack_seen: false,
            dupacks: 0,
            dup_acked: DupAckedSegments::default(),
            retransmit_pending: false,
            last_timeout_una: None,
            rto_deadline: None,
            rtt: RttEstimator::new(config.rtt),
            stats: SenderStats::default(),
            sack: config.sack.then(Box::default),
        }
    }

    /// Processes an arriving acknowledgement that carries no SACK option.
    #[inline]
    pub fn handle_ack<C: MultipathController>(&mut self, now: Time, ack: &AckSegment, cc: &mut C) {
        self.handle_ack_with_sack(now, ack, &SackBlocks::EMPTY, cc);
    }

    /// Processes an arriving acknowledgement and its SACK option (ignored unless the sender
    /// uses SACK).
    pub fn handle_ack_with_sack<C: MultipathController>(
        &mut self,
        now: Time,
        ack: &AckSegment,
        sack: &SackBlocks,
        cc: &mut C,
    ) {
        if ack.ack > self.snd_max {
            // Acknowledges data never sent: not a valid ACK for this connection.
            return;
        }
        if self.sack.is_some() {
            self.handle_ack_sack(now, ack, sack, cc);
            return;
        }
        if ack.ack > self.snd_una {
            self.on_new_ack(now, ack, cc);
        } else if ack.ack == self.snd_una && self.snd_una < self.snd_max {
            self.on_duplicate_ack(cc);
        }
    }

    /// A new cumulative ACK. Outside recovery (nearly every ACK) this is the whole work;
    /// recovery's bookkeeping is out of line, so that the common path stays small enough to
    /// inline into a simulator's ACK handling.
    #[inline]
    fn on_new_ack<C: MultipathController>(&mut self, now: Time, ack: &AckSegment, cc: &mut C) {
        if self.in_recovery {
            self.on_new_ack_in_recovery(now, ack, cc);
            return;
        }
        let acked = ack.ack - self.snd_una;
        self.dup_acked.reset();
        self.snd_una = ack.ack;
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        let sample = self.take_rtt_sample(now, ack);
        self.dupacks = 0;
        // With the count of duplicate-ACKed segments just cleared, the pipe is the FlightSize
        // whichever `FlightEstimate` is in use.
        self.report_ack(
            now,
            acked,
            sample,
            ack.one_way_delay(),
            self.flight_bytes(),
            cc,
        );
        self.restart_timer(now, true);
    }

    /// A new cumulative ACK in NewReno recovery: full or partial (RFC 6582 §3.2 step 3).
    #[inline(never)]
    fn on_new_ack_in_recovery<C: MultipathController>(
        &mut self,
        now: Time,
        ack: &AckSegment,
        cc: &mut C,
    ) {
        let acked = ack.ack - self.snd_una;
        self.dup_acked
            .on_partial_ack(acked.div_ceil(self.config.mss.max(1)));
        self.snd_una = ack.ack;
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        self.take_rtt_sample(now, ack);
        let mut restart_timer = true;
        if self.recover.is_some_and(|r| ack.ack >= r) {
            // RFC 6582 §3.2 step 3: full acknowledgement ends recovery.
            self.in_recovery = false;
            self.dupacks = 0;
            self.dup_acked.reset();
            let flight = self.reported_flight();
            cc.on_recovery_ack(
                self.path,
                RecoveryAck::Full {
                    flight_bytes: flight,
                },
            );
        } else {
            // Partial acknowledgement: retransmit the next hole; reset the timer only for
            // the first partial ACK of this recovery ("Impatient" variant, RFC 6582 §4).
            self.retransmit_pending = true;
            cc.on_recovery_ack(self.path, RecoveryAck::Partial { acked_bytes: acked });
            restart_timer = !self.partial_ack_seen
                || self.config.partial_ack_timer == PartialAckTimer::SlowButSteady;
            self.partial_ack_seen = true;
        }
        self.restart_timer(now, restart_timer);
    }

    /// After a new ACK: RFC 6298 §5.2, everything acknowledged turns the timer off; otherwise
    /// §5.3, restart it if `restart`.
    #[inline]
    fn restart_timer(&mut self, now: Time, restart: bool) {
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if restart {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    /// RFC 7323 §4.1: the echoed timestamp gives an RTT sample, valid for retransmitted
    /// segments too, so Karn's rule is not needed.
    #[inline]
    fn take_rtt_sample(&mut self, now: Time, ack: &AckSegment) -> Option<Dur> {
        let sample = (ack.ts_echo <= now).then(|| now - ack.ts_echo);
        if let Some(r) = sample {
            self.rtt.on_sample(r);
        }
        sample
    }

    /// Tells the controller of `acked` new bytes outside recovery with `flight_bytes` in
    /// flight (what [`reported_flight`](Self::reported_flight) gives then), then holds cwnd
    /// within the receive window (D127).
    #[inline]
    fn report_ack<C: MultipathController>(
        &self,
        now: Time,
        acked: u64,
        rtt_sample: Option<Dur>,
        one_way_delay: Option<Dur>,
        flight_bytes: u64,
        cc: &mut C,
    ) {
        let sample = AckSample {
            now,
            acked_bytes: acked,
            rtt_sample,
            one_way_delay,
            srtt: self.rtt.srtt().unwrap_or(Dur::ZERO),
            flight_bytes,
        };
        cc.on_ack(self.path, &sample);
        if self.config.rwnd_bytes != u64::MAX {
            cc.limit_window(self.path, self.config.rwnd_bytes);
        }
    }

    fn on_duplicate_ack<C: MultipathController>(&mut self, cc: &mut C) {
        self.dupacks += 1;
        self.dup_acked
            .on_duplicate(self.flight_bytes(), self.config.mss);
        if self.in_recovery {
            cc.on_recovery_ack(self.path, RecoveryAck::Duplicate);
            return;
        }
        if self.dupacks != self.config.dupack_threshold {
            return;
        }
        // RFC 6582 §3.2 step 2: enter fast retransmit only if the ACK covers more than
        // `recover`; otherwise these duplicates may stem from a retransmission after a timeout.
        if self.recover.is_some_and(|r| self.snd_una <= r) {
            return;
        }
        let flight = self.loss_flight(cc);
        self.recover = Some(self.snd_max);
        self.in_recovery = true;
        self.partial_ack_seen = false;
        self.retransmit_pending = true;
        self.stats.fast_recoveries += 1;
        cc.on_congestion_event(
            self.path,
            CongestionEvent::FastRetransmit {
                flight_bytes: flight,
            },
        );
    }

    /// The next segment to send now, if the window and the application allow one.
    pub fn poll_transmit<C: MultipathController>(
        &mut self,
        now: Time,
        cc: &C,
    ) -> Option<DataSegment> {
        if self.sack.is_some() {
            return self.poll_transmit_sack(now, cc);
        }
        if self.retransmit_pending {
            self.retransmit_pending = false;
            let len = self.segment_len(self.snd_una);
            if len > 0 {
                return Some(self.emit(now, self.snd_una, len, true));
            }
        }
        let len = self.segment_len(self.snd_nxt);
        if len == 0 {
            return None;
        }
        if len > self.send_room(cc) {
            return None;
        }
        let seq = self.snd_nxt;
        let retransmission = seq < self.snd_max;
        self.snd_nxt += len;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Some(self.emit(now, seq, len, retransmission))
    }

    /// Bytes the window allows beyond what is in flight (`snd_nxt − snd_una`). Always inlined:
    /// every transmission attempt asks it, and as a call it cost more than its arithmetic.
    #[must_use]
    #[inline(always)]
    pub fn send_room<C: MultipathController>(&self, cc: &C) -> u64 {
        if let Some(s) = &self.sack {
            return self.sack_room(s, cc);
        }
        self.send_window(cc)
            .saturating_sub(self.snd_nxt - self.snd_una)
    }

    /// The window the sender fills: the controller's (with recovery inflation), plus
    /// limited transmit's allowance, bounded by the receive window.
    #[inline(always)]
    fn send_window<C: MultipathController>(&self, cc: &C) -> u64 {
        let mut window = cc.window(self.path);
        if self.config.limited_transmit && !self.in_recovery && self.sack.is_none() {
            // RFC 3042: each of the first two duplicate ACKs allows one new segment beyond
            // cwnd, so a small window can still collect three duplicate ACKs.
            window += u64::from(self.dupacks.min(2)) * self.config.mss;
        }
        window.min(self.config.rwnd_bytes)
    }

    /// Whether [`poll_transmit`](Self::poll_transmit) would return a segment now, without
    /// sending it.
    #[must_use]
    #[inline]
    pub fn can_transmit<C: MultipathController>(&self, cc: &C) -> bool {
        if self.sack.is_some() {
            return self.can_transmit_sack(cc);
        }
        if self.retransmit_pending && self.segment_len(self.snd_una) > 0 {
            return true;
        }
        let len = self.segment_len(self.snd_nxt);
        len > 0 && len <= self.send_room(cc)
    }

    /// Whether the sender has sent everything it was given (it may still be waiting for ACKs
    /// or have retransmissions to make after a timeout).
    #[must_use]
    #[inline]
    pub fn all_sent(&self) -> bool {
        self.snd_nxt >= self.data_end
    }

    /// Whether [`poll_transmit`](Self::poll_transmit) may return a segment: a retransmission
    /// is due or some data given to the sender is unsent. When this is `false`,
    /// `poll_transmit` returns `None` without changing anything, so a caller polling many
    /// senders can skip the call.
    #[must_use]
    #[inline]
    pub fn has_queued(&self) -> bool {
        self.retransmit_pending || !self.all_sent() || (self.in_recovery && self.sack.is_some())
    }

    /// Hands the sender `bytes` more of the application's data. A multipath connection creates
    /// its subflows with no data (`data_bytes: Some(0)`) and gives each what its scheduler
    /// assigns.
    pub fn push_data(&mut self, bytes: u64) {
        self.data_end = self.data_end.saturating_add(bytes);
    }

    /// Hands the sender `len` more bytes (at most one segment) and sends them at once; the
    /// caller has checked that everything given before was sent ([`all_sent`]) and that the
    /// window has room for `len` bytes ([`send_room`]). The same as [`push_data`] then
    /// [`poll_transmit`], without looking the window up again: a multipath scheduler, which
    /// has just looked, gives out every segment this way.
    ///
    /// [`all_sent`]: Self::all_sent
    /// [`send_room`]: Self::send_room
    /// [`push_data`]: Self::push_data
    /// [`poll_transmit`]: Self::poll_transmit
    pub fn push_and_transmit(&mut self, now: Time, len: u64) -> DataSegment {
        debug_assert!(self.all_sent() && !self.retransmit_pending && len <= self.config.mss);
        self.data_end = self.data_end.saturating_add(len);
        let seq = self.snd_nxt;
        let len = self.segment_len(seq);
        let retransmission = seq < self.snd_max;
        self.snd_nxt += len;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.emit(now, seq, len, retransmission)
    }

    /// One past the last byte the sender was given.
    #[must_use]
    pub fn data_end(&self) -> u64 {
        self.data_end
    }

    /// Payload length of a segment starting at `seq` (0 if there is nothing to send there).
    fn segment_len(&self, seq: u64) -> u64 {
        self.config.mss.min(self.data_end.saturating_sub(seq))
    }

    fn emit(&mut self, now: Time, seq: u64, len: u64, retransmission: bool) -> DataSegment {
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        if retransmission {
            self.stats.retransmissions += 1;
        }
        if let Some(s) = self.sack.as_deref_mut() {
            // RFC 6675 §5 step C.4: what is sent is in the pipe.
            s.pipe += len;
        }
        if self.rto_deadline.is_none() {
            // RFC 6298 §5.1: start the timer when data is sent and it is not running.
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        DataSegment {
            seq,
            len: len as u32,
            ts: now,
            retransmission,
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.rto_deadline.map(|d| self.on_tick(d))
    }

    /// Whether the retransmission timer is running. A transmission leaves a running timer as
    /// it is, so a caller that tracks [`poll_timeout`](Self::poll_timeout) need not ask again
    /// after one.
    #[must_use]
    #[inline]
    pub fn timer_running(&self) -> bool {
        self.rto_deadline.is_some()
    }

    /// The first tick of the timer at or after `deadline`.
    #[inline]
    fn on_tick(&self, deadline: Time) -> Time {
        let tick = self.config.timer_granularity.as_ps();
        if tick == 0 {
            return deadline;
        }
        Time::from_ps(deadline.as_ps().div_ceil(tick).saturating_mul(tick))
    }

    /// Processes the retransmission timer; does nothing unless it has expired.
    pub fn handle_timeout<C: MultipathController>(&mut self, now: Time, cc: &mut C) {
        let Some(deadline) = self.rto_deadline else {
            return;
        };
        if now < self.on_tick(deadline) {
            return;
        }
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
            return;
        }
        let repeated = self.last_timeout_una == Some(self.snd_una);
        let flight = self.loss_flight(cc);
        cc.on_congestion_event(
            self.path,
            CongestionEvent::Timeout {
                flight_bytes: flight,
                repeated,
            },
        );
        self.last_timeout_una = Some(self.snd_una);
        self.stats.timeouts += 1;
        // RFC 6298 §5.5-5.6: back off and restart the timer.
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        // RFC 6582 §3.2 step 4: remember the highest byte sent and leave fast recovery.
        self.recover = Some(self.snd_max);
        self.in_recovery = false;
        self.dupacks = 0;
        self.dup_acked.reset();
        // Go back N: resend from the first unacknowledged byte as the window reopens.
        self.snd_nxt = self.snd_una;
        self.retransmit_pending = false;
        if let Some(s) = self.sack.as_deref_mut() {
            s.on_timeout(self.snd_max);
        }
    }

    /// FlightSize (RFC 5681 §2): the bytes the sender counts as in the network,
    /// `snd_nxt − snd_una`. Outside a go-back-N after a timeout this is `snd_max − snd_una`.
    /// After a timeout the bytes between `snd_nxt` and `snd_max` are being resent, so they
    /// are not in flight: counting them would let a second timeout set ssthresh from
    /// everything ever outstanding (tens of megabytes after a long slow-but-steady recovery,
    /// whose new data the receiver holds out of order), and the following slow start would
    /// overshoot into a retransmission storm. Linux likewise leaves segments marked lost out
    /// of `tcp_packets_in_flight`.
    #[must_use]
    pub fn flight_bytes(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// The bytes the sender counts as in the network. With SACK, RFC 6675's `pipe` (unSACKed
    /// bytes sent and not lost, retransmitted ones twice). Without SACK,
    /// [`flight_bytes`](Self::flight_bytes) less the segments
    /// duplicate ACKs reported as received (Linux's `tcp_packets_in_flight` for Reno). In
    /// NewReno recovery the inflated window bounds it exactly as Linux bounds its pipe by
    /// cwnd: each duplicate ACK adds one segment to both, a partial ACK takes the segments it
    /// covers, less the hole, from both.
    #[must_use]
    pub fn pipe_bytes(&self) -> u64 {
        if let Some(s) = &self.sack {
            return s.pipe;
        }
        self.flight_bytes()
            .saturating_sub(self.dup_acked.bytes(self.config.mss))
    }

    /// What the sender reports as in flight on an ACK.
    fn reported_flight(&self) -> u64 {
        if self.sack.is_some() {
            return self.pipe_bytes();
        }
        match self.config.flight_estimate {
            FlightEstimate::Pipe => self.pipe_bytes(),
            FlightEstimate::FlightSize => self.flight_bytes(),
        }
    }

    /// The flight a loss detected now halves (RFC 5681 eq. 4's FlightSize). With
    /// [`FlightEstimate::Pipe`] it is at most the window in use: after a long recovery,
    /// `snd_nxt − snd_una` holds every segment window inflation sent above the holes, which
    /// the receiver mostly has (issue 17: ssthresh 62 MB on a 50 KB path); Linux's and
    /// htsim's Reno halve the window instead.
    fn loss_flight<C: MultipathController>(&self, cc: &C) -> u64 {
        match self.config.flight_estimate {
            FlightEstimate::Pipe => self.flight_bytes().min(self.send_window(cc)),
            FlightEstimate::FlightSize => self.flight_bytes(),
        }
    }

    /// Stops the application: no new data after what has been sent, which is still delivered
    /// reliably.
    pub fn stop(&mut self) {
        self.data_end = self.data_end.min(self.snd_max);
    }

    /// Whether every byte the application will send has been acknowledged.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.snd_una >= self.data_end
    }

    /// Oldest unacknowledged byte.
    #[must_use]
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// Next byte to send.
    #[must_use]
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// One past the highest byte sent.
    #[must_use]
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// Duplicate ACKs counted since the last new ACK.
    #[must_use]
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }
    /// Whether the sender is in NewReno fast recovery.
    #[must_use]
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// NewReno's `recover` point, once set.
    #[must_use]
    pub fn recover(&self) -> Option<u64> {
        self.recover
    }
    /// The RTT estimator.
    #[must_use]
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Counters.
    #[must_use]
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    /// The path this sender drives in its controller.
    #[must_use]
    pub fn path(&self) -> PathId {
        self.path
    }
    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &TcpSenderConfig {
        &self.config
    }
}

#[path = "sack_recovery.rs"]
mod sack_recovery;

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
