//! The subscriber: all of mmTP's control (thesis §4.5: "all control runs at the subscriber").
//!
//! It asks for the metadata first, then pulls chunks over every subflow with Algorithm 1 on
//! the shared chunk-state array, times each subflow's requests with one retransmission timer,
//! and reports deliveries and losses to the connection's congestion controller, of which each
//! subflow is one path.

use std::collections::VecDeque;

use pathpool_cc::{AckSample, CongestionEvent, MultipathController, RecoveryAck};
use pathpool_core::{Dur, RttConfig, Time};
use serde::{Deserialize, Serialize};

use super::chunks::{ChunkArray, ChunkState};
use super::message::{
    Chunk, ChunkRequest, ContentId, Echo, ErrorKind, ErrorReply, Metadata, MetadataReply,
    MetadataRequest, Part, PathIndex, Reply, Request,
};
use super::subflow::{Held, Subflow, SubflowState};
use super::EXPIRIES_BEFORE_RELEASE;

/// Which implementation of path selection runs (they give the same requests; D55).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    /// The `next_idle` + `pending` fast path (thesis §4.6).
    #[default]
    Fast,
    /// Algorithm 1 as printed, scanning the array from `win_start` on every run.
    Scan,
}

/// Default bound on a subflow's exponential backoff (`RttConfig::backoff_limit`, D117): the
/// backed-off RTO grows to this and no further (never below the RTO estimate itself). TCP's
/// backoff goes on to `max_rto` (RFC 6298 §5.5, at least 60 s); an mmTP subflow whose source
/// has fallen silent sends one small request per timeout while the download goes on over
/// the others, and with TCP's backoff a source back after a 7 s silence waited up to 6.4 s
/// more before its subflow asked it again.
pub const DEFAULT_BACKOFF_LIMIT: Dur = Dur::from_secs(2);

/// Subscriber parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriberConfig {
    /// Each subflow's retransmission timer (RFC 6298, its backoff bounded by
    /// [`DEFAULT_BACKOFF_LIMIT`] unless told otherwise).
    #[serde(default = "SubscriberConfig::default_rtt")]
    pub rtt: RttConfig,
    /// Chunk requests a subflow may have outstanding before its first reply (thesis §4.5:
    /// "one packet per subflow", footnote 3; D54). After the first reply the controller's
    /// window rules.
    #[serde(default = "SubscriberConfig::default_initial_window_chunks")]
    pub initial_window_chunks: u32,
    /// Request chunk 0 together with the metadata (thesis §4.3: "the first chunk may be
    /// requested at the same time").
    #[serde(default = "SubscriberConfig::default_first_chunk_with_metadata")]
    pub first_chunk_with_metadata: bool,
    /// Which implementation of Algorithm 1 runs.
    #[serde(default)]
    pub selection: Selection,
    /// Gap-based loss detection (D86): a chunk request is presumed lost once this many
    /// replies to later requests of the same subflow have arrived, as TCP's duplicate-ACK
    /// threshold; its chunk goes back to the shared array and the controller halves the
    /// window once per round. `None` (the default, the thesis's §4.5 rule) detects losses by
    /// the retransmission timer only.
    #[serde(default)]
    pub gap_threshold: Option<u32>,
}

impl SubscriberConfig {
    fn default_rtt() -> RttConfig {
        RttConfig {
            backoff_limit: Some(DEFAULT_BACKOFF_LIMIT),
            ..RttConfig::default()
        }
    }
    fn default_initial_window_chunks() -> u32 {
        1
    }
    fn default_first_chunk_with_metadata() -> bool {
        true
    }
}

impl Default for SubscriberConfig {
    fn default() -> Self {
        SubscriberConfig {
            rtt: Self::default_rtt(),
            initial_window_chunks: Self::default_initial_window_chunks(),
            first_chunk_with_metadata: Self::default_first_chunk_with_metadata(),
            selection: Selection::default(),
            gap_threshold: None,
        }
    }
}

/// What a reply was to the subscriber; tells the driver whether to keep its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// The metadata, for the first time: data transfer starts.
    Metadata,
    /// Chunk `index`, for the first time: the driver stores its payload.
    Chunk {
        /// The chunk's index.
        index: u32,
    },
    /// A chunk already downloaded, or the metadata again (a probe's answer): discard.
    Duplicate,
    /// Not usable: another content, an unknown path index, a length that disagrees with the
    /// metadata, inconsistent metadata, or an out-of-range error for chunk 0 of an empty
    /// content. Discard.
    Ignored,
    /// The source refused; the subflow stops and its chunks go to the others.
    Refused(ErrorKind),
}

/// How far the transfer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Chunks downloaded.
    pub chunks_done: u32,
    /// Chunks in the content, once the metadata is known.
    pub chunk_count: Option<u32>,
    /// Payload bytes downloaded.
    pub bytes_done: u64,
    /// Size of the content, once the metadata is known.
    pub size_bytes: Option<u64>,
}

/// Counters of the subscriber as a whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubscriberStats {
    /// Replies that were [`Delivery::Ignored`].
    pub ignored_replies: u64,
    /// Error replies received.
    pub error_replies: u64,
}

/// The receiving end of an mmTP transfer of one content.
///
/// # Driving it
///
/// As the other endpoints of this crate (after quinn-proto), its methods are of four kinds:
/// * getters on `&self` ([`progress`](Self::progress), [`subflows`](Self::subflows), …);
/// * `handle_*` for what happens: [`handle_reply`](Self::handle_reply) for every reply that
///   arrives, [`handle_timeout`](Self::handle_timeout) when the time from
///   [`poll_timeout`](Self::poll_timeout) has come;
/// * commands from the topology manager: [`add_path`](Self::add_path),
///   [`remove_path`](Self::remove_path), [`set_group`](Self::set_group);
/// * [`poll_transmit`](Self::poll_transmit), to be called until it returns `None` after each
///   of the above, sending every request it returns on the reverse FID of its
///   [`path`](Request::path).
///
/// The congestion controller is passed to every call that may change a window; every
/// subflow is one path of it. Time passed in must never go backwards.
#[derive(Clone, Debug)]
pub struct Subscriber {
    config: SubscriberConfig,
    content: ContentId,
    metadata: Option<Metadata>,
    /// Provisional until the metadata arrives: one cell for chunk 0 if it is requested with
    /// the metadata, else none.
    chunks: ChunkArray,
    subflows: Vec<Subflow>,
    outbox: VecDeque<Request>,
    /// Subflows that may have something to request, in the order they became so.
    ready: VecDeque<usize>,
    queued: Vec<bool>,
    bytes_done: u64,
    stats: SubscriberStats,
}

impl Subscriber {
    /// A subscriber for `content`, with no subflow yet.
    #[must_use]
    pub fn new(content: ContentId, config: SubscriberConfig) -> Self {
        Subscriber {
            config,
            content,
            metadata: None,
            chunks: ChunkArray::new(u32::from(config.first_chunk_with_metadata)),
            subflows: Vec::new(),
            outbox: VecDeque::new(),
            ready: VecDeque::new(),
            queued: Vec::new(),
            bytes_done: 0,
            stats: SubscriberStats::default(),
        }
    }

    /// Adds a subflow for a new FID pair in coupling `group` (thesis §5.2 `group_id`; all
    /// paths in group 0 when the topology manager gives no assistance); returns its index.
    ///
    /// It joins `cc` as a path with the chunk size as MSS once the metadata is known (at once
    /// if it already is).
    pub fn add_path<C: MultipathController>(&mut self, cc: &mut C, group: u32) -> PathIndex {
        let id = PathIndex(self.subflows.len() as u32);
        let mut sf = Subflow::new(id, group, self.config.rtt);
        if let Some(m) = &self.metadata {
            let path = cc.add_path(u64::from(m.chunk_bytes));
            cc.set_group(path, group);
            sf.path = Some(path);
        }
        self.subflows.push(sf);
        self.queued.push(false);
        self.flag(id.index());
        id
    }

    /// Removes subflow `id` (its FIDs were withdrawn): its chunks become requestable by the
    /// others and its path leaves `cc`.
    pub fn remove_path<C: MultipathController>(&mut self, cc: &mut C, id: PathIndex) {
        self.stop_subflow(cc, id.index(), SubflowState::Removed);
    }

    /// Moves subflow `id` to coupling group `group` (the topology manager re-sent its FIDs
    /// with another `group_id`).
    pub fn set_group<C: MultipathController>(&mut self, cc: &mut C, id: PathIndex, group: u32) {
        let Some(sf) = self.subflows.get_mut(id.index()) else {
            return;
        };
        sf.group = group;
        if let Some(path) = sf.path {
            cc.set_group(path, group);
        }
        self.flag(id.index());
    }

    /// The next request to send, if any. Call it until it returns `None`.
    pub fn poll_transmit<C: MultipathController>(&mut self, now: Time, cc: &C) -> Option<Request> {
        loop {
            if let Some(r) = self.outbox.pop_front() {
                return Some(r);
            }
            if self.is_complete() {
                return None;
            }
            let i = self.ready.pop_front()?;
            self.queued[i] = false;
            self.fill(i, now, cc);
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.is_complete() {
            return None;
        }
        self.subflows.iter().filter_map(|sf| sf.deadline).min()
    }

    /// Processes the retransmission timers of every subflow (those not expired do nothing).
    pub fn handle_timeout<C: MultipathController>(&mut self, now: Time, cc: &mut C) {
        if self.is_complete() {
            return;
        }
        for i in 0..self.subflows.len() {
            if self.subflows[i].deadline.is_some_and(|d| d <= now) {
                self.expire(i, cc);
            }
        }
    }

    /// Processes a reply that arrived; says whether the driver should keep its payload.
    pub fn handle_reply<C: MultipathController>(
        &mut self,
        now: Time,
        reply: &Reply,
        cc: &mut C,
    ) -> Delivery {
        let i = reply.path().index();
        if reply.content() != self.content || i >= self.subflows.len() {
            return self.ignore();
        }
        let delivery = match reply {
            Reply::Metadata(r) => self.on_metadata(now, i, r, cc),
            Reply::Chunk(c) => self.on_chunk(now, i, c, cc),
            Reply::Error(e) => self.on_error(now, i, e, cc),
        };
        if delivery == Delivery::Ignored {
            self.stats.ignored_replies += 1;
        }
        delivery
    }

    fn ignore(&mut self) -> Delivery {
        self.stats.ignored_replies += 1;
        Delivery::Ignored
    }

    /// Bookkeeping common to every reply on subflow `i` for `part`: the subflow is alive, the
    /// request is no longer outstanding, and the RTT is sampled if Karn's rule allows (thesis
    /// §4.5: "requests retransmitted over the same path are ignored when updating the RTT
    /// estimator"). Returns what the subflow held for `part` and the RTT sample taken.
    fn answered(
        &mut self,
        now: Time,
        i: usize,
        part: Part,
        echo: Echo,
    ) -> (Option<Held>, Option<Dur>) {
        let sf = &mut self.subflows[i];
        sf.stats.replies += 1;
        if sf.state != SubflowState::Active {
            return (None, None);
        }
        sf.consecutive_expiries = 0;
        sf.got_reply = true;
        let was_oldest = sf.flight.first().is_some_and(|&(_, p)| p == part);
        let held = sf.forget(part);
        let sample = held
            .filter(|h| h.sends == 1 && echo.sent_at <= now)
            .map(|_| now - echo.sent_at);
        if let Some(r) = sample {
            sf.rtt.on_sample(r);
        }
        if was_oldest && held.is_some_and(|h| h.in_flight) && !sf.flight.is_empty() {
            // RFC 6298 §5.3: the request the timer guarded is answered; restart it for the
            // others.
            sf.deadline = Some(now + sf.rtt.rto());
        }
        self.flag(i);
        (held, sample)
    }

    fn on_metadata<C: MultipathController>(
        &mut self,
        now: Time,
        i: usize,
        r: &MetadataReply,
        cc: &mut C,
    ) -> Delivery {
        if self.metadata.is_some() {
            self.answered(now, i, Part::Metadata, r.echo);
            return Delivery::Duplicate;
        }
        if r.metadata.validate().is_err() {
            return Delivery::Ignored;
        }
        self.answered(now, i, Part::Metadata, r.echo);
        let m = r.metadata.clone();
        self.chunks.resize(m.chunk_count);
        if m.chunk_count == 0 {
            // Chunk 0 was requested with the metadata of an empty content.
            for sf in &mut self.subflows {
                sf.forget(Part::Chunk(0));
            }
        }
        // Every subflow joins the controller with the chunk size as MSS (D54).
        for sf in &mut self.subflows {
            if sf.state == SubflowState::Active {
                let path = cc.add_path(u64::from(m.chunk_bytes));
                cc.set_group(path, sf.group);
                sf.path = Some(path);
            }
        }
        self.metadata = Some(m);
        self.flag_all(None);
        Delivery::Metadata
    }

    fn on_chunk<C: MultipathController>(
        &mut self,
        now: Time,
        i: usize,
        c: &Chunk,
        cc: &mut C,
    ) -> Delivery {
        if c.index >= self.chunks.len() {
            return Delivery::Ignored;
        }
        if let Some(m) = &self.metadata {
            if m.chunk_len(c.index) != Some(c.payload_bytes) {
                return Delivery::Ignored;
            }
        }
        let (held, sample) = self.answered(now, i, Part::Chunk(c.index), c.echo);
        if let Some(threshold) = self.config.gap_threshold {
            self.detect_gap(
                now,
                i,
                (c.echo.sent_at, Part::Chunk(c.index)),
                threshold,
                cc,
            );
        }
        let prev = self.chunks.mark_downloaded(c.index);
        if prev == ChunkState::Downloaded {
            self.subflows[i].stats.duplicates += 1;
            return Delivery::Duplicate;
        }
        if let ChunkState::Requested(j) = prev {
            if j.index() != i {
                // Downloaded on another path than the one holding it (after a release): that
                // subflow no longer waits for it.
                self.subflows[j.index()].forget(Part::Chunk(c.index));
                self.flag(j.index());
            }
        }
        for sf in &mut self.subflows {
            sf.lost_here.remove(&c.index);
        }
        self.bytes_done += u64::from(c.payload_bytes);
        let chunk_bytes = self
            .metadata
            .as_ref()
            .map_or(0, |m| u64::from(m.chunk_bytes));
        let sf = &mut self.subflows[i];
        sf.stats.chunks_delivered += 1;
        sf.stats.bytes_delivered += u64::from(c.payload_bytes);
        // Thesis §4.5: replies to requests sent before a loss are kept but do not grow the
        // window (D59). The timeout presumed such requests lost, so only a reply to the
        // request the subflow has in flight for this chunk grows it.
        if let (Some(path), Some(h)) = (sf.path, held) {
            if h.in_flight && h.sent_at == c.echo.sent_at {
                let ack = AckSample {
                    now,
                    acked_bytes: u64::from(c.payload_bytes),
                    rtt_sample: sample,
                    one_way_delay: None,
                    srtt: sf.rtt.srtt().unwrap_or(Dur::ZERO),
                    flight_bytes: u64::from(sf.flight_chunks) * chunk_bytes,
                };
                cc.on_ack(path, &ack);
            }
        }
        Delivery::Chunk { index: c.index }
    }

    fn on_error<C: MultipathController>(
        &mut self,
        now: Time,
        i: usize,
        e: &ErrorReply,
        cc: &mut C,
    ) -> Delivery {
        self.stats.error_replies += 1;
        if let (ErrorKind::IndexOutOfRange, Part::Chunk(index)) = (e.kind, e.part) {
            if self.metadata.is_none() || index >= self.chunks.len() {
                // Chunk 0 requested with the metadata of what the source says is an empty
                // content; the metadata will confirm the chunk count.
                self.answered(now, i, e.part, e.echo);
                if self.metadata.is_none() {
                    self.chunks.resize(0);
                }
                return Delivery::Ignored;
            }
        }
        self.subflows[i].stats.replies += 1;
        self.stop_subflow(cc, i, SubflowState::Refused(e.kind));
        Delivery::Refused(e.kind)
    }

    /// Stops subflow `i` for good: releases its chunks to the others and leaves `cc`.
    fn stop_subflow<C: MultipathController>(&mut self, cc: &mut C, i: usize, state: SubflowState) {
        let Some(sf) = self.subflows.get_mut(i) else {
            return;
        };
        if sf.state != SubflowState::Active {
            return;
        }
        sf.state = state;
        if let Some(path) = sf.path {
            cc.remove_path(path);
        }
        for c in sf.clear() {
            self.chunks.release(c);
        }
        self.flag_all(None);
    }

    /// Gap-based loss detection (D86): a reply to the request `answered` (its send time and
    /// part) arrived on subflow `i`. Replies to requests sent after the oldest chunk request
    /// in flight (in the flight's order: send time, then part, the order a burst is sent in)
    /// count
    /// against it; at `threshold` it is presumed lost: its chunk goes back to the shared
    /// array (requested again before any new chunk, D56) and, unless it was sent before the
    /// last decrease's round ended, the controller makes one multiplicative decrease (RFC
    /// 5681 §3.2 through the controller: a fast retransmit whose recovery ends at once, since
    /// mmTP counts the requests in flight instead of inflating the window).
    fn detect_gap<C: MultipathController>(
        &mut self,
        now: Time,
        i: usize,
        answered: (Time, Part),
        threshold: u32,
        cc: &mut C,
    ) {
        let chunk_bytes = self
            .metadata
            .as_ref()
            .map_or(0, |m| u64::from(m.chunk_bytes));
        let sf = &mut self.subflows[i];
        let Some(&(oldest_at, oldest)) =
            sf.flight.iter().find(|(_, p)| matches!(p, Part::Chunk(_)))
        else {
            sf.gap = None;
            return;
        };
        if (oldest_at, oldest) >= answered {
            return;
        }
        let count = match sf.gap {
            Some((at, part, n)) if at == oldest_at && part == oldest => n + 1,
            _ => 1,
        };
        if count < threshold.max(1) {
            sf.gap = Some((oldest_at, oldest, count));
            return;
        }
        sf.gap = None;
        let Part::Chunk(c) = oldest else { return };
        let was_first = sf.flight.first().is_some_and(|&(_, p)| p == oldest);
        sf.forget(oldest);
        sf.lost_here.insert(c);
        sf.stats.gap_losses += 1;
        sf.stats.released += 1;
        if was_first && !sf.flight.is_empty() {
            // RFC 6298 §5.3: the request the timer guarded is settled; restart it.
            sf.deadline = Some(now + sf.rtt.rto());
        }
        if let Some(path) = sf.path {
            if sf.recover_until.is_none_or(|r| oldest_at > r) {
                let flight_bytes = u64::from(sf.flight_chunks + 1) * chunk_bytes;
                cc.on_congestion_event(path, CongestionEvent::FastRetransmit { flight_bytes });
                cc.on_recovery_ack(
                    path,
                    RecoveryAck::Full {
                        flight_bytes: u64::from(sf.flight_chunks) * chunk_bytes,
                    },
                );
                // One decrease per round: losses of requests sent before now belong to it.
                sf.recover_until = Some(sf.flight.last().map_or(now, |&(t, _)| t));
            }
        }
        self.chunks.release(c);
        self.flag_all(Some(i));
        self.flag(i);
    }

    /// Subflow `i`'s retransmission timer expired (thesis §4.5; D56, D57).
    fn expire<C: MultipathController>(&mut self, i: usize, cc: &mut C) {
        let chunk_bytes = self
            .metadata
            .as_ref()
            .map_or(0, |m| u64::from(m.chunk_bytes));
        let metadata_known = self.metadata.is_some();
        let sf = &mut self.subflows[i];
        sf.stats.timeouts += 1;
        sf.consecutive_expiries += 1;
        if let Some(path) = sf.path {
            // RFC 5681 §3.1 through the controller: ssthresh from the flight unless this is a
            // repeated expiry without a reply in between, then a loss window of one chunk.
            cc.on_congestion_event(
                path,
                CongestionEvent::Timeout {
                    flight_bytes: u64::from(sf.flight_chunks) * chunk_bytes,
                    repeated: sf.consecutive_expiries > 1,
                },
            );
        }
        // RFC 6298 §5.5: back off; the timer restarts with the next request (§5.6).
        sf.rtt.back_off();
        sf.deadline = None;
        // One timer guards the subflow's requests; when it expires, the oldest chunk request
        // (RFC 6298 §5.4: "the earliest segment") and the metadata request have expired and
        // are re-issued on the same path (thesis §4.5), unless it is their second expiry
        // (D57). The other requests in flight are presumed lost, as by TCP's go-back-N, and
        // their chunks go back to the shared array, where the first subflow with room
        // requests them again before any new chunk (D56).
        let oldest = sf.flight.iter().find_map(|&(_, p)| match p {
            Part::Chunk(c) => Some(c),
            Part::Metadata => None,
        });
        sf.flight.clear();
        sf.flight_chunks = 0;
        let mut released = Vec::new();
        for (&c, h) in &mut sf.held {
            let expired = h.in_flight && oldest == Some(c);
            h.in_flight = false;
            if expired {
                h.expiries += 1;
            }
            if expired && h.expiries < EXPIRIES_BEFORE_RELEASE {
                sf.resend = Some(c);
            } else {
                released.push(c);
            }
        }
        let mut metadata_released = false;
        if let Some(h) = &mut sf.meta {
            if h.in_flight {
                h.expiries += 1;
                h.in_flight = false;
            }
            if !metadata_known && h.expiries >= EXPIRIES_BEFORE_RELEASE {
                sf.meta = None;
                metadata_released = true;
            }
        }
        for &c in &released {
            sf.forget(Part::Chunk(c));
            sf.lost_here.insert(c);
            sf.stats.released += 1;
            self.chunks.release(c);
        }
        if !released.is_empty() || metadata_released {
            // The others look first, so a chunk given back is not taken straight back by a
            // subflow that has just shown it is losing.
            self.flag_all(Some(i));
        }
        self.flag(i);
    }

    /// Subflow `id`'s window in chunks: the controller's window over the chunk size (at least
    /// one), capped by the start-up window until its first reply (D54).
    ///
    /// # Panics
    /// If no such subflow was added.
    #[must_use]
    pub fn window_chunks<C: MultipathController>(&self, id: PathIndex, cc: &C) -> u32 {
        let sf = &self.subflows[id.index()];
        let initial = self.config.initial_window_chunks.max(1);
        match (sf.path, &self.metadata) {
            (Some(path), Some(m)) => {
                let w = (cc.window(path) / u64::from(m.chunk_bytes)).max(1);
                let w = u32::try_from(w).unwrap_or(u32::MAX);
                if sf.got_reply {
                    w
                } else {
                    w.min(initial)
                }
            }
            _ => initial,
        }
    }

    /// Puts into the outbox what subflow `i` may request now.
    fn fill<C: MultipathController>(&mut self, i: usize, now: Time, cc: &C) {
        if self.subflows[i].state != SubflowState::Active {
            return;
        }
        let w = self.window_chunks(PathIndex(i as u32), cc);
        // Thesis §4.5: a request that timed out is re-issued on the same path at once (RFC 6298
        // §5.4; the controller's window after a timeout is one chunk, which it fills).
        if self.subflows[i].meta.is_some_and(|h| !h.in_flight) {
            self.send(i, now, Part::Metadata);
        }
        if let Some(c) = self.subflows[i].resend {
            self.send(i, now, Part::Chunk(c));
        }
        let sf = &mut self.subflows[i];
        if sf.is_stalled() {
            // Its source has not answered twice in a row: request nothing new; probe it if
            // nothing else is outstanding (D57).
            if sf.held.is_empty() && sf.meta.is_none() {
                sf.meta = Some(Held::new(now, sf.meta_sent));
                sf.stats.probes += 1;
                self.send(i, now, Part::Metadata);
            }
            return;
        }
        if self.metadata.is_none() && self.subflows.iter().all(|s| s.meta.is_none()) {
            // Thesis §4.3: the first request is for the metadata.
            let sf = &mut self.subflows[i];
            sf.meta = Some(Held::new(now, sf.meta_sent));
            self.send(i, now, Part::Metadata);
        }
        let id = PathIndex(i as u32);
        let new = match self.config.selection {
            Selection::Fast => {
                let own = self.subflows[i].held.keys().copied();
                self.chunks.select_fast(id, w, own)
            }
            Selection::Scan => self.chunks.select_scan(id, w).requested,
        };
        for c in new {
            let sf = &mut self.subflows[i];
            let sent_before = sf.lost_here.remove(&c);
            sf.held.insert(c, Held::new(now, sent_before));
            self.send(i, now, Part::Chunk(c));
        }
    }

    /// Sends `part` (held by subflow `i`) now.
    fn send(&mut self, i: usize, now: Time, part: Part) {
        let sf = &mut self.subflows[i];
        let retransmission = sf.record_send(now, part);
        let echo = Echo {
            sent_at: now,
            retransmission,
        };
        let path = sf.id;
        let content = self.content;
        self.outbox.push_back(match part {
            Part::Metadata => Request::Metadata(MetadataRequest {
                content,
                path,
                echo,
            }),
            Part::Chunk(index) => Request::Chunk(ChunkRequest {
                content,
                index,
                path,
                echo,
            }),
        });
    }

    fn flag(&mut self, i: usize) {
        if self.subflows[i].state == SubflowState::Active && !self.queued[i] {
            self.queued[i] = true;
            self.ready.push_back(i);
        }
    }

    /// Flags every subflow, `last` after the others.
    fn flag_all(&mut self, last: Option<usize>) {
        for i in 0..self.subflows.len() {
            if Some(i) != last {
                self.flag(i);
            }
        }
        if let Some(i) = last {
            self.flag(i);
        }
    }

    /// Whether every chunk has arrived (the metadata included).
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.metadata.is_some() && self.chunks.is_complete()
    }
    /// How far the transfer is.
    #[must_use]
    pub fn progress(&self) -> Progress {
        Progress {
            chunks_done: self.chunks.downloaded(),
            chunk_count: self.metadata.as_ref().map(|m| m.chunk_count),
            bytes_done: self.bytes_done,
            size_bytes: self.metadata.as_ref().map(|m| m.size_bytes),
        }
    }
    /// The content.
    #[must_use]
    pub fn content(&self) -> ContentId {
        self.content
    }
    /// The metadata, once it has arrived.
    #[must_use]
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.as_ref()
    }
    /// The chunk-state array (provisional until the metadata arrives).
    #[must_use]
    pub fn chunks(&self) -> &ChunkArray {
        &self.chunks
    }
    /// Every subflow ever added, by index.
    #[must_use]
    pub fn subflows(&self) -> &[Subflow] {
        &self.subflows
    }
    /// Subflow `id`.
    ///
    /// # Panics
    /// If no such subflow was added.
    #[must_use]
    pub fn subflow(&self, id: PathIndex) -> &Subflow {
        &self.subflows[id.index()]
    }
    /// Counters.
    #[must_use]
    pub fn stats(&self) -> &SubscriberStats {
        &self.stats
    }
    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &SubscriberConfig {
        &self.config
    }
}
