//! The multipath TFRC sender: one RFC 3448 sender per subflow, the rule that sets the rate
//! each subflow is paced at, and the choice of what each subflow sends (Tse §3.2, §4.3–4.4).
//!
//! * Bilevel TFRC: each subflow's own sender computes its nominal rate R_i = X_i; on each
//!   feedback the master ([`BilevelMaster`]) sets f^M (eq. 3.3), R_M, and paces subflow i at
//!   R'_i = R_M·R_i/ΣR_f (eq. 3.1).
//! * 1/N TFRC ("fractional"): each subflow is paced at 1/N of its own rate, with `recv_cap`
//!   deciding where the 2·X_recv cap applies (decision D236).
//!
//! Each subflow, when its pacing allows a packet, sends a resend queued for it, else new
//! data, else (no new data left) a tail resend ([`Reliability`]).

use pathpool_cc::{
    allocate, fractional_rate_bytes_per_s, BilevelConfig, BilevelMaster, LossCombination,
    NominalCap, RecvCap, SubflowState, TfrcSender, TfrcSenderConfig,
};
use pathpool_core::{Dur, Time};

use super::reliability::{Reliability, ResendSubflow, DEFAULT_NACK_EXPIRY_RTTS};
use super::{MpDataHeader, MpFeedback};

/// How the subflows' rates are combined (`multipath`).
#[derive(Debug, Clone, PartialEq)]
pub enum MultipathTfrc {
    /// Bilevel TFRC's master (Tse §3.2).
    Bilevel(BilevelConfig),
    /// 1/N TFRC: each subflow sends 1/N of its own TFRC rate (Tse §4.2).
    Fractional(RecvCap),
}

/// The sender's options.
#[derive(Debug, Clone, PartialEq)]
pub struct MpTfrcConfig {
    /// Every subflow's RFC 3448 sender options (1/N TFRC with `recv_cap = "sent"` turns the
    /// receive-rate cap off itself).
    pub subflow: TfrcSenderConfig,
    /// The rate rule.
    pub mode: MultipathTfrc,
    /// NACKs for a resent packet are ignored for this many RTTs after the resend (Tse: 1.5).
    pub nack_expiry_rtts: f64,
    /// Which subflow a NACKed packet is resent on.
    pub resend_on: ResendSubflow,
    /// The RTT used for a subflow without a sample yet (as the receiver's D233 fallback).
    pub fallback_rtt: Dur,
}

impl Default for MpTfrcConfig {
    fn default() -> Self {
        MpTfrcConfig {
            subflow: TfrcSenderConfig::default(),
            mode: MultipathTfrc::Bilevel(BilevelConfig::default()),
            nack_expiry_rtts: DEFAULT_NACK_EXPIRY_RTTS,
            resend_on: ResendSubflow::default(),
            fallback_rtt: Dur::from_ms(500),
        }
    }
}

/// The sending end of a multipath TFRC connection.
#[derive(Debug, Clone)]
pub struct MpTfrcSender {
    cfg: MpTfrcConfig,
    subs: Vec<TfrcSender>,
    /// Whether subflow i has had feedback (only those take part in the master's rule).
    fed: Vec<bool>,
    master: Option<BilevelMaster>,
    rel: Reliability,
    /// The connection-wide loss event rate last reported (decision D264).
    connection_loss_event_rate: Option<f64>,
    /// New data ends before this connection sequence number (`None`: unlimited).
    new_data_end: Option<u64>,
}

impl MpTfrcSender {
    /// A sender of `subflows` (≥ 1) subflows starting at `now`, each at RFC 3448's initial
    /// rate.
    #[must_use]
    pub fn new(cfg: MpTfrcConfig, subflows: usize, now: Time) -> MpTfrcSender {
        let mut sub_cfg = cfg.subflow.clone();
        if cfg.mode == MultipathTfrc::Fractional(RecvCap::Sent) {
            sub_cfg.cap_by_receive_rate = false;
        }
        let subs: Vec<TfrcSender> = (0..subflows)
            .map(|_| TfrcSender::new(sub_cfg.clone(), now))
            .collect();
        let master = match &cfg.mode {
            MultipathTfrc::Bilevel(b) => Some(BilevelMaster::new(
                b.clone(),
                subs.iter().map(TfrcSender::rate_bytes_per_s).sum(),
            )),
            MultipathTfrc::Fractional(_) => None,
        };
        let mut s = MpTfrcSender {
            rel: Reliability::new(subflows, cfg.nack_expiry_rtts, cfg.resend_on),
            fed: vec![false; subflows],
            cfg,
            subs,
            master,
            connection_loss_event_rate: None,
            new_data_end: None,
        };
        if matches!(s.cfg.mode, MultipathTfrc::Fractional(_)) {
            for i in 0..subflows {
                s.set_fractional_rate(i);
            }
        }
        s
    }

    /// Sends no new data from now on (resends and the tail rule go on).
    pub fn stop_new_data(&mut self) {
        self.new_data_end = Some(self.rel.next_new_seq());
    }

    /// Sends new data only up to `packets` connection packets in all.
    pub fn limit_new_data(&mut self, packets: u64) {
        self.new_data_end = Some(packets);
    }

    /// Subflow `i`'s RFC 3448 sender.
    #[must_use]
    pub fn subflow(&self, i: usize) -> &TfrcSender {
        &self.subs[i]
    }

    /// The reliability state.
    #[must_use]
    pub fn reliability(&self) -> &Reliability {
        &self.rel
    }

    /// The master rate R_M (Bilevel only), bytes/s.
    #[must_use]
    pub fn master_rate_bytes_per_s(&self) -> Option<f64> {
        self.master.as_ref().map(BilevelMaster::rate_bytes_per_s)
    }

    /// Whether every connection packet there is to send was sent and reported received.
    #[must_use]
    pub fn finished(&self) -> bool {
        !self.has_new_data() && self.rel.all_received()
    }

    fn has_new_data(&self) -> bool {
        self.new_data_end
            .is_none_or(|end| self.rel.next_new_seq() < end)
    }

    fn rtt(&self, i: usize) -> Dur {
        self.subs[i].rtt().unwrap_or(self.cfg.fallback_rtt)
    }

    fn rtts(&self) -> Vec<Dur> {
        (0..self.subs.len()).map(|i| self.rtt(i)).collect()
    }

    /// When subflow `i` may next send something, if it has anything to send.
    #[must_use]
    pub fn next_send_time(&self, i: usize) -> Option<Time> {
        let paced = self.subs[i].next_send_time();
        if self.rel.has_resend(i) || self.has_new_data() {
            return Some(paced);
        }
        if self.rel.all_received() {
            return None;
        }
        self.rel.next_tail_time(&self.rtts()).map(|t| t.max(paced))
    }

    /// When any subflow's nofeedback timer fires.
    #[must_use]
    pub fn nofeedback_deadline(&self) -> Time {
        self.subs
            .iter()
            .map(TfrcSender::nofeedback_deadline)
            .min()
            .unwrap_or(Time::ZERO)
    }

    /// Subflow `i` may send at `now`: the header of the packet of `size_bytes` it sends (a
    /// resend, new data, or a tail resend), or `None` if it is not its time or nothing is
    /// left to send.
    pub fn poll_send(&mut self, now: Time, i: usize, size_bytes: u64) -> Option<MpDataHeader> {
        if now < self.subs[i].next_send_time() {
            return None;
        }
        let (g, orig, new_data) = if let Some((g, orig)) = self.rel.pop_resend(i) {
            (g, orig, false)
        } else if self.has_new_data() {
            (self.rel.next_new_seq(), i, true)
        } else {
            let (g, orig) = self.rel.tail_candidate(now, &self.rtts())?;
            (g, orig, false)
        };
        let tfrc = self.subs[i].on_send(now, size_bytes);
        let (rtt_orig, rtt_now) = (self.rtt(orig), self.rtt(i));
        self.rel.on_sent(now, i, tfrc.seq, g, rtt_orig, rtt_now);
        Some(MpDataHeader {
            subflow: i as u32,
            tfrc,
            conn_seq: g,
            new_data,
        })
    }

    /// A feedback packet arrived at `now`: its subflow's RFC 3448 update, the rate rule,
    /// then the NACKs.
    pub fn on_feedback(&mut self, now: Time, fb: &MpFeedback) {
        let i = fb.subflow as usize;
        match &self.cfg.mode {
            MultipathTfrc::Bilevel(b) if b.nominal_cap == NominalCap::Connection => {
                // The connection's receive rate: this report's and the others' last ones.
                let others: f64 = (0..self.subs.len())
                    .filter(|&j| j != i)
                    .map(|j| self.subs[j].x_recv_bytes_per_s())
                    .sum();
                self.subs[i].on_feedback_capped_at(
                    now,
                    &fb.tfrc,
                    others + fb.tfrc.x_recv_bytes_per_s,
                );
            }
            _ => self.subs[i].on_feedback(now, &fb.tfrc),
        }
        self.fed[i] = true;
        if fb.connection_loss_event_rate.is_some() {
            self.connection_loss_event_rate = fb.connection_loss_event_rate;
        }
        match self.cfg.mode {
            MultipathTfrc::Bilevel(_) => self.set_bilevel_rates(Some(now)),
            MultipathTfrc::Fractional(_) => self.set_fractional_rate(i),
        }
        let rates: Vec<f64> = self
            .subs
            .iter()
            .map(TfrcSender::paced_rate_bytes_per_s)
            .collect();
        self.rel.on_feedback(now, fb, &rates);
    }

    /// The nofeedback timers at `now`: each due one halves its subflow's rate (RFC 3448
    /// §4.4), and the paced rates follow (the master's R_M waits for the next feedback).
    pub fn on_timer(&mut self, now: Time) {
        let mut fired = false;
        for i in 0..self.subs.len() {
            if self.subs[i].nofeedback_deadline() <= now {
                self.subs[i].on_nofeedback_timer(now);
                fired = true;
                if matches!(self.cfg.mode, MultipathTfrc::Fractional(_)) {
                    self.set_fractional_rate(i);
                }
            }
        }
        if fired && self.master.is_some() {
            self.set_bilevel_rates(None);
        }
    }

    /// The lowest rate a subflow is paced at: s/t_mbi (RFC 3448's floor), so that a tiny
    /// share never stops a subflow for good.
    fn floor_rate(&self) -> f64 {
        self.cfg.subflow.segment_bytes as f64 / self.cfg.subflow.t_mbi.as_secs_f64()
    }

    /// Bilevel: the subflows that have had feedback get R'_i from the master (updated first
    /// if `now` is given); the others keep their own RFC 3448 start (decision D252).
    fn set_bilevel_rates(&mut self, now: Option<Time>) {
        let idx: Vec<usize> = (0..self.subs.len()).filter(|&j| self.fed[j]).collect();
        let states: Vec<SubflowState> = idx
            .iter()
            .map(|&j| SubflowState {
                nominal_rate_bytes_per_s: self.subs[j].rate_bytes_per_s(),
                loss_event_rate: self.subs[j].loss_event_rate(),
                rtt: self.rtt(j),
                x_recv_bytes_per_s: self.subs[j].x_recv_bytes_per_s(),
            })
            .collect();
        let Some(master) = self.master.as_mut() else {
            return;
        };
        let connection_loss = match &self.cfg.mode {
            MultipathTfrc::Bilevel(b)
                if b.loss_combination == LossCombination::ConnectionHistory =>
            {
                self.connection_loss_event_rate
            }
            _ => None,
        };
        let shares = match (now, connection_loss) {
            (Some(now), Some(f_m)) => master.on_feedback_at_loss(now, &states, f_m),
            (Some(now), None) => master.on_feedback(now, &states),
            (None, _) => allocate(master.rate_bytes_per_s(), &states),
        };
        let floor = self.floor_rate();
        for (&j, share) in idx.iter().zip(shares) {
            self.subs[j].set_paced_rate(Some(share.max(floor)));
        }
    }

    /// 1/N TFRC: subflow i sends 1/N of its nominal rate, capped at 2·X_recv,i with
    /// `recv_cap = "sent"` once a receive rate was reported (the first feedback reports 0).
    fn set_fractional_rate(&mut self, i: usize) {
        let MultipathTfrc::Fractional(cap) = self.cfg.mode else {
            return;
        };
        let n = self.subs.len();
        let s = &self.subs[i];
        let x_recv = s.x_recv_bytes_per_s();
        let rate = if x_recv > 0.0 {
            fractional_rate_bytes_per_s(s.rate_bytes_per_s(), n, x_recv, cap)
        } else {
            s.rate_bytes_per_s() / n as f64
        };
        let floor = self.floor_rate();
        self.subs[i].set_paced_rate(Some(rate.max(floor)));
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
