//! The two ends of an INRPP flow (issue 21; spec 001 §3.11): a rate-based sender
//! ([`RateSender`], open loop at its host's access rate, closed loop on SLOW-DOWN, the nonce
//! echoed in its data) and a standard TCP receiver acknowledging every segment. The INRPP
//! header rides in the packet as [`Packet::inrpp`] packs it (D282).

use pathpool_core::Time;
use pathpool_proto::inrpp::signalling::{AckSignal, Notification};
use pathpool_proto::rate_sender::RateSender;
use pathpool_proto::tcp::{AckSegment, DataSegment, TcpReceiver};

use crate::element::{Element, End, Net};
use crate::packet::Packet;
use crate::tcp_flow::SourceState;

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

/// An INRPP flow: its source and its sink, two elements.
#[derive(Clone, Debug)]
pub(crate) struct InrppFlow {
    pub(crate) source: InrppSource,
    pub(crate) sink: InrppSink,
}

/// The sending end.
#[derive(Clone, Debug)]
pub(crate) struct InrppSource {
    pub(crate) sender: RateSender,
    /// Route of the data packets, as the position of its first hop.
    route: u32,
    header_bytes: u32,
    pub(crate) start: Time,
    pub(crate) state: SourceState,
}

impl InrppSource {
    pub(crate) fn new(sender: RateSender, route: u32, header_bytes: u32, start: Time) -> Self {
        InrppSource {
            sender,
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
        let signal = AckSignal {
            notification: notification(pkt.inrpp_notification()),
            nonce: pkt.inrpp_nonce(),
        };
        self.sender.handle_ack(now, &ack, signal);
        if self.sender.is_finished() {
            self.state = SourceState::Done;
            return;
        }
        self.transmit(net);
    }

    fn transmit(&mut self, net: &mut impl Net) {
        let now = net.now();
        while let Some(seg) = self.sender.poll_transmit(now) {
            net.send(Packet::inrpp(
                seg.seq,
                seg.ts,
                self.route,
                seg.len + self.header_bytes,
                seg.retransmission,
                self.sender.nonce(),
                0,
            ));
        }
    }
}

/// The receiving end: a standard receiver, an ACK for every segment.
#[derive(Clone, Debug)]
pub(crate) struct InrppSink {
    pub(crate) receiver: TcpReceiver,
    /// Route of the ACKs.
    route: u32,
    header_bytes: u32,
    size: Option<u64>,
    pub(crate) completed_at: Option<Time>,
}

impl InrppSink {
    pub(crate) fn new(
        receiver: TcpReceiver,
        route: u32,
        header_bytes: u32,
        size: Option<u64>,
    ) -> Self {
        InrppSink {
            receiver,
            route,
            header_bytes,
            size,
            completed_at: None,
        }
    }

    fn on_data(&mut self, pkt: &Packet, net: &mut impl Net) {
        let now = net.now();
        let seg = DataSegment {
            seq: pkt.inrpp_seq(),
            len: pkt.size() - self.header_bytes,
            ts: pkt.ts,
            retransmission: pkt.retx(),
        };
        let ack = self.receiver.handle_segment(now, &seg);
        if self.completed_at.is_none()
            && self
                .size
                .is_some_and(|s| self.receiver.delivered_bytes() >= s)
        {
            self.completed_at = Some(now);
        }
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
        Packet::inrpp(a.ack, a.ts_echo, self.route, self.header_bytes, false, 0, 0)
    }
}

impl Element for InrppFlow {
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
