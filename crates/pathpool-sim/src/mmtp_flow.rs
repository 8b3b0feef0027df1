//! A simulated mmTP download (thesis §4.1): the sans-IO [`Subscriber`] of `pathpool-proto`
//! pulling one content from stateless publishers over the FID pairs the topology manager
//! gave, one subflow per pair.
//!
//! Two elements serve a download: the subscriber (its timers, and the replies' route end) and
//! one publisher element standing for every source of the download (the requests' route
//! end). A publisher keeps no transport state (thesis §4.2), so answering a request is a pure
//! function of it and of the content's metadata: the publisher element only adds which
//! sources are silent when (`outages`, thesis E2). Requests travel on the path's reverse
//! links and replies on its forward links, as a LIPSIN reverse and forward FID route them;
//! the packet carries the part (in `seq`), the echo (`ts` and the retransmission flag) and
//! the subflow, the content id and metadata are the download's.

use pathpool_cc::{AnyController, CcMetrics, MultipathController};
use pathpool_core::Time;
use pathpool_proto::mmtp::{
    Chunk, ChunkCache, ContentId, ContentStore, Echo, Metadata, MetadataReply, Part, PathIndex,
    Publisher, Reply, Request, Subscriber,
};
use pathpool_proto::mmtp::{ChunkRequest, MetadataRequest, SubflowStats};

use crate::element::{Element, End, Net};
use crate::packet::Packet;
use crate::tcp_flow::SourceState;

/// `seq` of a packet about the metadata chunk (chunk packets carry the chunk index).
const METADATA_SEQ: u64 = u64::MAX;
/// Bytes of a metadata reply's payload on the wire: size, chunk size, count, hash and a
/// short description (thesis §4.3: "< 1 KByte").
const METADATA_BYTES: u32 = 128;

/// One FID pair of a download.
#[derive(Clone, Debug)]
pub(crate) struct MmtpPath {
    /// First hop of the requests' route (subscriber to publisher; ends at the publisher
    /// element).
    pub(crate) request_route: u32,
    /// First hop of the replies' route (publisher to subscriber; ends at the subscriber).
    pub(crate) reply_route: u32,
    /// Index of the path's publisher among the download's sources.
    pub(crate) source: u32,
    pub(crate) group: u32,
    /// Whether the topology manager withdrew the path (its subflow is removed).
    pub(crate) withdrawn: bool,
}

/// A source that answers nothing from `start` until `stop`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outage {
    pub(crate) source: u32,
    pub(crate) start: Time,
    pub(crate) stop: Time,
}

/// The content as every publisher of a simulated download holds it: its metadata only (the
/// simulator carries no payload bytes).
#[derive(Clone, Debug)]
pub(crate) struct SimStore {
    content: ContentId,
    metadata: Metadata,
}

impl ContentStore for SimStore {
    fn metadata(&self, content: ContentId) -> Option<&Metadata> {
        (content == self.content).then_some(&self.metadata)
    }
    fn read_chunk(&self, _: ContentId, _: u32, _: &mut Vec<u8>) -> std::io::Result<()> {
        Ok(())
    }
}

/// Both ends of a download.
#[derive(Clone, Debug)]
pub(crate) struct MmtpConn {
    subscriber: Subscriber,
    pub(crate) cc: AnyController,
    publisher: Publisher<SimStore>,
    pub(crate) paths: Vec<MmtpPath>,
    outages: Vec<Outage>,
    header_bytes: u32,
    pub(crate) start: Time,
    pub(crate) state: SourceState,
    pub(crate) completed_at: Option<Time>,
    /// Requests the publishers did not answer (silent sources).
    pub(crate) unanswered: u64,
}

impl MmtpConn {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        subscriber: Subscriber,
        cc: AnyController,
        size_bytes: u64,
        chunk_bytes: u32,
        paths: Vec<MmtpPath>,
        outages: Vec<Outage>,
        header_bytes: u32,
        start: Time,
    ) -> Self {
        let content = subscriber.content();
        // The simulator carries no payload: the hash is of nothing, and never checked.
        let metadata = Metadata::new(size_bytes, chunk_bytes, [0; 32], "simulated content");
        MmtpConn {
            subscriber,
            cc,
            publisher: Publisher::new(SimStore { content, metadata }),
            paths,
            outages,
            header_bytes,
            start,
            state: SourceState::Waiting,
            completed_at: None,
            unanswered: 0,
        }
    }

    /// When the subscriber next needs its timer.
    #[inline]
    fn subscriber_deadline(&self) -> Option<Time> {
        match self.state {
            SourceState::Waiting => Some(self.start),
            SourceState::Done => None,
            SourceState::Active => self.subscriber.poll_timeout(),
        }
    }

    /// The start of the download, and the subflows' retransmission timers.
    fn on_subscriber_timer(&mut self, net: &mut impl Net) {
        let now = net.now();
        if self.state == SourceState::Waiting && now >= self.start {
            self.state = SourceState::Active;
            for p in &self.paths {
                self.subscriber.add_path(&mut self.cc, p.group);
            }
            // Paths withdrawn before the start: their subflows exist only to keep the indices.
            for (i, p) in self.paths.iter().enumerate() {
                if p.withdrawn {
                    self.subscriber
                        .remove_path(&mut self.cc, PathIndex(i as u32));
                }
            }
        }
        if self.state != SourceState::Active {
            return;
        }
        self.subscriber.handle_timeout(now, &mut self.cc);
        self.transmit(net);
    }

    /// A reply arrived at the subscriber.
    #[inline]
    fn on_reply(&mut self, pkt: &Packet, net: &mut impl Net) {
        let now = net.now();
        if self.state != SourceState::Active {
            return;
        }
        let reply = self.reply_of(pkt);
        self.subscriber.handle_reply(now, &reply, &mut self.cc);
        if self.subscriber.is_complete() {
            self.completed_at = Some(now);
            self.state = SourceState::Done;
            return;
        }
        self.transmit(net);
    }

    /// A request arrived at a publisher: it sends the reply back, unless the source is
    /// silent.
    #[inline]
    fn on_request(&mut self, pkt: &Packet, net: &mut impl Net) {
        let now = net.now();
        let path = &self.paths[pkt.subflow() as usize];
        let silent = self
            .outages
            .iter()
            .any(|o| o.source == path.source && o.start <= now && now < o.stop);
        if silent {
            self.unanswered += 1;
            return;
        }
        let reply = self.publisher.respond(&self.request_of(pkt));
        if let Some(p) = self.reply_packet(&reply, path.reply_route) {
            net.send(p);
        }
    }

    /// A reply crossed an on-path cache: it keeps it.
    pub(crate) fn store_reply(&self, cache: &mut ChunkCache<()>, pkt: &Packet) {
        match self.reply_of(pkt) {
            Reply::Metadata(m) => cache.store_metadata(&m),
            Reply::Chunk(c) => cache.store_chunk(&c, ()),
            Reply::Error(_) => {}
        }
    }

    /// A request reached an on-path cache: if the cache answers it, sends the reply, starting
    /// at hop `reply_from` of the path's reply route, and returns `true`.
    pub(crate) fn answer(
        &self,
        cache: &mut ChunkCache<()>,
        pkt: &Packet,
        reply_from: u32,
        net: &mut impl Net,
    ) -> bool {
        let Some(hit) = cache.answer(&self.request_of(pkt)) else {
            return false;
        };
        match self.reply_packet(&hit.reply, reply_from) {
            Some(p) => {
                net.send(p);
                true
            }
            None => false,
        }
    }

    /// The request a packet carries.
    #[inline]
    fn request_of(&self, pkt: &Packet) -> Request {
        let content = self.subscriber.content();
        let echo = Echo {
            sent_at: pkt.ts,
            retransmission: pkt.retx(),
        };
        let path = PathIndex(pkt.subflow());
        if pkt.seq == METADATA_SEQ {
            Request::Metadata(MetadataRequest {
                content,
                path,
                echo,
            })
        } else {
            Request::Chunk(ChunkRequest {
                content,
                index: pkt.seq as u32,
                path,
                echo,
            })
        }
    }

    /// The reply a packet carries.
    #[inline]
    fn reply_of(&self, pkt: &Packet) -> Reply {
        let content = self.subscriber.content();
        let path = PathIndex(pkt.subflow());
        let echo = Echo {
            sent_at: pkt.ts,
            retransmission: pkt.retx(),
        };
        if pkt.seq == METADATA_SEQ {
            Reply::Metadata(MetadataReply {
                content,
                path,
                echo,
                metadata: self.store().metadata.clone(),
            })
        } else {
            Reply::Chunk(Chunk {
                content,
                index: pkt.seq as u32,
                path,
                echo,
                payload_bytes: pkt.size() - self.header_bytes,
            })
        }
    }

    /// The packet of `reply`, starting at route hop `hop`.
    #[inline]
    fn reply_packet(&self, reply: &Reply, hop: u32) -> Option<Packet> {
        let (seq, payload) = match reply {
            Reply::Metadata(_) => (METADATA_SEQ, METADATA_BYTES),
            Reply::Chunk(c) => (u64::from(c.index), c.payload_bytes),
            // The simulated store holds the content and the subscriber asks only for chunks
            // the metadata lists: a refusal cannot happen, and would be lost like a drop.
            Reply::Error(_) => return None,
        };
        let echo = reply.echo();
        Some(Packet::with_subflow(
            seq,
            echo.sent_at,
            hop,
            payload + self.header_bytes,
            echo.retransmission,
            reply.path().0,
        ))
    }

    /// The topology manager re-sent the download's FID set (a link failed or was repaired):
    /// withdrawn paths lose their subflows, kept ones may change group, new ones get
    /// subflows (thesis §4.2: "re-sent when paths change or fail").
    pub(crate) fn update_paths(
        &mut self,
        removed: &[usize],
        regrouped: &[(usize, u32)],
        added: Vec<MmtpPath>,
        net: &mut impl Net,
    ) {
        let active = self.state == SourceState::Active;
        for &i in removed {
            self.paths[i].withdrawn = true;
            if active {
                self.subscriber
                    .remove_path(&mut self.cc, PathIndex(i as u32));
            }
        }
        for &(i, group) in regrouped {
            self.paths[i].group = group;
            if active {
                self.subscriber
                    .set_group(&mut self.cc, PathIndex(i as u32), group);
            }
        }
        for p in added {
            if active {
                self.subscriber.add_path(&mut self.cc, p.group);
            }
            self.paths.push(p);
        }
        if active {
            self.transmit(net);
        }
    }

    fn transmit(&mut self, net: &mut impl Net) {
        let now = net.now();
        while let Some(r) = self.subscriber.poll_transmit(now, &self.cc) {
            let seq = match r.part() {
                Part::Metadata => METADATA_SEQ,
                Part::Chunk(i) => u64::from(i),
            };
            let echo = r.echo();
            let path = r.path();
            net.send(Packet::with_subflow(
                seq,
                echo.sent_at,
                self.paths[path.index()].request_route,
                self.header_bytes,
                echo.retransmission,
                path.0,
            ));
        }
    }

    fn store(&self) -> &SimStore {
        self.publisher.store()
    }

    /// Payload bytes downloaded (in any order: mmTP delivers out of order, thesis §4.1).
    #[inline]
    fn bytes_done(&self) -> u64 {
        self.subscriber.progress().bytes_done
    }

    /// Counters of subflow `j` (`None` before the download starts).
    pub(crate) fn subflow_stats(&self, j: usize) -> Option<&SubflowStats> {
        self.subscriber.subflows().get(j).map(|s| s.stats())
    }

    /// The controller's state and the smoothed RTT (NaN before a sample) of subflow `j`.
    pub(crate) fn trace(&self, j: usize) -> Option<(CcMetrics, f64)> {
        let sf = self.subscriber.subflows().get(j)?;
        let path = sf.controller_path()?;
        let srtt = sf.srtt().map_or(f64::NAN, |d| d.as_secs_f64());
        Some((self.cc.metrics(path), srtt))
    }

    /// Chunk payload bytes.
    pub(crate) fn chunk_bytes(&self) -> u32 {
        self.store().metadata.chunk_bytes
    }
}

impl Element for MmtpConn {
    #[inline(always)]
    fn receives_data(&self, end: End) -> bool {
        end == End::Sink
    }
    #[inline(always)]
    fn on_packet(&mut self, end: End, pkt: &Packet, net: &mut impl Net) {
        match end {
            End::Sink => self.on_reply(pkt, net),
            End::Source => self.on_request(pkt, net),
        }
    }
    fn on_timer(&mut self, end: End, net: &mut impl Net) {
        if end == End::Sink {
            self.on_subscriber_timer(net);
        }
    }
    /// The subscriber's; the publishers keep no transport state and have no timer.
    #[inline(always)]
    fn deadline(&self, end: End) -> Option<Time> {
        match end {
            End::Sink => self.subscriber_deadline(),
            End::Source => None,
        }
    }
    fn delivered(&self, end: End) -> u64 {
        match end {
            End::Sink => self.bytes_done(),
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
