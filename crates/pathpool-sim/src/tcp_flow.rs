//! The two ends of a simulated TCP flow: a source (sender + congestion controller) and a
//! sink (receiver). They wrap the sans-IO machines of `pathpool-proto` and translate between
//! segments and simulated packets.

use pathpool_cc::{AnyController, MultipathController};
use pathpool_core::Time;
use pathpool_proto::tcp::{AckSegment, DataSegment, TcpReceiver, TcpSender};

use crate::element::{Element, End, Net};
use crate::overhead::SendOverhead;
use crate::packet::Packet;
use crate::sack_channel::SackChannel;

/// A data segment reaches `receiver` at `now`: the ACK it makes, if one is due, and, for a
/// flow of `size` bytes, the time all of them were first delivered in order. Shared by the
/// TCP and the rate-based sinks.
#[inline(always)]
pub(crate) fn receive(
    receiver: &mut TcpReceiver,
    now: Time,
    seg: &DataSegment,
    size: Option<u64>,
    completed_at: &mut Option<Time>,
) -> Option<AckSegment> {
    let ack = receiver.handle_segment(now, seg);
    if completed_at.is_none() && size.is_some_and(|s| receiver.delivered_bytes() >= s) {
        *completed_at = Some(now);
    }
    ack
}

/// A TCP flow: its source and its sink, two elements. They are kept together because the
/// source takes the SACK blocks (and receiver timestamps) of the ACKs in flight from the
/// sink's channel.
#[derive(Clone, Debug)]
pub(crate) struct TcpFlow {
    pub(crate) source: TcpSource,
    pub(crate) sink: TcpSink,
}

impl TcpFlow {
    pub(crate) fn new(mut source: TcpSource, mut sink: TcpSink) -> Self {
        // A controller that reads the one-way delay needs the receiver's TSval, which the
        // 24-byte packet has no room for: its ACKs travel whole through the channel (D244).
        if source.cc.reads_one_way_delay() && sink.sack.is_none() {
            sink.sack = Some(Box::default());
        }
        source.sack_channel = sink.sack.is_some();
        TcpFlow { source, sink }
    }
}

impl Element for TcpFlow {
    #[inline(always)]
    fn receives_data(&self, end: End) -> bool {
        end == End::Sink
    }
    #[inline(always)]
    fn on_packet(&mut self, end: End, pkt: &Packet, net: &mut impl Net) {
        match end {
            End::Sink => self.sink.on_data(pkt, net),
            End::Source => {
                let sack = if self.source.sack_channel {
                    self.sink.sack.as_deref_mut()
                } else {
                    None
                };
                self.source.on_ack(pkt, sack, net);
            }
        }
    }
    fn on_timer(&mut self, end: End, net: &mut impl Net) {
        match end {
            End::Source => self.source.on_timer(net),
            End::Sink => self.sink.on_timer(net),
        }
    }
    #[inline(always)]
    fn deadline(&self, end: End) -> Option<Time> {
        match end {
            End::Source => self.source.deadline(),
            End::Sink => self.sink.deadline(),
        }
    }
    fn delivered(&self, end: End) -> u64 {
        match end {
            End::Sink => self.sink.delivered(),
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

/// Life cycle of a source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SourceState {
    /// Before its start time.
    Waiting,
    /// Sending.
    Active,
    /// All data acknowledged (finite flows) — nothing more to do.
    Done,
}

/// The sending end of a TCP flow.
#[derive(Clone, Debug)]
pub(crate) struct TcpSource {
    pub(crate) sender: TcpSender,
    pub(crate) cc: AnyController,
    /// Route of the data packets (ends at the sink), as the position of its first hop.
    route: u32,
    /// Bytes of IP + TCP header added to every segment.
    header_bytes: u32,
    pub(crate) start: Time,
    pub(crate) stop: Option<Time>,
    pub(crate) state: SourceState,
    stopped: bool,
    /// Whether the sink sends its ACKs through a [`SackChannel`] (with SACK, or for a
    /// controller that reads the receiver's timestamp), so that an arriving ACK must be taken
    /// from there (kept here, so that an ACK of a flow without SACK never
    /// touches its sink).
    sack_channel: bool,
    /// `tcp.send_overhead`, when on.
    overhead: Option<Box<SendOverhead>>,
}

impl TcpSource {
    pub(crate) fn new(
        sender: TcpSender,
        cc: AnyController,
        route: u32,
        header_bytes: u32,
        start: Time,
        stop: Option<Time>,
        overhead: Option<Box<SendOverhead>>,
    ) -> Self {
        TcpSource {
            sender,
            cc,
            route,
            header_bytes,
            start,
            stop,
            state: SourceState::Waiting,
            stopped: false,
            sack_channel: false,
            overhead,
        }
    }

    /// When the source next needs `on_timer`.
    #[inline]
    pub(crate) fn deadline(&self) -> Option<Time> {
        match self.state {
            SourceState::Waiting => Some(self.start),
            SourceState::Done => None,
            SourceState::Active => {
                let rto = self.sender.poll_timeout();
                let t = match (self.stop.filter(|_| !self.stopped), rto) {
                    (Some(s), Some(r)) => Some(s.min(r)),
                    (s, r) => s.or(r),
                };
                match self.overhead.as_deref().and_then(SendOverhead::deadline) {
                    Some(o) => Some(t.map_or(o, |t| t.min(o))),
                    None => t,
                }
            }
        }
    }

    /// Start, stop and retransmission timer.
    fn on_timer(&mut self, net: &mut impl Net) {
        let now = net.now();
        if self.state == SourceState::Waiting && now >= self.start {
            self.state = SourceState::Active;
        }
        if self.state != SourceState::Active {
            return;
        }
        if !self.stopped && self.stop.is_some_and(|s| now >= s) {
            self.stopped = true;
            self.sender.stop();
        }
        self.sender.handle_timeout(now, &mut self.cc);
        self.transmit(net);
    }

    /// An acknowledgement arrived. `sack` is the sink's channel when the flow uses SACK.
    #[inline]
    fn on_ack(&mut self, pkt: &Packet, sack: Option<&mut SackChannel>, net: &mut impl Net) {
        let now = net.now();
        if let Some(ch) = sack {
            let (ack, blocks) = ch.receive(pkt.seq);
            if self.state == SourceState::Active {
                self.sender
                    .handle_ack_with_sack(now, &ack, &blocks, &mut self.cc);
            }
        } else if self.state == SourceState::Active {
            let ack = AckSegment::new(pkt.seq, pkt.ts);
            self.sender.handle_ack(now, &ack, &mut self.cc);
        } else {
            return;
        }
        self.transmit(net);
    }

    // Always inlined: its two callers (the timer and the ACK) call it with the same `Net`,
    // and left to itself the compiler makes the ACK's path, run for every ACK, a call.
    #[inline(always)]
    fn transmit(&mut self, net: &mut impl Net) {
        let now = net.now();
        // One call of `send`, so that it inlines as it did before the overhead existed.
        let paced = self.overhead.is_some();
        let mut next = if paced {
            self.transmit_after_overhead(now)
        } else {
            self.sender.poll_transmit(now, &self.cc)
        };
        while let Some(seg) = next {
            net.send(self.packet(seg));
            next = if paced {
                None
            } else {
                self.sender.poll_transmit(now, &self.cc)
            };
        }
        if self.sender.is_finished() {
            self.state = SourceState::Done;
        }
    }

    #[inline]
    fn packet(&self, seg: DataSegment) -> Packet {
        Packet::new(
            seg.seq,
            seg.ts,
            self.route,
            seg.len + self.header_bytes,
            seg.retransmission,
        )
    }

    /// With `tcp.send_overhead`: one segment per expiry of the delayed-send timer (ns-2's
    /// `send_much`). Out of line, so that the usual path stays as small as without it.
    #[inline(never)]
    fn transmit_after_overhead(&mut self, now: Time) -> Option<DataSegment> {
        let overhead = self.overhead.as_mut()?;
        let seg = if overhead.take_due(now) {
            self.sender.poll_transmit(now, &self.cc)
        } else {
            None
        };
        if self.sender.can_transmit(&self.cc) {
            if let Some(o) = &mut self.overhead {
                o.arm(now);
            }
        }
        seg
    }

    /// Congestion window, slow-start threshold and smoothed RTT, for traces.
    pub(crate) fn trace(&self) -> (u64, u64, f64) {
        let m = self.cc.metrics(self.sender.path());
        let srtt = self
            .sender
            .rtt()
            .srtt()
            .map_or(f64::NAN, |d| d.as_secs_f64());
        (m.cwnd, m.ssthresh, srtt)
    }
}

/// The receiving end of a TCP flow.
#[derive(Clone, Debug)]
pub(crate) struct TcpSink {
    pub(crate) receiver: TcpReceiver,
    /// Route of the ACKs (ends at the source), as the position of its first hop.
    route: u32,
    /// Bytes of IP + TCP header: the size of an ACK, and what a data segment's size exceeds
    /// its payload by.
    header_bytes: u32,
    /// Size of a finite flow.
    size: Option<u64>,
    /// When the last byte of a finite flow was delivered.
    pub(crate) completed_at: Option<Time>,
    /// With SACK or a controller reading the one-way delay: the ACKs in flight, which the
    /// source takes back by number.
    pub(crate) sack: Option<Box<SackChannel>>,
}

impl TcpSink {
    pub(crate) fn new(
        receiver: TcpReceiver,
        route: u32,
        header_bytes: u32,
        size: Option<u64>,
    ) -> Self {
        let sack = receiver.config().sack.then(Box::default);
        TcpSink {
            receiver,
            route,
            header_bytes,
            size,
            completed_at: None,
            sack,
        }
    }

    /// A data segment arrived; sends the ACK, if one is due.
    #[inline]
    fn on_data(&mut self, pkt: &Packet, net: &mut impl Net) {
        let now = net.now();
        let seg = DataSegment {
            seq: pkt.seq,
            len: pkt.size() - self.header_bytes,
            ts: pkt.ts,
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

    /// The delayed-ACK timer.
    fn on_timer(&mut self, net: &mut impl Net) {
        if let Some(a) = self.receiver.handle_timeout(net.now()) {
            net.send(self.ack_packet(a));
        }
    }

    /// When the sink next needs `on_timer`.
    #[inline]
    pub(crate) fn deadline(&self) -> Option<Time> {
        self.receiver.poll_timeout()
    }

    /// Bytes delivered in order.
    #[inline]
    pub(crate) fn delivered(&self) -> u64 {
        self.receiver.delivered_bytes()
    }

    #[inline]
    fn ack_packet(&mut self, a: AckSegment) -> Packet {
        let seq = match self.sack.as_deref_mut() {
            Some(ch) => ch.send(a, self.receiver.sack_blocks()),
            None => a.ack,
        };
        Packet::new(seq, a.ts_echo, self.route, self.header_bytes, false)
    }
}
