//! The two ends of a simulated multipath connection. They wrap the sans-IO
//! [`MpSender`]/[`MpReceiver`] of `pathpool-proto`, open and close subflows at the times the
//! scenario gives, and translate between segments and packets (which carry their subflow).
//!
//! Both ends live in one [`MpConn`] reached through two elements (the source and the sink,
//! each with its own pending event). The sink reads a segment's DSS mapping from the sender's
//! table instead of from the packet: MPTCP carries that mapping in every segment, so the
//! outcome is the same, and simulated packets stay 24 bytes (`docs/decisions.md`).

use pathpool_cc::{AnyController, CcMetrics, MultipathController};
use pathpool_core::Time;
use pathpool_proto::mptcp::{DataAck, MpReceiver, MpSegment, MpSender, SubflowState};
use pathpool_proto::tcp::{AckSegment, DataSegment, SenderStats, TcpSender};

use crate::element::{Element, End, Net};
use crate::overhead::SendOverhead;
use crate::packet::Packet;
use crate::sack_channel::SackChannel;
use crate::tcp_flow::SourceState;

/// A subflow as the scenario describes it.
#[derive(Clone, Debug)]
pub(crate) struct SubflowPlan {
    /// Position of the first hop of its data route (ends at the sink element).
    pub(crate) data_route: u32,
    /// Position of the first hop of its ACK route (ends at the source element).
    pub(crate) ack_route: u32,
    pub(crate) group: u32,
    pub(crate) start: Time,
    pub(crate) stop: Option<Time>,
    /// With an SDN controller: the groups the host sets when this subflow opens (subflow,
    /// group), its own first (crate::sdn).
    pub(crate) regroup: Vec<(u32, u32)>,
    /// Moves without a join: when, and the first hops of the new data and ACK routes.
    pub(crate) moves: Vec<(Time, u32, u32)>,
}

/// Where an opened subflow's packets start: the positions of the first hops of its routes.
#[derive(Clone, Copy, Debug)]
struct SubflowRoutes {
    data: u32,
    ack: u32,
}

/// Both ends of a multipath connection.
#[derive(Clone, Debug)]
pub(crate) struct MpConn {
    pub(crate) sender: MpSender,
    pub(crate) cc: AnyController,
    pub(crate) receiver: MpReceiver,
    /// The subflows in scenario order.
    pub(crate) plan: Vec<SubflowPlan>,
    /// For each opened subflow (the sender's and receiver's index), its routes (copied from
    /// its plan, since every packet needs one).
    opened: Vec<SubflowRoutes>,
    /// With SACK, a finite receive buffer or a controller reading the one-way delay, each
    /// opened subflow's ACKs in flight (empty otherwise).
    sack: Vec<SackChannel>,
    /// Whether the controller reads the one-way delay: the ACKs must carry the receiver's
    /// TSval, so they go through the channels (D244).
    owd_acks: bool,
    /// Whether the connection has a finite receive buffer: its ACKs carry DATA_ACK and the
    /// receive window.
    windowed: bool,
    /// For each scenario subflow, its index once opened.
    pub(crate) index_of: Vec<Option<u32>>,
    /// For each scenario subflow, how many of its moves have been made.
    moved: Vec<u32>,
    header_bytes: u32,
    pub(crate) start: Time,
    pub(crate) stop: Option<Time>,
    pub(crate) state: SourceState,
    stopped: bool,
    size: Option<u64>,
    pub(crate) completed_at: Option<Time>,
    /// The next time a subflow opens or closes or the application stops (kept, since the
    /// source's deadline is asked for after every ACK and this changes only when the source's
    /// timer runs).
    next_change: Option<Time>,
    /// `tcp.send_overhead`, when on: the connection's segments leave one at a time.
    overhead: Option<Box<SendOverhead>>,
}

impl MpConn {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        sender: MpSender,
        cc: AnyController,
        receiver: MpReceiver,
        plan: Vec<SubflowPlan>,
        header_bytes: u32,
        start: Time,
        stop: Option<Time>,
        size: Option<u64>,
        overhead: Option<Box<SendOverhead>>,
    ) -> Self {
        let n = plan.len();
        let windowed = receiver.receive_buffer_bytes() != u64::MAX;
        let owd_acks = cc.reads_one_way_delay();
        MpConn {
            sender,
            cc,
            receiver,
            plan,
            opened: Vec::with_capacity(n),
            sack: Vec::new(),
            owd_acks,
            windowed,
            index_of: vec![None; n],
            moved: vec![0; n],
            header_bytes,
            start,
            stop,
            state: SourceState::Waiting,
            stopped: false,
            size,
            completed_at: None,
            next_change: None,
            overhead,
        }
        .with_next_change()
    }

    fn with_next_change(mut self) -> Self {
        self.next_change = self.compute_next_change();
        self
    }

    /// The next time a subflow opens or closes or the application stops, after `now` is
    /// handled.
    fn compute_next_change(&self) -> Option<Time> {
        self.plan
            .iter()
            .enumerate()
            .filter_map(|(j, p)| match self.index_of[j] {
                None => Some(p.start),
                Some(i) => {
                    let active = self.sender.subflows()[i as usize].state() == SubflowState::Active;
                    let next_move = p.moves.get(self.moved[j] as usize).map(|m| m.0);
                    earlier(p.stop, next_move).filter(|_| active)
                }
            })
            .chain(self.stop.filter(|_| !self.stopped))
            .min()
    }

    /// When the source next needs `on_source_timer`.
    #[inline]
    pub(crate) fn source_deadline(&self) -> Option<Time> {
        match self.state {
            SourceState::Waiting => Some(self.start),
            SourceState::Done => None,
            SourceState::Active => earlier(
                earlier(self.sender.poll_timeout(), self.next_change),
                self.overhead.as_deref().and_then(SendOverhead::deadline),
            ),
        }
    }

    /// [`source_deadline`](Self::source_deadline) if it is before `t`, when the source's
    /// timer is set for `t`: after an ACK, usually known without looking at every subflow.
    #[inline]
    pub(crate) fn source_deadline_before(&self, t: Time) -> Option<Time> {
        match self.state {
            SourceState::Active => earlier(
                earlier(
                    self.sender.poll_timeout_before(t),
                    self.next_change.filter(|&c| c < t),
                ),
                self.overhead
                    .as_deref()
                    .and_then(SendOverhead::deadline)
                    .filter(|&o| o < t),
            ),
            _ => self.source_deadline().filter(|&d| d < t),
        }
    }

    /// Start, stop, subflow changes and retransmission timers.
    fn on_source_timer(&mut self, net: &mut impl Net) {
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
        for j in 0..self.plan.len() {
            let p = &self.plan[j];
            match self.index_of[j] {
                None if p.start <= now => {
                    let i = self.sender.add_subflow(&mut self.cc, p.group);
                    let r = self.receiver.add_subflow();
                    debug_assert_eq!(i, r, "both ends number subflows alike");
                    self.index_of[j] = Some(i as u32);
                    self.opened.push(SubflowRoutes {
                        data: p.data_route,
                        ack: p.ack_route,
                    });
                    if self.windowed || self.owd_acks || self.receiver.subflows()[r].config().sack {
                        self.sack.push(SackChannel::default());
                    }
                    // The SDN controller's PATH_OVERLAP, delivered with the set-up: the other
                    // subflows' groups as it now sees them (the first entry is this one's).
                    for &(k, g) in self.plan[j].regroup.iter().skip(1) {
                        if let Some(other) = self.index_of[k as usize] {
                            self.sender.set_group(other as usize, &mut self.cc, g);
                        }
                    }
                }
                Some(i)
                    if p.moves
                        .get(self.moved[j] as usize)
                        .is_some_and(|m| m.0 <= now) =>
                {
                    // A move without a join: new routes, the same group.
                    let (_, data, ack) = p.moves[self.moved[j] as usize];
                    self.opened[i as usize] = SubflowRoutes { data, ack };
                    self.moved[j] += 1;
                }
                Some(i) if p.stop.is_some_and(|s| s <= now) => {
                    self.sender.close_subflow(i as usize, &mut self.cc);
                }
                _ => {}
            }
        }
        self.next_change = self.compute_next_change();
        self.sender.handle_timeout(now, &mut self.cc);
        self.transmit(net);
    }

    /// An acknowledgement arrived at the source.
    #[inline]
    fn on_ack(&mut self, pkt: &Packet, net: &mut impl Net) {
        let now = net.now();
        let sf = pkt.subflow() as usize;
        if let Some(ch) = self.sack.get_mut(sf) {
            let (ack, blocks, data_ack) = ch.receive_with_data_ack(pkt.seq);
            if self.state != SourceState::Active {
                return;
            }
            self.sender.handle_data_ack(data_ack);
            self.sender
                .handle_ack_with_sack(now, sf, &ack, &blocks, &mut self.cc);
        } else {
            if self.state != SourceState::Active {
                return;
            }
            let ack = AckSegment::new(pkt.seq, pkt.ts);
            self.sender.handle_ack(now, sf, &ack, &mut self.cc);
        }
        self.transmit(net);
    }

    // Always inlined, as `TcpSource::transmit`.
    #[inline(always)]
    fn transmit(&mut self, net: &mut impl Net) {
        let now = net.now();
        // One call of `send`, so that it inlines as it did before the overhead existed.
        let paced = self.overhead.is_some();
        let mut next = if paced {
            self.transmit_after_overhead(now)
        } else {
            self.sender.poll_transmit(now, &mut self.cc)
        };
        while let Some(s) = next {
            net.send(self.packet(s));
            next = if paced {
                None
            } else {
                self.sender.poll_transmit(now, &mut self.cc)
            };
        }
        if self.sender.is_finished() {
            self.state = SourceState::Done;
        }
    }

    /// The packet carrying segment `s`.
    #[inline]
    fn packet(&self, s: MpSegment) -> Packet {
        Packet::with_subflow(
            s.seg.seq,
            s.seg.ts,
            self.opened[s.subflow].data,
            s.seg.len + self.header_bytes,
            s.seg.retransmission,
            s.subflow as u32,
        )
    }

    /// With `tcp.send_overhead`: one segment per expiry of the delayed-send timer, on
    /// whichever subflow the scheduler picks then. Out of line, so that the usual path stays
    /// as small as without it.
    #[inline(never)]
    fn transmit_after_overhead(&mut self, now: Time) -> Option<MpSegment> {
        let due = self.overhead.as_mut()?.take_due(now);
        let seg = if due {
            self.sender.poll_transmit(now, &mut self.cc)
        } else {
            None
        };
        if self.sender.may_transmit() {
            if let Some(o) = &mut self.overhead {
                o.arm(now);
            }
        }
        seg
    }

    /// A data segment arrived at the sink; sends the ACK, if one is due.
    #[inline]
    fn on_data(&mut self, pkt: &Packet, net: &mut impl Net) {
        let now = net.now();
        let sf = pkt.subflow() as usize;
        let seg = DataSegment {
            seq: pkt.seq,
            len: pkt.size() - self.header_bytes,
            ts: pkt.ts,
            retransmission: pkt.retx(),
        };
        let ack = self.receiver.handle_segment(now, sf, &seg);
        let receiver = &mut self.receiver;
        self.sender
            .for_each_mapping(sf, seg.seq, u64::from(seg.len), |a, b| {
                receiver.handle_mapping(a, b)
            });
        if self.completed_at.is_none()
            && self
                .size
                .is_some_and(|s| self.receiver.delivered_bytes() >= s)
        {
            self.completed_at = Some(now);
        }
        let Some(a) = ack else {
            return;
        };
        // The SACK option and DATA_ACK are read only for a subflow with a channel.
        let seq = match self.sack.get_mut(sf) {
            Some(ch) => ch.send_with_data_ack(
                a,
                self.receiver.subflows()[sf].sack_blocks(),
                data_ack(&self.receiver, self.windowed),
            ),
            None => a.ack,
        };
        net.send(ack_packet(&self.opened, self.header_bytes, sf, a, seq));
    }

    /// The sink's delayed-ACK timers.
    fn on_sink_timer(&mut self, net: &mut impl Net) {
        let now = net.now();
        // Timers deliver nothing, so the data-level acknowledgement is the same for them all.
        let data_ack = data_ack(&self.receiver, self.windowed);
        let (opened, channels, header) = (&self.opened, &mut self.sack, self.header_bytes);
        self.receiver.handle_timeout(now, |sf, a, sack| {
            let seq = match channels.get_mut(sf) {
                Some(ch) => ch.send_with_data_ack(a, sack, data_ack),
                None => a.ack,
            };
            net.send(ack_packet(opened, header, sf, a, seq));
        });
    }

    /// When the sink next needs `on_sink_timer`.
    #[inline]
    pub(crate) fn sink_deadline(&self) -> Option<Time> {
        self.receiver.poll_timeout()
    }

    /// Data bytes delivered in order.
    #[inline]
    fn data_delivered(&self) -> u64 {
        self.receiver.delivered_bytes()
    }

    /// The sender of scenario subflow `j`, if it has opened.
    pub(crate) fn subflow_sender(&self, j: usize) -> Option<&TcpSender> {
        self.index_of[j].map(|i| self.sender.subflows()[i as usize].sender())
    }

    /// Counters summed over every subflow.
    pub(crate) fn stats(&self) -> SenderStats {
        let mut t = SenderStats::default();
        for sf in self.sender.subflows() {
            let s = sf.sender().stats();
            t.segments_sent += s.segments_sent;
            t.bytes_sent += s.bytes_sent;
            t.retransmissions += s.retransmissions;
            t.fast_recoveries += s.fast_recoveries;
            t.timeouts += s.timeouts;
        }
        t
    }

    /// The controller's state and the smoothed RTT (NaN before a sample) of scenario subflow
    /// `j`, for traces (`None` before it opens).
    pub(crate) fn trace(&self, j: usize) -> Option<(CcMetrics, f64)> {
        let i = self.index_of[j]? as usize;
        let sf = &self.sender.subflows()[i];
        let srtt = sf
            .sender()
            .rtt()
            .srtt()
            .map_or(f64::NAN, |d| d.as_secs_f64());
        Some((self.cc.metrics(sf.path()), srtt))
    }
}

impl Element for MpConn {
    #[inline(always)]
    fn receives_data(&self, end: End) -> bool {
        end == End::Sink
    }
    #[inline(always)]
    fn on_packet(&mut self, end: End, pkt: &Packet, net: &mut impl Net) {
        match end {
            End::Sink => self.on_data(pkt, net),
            End::Source => self.on_ack(pkt, net),
        }
    }
    fn on_timer(&mut self, end: End, net: &mut impl Net) {
        match end {
            End::Source => self.on_source_timer(net),
            End::Sink => self.on_sink_timer(net),
        }
    }
    #[inline(always)]
    fn deadline(&self, end: End) -> Option<Time> {
        match end {
            End::Source => self.source_deadline(),
            End::Sink => self.sink_deadline(),
        }
    }
    /// The source asks only whether its deadline is before the time its timer is set for.
    #[inline(always)]
    fn rearm(&self, end: End, armed: impl FnOnce() -> Option<Time>) -> Option<Time> {
        match end {
            End::Source => match armed() {
                Some(t) => self.source_deadline_before(t),
                None => self.source_deadline(),
            },
            End::Sink => {
                let d = self.sink_deadline()?;
                match armed() {
                    Some(cur) if cur <= d => None,
                    _ => Some(d),
                }
            }
        }
    }
    fn delivered(&self, end: End) -> u64 {
        match end {
            End::Sink => self.data_delivered(),
            End::Source => 0,
        }
    }
    fn completed_at(&self, end: End) -> Option<Time> {
        match end {
            End::Sink => self.completed_at,
            End::Source => None,
        }
    }
}

/// The earlier of two optional times.
#[inline]
fn earlier(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The data-level acknowledgement a sink's ACKs carry now (none is read without a receive
/// window, `windowed`: the sender infers it, D32).
#[inline]
fn data_ack(receiver: &MpReceiver, windowed: bool) -> DataAck {
    if windowed {
        receiver.data_ack()
    } else {
        DataAck::default()
    }
}

/// The packet carrying subflow `sf`'s acknowledgement `a` back to the source, with `seq` in
/// place of the acknowledgement number: `a.ack`, or the ACK's number in the subflow's channel,
/// which keeps its SACK option and data-level acknowledgement.
#[inline]
fn ack_packet(
    opened: &[SubflowRoutes],
    header_bytes: u32,
    sf: usize,
    a: AckSegment,
    seq: u64,
) -> Packet {
    Packet::with_subflow(
        seq,
        a.ts_echo,
        opened[sf].ack,
        header_bytes,
        false,
        sf as u32,
    )
}
