//! A rate-based TCP sender without a congestion window, shared by INRPP's hosts and RCP
//! (issue 21; spec 001 §3.11).
//!
//! The sender paces its segments at a rate its driver sets: INRPP's host at its share of the
//! access link ("open loop"), RCP's at the rate the network echoes back. INRPP's hop-by-hop
//! backpressure can switch it to **closed loop**: on an ACK carrying SLOW-DOWN it sends one
//! new segment per ACK it receives ("one-out, one-in"), until an ACK carries CANCEL. A nonce
//! an ACK carries goes into every later data segment of the flow. Loss recovery is the
//! retransmission timer alone (RFC 6298), fast retransmit and recovery are off; a timeout
//! resends the first unacknowledged segment at once and goes back to it: everything after it
//! is sent again, at the pacing rate, as ns-3's TCP did after a timeout (D280, D300).
//!
//! Rates are bits per second on the wire: a segment of `len` payload bytes occupies
//! `len + header_bytes` bytes.

use pathpool_core::{Dur, RttConfig, RttEstimator, Time};

use crate::inrpp::signalling::{AckSignal, Nonce, Notification};
use crate::tcp::{AckSegment, DataSegment};

/// The sender's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSenderConfig {
    /// Largest payload of a segment, in bytes.
    pub mss: u32,
    /// Header bytes a segment adds on the wire (IP and TCP: 40).
    pub header_bytes: u32,
    /// The retransmission timer (RFC 6298).
    pub rtt: RttConfig,
}

/// Whether the sender paces by its rate or by the ACKs it receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loop {
    /// Paced at the rate the driver set.
    Open,
    /// One new segment per ACK received (INRPP's SLOW-DOWN).
    Closed,
}

/// Counters of the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSenderStats {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Times the sender went to closed loop.
    pub closed_loops: u64,
}

/// A rate-based sender of one flow.
#[derive(Clone, Debug)]
pub struct RateSender {
    config: RateSenderConfig,
    rate_bps: f64,
    /// When the pacing allows the next new segment.
    next_send: Time,
    /// When the last paced segment started, and its bits on the wire: a new rate re-times
    /// the next segment from them.
    paced_from: Time,
    paced_bits: f64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// One past the last byte the application gave.
    data_end: u64,
    rtt: RttEstimator,
    rto_deadline: Option<Time>,
    /// A timeout's retransmission of the first unacknowledged segment, due at once.
    retransmit_pending: bool,
    mode: Loop,
    /// Segments closed loop may send (one per ACK received in closed loop).
    credits: u32,
    nonce: Nonce,
    stats: RateSenderStats,
}

impl RateSender {
    /// A sender with nothing to send, open loop at `rate_bps`.
    #[must_use]
    pub fn new(config: RateSenderConfig, rate_bps: f64) -> Self {
        RateSender {
            rtt: RttEstimator::new(config.rtt),
            config,
            rate_bps,
            next_send: Time::ZERO,
            paced_from: Time::ZERO,
            paced_bits: 0.0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_end: 0,
            rto_deadline: None,
            retransmit_pending: false,
            mode: Loop::Open,
            credits: 0,
            nonce: 0,
            stats: RateSenderStats::default(),
        }
    }

    /// Gives the sender `bytes` more to send.
    pub fn push_data(&mut self, bytes: u64) {
        self.data_end += bytes;
    }

    /// Sets the pacing rate (bits per second on the wire); the next new segment leaves when
    /// the last paced one would have ended at the new rate (RCP paces at each rate the
    /// network echoes, not at the one in force when the last segment left).
    pub fn set_rate(&mut self, rate_bps: f64) {
        debug_assert!(rate_bps > 0.0);
        self.rate_bps = rate_bps;
        if self.paced_bits > 0.0 {
            self.next_send = self.paced_from + Dur::from_secs_f64(self.paced_bits / rate_bps);
        }
    }

    /// Starts in closed loop with one segment allowed: nothing more leaves until an ACK
    /// comes back (or the retransmission timer fires). RCP's sender learns its rate from
    /// the ACK of its first segment, which stands for the SYN of the RCP paper (D293).
    pub fn start_closed(&mut self) {
        self.mode = Loop::Closed;
        self.credits = 1;
    }

    /// Goes to open loop at `now`: paced at the rate from then on.
    pub fn open_loop(&mut self, now: Time) {
        self.mode = Loop::Open;
        self.credits = 0;
        self.next_send = self.next_send.max(now);
    }

    /// The pacing rate.
    #[must_use]
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// Open or closed loop.
    #[must_use]
    pub fn mode(&self) -> Loop {
        self.mode
    }

    /// The nonce the flow's data carries (0: none).
    #[must_use]
    pub fn nonce(&self) -> Nonce {
        self.nonce
    }

    /// The first byte not yet acknowledged.
    #[must_use]
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// Whether every byte given has been acknowledged.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.snd_una >= self.data_end
    }

    /// Whether every byte given has been sent at least once.
    #[must_use]
    pub fn all_sent(&self) -> bool {
        self.snd_max >= self.data_end
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> &RateSenderStats {
        &self.stats
    }

    /// The RTT estimator.
    #[must_use]
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// An ACK arrived at `now`, with INRPP's signal (the default for RCP and plain ACKs).
    pub fn handle_ack(&mut self, now: Time, ack: &AckSegment, signal: AckSignal) {
        if ack.ack > self.snd_una && ack.ack <= self.snd_max {
            // RFC 7323 §4: the echoed timestamp gives a sample whatever was retransmitted.
            self.rtt.on_sample(now.saturating_since(ack.ts_echo));
            self.snd_una = ack.ack;
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            // RFC 6298 §5.2–5.3.
            self.rto_deadline = (self.snd_una < self.snd_max).then(|| now + self.rtt.rto());
        }
        if signal.nonce != 0 && signal.notification != Notification::Cancel {
            self.nonce = signal.nonce;
        }
        match signal.notification {
            Notification::SlowDown => {
                if self.mode == Loop::Open {
                    self.stats.closed_loops += 1;
                }
                self.mode = Loop::Closed;
            }
            Notification::Cancel => {
                if signal.nonce == self.nonce {
                    self.nonce = 0;
                }
                // Open loop resumes from now, not from a pacing time left in the past.
                self.open_loop(now);
            }
            Notification::None => {}
        }
        if self.mode == Loop::Closed {
            self.credits = self.credits.saturating_add(1);
        }
    }

    /// The next segment to send at `now`, if the pacing (or, closed loop, an ACK) allows one.
    pub fn poll_transmit(&mut self, now: Time) -> Option<DataSegment> {
        if self.retransmit_pending {
            self.retransmit_pending = false;
            let len = self.segment_len(self.snd_una);
            if len > 0 {
                self.stats.retransmissions += 1;
                self.snd_nxt = self.snd_una + u64::from(len);
                return Some(self.emit(now, self.snd_una, len, true));
            }
        }
        let len = self.segment_len(self.snd_nxt);
        if len == 0 {
            return None;
        }
        match self.mode {
            Loop::Open if now < self.next_send => return None,
            Loop::Open => {
                let wire_bits = f64::from(len + self.config.header_bytes) * 8.0;
                let start = self.next_send.max(now);
                self.paced_from = start;
                self.paced_bits = wire_bits;
                self.next_send = start + Dur::from_secs_f64(wire_bits / self.rate_bps);
            }
            Loop::Closed if self.credits == 0 => return None,
            Loop::Closed => self.credits -= 1,
        }
        let seq = self.snd_nxt;
        let retransmission = seq < self.snd_max;
        if retransmission {
            self.stats.retransmissions += 1;
        }
        self.snd_nxt += u64::from(len);
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Some(self.emit(now, seq, len, retransmission))
    }

    fn segment_len(&self, seq: u64) -> u32 {
        self.data_end
            .saturating_sub(seq)
            .min(u64::from(self.config.mss)) as u32
    }

    fn emit(&mut self, now: Time, seq: u64, len: u32, retransmission: bool) -> DataSegment {
        self.stats.segments_sent += 1;
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        DataSegment {
            seq,
            len,
            ts: now,
            retransmission,
        }
    }

    /// When the driver must call back: the retransmission timer, or, open loop with data
    /// left, the pacing time of the next segment.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        let pacing =
            (self.mode == Loop::Open && self.snd_nxt < self.data_end).then_some(self.next_send);
        match (self.rto_deadline, pacing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handles the retransmission timer at `now` (nothing before it expires): backs off
    /// (RFC 6298 §5.5), resends the first unacknowledged segment at once and goes back to
    /// it, so that what follows is sent again as the loop allows (go-back-N, D300).
    pub fn handle_timeout(&mut self, now: Time) {
        let Some(deadline) = self.rto_deadline else {
            return;
        };
        if now < deadline {
            return;
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        self.snd_nxt = self.snd_una;
        self.retransmit_pending = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1460;

    fn config() -> RateSenderConfig {
        RateSenderConfig {
            mss: MSS,
            header_bytes: 40,
            rtt: RttConfig {
                min_rto: Dur::from_ms(200),
                initial_rto: Dur::from_secs(1),
                ..RttConfig::default()
            },
        }
    }

    /// Sends everything due at `now`.
    fn drain(s: &mut RateSender, now: Time) -> Vec<DataSegment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    fn ack(n: u64, echo: Time) -> AckSegment {
        AckSegment::new(n, echo)
    }

    /// Acceptance 1: a lone INRPP flow sends 10 MB (10^7 bytes) at 40 Mb/s in 2.0548 s:
    /// 6849 full segments and one of 460 bytes, 10,274,000 bytes on the wire.
    #[test]
    fn a_lone_flow_sends_10_mb_at_40_mbps_in_2_0548_s() {
        let mut s = RateSender::new(config(), 40e6);
        s.push_data(10_000_000);
        let mut sent = 0u64;
        let mut wire = 0u64;
        // No ACK comes back within the transfer's 2 s (the initial RTO is 1 s): the driver
        // wakes at the pacing times only.
        while !s.all_sent() {
            let now = s.next_send;
            for seg in drain(&mut s, now) {
                sent += u64::from(seg.len);
                wire += u64::from(seg.len + 40);
            }
        }
        assert_eq!((sent, wire), (10_000_000, 10_274_000));
        // The last segment occupies the access link until `next_send`.
        assert_eq!(format!("{:.4}", s.next_send.as_secs_f64()), "2.0548");
        assert_eq!(s.stats().segments_sent, 6850);
    }

    #[test]
    fn open_loop_paces_and_resumes_from_now_after_a_pause() {
        let mut s = RateSender::new(config(), 12e6);
        s.push_data(u64::from(MSS) * 2);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 1);
        // 1500 bytes at 12 Mb/s take 1 ms.
        assert_eq!(s.poll_timeout(), Some(Time::from_ms(1)));
        assert!(drain(&mut s, Time::ZERO + Dur::from_us(999)).is_empty());
        assert_eq!(drain(&mut s, Time::from_ms(1)).len(), 1);
        assert!(s.all_sent());
        // Only the retransmission timer is left.
        assert_eq!(s.poll_timeout(), Some(Time::from_secs(1)));
        s.push_data(u64::from(MSS) * 2);
        // Data given after a pause leaves at the rate from then, not as a burst of the
        // slots missed.
        assert_eq!(drain(&mut s, Time::from_ms(50)).len(), 1);
        assert_eq!(s.poll_timeout(), Some(Time::from_ms(51)));
    }

    #[test]
    fn a_new_rate_re_times_the_next_segment_from_the_last() {
        let mut s = RateSender::new(config(), 12e6);
        s.push_data(u64::from(MSS) * 3);
        assert_eq!(drain(&mut s, Time::from_ms(10)).len(), 1);
        assert_eq!(s.poll_timeout(), Some(Time::from_ms(11)));
        // 1500 bytes at 6 Mb/s take 2 ms from the segment's start; at 24 Mb/s, 0.5 ms.
        s.set_rate(6e6);
        assert_eq!(s.poll_timeout(), Some(Time::from_ms(12)));
        s.set_rate(24e6);
        assert_eq!(s.poll_timeout(), Some(Time::ZERO + Dur::from_us(10_500)));
        assert_eq!(drain(&mut s, Time::ZERO + Dur::from_us(10_500)).len(), 1);
    }

    #[test]
    fn started_closed_one_segment_waits_for_its_ack_then_open_loop_paces() {
        let mut s = RateSender::new(config(), 1.0);
        s.push_data(u64::from(MSS) * 10);
        s.start_closed();
        assert_eq!(drain(&mut s, Time::ZERO).len(), 1);
        assert!(drain(&mut s, Time::from_ms(500)).is_empty());
        // Only the retransmission timer waits.
        assert_eq!(s.poll_timeout(), Some(Time::from_secs(1)));
        let now = Time::from_ms(40);
        s.handle_ack(now, &ack(u64::from(MSS), Time::ZERO), AckSignal::default());
        s.set_rate(12e6);
        s.open_loop(now);
        assert_eq!(drain(&mut s, now).len(), 1);
        assert_eq!(s.poll_timeout(), Some(Time::from_ms(41)));
    }

    #[test]
    fn slow_down_closes_the_loop_one_segment_per_ack_and_cancel_reopens_it() {
        let mut s = RateSender::new(config(), 1e9);
        s.push_data(u64::from(MSS) * 100);
        let first = drain(&mut s, Time::ZERO);
        assert_eq!(first.len(), 1);
        let t = Time::from_ms(10);
        drain(&mut s, t);
        let slow = AckSignal {
            notification: Notification::SlowDown,
            nonce: 42,
        };
        s.handle_ack(t, &ack(u64::from(MSS), Time::ZERO), slow);
        assert_eq!((s.mode(), s.nonce()), (Loop::Closed, 42));
        assert_eq!(s.stats().closed_loops, 1);
        // One ACK, one segment, whatever the time.
        assert_eq!(drain(&mut s, Time::from_secs(5)).len(), 1);
        assert!(drain(&mut s, Time::from_secs(6)).is_empty());
        // An ACK that says nothing (a router in CLEAR mode cleared it) still clocks one out.
        let nonce_only = AckSignal {
            notification: Notification::None,
            nonce: 42,
        };
        s.handle_ack(Time::from_secs(6), &ack(u64::from(MSS) * 2, t), nonce_only);
        assert_eq!(drain(&mut s, Time::from_secs(6)).len(), 1);
        let cancel = AckSignal {
            notification: Notification::Cancel,
            nonce: 42,
        };
        s.handle_ack(Time::from_secs(7), &ack(u64::from(MSS) * 3, t), cancel);
        assert_eq!((s.mode(), s.nonce()), (Loop::Open, 0));
        // Open loop again at 1 Gb/s: 12 µs a segment.
        assert_eq!(drain(&mut s, Time::from_secs(7)).len(), 1);
        assert_eq!(
            s.poll_timeout().unwrap(),
            Time::from_secs(7) + Dur::from_us(12)
        );
    }

    #[test]
    fn a_nonce_seen_on_any_ack_is_kept_the_latest_winning() {
        let mut s = RateSender::new(config(), 1e9);
        s.push_data(u64::from(MSS) * 10);
        drain(&mut s, Time::ZERO);
        let with = |nonce| AckSignal {
            notification: Notification::None,
            nonce,
        };
        s.handle_ack(Time::from_ms(1), &ack(0, Time::ZERO), with(5));
        assert_eq!((s.nonce(), s.mode()), (5, Loop::Open));
        s.handle_ack(Time::from_ms(1), &ack(0, Time::ZERO), with(6));
        assert_eq!(s.nonce(), 6);
        // A CANCEL of another nonce leaves this one.
        let cancel = AckSignal {
            notification: Notification::Cancel,
            nonce: 5,
        };
        s.handle_ack(Time::from_ms(1), &ack(0, Time::ZERO), cancel);
        assert_eq!(s.nonce(), 6);
    }

    #[test]
    fn a_timeout_resends_at_once_then_goes_back_to_the_first_hole_at_the_pacing_rate() {
        // 1500 bytes at 12 Mb/s: a segment a millisecond.
        let mut s = RateSender::new(config(), 12e6);
        s.push_data(u64::from(MSS) * 4);
        let sent: Vec<DataSegment> = (0..4)
            .flat_map(|k| drain(&mut s, Time::from_ms(k)))
            .collect();
        assert_eq!(sent.len(), 4);
        assert!(s.all_sent());
        // Nothing comes back: the timer (initial RTO 1 s from the first segment) fires.
        assert_eq!(s.poll_timeout(), Some(Time::from_secs(1)));
        s.handle_timeout(Time::from_ms(999));
        assert_eq!(s.stats().timeouts, 0);
        s.handle_timeout(Time::from_secs(1));
        // The first segment at once, and the sweep from the next one at the pacing rate.
        let resent = drain(&mut s, Time::from_secs(1));
        let seqs: Vec<(u64, bool)> = resent.iter().map(|d| (d.seq, d.retransmission)).collect();
        assert_eq!(seqs, [(0, true), (u64::from(MSS), true)]);
        // The next paced segment is due a millisecond later (the RTO, doubled, at 3 s).
        assert_eq!(s.poll_timeout(), Some(Time::from_ms(1_001)));
        // The receiver held segment 2: the ACK for the first jumps to 2·MSS; the sweep goes on
        // from there, one segment a millisecond.
        let t = Time::from_ms(1_000) + Dur::from_us(500);
        s.handle_ack(
            t,
            &ack(u64::from(MSS) * 2, resent[0].ts),
            AckSignal::default(),
        );
        let next = drain(&mut s, Time::from_ms(1_001));
        assert_eq!(next.len(), 1);
        assert_eq!(
            (next[0].seq, next[0].retransmission),
            (u64::from(MSS) * 2, true)
        );
        assert!(drain(&mut s, Time::from_ms(1_001)).is_empty());
        assert_eq!(drain(&mut s, Time::from_ms(1_002)).len(), 1);
        s.handle_ack(
            Time::from_ms(1_050),
            &ack(u64::from(MSS) * 4, next[0].ts),
            AckSignal::default(),
        );
        assert!(s.is_finished());
        assert_eq!(s.poll_timeout(), None);
        assert_eq!(s.stats().retransmissions, 4);
    }
}
