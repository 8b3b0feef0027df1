//! A multipath TFRC flow (Tse 2006: Bilevel TFRC or 1/N TFRC): `pathpool-proto`'s sans-IO
//! [`MpTfrcSender`] and [`MpTfrcReceiver`] driven by the simulator, one data route and one
//! feedback route (its reverse) per subflow. As for single-path TFRC (`tfrc_flow.rs`,
//! decision D237), a packet carries its subflow, subflow sequence number and send time, and
//! the rest of its header (connection sequence number, RTT estimate; a feedback's body with
//! its NACK list) travels beside it in this value, which serves both ends. Scenarios add it
//! with `kind = "tfrc"` and `paths` or `subflows` (`build/tfrc.rs`).

use std::collections::VecDeque;

use pathpool_core::Time;
use pathpool_proto::mptfrc::{MpDataHeader, MpFeedback, MpTfrcReceiver, MpTfrcSender};

use crate::element::{Element, End, Net};
use crate::multi::SubflowCounters;
use crate::packet::Packet;
use crate::tfrc_flow::FEEDBACK_BYTES;

/// Bytes a NACK adds to a feedback packet on the wire: a 2-byte subflow and a 4-byte
/// sequence number (decision D253).
const NACK_BYTES: usize = 6;
/// Bytes of the cumulative point (a 64-bit connection sequence number).
const CUMULATIVE_BYTES: usize = 8;
/// Bytes of each range received above the cumulative point (two sequence numbers).
const RANGE_BYTES: usize = 16;
/// Bytes of the connection's loss event rate, when the receiver keeps its history (a 4-byte
/// field, as RFC 3448 §3.2.2's p).
const LOSS_RATE_BYTES: usize = 4;
/// The largest feedback packet counted on the wire: one 1500-byte MTU.
const MAX_FEEDBACK_BYTES: usize = 1500;

/// Both ends of a multipath TFRC flow.
#[derive(Clone, Debug)]
pub(crate) struct MpTfrcFlow {
    data_routes: Vec<u32>,
    feedback_routes: Vec<u32>,
    size_bytes: u32,
    stop: Time,
    stopped: bool,
    sender: MpTfrcSender,
    receiver: MpTfrcReceiver,
    /// Data headers sent and not yet arrived, per subflow, oldest first (a subflow's packets
    /// keep their order on its one route; a lost one is skipped).
    data_in_flight: Vec<VecDeque<MpDataHeader>>,
    /// Feedback sent and not yet arrived, per subflow, by id (the feedback packet's `seq`).
    feedback_in_flight: Vec<VecDeque<(u64, MpFeedback)>>,
    next_feedback_id: Vec<u64>,
    /// Data packets sent (resends included).
    pub(crate) sent: u64,
    /// Per subflow: data packets sent, of them resends, and data packets that arrived.
    tallies: Vec<SubflowTally>,
}

/// What one subflow of a multipath TFRC flow sent and delivered, in packets.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SubflowTally {
    pub(crate) sent: u64,
    pub(crate) resent: u64,
    pub(crate) arrived: u64,
}

impl MpTfrcFlow {
    pub(crate) fn new(
        data_routes: Vec<u32>,
        feedback_routes: Vec<u32>,
        size_bytes: u32,
        stop: Time,
        sender: MpTfrcSender,
        receiver: MpTfrcReceiver,
    ) -> Self {
        let n = data_routes.len();
        MpTfrcFlow {
            data_routes,
            feedback_routes,
            size_bytes,
            stop,
            stopped: false,
            sender,
            receiver,
            data_in_flight: vec![VecDeque::new(); n],
            feedback_in_flight: vec![VecDeque::new(); n],
            next_feedback_id: vec![0; n],
            sent: 0,
            tallies: vec![SubflowTally::default(); n],
        }
    }

    /// Subflow `j`'s counters, in bytes on the wire (a TFRC packet counts whole, D253).
    pub(crate) fn subflow_counters(&self, j: usize) -> Option<SubflowCounters> {
        let t = self.tallies.get(j)?;
        let size = u64::from(self.size_bytes);
        Some(SubflowCounters {
            delivered_bytes: t.arrived * size,
            sent_bytes: t.sent * size,
            retransmissions: t.resent,
            timeouts: 0,
            fast_recoveries: 0,
        })
    }

    /// Packets sent and resends over every subflow.
    pub(crate) fn totals(&self) -> (u64, u64) {
        (self.sent, self.tallies.iter().map(|t| t.resent).sum())
    }

    /// The sending end.
    #[cfg(test)]
    pub(crate) fn sender(&self) -> &MpTfrcSender {
        &self.sender
    }

    fn send_feedback(&mut self, fb: MpFeedback, net: &mut impl Net) {
        let i = fb.subflow as usize;
        let id = self.next_feedback_id[i];
        self.next_feedback_id[i] += 1;
        let size = (FEEDBACK_BYTES as usize
            + CUMULATIVE_BYTES
            + NACK_BYTES * fb.nacks.len()
            + RANGE_BYTES * fb.above_gap.len()
            + fb.connection_loss_event_rate.map_or(0, |_| LOSS_RATE_BYTES))
        .min(MAX_FEEDBACK_BYTES) as u32;
        self.feedback_in_flight[i].push_back((id, fb));
        net.send(Packet::with_subflow(
            id,
            net.now(),
            self.feedback_routes[i],
            size,
            false,
            i as u32,
        ));
    }
}

impl Element for MpTfrcFlow {
    fn receives_data(&self, _: End) -> bool {
        false
    }

    fn on_packet(&mut self, end: End, pkt: &Packet, net: &mut impl Net) {
        let now = net.now();
        let i = pkt.subflow() as usize;
        match end {
            End::Sink => {
                let q = &mut self.data_in_flight[i];
                while q.front().is_some_and(|h| h.tfrc.seq < pkt.seq) {
                    q.pop_front();
                }
                let Some(hdr) = q.pop_front() else {
                    return;
                };
                self.tallies[i].arrived += 1;
                if let (_, Some(fb)) = self.receiver.on_data(now, &hdr) {
                    self.send_feedback(fb, net);
                }
            }
            End::Source => {
                let q = &mut self.feedback_in_flight[i];
                while q.front().is_some_and(|f| f.0 < pkt.seq) {
                    q.pop_front();
                }
                if let Some((_, fb)) = q.pop_front() {
                    self.sender.on_feedback(now, &fb);
                }
            }
        }
    }

    fn on_timer(&mut self, end: End, net: &mut impl Net) {
        let now = net.now();
        match end {
            End::Sink => {
                for fb in self.receiver.on_timer(now) {
                    self.send_feedback(fb, net);
                }
            }
            End::Source => {
                if !self.stopped && now >= self.stop {
                    self.stopped = true;
                    self.sender.stop_new_data();
                }
                self.sender.on_timer(now);
                for i in 0..self.data_routes.len() {
                    if self.sender.next_send_time(i).is_none_or(|t| t > now) {
                        continue;
                    }
                    let Some(hdr) = self.sender.poll_send(now, i, u64::from(self.size_bytes))
                    else {
                        continue;
                    };
                    self.sent += 1;
                    self.tallies[i].sent += 1;
                    if !hdr.new_data {
                        self.tallies[i].resent += 1;
                    }
                    self.data_in_flight[i].push_back(hdr);
                    net.send(Packet::with_subflow(
                        hdr.tfrc.seq,
                        now,
                        self.data_routes[i],
                        self.size_bytes,
                        !hdr.new_data,
                        i as u32,
                    ));
                }
            }
        }
    }

    fn deadline(&self, end: End) -> Option<Time> {
        match end {
            End::Sink => self.receiver.next_timer(),
            End::Source => {
                if self.sender.finished() {
                    return None;
                }
                let sends = (0..self.data_routes.len())
                    .filter_map(|i| self.sender.next_send_time(i))
                    .min();
                let stop = (!self.stopped).then_some(self.stop);
                [sends, stop, Some(self.sender.nofeedback_deadline())]
                    .into_iter()
                    .flatten()
                    .min()
            }
        }
    }

    /// The receiver's in-order connection packets, counted at their size on the wire (as a
    /// single-path TFRC flow counts the packets it received; decision D253).
    fn delivered(&self, end: End) -> u64 {
        match end {
            End::Sink => self.receiver.delivered() * u64::from(self.size_bytes),
            End::Source => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::build::testing::compile;

    /// Two paths with 2% Bernoulli loss on each data link; the flow stops sending new data
    /// at 20 s of a 30 s run. By the end every connection packet it sent has been delivered
    /// once (the resends and the tail-loss rule in the simulator), and resends were needed.
    #[test]
    fn a_lossy_multipath_tfrc_flow_delivers_everything_it_sent() {
        for mode in ["bilevel", "fractional"] {
            let text = format!(
                r#"duration = "30s"
                [nodes]
                hosts = ["a", "b"]
                routers = ["r1", "r2"]
                [[links]]
                between = ["a", "r1"]
                rate = "10Mbps"
                delay = "5ms"
                loss = 0.02
                [[links]]
                between = ["r1", "b"]
                rate = "10Mbps"
                delay = "5ms"
                [[links]]
                between = ["a", "r2"]
                rate = "10Mbps"
                delay = "20ms"
                loss = 0.02
                [[links]]
                between = ["r2", "b"]
                rate = "10Mbps"
                delay = "5ms"
                [[flows]]
                kind = "tfrc"
                from = "a"
                to = "b"
                stop = "20s"
                paths = [["a", "r1", "b"], ["a", "r2", "b"]]
                tfrc = {{ multipath = "{mode}" }}"#
            );
            let mut sim = compile(&text);
            sim.run();
            let flow = &sim.elements.mptfrc_flows[0];
            let sent = flow.sender().reliability().next_new_seq();
            let resends = flow.sender().reliability().resends();
            eprintln!(
                "{mode}: {sent} connection packets, {resends} resends, {} delivered",
                flow.receiver.delivered()
            );
            assert!(sent > 1000, "{mode}: {sent}");
            assert!(resends > 0, "{mode}");
            assert!(flow.sender().finished(), "{mode}");
            assert_eq!(flow.receiver.delivered(), sent, "{mode}");
            assert_eq!(flow.sent, sent + resends, "{mode}");
        }
    }
}
