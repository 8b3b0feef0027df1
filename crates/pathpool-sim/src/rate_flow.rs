//! The two ends of a rate-based flow (issue 21; spec 001 §3.11, §4): a sender without a
//! window ([`RateSender`]) and a standard TCP receiver acknowledging every segment, for
//! INRPP's hosts and for RCP.
//!
//! - **INRPP**: open loop at its host's access rate, closed loop on SLOW-DOWN; the nonce an
//!   ACK carries goes into the flow's data. The header rides as [`Packet::inrpp`] packs it
//!   (D282).
//! - **RCP**: the first segment stands for the SYN; every ACK echoes the rate the links on
//!   the way left in its segment, and the sender paces at it. Data carry the sender's RTT
//!   estimate for the links' average (D293, D294).

use pathpool_core::{Dur, Time};
use pathpool_proto::inrpp::signalling::{AckSignal, Notification};
use pathpool_proto::rate_sender::{Loop, RateSender};
use pathpool_proto::tcp::{AckSegment, DataSegment, TcpReceiver};

use crate::element::{Element, End, Net};
use crate::packet::Packet;
use crate::tcp_flow::{receive, SourceState};

/// The notification a packet's header carries, as the sender reads it.
pub(crate) fn notification(code: u32) -> Notification {
    match code {
        1 => Notification::SlowDown,
        2 => Notification::Cancel,
        _ => Notification::None,
    }
}

/// A notification's code in the packet header.
pub(crate) fn notification_code(n: Notification) -> u32 {
    match n {
        Notification::None => 0,
        Notification::SlowDown => 1,
        Notification::Cancel => 2,
    }
}

/// Which protocol a rate-based flow runs, and so which header its packets carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RateProto {
    /// An INRPP host's flow.
    Inrpp,
    /// An RCP flow; `first_rtt` is the RTT its data carry before the first sample.
    Rcp { first_rtt: Dur },
}

/// A rate-based flow: its source and its sink, two elements.
#[derive(Clone, Debug)]
pub(crate) struct RateFlow {
    pub(crate) source: RateSource,
    pub(crate) sink: RateSink,
}

/// An INRPP host's access link, which its flows with data to send share equally (D303).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostShare {
    /// The host's node.
    pub(crate) host: u32,
    /// The access link's rate.
    pub(crate) access_bps: f64,
    /// Whether this flow counts itself among the host's senders now.
    counted: bool,
}

impl HostShare {
    pub(crate) fn new(host: u32, access_bps: f64) -> Self {
        HostShare {
            host,
            access_bps,
            counted: false,
        }
    }
}

/// The sending end.
#[derive(Clone, Debug)]
pub(crate) struct RateSource {
    pub(crate) sender: RateSender,
    proto: RateProto,
    /// INRPP: the host's access link this flow shares.
    share: Option<HostShare>,
    /// Route of the data packets, as the position of its first hop.
    route: u32,
    header_bytes: u32,
    pub(crate) start: Time,
    pub(crate) state: SourceState,
}

impl RateSource {
    pub(crate) fn new(
        mut sender: RateSender,
        proto: RateProto,
        share: Option<HostShare>,
        route: u32,
        header_bytes: u32,
        start: Time,
    ) -> Self {
        if let RateProto::Rcp { .. } = proto {
            sender.start_closed();
        }
        RateSource {
            sender,
            proto,
            share,
            route,
            header_bytes,
            start,
            state: SourceState::Waiting,
        }
    }

    fn deadline(&self) -> Option<Time> {
        match self.state {
            SourceState::Waiting => Some(self.start),
            SourceState::Active => self.sender.poll_timeout(),
            SourceState::Done => None,
        }
    }

    fn on_timer(&mut self, net: &mut impl Net) {
        let now = net.now();
        if self.state == SourceState::Waiting && now >= self.start {
            self.state = SourceState::Active;
        }
        if self.state != SourceState::Active {
            return;
        }
        self.sender.handle_timeout(now);
        self.transmit(net);
    }

    fn on_ack(&mut self, pkt: &Packet, net: &mut impl Net) {
        if self.state != SourceState::Active {
            return;
        }
        let now = net.now();
        let ack = AckSegment::new(pkt.inrpp_seq(), pkt.ts);
        match self.proto {
            RateProto::Inrpp => {
                let signal = AckSignal {
                    notification: notification(pkt.inrpp_notification()),
                    nonce: pkt.inrpp_nonce(),
                };
                self.sender.handle_ack(now, &ack, signal);
            }
            RateProto::Rcp { .. } => {
                self.sender.handle_ack(now, &ack, AckSignal::default());
                if let Some(rate) = pkt.rcp_rate_bps().filter(|&r| r > 0) {
                    self.sender.set_rate(rate as f64);
                    if self.sender.mode() == Loop::Closed {
                        self.sender.open_loop(now);
                    }
                }
            }
        }
        if self.sender.is_finished() {
            self.state = SourceState::Done;
            self.count_as_sender(net);
            return;
        }
        self.transmit(net);
    }

    /// Keeps the host's count of flows with new data to send up to date with this flow,
    /// and paces at its share of the access link: the access rate over those flows (itself
    /// included when it has only retransmissions left). A change of the count reaches a
    /// flow at its next send (D303).
    fn count_as_sender(&mut self, net: &mut impl Net) {
        let Some(share) = &mut self.share else {
            return;
        };
        let sending = self.state == SourceState::Active && !self.sender.all_sent();
        let count = net.host_senders(share.host);
        if sending != share.counted {
            if sending {
                *count += 1;
            } else {
                *count -= 1;
            }
            share.counted = sending;
        }
        let flows = *count + u32::from(!sending);
        let rate = share.access_bps / f64::from(flows.max(1));
        if rate != self.sender.rate_bps() {
            self.sender.set_rate(rate);
        }
    }

    fn transmit(&mut self, net: &mut impl Net) {
        let now = net.now();
        self.count_as_sender(net);
        while let Some(seg) = self.sender.poll_transmit(now) {
            let size = seg.len + self.header_bytes;
            net.send(match self.proto {
                RateProto::Inrpp => Packet::inrpp(
                    seg.seq,
                    seg.ts,
                    self.route,
                    size,
                    seg.retransmission,
                    self.sender.nonce(),
                    0,
                ),
                RateProto::Rcp { first_rtt } => Packet::rcp_data(
                    seg.seq,
                    seg.ts,
                    self.route,
                    size,
                    seg.retransmission,
                    None,
                    self.sender.rtt().srtt().unwrap_or(first_rtt),
                ),
            });
        }
        self.count_as_sender(net);
    }
}

/// The receiving end: a standard receiver, an ACK for every segment.
#[derive(Clone, Debug)]
pub(crate) struct RateSink {
    pub(crate) receiver: TcpReceiver,
    proto: RateProto,
    /// Route of the ACKs.
    route: u32,
    header_bytes: u32,
    size: Option<u64>,
    /// RCP: the rate field of the latest segment, which its ACK echoes.
    echo_rate_bps: Option<u64>,
    pub(crate) completed_at: Option<Time>,
}

impl RateSink {
    pub(crate) fn new(
        receiver: TcpReceiver,
        proto: RateProto,
        route: u32,
        header_bytes: u32,
        size: Option<u64>,
    ) -> Self {
        RateSink {
            receiver,
            proto,
            route,
            header_bytes,
            size,
            echo_rate_bps: None,
            completed_at: None,
        }
    }

    fn on_data(&mut self, pkt: &Packet, net: &mut impl Net) {
        let now = net.now();
        let ts = match self.proto {
            RateProto::Inrpp => pkt.ts,
            RateProto::Rcp { .. } => {
                self.echo_rate_bps = pkt.rcp_rate_bps();
                pkt.rcp_ts()
            }
        };
        let seg = DataSegment {
            seq: pkt.inrpp_seq(),
            len: pkt.size() - self.header_bytes,
            ts,
            retransmission: pkt.retx(),
        };
        let ack = receive(
            &mut self.receiver,
            now,
            &seg,
            self.size,
            &mut self.completed_at,
        );
        if let Some(a) = ack {
            net.send(self.ack_packet(a));
        }
    }

    fn on_timer(&mut self, net: &mut impl Net) {
        if let Some(a) = self.receiver.handle_timeout(net.now()) {
            net.send(self.ack_packet(a));
        }
    }

    fn ack_packet(&self, a: AckSegment) -> Packet {
        match self.proto {
            RateProto::Inrpp => {
                Packet::inrpp(a.ack, a.ts_echo, self.route, self.header_bytes, false, 0, 0)
            }
            RateProto::Rcp { .. } => Packet::rcp_ack(
                a.ack,
                a.ts_echo,
                self.route,
                self.header_bytes,
                self.echo_rate_bps,
            ),
        }
    }
}

impl Element for RateFlow {
    fn receives_data(&self, end: End) -> bool {
        end == End::Sink
    }
    fn on_packet(&mut self, end: End, pkt: &Packet, net: &mut impl Net) {
        match end {
            End::Sink => self.sink.on_data(pkt, net),
            End::Source => self.source.on_ack(pkt, net),
        }
    }
    fn on_timer(&mut self, end: End, net: &mut impl Net) {
        match end {
            End::Source => self.source.on_timer(net),
            End::Sink => self.sink.on_timer(net),
        }
    }
    fn deadline(&self, end: End) -> Option<Time> {
        match end {
            End::Source => self.source.deadline(),
            End::Sink => self.sink.receiver.poll_timeout(),
        }
    }
    fn delivered(&self, end: End) -> u64 {
        match end {
            End::Sink => self.sink.receiver.delivered_bytes(),
            End::Source => 0,
        }
    }
    fn completed_at(&self, end: End) -> Option<Time> {
        match end {
            End::Sink => self.sink.completed_at,
            End::Source => None,
        }
    }
}
