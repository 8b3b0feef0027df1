//! One subflow of a subscriber: what it has requested, its RTT estimator and its
//! retransmission timer (thesis §4.5: "each subflow has its own congestion loop: a congestion
//! window w and a retransmission timer"; the window itself lives in the connection's
//! [`MultipathController`](pathpool_cc::MultipathController)).

use std::collections::{BTreeMap, BTreeSet};

use pathpool_core::{Dur, PathId, RttConfig, RttEstimator, Time};

use super::message::{ErrorKind, Part, PathIndex};

/// Whether a subflow is in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubflowState {
    /// Requests chunks and is timed.
    Active,
    /// Removed by the driver (the topology manager withdrew its FIDs); replies that still
    /// arrive on it are accepted as data only.
    Removed,
    /// Its source answered with an error (it does not hold the content, or disagrees about its
    /// size); it requests nothing more.
    Refused(ErrorKind),
}

/// Counters of one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowStats {
    /// Requests sent: metadata, chunks, re-requests and probes.
    pub requests: u64,
    /// Re-requests on this path of a part already requested on it (after a timeout).
    pub retransmissions: u64,
    /// Metadata requests sent as probes while the subflow was stalled (D57).
    pub probes: u64,
    /// Replies received, of any kind.
    pub replies: u64,
    /// Chunk requests presumed lost at expiries and given back to the shared array, and chunks
    /// given back after a second expiry.
    pub released: u64,
    /// Chunks that arrived on this subflow first.
    pub chunks_delivered: u64,
    /// Payload bytes of those chunks.
    pub bytes_delivered: u64,
    /// Chunk replies for chunks already downloaded.
    pub duplicates: u64,
    /// Retransmission timer expiries.
    pub timeouts: u64,
    /// Chunk requests presumed lost by gap-based detection (D86).
    pub gap_losses: u64,
}

/// A part a subflow has requested and not received (for chunks: a cell in state
/// `Requested(this subflow)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Held {
    /// When the latest request for it was sent.
    pub(crate) sent_at: Time,
    /// Requests for it sent on this path since the subflow took it.
    pub(crate) sends: u32,
    /// Whether that latest request is in flight: false once a timeout presumed it lost and
    /// until it is sent again.
    pub(crate) in_flight: bool,
    /// Requests for it on this path that expired (timer expiries while one was in flight).
    pub(crate) expiries: u32,
}

impl Held {
    /// A part taken now; `sent_before` if it was requested on this path before.
    pub(crate) fn new(now: Time, sent_before: bool) -> Self {
        Held {
            sent_at: now,
            sends: u32::from(sent_before),
            in_flight: false,
            expiries: 0,
        }
    }
}

/// One subflow of a [`Subscriber`](super::Subscriber).
#[derive(Clone, Debug)]
pub struct Subflow {
    pub(crate) id: PathIndex,
    pub(crate) state: SubflowState,
    pub(crate) group: u32,
    /// Its path in the controller, once the metadata has given the chunk size.
    pub(crate) path: Option<PathId>,
    pub(crate) rtt: RttEstimator,
    /// Own chunks (the cells in state `Requested(id)`), by index.
    pub(crate) held: BTreeMap<u32, Held>,
    /// A metadata request it holds (the first one, or a probe).
    pub(crate) meta: Option<Held>,
    /// Whether it has ever sent a metadata request (a new one is then a retransmission on
    /// this path).
    pub(crate) meta_sent: bool,
    /// Requests in flight, oldest first; the timer guards the first.
    pub(crate) flight: BTreeSet<(Time, Part)>,
    /// Chunk requests in flight (the metadata request does not count against the window).
    pub(crate) flight_chunks: u32,
    /// The own chunk whose request expired, to be requested again on this path.
    pub(crate) resend: Option<u32>,
    /// Chunks requested on this path and given back to the array, not yet downloaded: a new
    /// request for one of them here is a retransmission on the same path (Karn's rule).
    pub(crate) lost_here: BTreeSet<u32>,
    /// Timer expiries since the last reply.
    pub(crate) consecutive_expiries: u32,
    /// Whether any reply has arrived on it (ends the start-up window, D54).
    pub(crate) got_reply: bool,
    pub(crate) deadline: Option<Time>,
    /// Gap-based detection (D86): the oldest chunk request in flight and the replies to later
    /// requests counted against it.
    pub(crate) gap: Option<(Time, Part, u32)>,
    /// The send time of the newest request in flight at the last gap-detected decrease:
    /// losses of requests sent up to then belong to that round.
    pub(crate) recover_until: Option<Time>,
    pub(crate) stats: SubflowStats,
}

impl Subflow {
    pub(crate) fn new(id: PathIndex, group: u32, rtt: RttConfig) -> Self {
        Subflow {
            id,
            state: SubflowState::Active,
            group,
            path: None,
            rtt: RttEstimator::new(rtt),
            held: BTreeMap::new(),
            meta: None,
            meta_sent: false,
            flight: BTreeSet::new(),
            flight_chunks: 0,
            resend: None,
            lost_here: BTreeSet::new(),
            consecutive_expiries: 0,
            got_reply: false,
            deadline: None,
            gap: None,
            recover_until: None,
            stats: SubflowStats::default(),
        }
    }

    /// Its index (the path index its requests carry).
    #[must_use]
    pub fn id(&self) -> PathIndex {
        self.id
    }
    /// Whether it is in use.
    #[must_use]
    pub fn state(&self) -> SubflowState {
        self.state
    }
    /// Its coupling group (thesis §5.2 `group_id`).
    #[must_use]
    pub fn group(&self) -> u32 {
        self.group
    }
    /// Its path in the congestion controller, once it has joined it (when the metadata
    /// arrived, or at once for subflows added later).
    #[must_use]
    pub fn controller_path(&self) -> Option<PathId> {
        self.path
    }
    /// Its RTT estimator (SRTT, RTO with backoff).
    #[must_use]
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Its smoothed RTT, once it has a sample.
    #[must_use]
    pub fn srtt(&self) -> Option<Dur> {
        self.rtt.srtt()
    }
    /// Its counters.
    #[must_use]
    pub fn stats(&self) -> &SubflowStats {
        &self.stats
    }
    /// The chunks it has requested and not received (the thesis's `pending`), ascending,
    /// including one waiting to be requested again after a timeout.
    pub fn own_chunks(&self) -> impl Iterator<Item = u32> + '_ {
        self.held.keys().copied()
    }
    /// Chunk requests in flight.
    #[must_use]
    pub fn chunks_in_flight(&self) -> u32 {
        self.flight_chunks
    }
    /// When its retransmission timer expires, if it runs.
    #[must_use]
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }
    /// Timer expiries since its last reply.
    #[must_use]
    pub fn consecutive_expiries(&self) -> u32 {
        self.consecutive_expiries
    }
    /// Whether its timer has expired twice without a reply in between: it then requests no
    /// new chunks and, once it holds none, probes its source with metadata requests until one
    /// is answered (D57).
    #[must_use]
    pub fn is_stalled(&self) -> bool {
        self.consecutive_expiries >= super::EXPIRIES_BEFORE_RELEASE
    }

    /// Records that `part` was sent now (the `Held` entry must exist); returns whether it is
    /// a retransmission on this path.
    pub(crate) fn record_send(&mut self, now: Time, part: Part) -> bool {
        let h = match part {
            Part::Metadata => self.meta.as_mut(),
            Part::Chunk(c) => self.held.get_mut(&c),
        }
        .expect("a part is held before it is sent");
        h.sent_at = now;
        h.sends += 1;
        h.in_flight = true;
        let retransmission = h.sends > 1;
        self.flight.insert((now, part));
        match part {
            Part::Metadata => self.meta_sent = true,
            Part::Chunk(c) => {
                self.flight_chunks += 1;
                if self.resend == Some(c) {
                    self.resend = None;
                }
            }
        }
        if self.deadline.is_none() {
            // RFC 6298 §5.1: start the timer when a request leaves and it is not running.
            self.deadline = Some(now + self.rtt.rto());
        }
        self.stats.requests += 1;
        if retransmission {
            self.stats.retransmissions += 1;
        }
        retransmission
    }

    /// Forgets `part` (answered here or downloaded elsewhere); returns what was held.
    pub(crate) fn forget(&mut self, part: Part) -> Option<Held> {
        let h = match part {
            Part::Metadata => self.meta.take(),
            Part::Chunk(c) => {
                if self.resend == Some(c) {
                    self.resend = None;
                }
                self.held.remove(&c)
            }
        }?;
        if h.in_flight {
            self.flight.remove(&(h.sent_at, part));
            if matches!(part, Part::Chunk(_)) {
                self.flight_chunks -= 1;
            }
            if self.flight.is_empty() {
                // RFC 6298 §5.2: nothing outstanding, turn the timer off.
                self.deadline = None;
            }
        }
        Some(h)
    }

    /// Drops everything it holds and stops its timer; returns its own chunks.
    pub(crate) fn clear(&mut self) -> Vec<u32> {
        let own = self.held.keys().copied().collect();
        self.held.clear();
        self.meta = None;
        self.flight.clear();
        self.flight_chunks = 0;
        self.resend = None;
        self.lost_here.clear();
        self.deadline = None;
        own
    }
}
