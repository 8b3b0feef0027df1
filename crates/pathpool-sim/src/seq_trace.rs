//! Sequence traces (`measure.trace_sequences`, issue 21; the INRPP document's Fig. 10, a
//! flow's sequence numbers at the sender, at node 4's and node 0's caches and at the
//! receiver): for each traced flow, one row per data segment its sender sends, per ACK it
//! receives, per data segment reaching an INRPP router on its way, and per data segment
//! reaching its receiver (D308).
//!
//! The sender's sends are caught where its data route starts: that hop's slot is replaced by
//! [`Slot::Traced`], which [`Network::send`](crate::element::Net::send) meets out of line, so
//! untraced flows pay nothing. Arrivals at the ends are caught by the out-of-line delivery
//! the simulation takes while a trace or the inter-arrival histograms are on, and arrivals
//! at routers in the router's own code. The rows are one per packet event, so a trace grows
//! with the traced flows' packets: it is meant for a few flows.

use pathpool_core::Time;

use crate::kinds::Slot;
use crate::packet::Packet;
use crate::sim::FlowMeta;
use crate::table::{Column, Table};

/// How a traced flow's packets carry their sequence numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Header {
    /// TCP: `seq` is the sequence or acknowledgement number.
    Tcp,
    /// INRPP: a nonce above 40 bits of sequence number, a notification on ACKs (D282).
    Inrpp,
    /// RCP: a rate field above 40 bits of sequence number (D294).
    Rcp,
}

impl Header {
    /// The header of a flow whose congestion control is `cc`.
    pub(crate) fn of(cc: Option<&str>) -> Self {
        match cc {
            Some("inrpp") => Header::Inrpp,
            Some("rcp") => Header::Rcp,
            _ => Header::Tcp,
        }
    }

    fn seq(self, pkt: &Packet) -> u64 {
        match self {
            Header::Tcp => pkt.seq,
            Header::Inrpp | Header::Rcp => pkt.inrpp_seq(),
        }
    }

    fn nonce(self, pkt: &Packet) -> u32 {
        match self {
            Header::Inrpp => pkt.inrpp_nonce(),
            Header::Tcp | Header::Rcp => 0,
        }
    }
}

/// What happened to a packet at a point of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// The sender sent a data segment for the first time.
    Sent,
    /// The sender sent a data segment again.
    Retransmitted,
    /// An ACK reached the sender.
    Ack,
    /// An ACK carrying SLOW-DOWN reached the sender (INRPP).
    SlowDown,
    /// An ACK carrying CANCEL reached the sender (INRPP).
    Cancel,
    /// A router forwarded a data segment at once.
    Forwarded,
    /// A router put a data segment in its cache.
    Cached,
    /// A router's full cache dropped a data segment.
    Dropped,
    /// A data segment reached the receiver and delivered new bytes in order.
    Delivered,
    /// A data segment reached the receiver above a hole, or again.
    Received,
}

impl Event {
    fn name(self) -> &'static str {
        match self {
            Event::Sent => "sent",
            Event::Retransmitted => "retransmitted",
            Event::Ack => "ack",
            Event::SlowDown => "slow-down",
            Event::Cancel => "cancel",
            Event::Forwarded => "forwarded",
            Event::Cached => "cached",
            Event::Dropped => "dropped",
            Event::Delivered => "delivered",
            Event::Received => "received",
        }
    }
}

/// Where a row was taken: a traced flow's sender or receiver, or INRPP router `.0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    Sender,
    Receiver,
    Router(u32),
}

/// The traced flows and their rows.
#[derive(Clone, Debug, Default)]
pub(crate) struct SequenceTrace {
    /// Per flow: its header, if traced.
    headers: Vec<Option<Header>>,
    /// Per element: the traced flow it is the sender (`false`) or receiver (`true`) of.
    endpoints: Vec<Option<(u32, bool)>>,
    /// The traced route starts: the flow, and the slot the hop had before.
    starts: Vec<(u32, Slot)>,
    time: Vec<Time>,
    flow: Vec<u32>,
    point: Vec<Point>,
    event: Vec<Event>,
    seq: Vec<u64>,
    nonce: Vec<u32>,
}

impl SequenceTrace {
    /// A trace of `traced` (indices into `flows`), whose elements are below `elements`.
    pub(crate) fn new(flows: &[FlowMeta], traced: &[u32], elements: usize) -> Self {
        let mut t = SequenceTrace {
            headers: vec![None; flows.len()],
            endpoints: vec![None; elements],
            ..SequenceTrace::default()
        };
        for &f in traced {
            let meta = &flows[f as usize];
            t.headers[f as usize] = Some(Header::of(meta.cc.as_deref()));
            t.endpoints[meta.source as usize] = Some((f, false));
            t.endpoints[meta.sink as usize] = Some((f, true));
        }
        t
    }

    /// The index the next [`add_start`](Self::add_start) takes, which its [`Slot::Traced`]
    /// carries.
    pub(crate) fn next_start(&self) -> u32 {
        self.starts.len() as u32
    }

    /// Registers the start of `flow`'s data route, whose hop had `slot`.
    pub(crate) fn add_start(&mut self, flow: u32, slot: Slot) {
        self.starts.push((flow, slot));
    }

    fn push(&mut self, now: Time, flow: u32, point: Point, event: Event, seq: u64, nonce: u32) {
        self.time.push(now);
        self.flow.push(flow);
        self.point.push(point);
        self.event.push(event);
        self.seq.push(seq);
        self.nonce.push(nonce);
    }

    /// A packet leaving by traced start `k` at `now`: recorded; returns the hop's own slot.
    pub(crate) fn at_start(&mut self, k: u32, now: Time, pkt: &Packet) -> Slot {
        let (flow, slot) = self.starts[k as usize];
        if let Some(h) = self.headers[flow as usize] {
            let event = if pkt.retx() {
                Event::Retransmitted
            } else {
                Event::Sent
            };
            self.push(now, flow, Point::Sender, event, h.seq(pkt), h.nonce(pkt));
        }
        slot
    }

    /// `pkt` reached endpoint `elem` at `now`; `delivered` if it delivered new bytes in order.
    pub(crate) fn at_endpoint(&mut self, elem: u32, now: Time, pkt: &Packet, delivered: bool) {
        let Some(&Some((flow, receiver))) = self.endpoints.get(elem as usize) else {
            return;
        };
        let Some(h) = self.headers[flow as usize] else {
            return;
        };
        let (point, event) = if receiver {
            let e = if delivered {
                Event::Delivered
            } else {
                Event::Received
            };
            (Point::Receiver, e)
        } else {
            let e = match (h, pkt.inrpp_notification()) {
                (Header::Inrpp, 1) => Event::SlowDown,
                (Header::Inrpp, 2) => Event::Cancel,
                _ => Event::Ack,
            };
            (Point::Sender, e)
        };
        self.push(now, flow, point, event, h.seq(pkt), h.nonce(pkt));
    }

    /// A data segment of `flow` reached INRPP router `router` at `now`, which did `event`
    /// with it.
    pub(crate) fn at_router(
        &mut self,
        router: u32,
        flow: u64,
        now: Time,
        pkt: &Packet,
        event: Event,
    ) {
        let Some(&Some(h)) = self.headers.get(flow as usize) else {
            return;
        };
        self.push(
            now,
            flow as u32,
            Point::Router(router),
            event,
            h.seq(pkt),
            h.nonce(pkt),
        );
    }

    /// The `sequence_trace` table, its routers named by `routers`.
    pub(crate) fn table(&self, flows: &[FlowMeta], routers: &[String]) -> Table {
        let mut t = Table::new("sequence_trace");
        t.push(
            "time_s",
            Column::F64(self.time.iter().map(|x| x.as_secs_f64()).collect()),
        );
        t.push(
            "flow",
            Column::Str(
                self.flow
                    .iter()
                    .map(|&f| flows[f as usize].id.clone())
                    .collect(),
            ),
        );
        t.push(
            "point",
            Column::Str(
                self.point
                    .iter()
                    .map(|p| match p {
                        Point::Sender => "sender".to_string(),
                        Point::Receiver => "receiver".to_string(),
                        Point::Router(r) => routers[*r as usize].clone(),
                    })
                    .collect(),
            ),
        );
        t.push(
            "event",
            Column::Str(self.event.iter().map(|e| e.name().to_string()).collect()),
        );
        t.push("seq", Column::U64(self.seq.clone()));
        t.push(
            "nonce",
            Column::U64(self.nonce.iter().map(|&n| u64::from(n)).collect()),
        );
        t
    }
}
