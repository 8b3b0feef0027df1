//! The TFRC receiver's rules (RFC 3448 §5–6): loss detection, loss events, the loss event
//! rate, X_recv and when to send feedback. Sans-IO: the driver hands in data packets and the
//! time, sends the [`Feedback`] returned, and calls [`TfrcReceiver::on_timer`] at
//! [`TfrcReceiver::next_timer`].

use pathpool_core::{Dur, Time};

use super::equation::loss_event_rate_for_rate;
use super::history::{ArrivalHistory, HistoryMode, DEFAULT_HISTORY_SLOTS};
use super::loss_intervals::{BadIntervalCount, LossIntervals, DEFAULT_LOSS_INTERVALS};
use super::packets::{DataHeader, Feedback};

/// The receiver's options; [`Default`] is RFC 3448's with a wrap-safe history.
#[derive(Debug, Clone, PartialEq)]
pub struct TfrcReceiverConfig {
    /// Arrival history kind (`history`).
    pub history: HistoryMode,
    /// Arrival history size in packets (ns-2: 100,000).
    pub history_slots: usize,
    /// Loss intervals averaged, n (RFC 3448 §5.4: 8; even).
    pub loss_intervals: usize,
    /// Later arrivals that make a missing packet lost (RFC 3448 §5.1: NDUPACK = 3).
    pub ndupack: u64,
    /// The RTT used before a data packet carries the sender's estimate (decision D233).
    pub fallback_rtt: Dur,
}

impl Default for TfrcReceiverConfig {
    fn default() -> Self {
        TfrcReceiverConfig {
            history: HistoryMode::WrapSafe,
            history_slots: DEFAULT_HISTORY_SLOTS,
            loss_intervals: DEFAULT_LOSS_INTERVALS,
            ndupack: 3,
            fallback_rtt: Dur::from_ms(500),
        }
    }
}

/// The start of the current loss event: the first lost packet and its (interpolated) send
/// time.
#[derive(Debug, Clone, Copy)]
struct EventStart {
    seq: u64,
    sent_at: Time,
}

/// An RFC 3448 receiver.
#[derive(Debug, Clone)]
pub struct TfrcReceiver {
    cfg: TfrcReceiverConfig,
    history: ArrivalHistory,
    intervals: LossIntervals,
    started: bool,
    highest_seq: u64,
    /// Lowest sequence number not yet classified as received or lost.
    next_unclassified: u64,
    /// The highest packet classified received (for interpolating a loss's send time).
    last_received: (u64, Time),
    event_start: Option<EventStart>,
    rtt: Dur,
    segment_bytes: u64,
    loss_event_rate: f64,
    /// t_recvdata and the arrival time of the last data packet.
    last_data: (Time, Time),
    bytes_since_feedback: u64,
    losses_since_feedback: u32,
    last_feedback_at: Time,
    last_x_recv_bytes_per_s: f64,
    feedback_due: Option<Time>,
    loss_events: u64,
}

impl TfrcReceiver {
    /// A receiver that has seen no packet yet; fails on an odd or too small `loss_intervals`.
    pub fn new(cfg: TfrcReceiverConfig) -> Result<TfrcReceiver, BadIntervalCount> {
        Ok(TfrcReceiver {
            history: ArrivalHistory::new(cfg.history, cfg.history_slots),
            intervals: LossIntervals::new(cfg.loss_intervals)?,
            rtt: cfg.fallback_rtt,
            cfg,
            started: false,
            highest_seq: 0,
            next_unclassified: 0,
            last_received: (0, Time::ZERO),
            event_start: None,
            segment_bytes: 0,
            loss_event_rate: 0.0,
            last_data: (Time::ZERO, Time::ZERO),
            bytes_since_feedback: 0,
            losses_since_feedback: 0,
            last_feedback_at: Time::ZERO,
            last_x_recv_bytes_per_s: 0.0,
            feedback_due: None,
            loss_events: 0,
        })
    }

    /// The current loss event rate p.
    #[must_use]
    pub fn loss_event_rate(&self) -> f64 {
        self.loss_event_rate
    }

    /// The loss-interval history.
    #[must_use]
    pub fn intervals(&self) -> &LossIntervals {
        &self.intervals
    }

    /// When [`TfrcReceiver::on_timer`] is next due (the feedback timer).
    #[must_use]
    pub fn next_timer(&self) -> Option<Time> {
        self.feedback_due
    }

    /// Loss events begun so far.
    #[must_use]
    pub fn loss_events(&self) -> u64 {
        self.loss_events
    }

    /// The RTT in use: the sender's latest estimate, or the fallback before one arrived.
    #[must_use]
    pub fn rtt(&self) -> Dur {
        self.rtt
    }

    /// Whether no loss event has begun yet (the first loss interval is still to be seeded).
    #[must_use]
    pub fn awaiting_first_loss(&self) -> bool {
        self.event_start.is_none()
    }

    /// The receive rate that would seed the first loss interval at `now` (decision D233 (c)):
    /// the larger of the rate since the last feedback and the last rate reported, bytes/s.
    #[must_use]
    pub fn seed_rate_bytes_per_s(&self, now: Time) -> f64 {
        self.measured_x_recv(now).max(self.last_x_recv_bytes_per_s)
    }

    /// A data packet arrived at `now`. Returns feedback to send at once: for the first packet
    /// (RFC 3448 §6.3) and when the packet revealed a new loss event (§6.1).
    pub fn on_data(&mut self, now: Time, hdr: &DataHeader) -> Option<Feedback> {
        self.on_data_with_peers(now, hdr, 0.0)
    }

    /// [`TfrcReceiver::on_data`] for one subflow of a connection whose other subflows
    /// receive `peers_bytes_per_s` between them: if this packet reveals the first loss, the
    /// first loss interval is seeded at this receiver's rate plus theirs (decision D262).
    pub fn on_data_with_peers(
        &mut self,
        now: Time,
        hdr: &DataHeader,
        peers_bytes_per_s: f64,
    ) -> Option<Feedback> {
        if let Some(rtt) = hdr.rtt_estimate {
            self.rtt = rtt;
        }
        self.segment_bytes = hdr.size_bytes;
        self.bytes_since_feedback += hdr.size_bytes;
        self.last_data = (hdr.timestamp, now);
        if !self.started {
            // RFC 3448 §6.3: p = 0, X_recv = 0, feedback now, timer after R.
            self.started = true;
            self.history.record(hdr.seq, hdr.timestamp);
            self.highest_seq = hdr.seq;
            self.next_unclassified = hdr.seq + 1;
            self.last_received = (hdr.seq, hdr.timestamp);
            return Some(self.feedback(now, 0.0));
        }
        if hdr.seq < self.next_unclassified && self.history.arrival(hdr.seq).is_none() {
            // Already declared lost (or from before the first packet): too late to count
            // towards loss detection, but its bytes were received.
            return None;
        }
        self.history.record(hdr.seq, hdr.timestamp);
        self.highest_seq = self.highest_seq.max(hdr.seq);
        let new_event = self.classify(now, peers_bytes_per_s);
        if let Some(start) = self.event_start {
            self.intervals
                .set_open((self.highest_seq + 1 - start.seq) as f64);
        }
        self.loss_event_rate = self.intervals.loss_event_rate();
        new_event.then(|| {
            let x_recv = self.measured_x_recv(now);
            self.feedback(now, x_recv)
        })
    }

    /// The feedback timer: at or after [`TfrcReceiver::next_timer`], feedback if data arrived
    /// since the last one (RFC 3448 §6.2); the timer restarts after R either way.
    pub fn on_timer(&mut self, now: Time) -> Option<Feedback> {
        let due = self.feedback_due?;
        if now < due {
            return None;
        }
        if self.bytes_since_feedback == 0 {
            self.feedback_due = Some(now + self.rtt);
            return None;
        }
        let x_recv = self.measured_x_recv(now);
        Some(self.feedback(now, x_recv))
    }

    /// Bytes received since the last feedback over the time since (RFC 3448 §6.2); the last
    /// value when no time has passed.
    fn measured_x_recv(&self, now: Time) -> f64 {
        let elapsed_s = now.saturating_since(self.last_feedback_at).as_secs_f64();
        if elapsed_s > 0.0 {
            self.bytes_since_feedback as f64 / elapsed_s
        } else {
            self.last_x_recv_bytes_per_s
        }
    }

    fn feedback(&mut self, now: Time, x_recv_bytes_per_s: f64) -> Feedback {
        let fb = Feedback {
            timestamp_echo: self.last_data.0,
            echo_delay: now.saturating_since(self.last_data.1),
            x_recv_bytes_per_s,
            loss_event_rate: self.loss_event_rate,
            losses_last_rtt: self.losses_since_feedback,
        };
        self.last_x_recv_bytes_per_s = x_recv_bytes_per_s;
        self.bytes_since_feedback = 0;
        self.losses_since_feedback = 0;
        self.last_feedback_at = now;
        self.feedback_due = Some(now + self.rtt);
        fb
    }

    /// Classifies packets from the lowest unclassified one up: received, or lost once
    /// `ndupack` later packets arrived (RFC 3448 §5.1). Returns whether a new loss event began.
    fn classify(&mut self, now: Time, peers_bytes_per_s: f64) -> bool {
        let mut new_event = false;
        while self.next_unclassified < self.highest_seq {
            let seq = self.next_unclassified;
            if let Some(sent_at) = self.history.arrival(seq) {
                self.last_received = (seq, sent_at);
            } else {
                let Some((next_seq, next_sent_at)) = self.later_arrivals(seq) else {
                    break;
                };
                new_event |= self.on_loss(now, seq, next_seq, next_sent_at, peers_bytes_per_s);
            }
            self.next_unclassified += 1;
        }
        new_event
    }

    /// The first packet received after `seq` if at least `ndupack` packets after it arrived.
    fn later_arrivals(&self, seq: u64) -> Option<(u64, Time)> {
        let mut first = None;
        let mut count = 0;
        for later in seq + 1..=self.highest_seq {
            if let Some(sent_at) = self.history.arrival(later) {
                first.get_or_insert((later, sent_at));
                count += 1;
                if count >= self.cfg.ndupack {
                    return first;
                }
            }
        }
        None
    }

    /// Packet `seq` is lost. Its send time is interpolated between the received packets
    /// around it (RFC 3448 §5.2); it starts a new loss event unless it was sent within one RTT
    /// of the current event's start. Returns whether it started one. `peers_bytes_per_s` is
    /// added to the receive rate that seeds the first interval.
    fn on_loss(
        &mut self,
        now: Time,
        seq: u64,
        next_seq: u64,
        next_sent_at: Time,
        peers_bytes_per_s: f64,
    ) -> bool {
        self.losses_since_feedback += 1;
        let (prev_seq, prev_sent_at) = self.last_received;
        let span_s = next_sent_at.saturating_since(prev_sent_at).as_secs_f64();
        let frac = (seq - prev_seq) as f64 / (next_seq - prev_seq) as f64;
        let sent_at = prev_sent_at.saturating_add(Dur::from_secs_f64(span_s * frac));
        match self.event_start {
            Some(start) if sent_at <= start.sent_at.saturating_add(self.rtt) => return false,
            Some(start) => self.intervals.close_interval((seq - start.seq) as f64),
            None => {
                // RFC 3448 §6.3.1: the first interval is 1/p for the p at which the equation
                // gives the receive rate (decisions D233 for which rate, D262 for a subflow's).
                let x_recv = self.seed_rate_bytes_per_s(now) + peers_bytes_per_s;
                let p = loss_event_rate_for_rate(self.segment_bytes, self.rtt, x_recv);
                self.intervals.close_interval(1.0 / p);
            }
        }
        self.event_start = Some(EventStart { seq, sent_at });
        self.loss_events += 1;
        true
    }
}

#[cfg(test)]
#[path = "receiver_tests.rs"]
mod tests;
