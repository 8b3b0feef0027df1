//! The multipath TFRC receiver: an RFC 3448 receiver per subflow (its feedback drives that
//! subflow's rate), a loss detector per subflow for the NACK list, and the reassembly of the
//! connection sequence space, which delivers every connection packet once (Tse §4.3.2,
//! spec 003 §4.3 "global reassembly buffer").

use std::collections::BTreeMap;

use pathpool_cc::{BadIntervalCount, TfrcReceiver, TfrcReceiverConfig};
use pathpool_core::Time;

use super::connection_loss::ConnectionLoss;
use super::{MpDataHeader, MpFeedback, Nack};
use crate::reassembly::{Inserted, Reassembly};

/// RFC 3448 §5.1's rule for the NACK list: a missing packet is lost once three later
/// packets of its subflow arrived. Kept apart from the TFRC receiver's own detection so that
/// reliability does not inherit `history = "fixed-array"`'s blindness.
#[derive(Debug, Clone, Default)]
struct LossDetector {
    /// Lowest subflow sequence number not yet classified.
    next_unclassified: u64,
    /// Arrived packets above it, each with its connection sequence number if it carried
    /// new data.
    above: BTreeMap<u64, Option<u64>>,
}

impl LossDetector {
    /// Packet `seq` arrived (with connection packet `new_g` if it carried new data); pushes
    /// the packets it reveals lost onto `lost`, each with the connection sequence number of
    /// the first new-data packet after it that arrived, if one did.
    fn on_arrival(
        &mut self,
        seq: u64,
        new_g: Option<u64>,
        ndupack: usize,
        lost: &mut Vec<(u64, Option<u64>)>,
    ) {
        if seq < self.next_unclassified {
            return;
        }
        self.above.insert(seq, new_g);
        while let Some((&lowest, _)) = self.above.first_key_value() {
            if lowest == self.next_unclassified {
                self.above.pop_first();
            } else if self.above.len() >= ndupack {
                let bound = self.above.values().find_map(|g| *g);
                lost.push((self.next_unclassified, bound));
            } else {
                break;
            }
            self.next_unclassified += 1;
        }
    }
}

/// Which receive rate seeds a subflow's first loss interval (RFC 3448 §6.3.1; decision
/// D262).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FirstInterval {
    /// The connection's: the sum of every subflow's receive rate. Bilevel TFRC's master
    /// runs the equation at the rate-weighted loss rate (Tse eq. 3.3) to set the rate of the
    /// whole connection, so the interval that lets it go on at the rate received is the
    /// one the equation gives at the connection's rate.
    #[default]
    Connection,
    /// The subflow's own, as a single RFC 3448 receiver: right for 1/N TFRC, whose subflows
    /// each run the equation at their own rate; for Bilevel it gives about n² times the loss
    /// rate the master needs on n equal paths.
    Subflow,
}

/// A NACK the receiver keeps, with a bound on the connection packet it carried once known.
#[derive(Debug, Clone, Copy)]
struct OpenNack {
    seq: u64,
    /// The connection sequence number of the first new-data packet that arrived on the
    /// subflow after this one: the lost packet's is lower (new data is numbered in sending
    /// order, and a resend repeats data numbered earlier), so once every connection packet
    /// below it has arrived the NACK is settled (decision D250).
    bound: Option<u64>,
}

#[derive(Debug, Clone)]
struct SubflowRx {
    tfrc: TfrcReceiver,
    detector: LossDetector,
    nacks: Vec<OpenNack>,
}

/// The receiving end of a multipath TFRC connection.
#[derive(Debug, Clone)]
pub struct MpTfrcReceiver {
    subflows: Vec<SubflowRx>,
    ndupack: usize,
    reassembly: Reassembly,
    lost: Vec<(u64, Option<u64>)>,
    first_interval: FirstInterval,
    connection_loss: Option<ConnectionLoss>,
}

impl MpTfrcReceiver {
    /// A receiver for `subflows` subflows, each with an RFC 3448 receiver of `cfg` whose
    /// first loss interval is seeded at the rate `first_interval` names, and with a
    /// connection-wide loss history reported in every feedback if `connection_history`.
    pub fn new(
        subflows: usize,
        cfg: &TfrcReceiverConfig,
        first_interval: FirstInterval,
        connection_history: bool,
    ) -> Result<MpTfrcReceiver, BadIntervalCount> {
        let connection_loss = if connection_history {
            Some(ConnectionLoss::new(cfg.loss_intervals)?)
        } else {
            None
        };
        let subflows = (0..subflows)
            .map(|_| {
                Ok(SubflowRx {
                    tfrc: TfrcReceiver::new(cfg.clone())?,
                    detector: LossDetector::default(),
                    nacks: Vec::new(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(MpTfrcReceiver {
            subflows,
            ndupack: cfg.ndupack as usize,
            reassembly: Reassembly::new(),
            lost: Vec::new(),
            first_interval,
            connection_loss,
        })
    }

    /// Connection packets delivered in order: every one below this has arrived, once.
    #[must_use]
    pub fn delivered(&self) -> u64 {
        self.reassembly.cumulative()
    }

    /// Subflow `i`'s RFC 3448 receiver.
    #[must_use]
    pub fn subflow(&self, i: usize) -> &TfrcReceiver {
        &self.subflows[i].tfrc
    }

    /// NACKs currently held, over all subflows.
    #[must_use]
    pub fn open_nacks(&self) -> usize {
        self.subflows.iter().map(|s| s.nacks.len()).sum()
    }

    /// When [`MpTfrcReceiver::on_timer`] is next due: the earliest subflow feedback timer.
    #[must_use]
    pub fn next_timer(&self) -> Option<Time> {
        self.subflows
            .iter()
            .filter_map(|s| s.tfrc.next_timer())
            .min()
    }

    /// A data packet arrived at `now`. Returns whether its connection packet is new (a
    /// duplicate is not delivered again) and the feedback to send at once, if any.
    pub fn on_data(&mut self, now: Time, hdr: &MpDataHeader) -> (bool, Option<MpFeedback>) {
        let i = hdr.subflow as usize;
        let g = hdr.conn_seq;
        let is_new = self.reassembly.insert(g, g + 1) != Inserted::Duplicate;
        let sub = &mut self.subflows[i];
        self.lost.clear();
        let new_g = hdr.new_data.then_some(g);
        sub.detector
            .on_arrival(hdr.tfrc.seq, new_g, self.ndupack, &mut self.lost);
        sub.nacks.extend(
            self.lost
                .iter()
                .map(|&(seq, bound)| OpenNack { seq, bound }),
        );
        if hdr.new_data {
            for n in sub.nacks.iter_mut().filter(|n| n.seq < hdr.tfrc.seq) {
                n.bound.get_or_insert(g);
            }
        }
        let cum = self.reassembly.cumulative();
        for s in &mut self.subflows {
            s.nacks.retain(|n| n.bound.is_none_or(|b| b > cum));
        }
        // The other subflows' receive rates matter only until subflow i's first loss.
        let peers_bytes_per_s = match self.first_interval {
            FirstInterval::Connection if self.subflows[i].tfrc.awaiting_first_loss() => self
                .subflows
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, s)| s.tfrc.seed_rate_bytes_per_s(now))
                .sum(),
            _ => 0.0,
        };
        let events_before = self.subflows[i].tfrc.loss_events();
        let fb = self.subflows[i]
            .tfrc
            .on_data_with_peers(now, &hdr.tfrc, peers_bytes_per_s);
        if let Some(c) = &mut self.connection_loss {
            let rx = &self.subflows[i].tfrc;
            let subflows = &self.subflows;
            c.on_packet(
                now,
                rx.loss_events() > events_before,
                rx.rtt(),
                hdr.tfrc.size_bytes,
                || {
                    subflows
                        .iter()
                        .map(|s| s.tfrc.seed_rate_bytes_per_s(now))
                        .sum()
                },
            );
        }
        (is_new, fb.map(|fb| self.wrap(i, fb)))
    }

    /// The subflows' feedback timers at `now`: the feedback each due one sends.
    pub fn on_timer(&mut self, now: Time) -> Vec<MpFeedback> {
        let mut out = Vec::new();
        for i in 0..self.subflows.len() {
            if self.subflows[i].tfrc.next_timer().is_some_and(|t| t <= now) {
                if let Some(fb) = self.subflows[i].tfrc.on_timer(now) {
                    out.push(self.wrap(i, fb));
                }
            }
        }
        out
    }

    fn wrap(&self, i: usize, tfrc: pathpool_cc::Feedback) -> MpFeedback {
        MpFeedback {
            subflow: i as u32,
            tfrc,
            nacks: self
                .subflows
                .iter()
                .enumerate()
                .flat_map(|(j, s)| {
                    s.nacks.iter().map(move |n| Nack {
                        subflow: j as u32,
                        seq: n.seq,
                    })
                })
                .collect(),
            cumulative: self.reassembly.cumulative(),
            above_gap: self.reassembly.above_gap().to_vec(),
            connection_loss_event_rate: self
                .connection_loss
                .as_ref()
                .map(ConnectionLoss::loss_event_rate),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathpool_cc::DataHeader;
    use pathpool_core::Dur;

    fn hdr(subflow: u32, seq: u64, g: u64, new_data: bool) -> MpDataHeader {
        MpDataHeader {
            subflow,
            tfrc: DataHeader {
                seq,
                timestamp: Time::from_ms(seq),
                rtt_estimate: Some(Dur::from_ms(100)),
                size_bytes: 1000,
            },
            conn_seq: g,
            new_data,
        }
    }

    #[test]
    fn a_loss_is_nacked_until_the_data_below_its_bound_arrived() {
        let mut rx = MpTfrcReceiver::new(
            2,
            &TfrcReceiverConfig::default(),
            FirstInterval::default(),
            false,
        )
        .unwrap();
        // Subflow 0 carries connection packets 0, 2, 4, 6, 8 as its 0..5; its packet 1
        // (connection packet 2) is lost. Subflow 1 carries 1, 3, 5, 7.
        let mut nacked = Vec::new();
        for (sub, seq, g) in [
            (0, 0, 0),
            (1, 0, 1),
            (1, 1, 3),
            (0, 2, 4),
            (0, 3, 6),
            (0, 4, 8),
        ] {
            let (new, fb) = rx.on_data(Time::from_ms(10 * g), &hdr(sub, seq, g, true));
            assert!(new);
            if let Some(fb) = fb {
                nacked = fb.nacks;
            }
        }
        assert_eq!(nacked, [Nack { subflow: 0, seq: 1 }]);
        assert_eq!(rx.open_nacks(), 1);
        // A duplicate is not new.
        assert!(!rx.on_data(Time::from_ms(90), &hdr(1, 2, 3, false)).0);
        // The resend of 2 arrives on subflow 1: delivered up to 5 (not 7: 5 is missing), which
        // is above the bound 4, so the NACK is settled.
        let (new, _) = rx.on_data(Time::from_ms(100), &hdr(1, 3, 2, false));
        assert!(new);
        assert_eq!(rx.delivered(), 5);
        assert_eq!(rx.open_nacks(), 0);
    }

    #[test]
    fn a_subflows_first_packet_can_be_lost() {
        let mut lost = Vec::new();
        let mut d = LossDetector::default();
        for seq in [1, 2, 3] {
            d.on_arrival(seq, (seq > 1).then_some(10 * seq), 3, &mut lost);
        }
        // The bound is the first new-data packet after the loss: packet 2's.
        assert_eq!(lost, [(0, Some(20))]);
        // Two later packets do not make a loss.
        d.on_arrival(5, None, 3, &mut lost);
        d.on_arrival(6, None, 3, &mut lost);
        assert_eq!(lost.len(), 1);
        d.on_arrival(7, None, 3, &mut lost);
        assert_eq!(lost, [(0, Some(20)), (4, None)]);
    }
}
