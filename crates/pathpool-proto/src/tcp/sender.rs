//! The TCP sender: sequence space, loss detection, retransmission and the RTO timer.
//!
//! Window arithmetic belongs to the congestion controller (a [`MultipathController`] of which
//! this sender is one path); this file decides *when* something is lost or acknowledged and
//! *what* to send.

use pathpool_cc::{AckSample, CongestionEvent, MultipathController, RecoveryAck};
use pathpool_core::{Dur, PathId, RttConfig, RttEstimator, Time};
use serde::{Deserialize, Serialize};

use super::segment::{AckSegment, DataSegment};

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
    /// The segment at `snd_una` must be retransmitted next, regardless of the window.
    retransmit_pending: bool,
    /// `snd_una` when the timer last fired, to tell a repeated timeout (RFC 5681 §3.1).
    last_timeout_una: Option<u64>,
    rto_deadline: Option<Time>,
    rtt: RttEstimator,
    stats: SenderStats,
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
            retransmit_pending: false,
            last_timeout_una: None,
            rto_deadline: None,
            rtt: RttEstimator::new(config.rtt),
            stats: SenderStats::default(),
        }
    }

    /// Processes an arriving acknowledgement.
    pub fn handle_ack<C: MultipathController>(&mut self, now: Time, ack: &AckSegment, cc: &mut C) {
        if ack.ack > self.snd_max {
            // Acknowledges data never sent: not a valid ACK for this connection.
            return;
        }
        if ack.ack > self.snd_una {
            self.on_new_ack(now, ack, cc);
        } else if ack.ack == self.snd_una && self.snd_una < self.snd_max {
            self.on_duplicate_ack(cc);
        }
    }

    fn on_new_ack<C: MultipathController>(&mut self, now: Time, ack: &AckSegment, cc: &mut C) {
        let acked = ack.ack - self.snd_una;
        self.snd_una = ack.ack;
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        // RFC 7323 §4.1: the echoed timestamp gives an RTT sample, valid for retransmitted
        // segments too, so Karn's rule is not needed.
        let sample = (ack.ts_echo <= now).then(|| now - ack.ts_echo);
        if let Some(r) = sample {
            self.rtt.on_sample(r);
        }
        let flight = self.flight_bytes();
        let mut restart_timer = true;
        if self.in_recovery {
            if self.recover.is_some_and(|r| ack.ack >= r) {
                // RFC 6582 §3.2 step 3: full acknowledgement ends recovery.
                self.in_recovery = false;
                self.dupacks = 0;
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
        } else {
            self.dupacks = 0;
            let srtt = self.rtt.srtt().unwrap_or(Dur::ZERO);
            let sample = AckSample {
                now,
                acked_bytes: acked,
                rtt_sample: sample,
                srtt,
                flight_bytes: flight,
            };
            cc.on_ack(self.path, &sample);
        }
        if self.snd_una == self.snd_max {
            // RFC 6298 §5.2: everything acknowledged, turn the timer off.
            self.rto_deadline = None;
        } else if restart_timer {
            // RFC 6298 §5.3.
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    fn on_duplicate_ack<C: MultipathController>(&mut self, cc: &mut C) {
        self.dupacks += 1;
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
        self.recover = Some(self.snd_max);
        self.in_recovery = true;
        self.partial_ack_seen = false;
        self.retransmit_pending = true;
        self.stats.fast_recoveries += 1;
        let flight = self.flight_bytes();
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
        let mut window = cc.window(self.path);
        if self.config.limited_transmit && !self.in_recovery {
            // RFC 3042: each of the first two duplicate ACKs allows one new segment beyond
            // cwnd, so a small window can still collect three duplicate ACKs.
            window += u64::from(self.dupacks.min(2)) * self.config.mss;
        }
        let window = window.min(self.config.rwnd_bytes);
        window.saturating_sub(self.snd_nxt - self.snd_una)
    }

    /// Whether [`poll_transmit`](Self::poll_transmit) would return a segment now, without
    /// sending it.
    #[must_use]
    #[inline]
    pub fn can_transmit<C: MultipathController>(&self, cc: &C) -> bool {
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
        self.retransmit_pending || !self.all_sent()
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
        self.rto_deadline
    }

    /// Processes the retransmission timer; does nothing unless it has expired.
    pub fn handle_timeout<C: MultipathController>(&mut self, now: Time, cc: &mut C) {
        let Some(deadline) = self.rto_deadline else {
            return;
        };
        if now < deadline {
            return;
        }
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
            return;
        }
        let repeated = self.last_timeout_una == Some(self.snd_una);
        let flight = self.flight_bytes();
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
        // Go back N: resend from the first unacknowledged byte as the window reopens.
        self.snd_nxt = self.snd_una;
        self.retransmit_pending = false;
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

#[cfg(test)]
mod tests {
    use super::*;
    use pathpool_cc::{CcKind, Reno, WindowConfig, Windows};

    const MSS: u64 = 1000;

    struct Harness {
        tx: TcpSender,
        cc: Windows<Reno>,
        now: Time,
    }

    impl Harness {
        fn new(iw: u64) -> Self {
            let mut cc = Windows::new(
                Reno::default(),
                WindowConfig {
                    initial_window: iw,
                    ..Default::default()
                },
            );
            let path = cc.add_path(MSS);
            let config = TcpSenderConfig {
                mss: MSS,
                ..TcpSenderConfig::default()
            };
            Harness {
                tx: TcpSender::new(config, path),
                cc,
                now: Time::ZERO,
            }
        }
        /// Sends everything the window allows and returns the sequence numbers.
        fn send_all(&mut self) -> Vec<u64> {
            let mut out = Vec::new();
            while let Some(s) = self.tx.poll_transmit(self.now, &self.cc) {
                out.push(s.seq);
            }
            out
        }
        /// An ACK echoing timestamp zero, so the RTT sample equals `now`.
        fn ack(&mut self, ack: u64) {
            self.tx.handle_ack(
                self.now,
                &AckSegment {
                    ack,
                    ts_echo: Time::ZERO,
                },
                &mut self.cc,
            );
        }
        fn cwnd(&self) -> u64 {
            self.cc.metrics(self.tx.path()).cwnd
        }
        fn ssthresh(&self) -> u64 {
            self.cc.metrics(self.tx.path()).ssthresh
        }
        fn window(&self) -> u64 {
            self.cc.window(self.tx.path())
        }
    }

    #[test]
    fn sends_initial_window_then_waits() {
        let mut h = Harness::new(4);
        assert_eq!(h.send_all(), vec![0, 1000, 2000, 3000]);
        assert_eq!(
            h.tx.poll_timeout(),
            Some(Time::ZERO + Dur::from_secs(1)),
            "initial RTO 1 s"
        );
        assert!(h.send_all().is_empty());
    }

    #[test]
    fn slow_start_sends_two_segments_per_ack() {
        let mut h = Harness::new(2);
        h.send_all();
        h.now = Time::from_ms(100);
        h.ack(1000);
        assert_eq!(h.cwnd(), 3000);
        assert_eq!(
            h.send_all(),
            vec![2000, 3000],
            "one ACKed segment frees one, growth one more"
        );
        assert_eq!(h.tx.rtt().srtt(), Some(Dur::from_ms(100)));
        assert_eq!(
            h.tx.poll_timeout(),
            Some(h.now + Dur::from_ms(300)),
            "RTO restarted"
        );
    }

    #[test]
    fn congestion_avoidance_grows_one_mss_per_window() {
        let mut h = Harness::new(4);
        h.send_all();
        // Put the path in congestion avoidance.
        h.cc.path_mut(PathId(0)).ssthresh = 4000;
        h.now = Time::from_ms(100);
        for k in 1..=4 {
            h.ack(k * 1000);
            h.send_all();
        }
        assert_eq!(
            h.cwnd(),
            5000,
            "four ACKs of 1000 B complete one window of 4000 B"
        );
        assert_eq!(h.tx.snd_max(), 9000, "flight is 5 segments");
    }

    /// Drives the classic NewReno episode: one loss in a window of 10 segments.
    /// Enters recovery for a window of 10 segments whose first ones are lost, then sends
    /// two partial ACKs 100 ms apart; returns the timer deadline after each.
    fn partial_ack_deadlines(variant: PartialAckTimer) -> (Option<Time>, Option<Time>) {
        let mut h = Harness::new(10);
        h.tx.config.partial_ack_timer = variant;
        h.send_all();
        h.now = Time::from_ms(50);
        for _ in 0..3 {
            h.ack(0);
        }
        assert!(h.tx.in_recovery());
        h.now = Time::from_ms(150);
        h.ack(1000);
        let first = h.tx.poll_timeout();
        h.now = Time::from_ms(250);
        h.ack(2000);
        (first, h.tx.poll_timeout())
    }

    #[test]
    fn impatient_restarts_the_timer_on_the_first_partial_ack_only() {
        let (first, second) = partial_ack_deadlines(PartialAckTimer::Impatient);
        assert!(first.is_some());
        assert_eq!(second, first, "RFC 6582 §4 Impatient: not restarted again");
        let (first, second) = partial_ack_deadlines(PartialAckTimer::SlowButSteady);
        assert!(
            second > first,
            "Slow-but-Steady restarts it on every partial ACK: {first:?} -> {second:?}"
        );
    }

    #[test]
    fn three_dupacks_trigger_fast_retransmit_and_newreno_recovery() {
        let mut h = Harness::new(10);
        assert_eq!(h.send_all().len(), 10);
        h.now = Time::from_ms(50);
        // Segment 2000..3000 is lost; 1000 and 2000 acked, then dupacks for 3000..9999.
        h.ack(1000);
        h.ack(2000);
        let sent = h.send_all();
        assert_eq!(
            sent,
            vec![10_000, 11_000, 12_000, 13_000],
            "slow start 10 -> 12 MSS"
        );
        h.ack(2000);
        h.ack(2000);
        assert!(!h.tx.in_recovery());
        assert!(h.send_all().is_empty(), "no limited transmit");
        h.ack(2000);
        assert!(h.tx.in_recovery());
        assert_eq!(h.tx.recover(), Some(14_000));
        // FlightSize = 14000 - 2000 = 12000 -> ssthresh 6000, window 6000 + 3·1000.
        assert_eq!(h.ssthresh(), 6000);
        assert_eq!(h.window(), 9000);
        assert_eq!(
            h.send_all(),
            vec![2000],
            "fast retransmit of the first unacked segment"
        );
        assert_eq!(h.tx.stats().retransmissions, 1);
        // Each further dupack inflates by one MSS; new data goes once window > flight (12000).
        for _ in 0..3 {
            h.ack(2000);
            assert!(h.send_all().is_empty());
        }
        assert_eq!(h.window(), 12_000);
        h.ack(2000);
        assert_eq!(h.send_all(), vec![14_000]);
        // A partial ACK (5000 < recover): retransmit 5000 at once and deflate.
        h.ack(5000);
        assert!(h.tx.in_recovery());
        assert_eq!(h.window(), 13_000 - 3000 + 1000);
        assert_eq!(h.send_all()[0], 5000);
        // The full ACK ends recovery with cwnd = ssthresh.
        h.ack(15_000);
        assert!(!h.tx.in_recovery());
        assert_eq!(h.cwnd(), 6000);
        assert_eq!(h.window(), 6000);
        assert_eq!(h.tx.stats().fast_recoveries, 1);
    }

    #[test]
    fn dupacks_not_covering_recover_do_not_retrigger() {
        let mut h = Harness::new(10);
        h.send_all();
        h.now = Time::from_secs(2);
        h.tx.handle_timeout(h.now, &mut h.cc);
        assert_eq!(h.tx.recover(), Some(10_000));
        assert_eq!(
            h.send_all(),
            vec![0],
            "go-back-N with a loss window of one segment"
        );
        // Duplicate ACKs at snd_una = 0 <= recover must not start fast retransmit.
        for _ in 0..5 {
            h.ack(0);
        }
        assert!(!h.tx.in_recovery());
        assert_eq!(h.tx.stats().fast_recoveries, 0);
    }

    #[test]
    fn rto_backs_off_and_holds_ssthresh_on_repeat() {
        let mut h = Harness::new(10);
        h.send_all();
        h.now = Time::from_ms(100);
        h.ack(1000);
        h.send_all();
        // srtt 100 ms, rttvar 50 ms -> RTO 300 ms from now.
        let deadline = h.tx.poll_timeout().unwrap();
        assert_eq!(deadline, Time::from_ms(400));
        h.tx.handle_timeout(Time::from_ms(399), &mut h.cc);
        assert_eq!(h.tx.stats().timeouts, 0, "not yet expired");
        h.now = deadline;
        h.tx.handle_timeout(h.now, &mut h.cc);
        assert_eq!(h.tx.stats().timeouts, 1);
        // cwnd grew to 11 segments, so 2 more were sent: FlightSize = 12000 - 1000 = 11000.
        assert_eq!(h.ssthresh(), 5500);
        assert_eq!(h.cwnd(), 1000);
        assert_eq!(
            h.tx.poll_timeout(),
            Some(h.now + Dur::from_ms(600)),
            "RTO doubled"
        );
        assert_eq!(h.send_all(), vec![1000]);
        h.now += Dur::from_ms(600);
        h.tx.handle_timeout(h.now, &mut h.cc);
        assert_eq!(
            h.ssthresh(),
            5500,
            "second timeout of the same segment holds ssthresh"
        );
        assert_eq!(h.tx.poll_timeout(), Some(h.now + Dur::from_ms(1200)));
        // An ACK with a fresh RTT sample clears the backoff.
        h.now += Dur::from_ms(100);
        h.tx.handle_ack(
            h.now,
            &AckSegment {
                ack: 2000,
                ts_echo: h.now - Dur::from_ms(100),
            },
            &mut h.cc,
        );
        assert_eq!(h.tx.rtt().backoff(), 0);
    }

    #[test]
    fn a_timeout_during_go_back_n_counts_only_what_was_resent() {
        let mut h = Harness::new(10);
        h.send_all();
        h.now = Time::from_ms(100);
        h.ack(1000);
        h.send_all();
        h.now = h.tx.poll_timeout().unwrap();
        h.tx.handle_timeout(h.now, &mut h.cc);
        assert_eq!(h.ssthresh(), 5500, "FlightSize 11 000 halved");
        // Go-back-N resends 1000..2000; its ACK opens the window (slow start, cwnd 2000),
        // and 2000..4000 go out again. snd_max is still 12 000.
        assert_eq!(h.send_all(), vec![1000]);
        h.now += Dur::from_ms(100);
        h.ack(2000);
        assert_eq!(h.send_all(), vec![2000, 3000]);
        assert_eq!(h.tx.snd_max(), 12_000);
        assert_eq!(h.tx.flight_bytes(), 2000);
        // A timeout of the new snd_una is a new loss: ssthresh from the 2000 bytes really in
        // flight (RFC 5681 eq. 4 floor: 2·SMSS), not from the 10 000 once outstanding.
        h.now = h.tx.poll_timeout().unwrap();
        h.tx.handle_timeout(h.now, &mut h.cc);
        assert_eq!(h.tx.stats().timeouts, 2);
        assert_eq!(h.ssthresh(), 2000);
    }

    #[test]
    fn finite_transfer_ends_with_short_segment_and_timer_off() {
        let mut cc = CcKind::NewReno.build(WindowConfig::default());
        let path = cc.add_path(MSS);
        let cfg = TcpSenderConfig {
            mss: MSS,
            data_bytes: Some(2500),
            ..Default::default()
        };
        let mut tx = TcpSender::new(cfg, path);
        let segs: Vec<_> = std::iter::from_fn(|| tx.poll_transmit(Time::ZERO, &cc)).collect();
        assert_eq!(
            segs.iter().map(|s| (s.seq, s.len)).collect::<Vec<_>>(),
            [(0, 1000), (1000, 1000), (2000, 500)]
        );
        assert!(!tx.is_finished());
        tx.handle_ack(
            Time::from_ms(10),
            &AckSegment {
                ack: 2500,
                ts_echo: Time::ZERO,
            },
            &mut cc,
        );
        assert!(tx.is_finished());
        assert_eq!(tx.poll_timeout(), None);
    }

    #[test]
    fn receive_window_limits_flight() {
        let mut cc = CcKind::NewReno.build(WindowConfig::default());
        let path = cc.add_path(MSS);
        let cfg = TcpSenderConfig {
            mss: MSS,
            rwnd_bytes: 3000,
            ..Default::default()
        };
        let mut tx = TcpSender::new(cfg, path);
        let n = std::iter::from_fn(|| tx.poll_transmit(Time::ZERO, &cc)).count();
        assert_eq!(n, 3);
    }

    #[test]
    fn ack_beyond_snd_max_is_ignored() {
        let mut h = Harness::new(2);
        h.send_all();
        h.ack(5000);
        assert_eq!(h.tx.snd_una(), 0);
    }

    #[test]
    fn stop_ends_new_data_but_finishes_outstanding() {
        let mut h = Harness::new(2);
        h.send_all();
        h.tx.stop();
        h.ack(1000);
        assert!(h.send_all().is_empty());
        assert!(!h.tx.is_finished());
        h.ack(2000);
        assert!(h.tx.is_finished());
    }
}
