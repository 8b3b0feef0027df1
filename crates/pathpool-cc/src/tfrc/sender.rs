//! The TFRC sender's rules (RFC 3448 §4, with the errata's nofeedback rule): the allowed rate
//! X, the RTT estimate, pacing and the nofeedback timer. Sans-IO: the driver passes the time,
//! asks when the next packet may go and when the nofeedback timer fires.

use pathpool_core::{Dur, Time};

use super::equation::{tfrc_rate_bytes_per_s, RTO_RTTS};
use super::packets::{DataHeader, Feedback};

/// The sender's options; [`Default`] is RFC 3448's.
#[derive(Debug, Clone, PartialEq)]
pub struct TfrcSenderConfig {
    /// Packet size s in bytes.
    pub segment_bytes: u64,
    /// Rate before the first feedback, packets/s (RFC 3448 §4.2: 1).
    pub initial_rate_pkts_per_s: f64,
    /// Nofeedback timer before the first feedback (RFC 3448 §4.2: 2 s).
    pub initial_nofeedback: Dur,
    /// Weight q of the old estimate in R = q·R + (1 − q)·R_sample (RFC 3448 §4.3: 0.9).
    pub rtt_ewma_q: f64,
    /// t_mbi: the rate never falls below s/t_mbi (RFC 3448 §4.3: 64 s).
    pub t_mbi: Dur,
    /// Whether X is capped at 2·X_recv (RFC 3448 §4.3). 1/N TFRC turns it off and caps the
    /// sent rate instead ([`super::bilevel::fractional_rate_bytes_per_s`], decision D236).
    pub cap_by_receive_rate: bool,
}

impl Default for TfrcSenderConfig {
    fn default() -> Self {
        TfrcSenderConfig {
            segment_bytes: 1000,
            initial_rate_pkts_per_s: 1.0,
            initial_nofeedback: Dur::from_secs(2),
            rtt_ewma_q: 0.9,
            t_mbi: Dur::from_secs(64),
            cap_by_receive_rate: true,
        }
    }
}

/// The smallest RTT the rate update uses: 1 µs.
pub const MIN_RTT: Dur = Dur::from_us(1);

/// What the rate update reads (RFC 3448 §4.3 step 4); also the master's in Bilevel TFRC.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateInputs {
    /// Packet size s in bytes.
    pub segment_bytes: u64,
    /// The RTT estimate R.
    pub rtt: Dur,
    /// The loss event rate p.
    pub loss_event_rate: f64,
    /// The receive rate X_recv, bytes/s.
    pub x_recv_bytes_per_s: f64,
    /// t_mbi.
    pub t_mbi: Dur,
    /// Whether X is capped at 2·X_recv.
    pub cap_by_receive_rate: bool,
}

/// RFC 3448 §4.3 step 4: with p > 0, X = max(min(X_calc, 2·X_recv), s/t_mbi); with p = 0,
/// X = max(min(2X, 2·X_recv), s/R) if at least R has passed since the last doubling `tld`
/// (then `tld` ← now), else X unchanged. `tld = None` (never doubled) allows a doubling.
///
/// R is taken as at least [`MIN_RTT`]: a zero RTT (an echo in the same instant, or a master
/// with no subflow) would make s/R and the equation infinite and pacing a loop.
#[must_use]
pub fn update_allowed_rate(
    x_bytes_per_s: f64,
    tld: &mut Option<Time>,
    now: Time,
    inp: &RateInputs,
) -> f64 {
    let s = inp.segment_bytes as f64;
    let rtt = inp.rtt.max(MIN_RTT);
    let cap = if inp.cap_by_receive_rate {
        2.0 * inp.x_recv_bytes_per_s
    } else {
        f64::INFINITY
    };
    if inp.loss_event_rate > 0.0 {
        let x_calc = tfrc_rate_bytes_per_s(inp.segment_bytes, rtt, inp.loss_event_rate);
        x_calc.min(cap).max(s / inp.t_mbi.as_secs_f64())
    } else if tld.is_none_or(|t| now.saturating_since(t) >= rtt) {
        *tld = Some(now);
        (2.0 * x_bytes_per_s).min(cap).max(s / rtt.as_secs_f64())
    } else {
        x_bytes_per_s
    }
}

/// An RFC 3448 sender.
#[derive(Debug, Clone)]
pub struct TfrcSender {
    cfg: TfrcSenderConfig,
    x_bytes_per_s: f64,
    x_recv_bytes_per_s: f64,
    loss_event_rate: f64,
    rtt: Option<Dur>,
    tld: Option<Time>,
    feedback_seen: bool,
    nofeedback_at: Time,
    /// When the nofeedback timer was last restarted (`None`: still the initial 2 s).
    nofeedback_from: Option<Time>,
    next_send_at: Time,
    last_sent_at: Option<Time>,
    next_seq: u64,
    paced_rate_bytes_per_s: Option<f64>,
}

impl TfrcSender {
    /// A sender starting at `now`: X = 1 packet/s, nofeedback timer 2 s (RFC 3448 §4.2).
    #[must_use]
    pub fn new(cfg: TfrcSenderConfig, now: Time) -> TfrcSender {
        TfrcSender {
            x_bytes_per_s: cfg.initial_rate_pkts_per_s * cfg.segment_bytes as f64,
            nofeedback_at: now + cfg.initial_nofeedback,
            nofeedback_from: None,
            cfg,
            x_recv_bytes_per_s: 0.0,
            loss_event_rate: 0.0,
            rtt: None,
            tld: None,
            feedback_seen: false,
            next_send_at: now,
            last_sent_at: None,
            next_seq: 0,
            paced_rate_bytes_per_s: None,
        }
    }

    /// The allowed rate X, bytes/s (the "nominal" rate of a multipath subflow).
    #[must_use]
    pub fn rate_bytes_per_s(&self) -> f64 {
        self.x_bytes_per_s
    }

    /// The rate packets are paced at: X, unless a multipath master set another.
    #[must_use]
    pub fn paced_rate_bytes_per_s(&self) -> f64 {
        self.paced_rate_bytes_per_s.unwrap_or(self.x_bytes_per_s)
    }

    /// Paces at `rate` instead of X (Bilevel's R'_i, 1/N TFRC's X/N); `None` returns to X.
    /// The running nofeedback timer is re-timed for the new rate (its 2s/X term is about the
    /// rate packets are sent at, decision D252).
    pub fn set_paced_rate(&mut self, rate_bytes_per_s: Option<f64>) {
        self.paced_rate_bytes_per_s = rate_bytes_per_s;
        if let Some(from) = self.nofeedback_from {
            self.restart_nofeedback(from);
        }
        self.reschedule();
    }

    /// The RTT estimate R, once there is a sample.
    #[must_use]
    pub fn rtt(&self) -> Option<Dur> {
        self.rtt
    }

    /// The last loss event rate reported.
    #[must_use]
    pub fn loss_event_rate(&self) -> f64 {
        self.loss_event_rate
    }

    /// The last receive rate reported (after any nofeedback adjustment), bytes/s.
    #[must_use]
    pub fn x_recv_bytes_per_s(&self) -> f64 {
        self.x_recv_bytes_per_s
    }

    /// When the next packet may be sent (RFC 3448 §4.6: t_ipi = s/X after the last one).
    #[must_use]
    pub fn next_send_time(&self) -> Time {
        self.next_send_at
    }

    /// When the nofeedback timer fires.
    #[must_use]
    pub fn nofeedback_deadline(&self) -> Time {
        self.nofeedback_at
    }

    /// The driver sent a packet of `size_bytes` at `now`: returns its TFRC header and
    /// schedules the next one s/X later.
    pub fn on_send(&mut self, now: Time, size_bytes: u64) -> DataHeader {
        let header = DataHeader {
            seq: self.next_seq,
            timestamp: now,
            rtt_estimate: self.rtt,
            size_bytes,
        };
        self.next_seq += 1;
        self.last_sent_at = Some(now);
        self.reschedule();
        header
    }

    fn inter_packet_interval(&self) -> Dur {
        Dur::from_secs_f64(self.cfg.segment_bytes as f64 / self.paced_rate_bytes_per_s())
    }

    /// A rate change takes effect from the last packet sent: the next one goes t_ipi after it.
    fn reschedule(&mut self) {
        if let Some(last) = self.last_sent_at {
            self.next_send_at = last.saturating_add(self.inter_packet_interval());
        }
    }

    /// The rate update's inputs, with `cap_x_recv_bytes_per_s` as the X_recv of the
    /// 2·X_recv cap.
    fn rate_inputs(&self, rtt: Dur, cap_x_recv_bytes_per_s: f64) -> RateInputs {
        RateInputs {
            segment_bytes: self.cfg.segment_bytes,
            rtt,
            loss_event_rate: self.loss_event_rate,
            x_recv_bytes_per_s: cap_x_recv_bytes_per_s,
            t_mbi: self.cfg.t_mbi,
            cap_by_receive_rate: self.cfg.cap_by_receive_rate,
        }
    }

    /// RFC 3448 §4.3: a feedback packet arrived at `now`.
    pub fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        self.on_feedback_capped_at(now, fb, fb.x_recv_bytes_per_s);
    }

    /// [`TfrcSender::on_feedback`] with the 2·X_recv cap taken at `cap_x_recv_bytes_per_s`
    /// instead of the reported X_recv (a Bilevel subflow's nominal rate capped by its
    /// connection's receive rate, decision D263); X_recv is still recorded as reported.
    pub fn on_feedback_capped_at(&mut self, now: Time, fb: &Feedback, cap_x_recv_bytes_per_s: f64) {
        // Step 1: R_sample = (t_now − t_recvdata) − t_delay; R = q·R + (1 − q)·R_sample.
        let since_echo = now.saturating_since(fb.timestamp_echo);
        let sample = Dur::from_ps(since_echo.as_ps().saturating_sub(fb.echo_delay.as_ps()));
        let rtt = match self.rtt {
            None => sample,
            Some(r) => {
                let q = self.cfg.rtt_ewma_q;
                Dur::from_secs_f64(q * r.as_secs_f64() + (1.0 - q) * sample.as_secs_f64())
            }
        };
        self.rtt = Some(rtt);
        self.feedback_seen = true;
        self.x_recv_bytes_per_s = fb.x_recv_bytes_per_s;
        self.loss_event_rate = fb.loss_event_rate;
        // Steps 3–4.
        let inputs = self.rate_inputs(rtt, cap_x_recv_bytes_per_s);
        self.x_bytes_per_s = update_allowed_rate(self.x_bytes_per_s, &mut self.tld, now, &inputs);
        self.restart_nofeedback(now);
        self.reschedule();
    }

    /// Nofeedback timer: max(4R, 2s/X) (RFC 3448 §4.3 step 5); before an RTT sample, 2s/X.
    /// X is the rate packets are paced at: a multipath subflow sending at a share of its
    /// nominal rate waits for two of its own packets.
    fn restart_nofeedback(&mut self, now: Time) {
        self.nofeedback_from = Some(now);
        let two_packets =
            Dur::from_secs_f64(2.0 * self.cfg.segment_bytes as f64 / self.paced_rate_bytes_per_s());
        let four_rtt = self.rtt.map_or(Dur::ZERO, |r| {
            Dur::from_secs_f64(RTO_RTTS * r.as_secs_f64())
        });
        self.nofeedback_at = now.saturating_add(four_rtt.max(two_packets));
    }

    /// The nofeedback timer fired at `now` (RFC 3448 §4.4 with erratum 1458, decision D234):
    /// with no feedback yet or p = 0, X = max(X/2, s/t_mbi); with p > 0, X_recv is lowered
    /// (to max(X_recv/2, s/(2·t_mbi)) when X_calc > 2·X_recv, else to X_calc/4) and X
    /// recomputed, which halves it either way. The timer restarts. A call before the deadline
    /// does nothing.
    pub fn on_nofeedback_timer(&mut self, now: Time) {
        if now < self.nofeedback_at {
            return;
        }
        let s = self.cfg.segment_bytes as f64;
        let floor = s / self.cfg.t_mbi.as_secs_f64();
        match self.rtt {
            Some(rtt) if self.feedback_seen && self.loss_event_rate > 0.0 => {
                let x_calc =
                    tfrc_rate_bytes_per_s(self.cfg.segment_bytes, rtt, self.loss_event_rate);
                self.x_recv_bytes_per_s = if x_calc > 2.0 * self.x_recv_bytes_per_s {
                    (self.x_recv_bytes_per_s / 2.0).max(floor / 2.0)
                } else {
                    x_calc / 4.0
                };
                let inputs = self.rate_inputs(rtt, self.x_recv_bytes_per_s);
                self.x_bytes_per_s =
                    update_allowed_rate(self.x_bytes_per_s, &mut self.tld, now, &inputs);
            }
            _ => self.x_bytes_per_s = (self.x_bytes_per_s / 2.0).max(floor),
        }
        self.restart_nofeedback(now);
        self.reschedule();
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
