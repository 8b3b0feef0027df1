//! mmTP over NDN (thesis §6.3; issue 22): the mmTP [`Subscriber`] and its coupled
//! controller pulling one content as Interests, with one subflow per route that the
//! branching routers' `_R<k>` labels reveal.
//!
//! * **Routes.** A branching router (two or more FIB next hops for the name) appends `_R<k>`
//!   to each Data it forwards, k the rank of the next hop the Data came from; the labels a
//!   Data arrives with name its route. An Interest carrying those labels in the same order is
//!   steered along that route: each branching router takes the last label and strips it.
//! * **Subflows.** Subflow 0 sends Interests without labels: the routers' strategy chooses
//!   their way, and the labels of its Data reveal routes. Each new route (up to
//!   `max_routes`) becomes a subflow of its own, steered by its labels, with its own RTT
//!   estimator and retransmission timer and a path of the coupled controller. Subflow 0
//!   stays for the whole download: it finds routes again after a failure (D327).
//! * **Replies.** NDN Data carry neither the subflow nor mmTP's echo: the adapter keeps the
//!   echo of each (part, subflow) requested and gives the subscriber the reply it would have
//!   had over PSI. A Data whose labels name a subflow that asked for the part answers that
//!   subflow; otherwise subflow 0, which asked without labels.
//! * **NACKs.** A NACK of a steered Interest (no route, face down) removes the route's
//!   subflow; its chunks go back to the shared array (thesis §4.5, as a withdrawn FID).
//!
//! Sans-IO: the caller names and sends what [`MmtpNdnConsumer::poll_transmit`] returns (the
//! part under the content's name, then the labels), hands in Data and NACKs with the part
//! and labels of their names, and calls [`MmtpNdnConsumer::handle_timeout`] when
//! [`MmtpNdnConsumer::poll_timeout`] says.

use pathpool_cc::MultipathController;
use pathpool_core::hash::FxHashMap;
use pathpool_core::Time;

use crate::mmtp::{
    Chunk, ContentId, Delivery, Echo, Metadata, MetadataReply, Part, PathIndex, Reply, Subscriber,
    SubscriberConfig,
};

/// Default bound on the steered subflows of one download.
pub const DEFAULT_MAX_ROUTES: usize = 8;

/// The adapter's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct MmtpNdnConfig {
    /// The subscriber's.
    pub subscriber: SubscriberConfig,
    /// What the producer's metadata Data (`<content>/mm`) holds.
    pub metadata: Metadata,
    /// The most steered subflows (routes) at once, besides subflow 0.
    pub max_routes: usize,
}

/// An Interest to send: the part, under the content's name, then the route labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmtpInterest {
    /// The part asked for (`mm` or the chunk index).
    pub part: Part,
    /// The route's labels, to append in this order (empty: unsteered).
    pub labels: Vec<u32>,
}

/// Counters of the adapter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmtpNdnStats {
    /// Interests sent.
    pub interests: u64,
    /// Of those, for a part the same subflow had asked for before.
    pub resends: u64,
    /// Data received.
    pub data: u64,
    /// Data no subflow waited for (dropped).
    pub stray: u64,
    /// NACKs received.
    pub nacks: u64,
    /// Routes that became subflows.
    pub routes_found: u64,
    /// Route subflows removed by a NACK.
    pub routes_lost: u64,
}

/// The consumer.
#[derive(Clone, Debug)]
pub struct MmtpNdnConsumer<C> {
    config: MmtpNdnConfig,
    content: ContentId,
    subscriber: Subscriber,
    cc: C,
    /// Each subflow's labels (subflow 0: none).
    routes: Vec<Vec<u32>>,
    /// The live subflow of each route.
    by_route: FxHashMap<Vec<u32>, PathIndex>,
    /// The echo of each (part, subflow) asked for and not answered.
    pending: FxHashMap<(Part, u32), Echo>,
    stats: MmtpNdnStats,
}

impl<C: MultipathController> MmtpNdnConsumer<C> {
    /// A consumer of `content` with controller `cc`: subflow 0, unsteered, asks for the
    /// metadata first.
    pub fn new(content: ContentId, config: MmtpNdnConfig, mut cc: C) -> Self {
        let mut subscriber = Subscriber::new(content, config.subscriber);
        let first = subscriber.add_path(&mut cc, 0);
        let mut by_route = FxHashMap::default();
        by_route.insert(Vec::new(), first);
        MmtpNdnConsumer {
            config,
            content,
            subscriber,
            cc,
            routes: vec![Vec::new()],
            by_route,
            pending: FxHashMap::default(),
            stats: MmtpNdnStats::default(),
        }
    }

    /// The next Interest to send, if any. Call it until it returns `None`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<MmtpInterest> {
        let r = self.subscriber.poll_transmit(now, &self.cc)?;
        let echo = r.echo();
        self.stats.interests += 1;
        self.stats.resends += u64::from(echo.retransmission);
        self.pending.insert((r.part(), r.path().0), echo);
        Some(MmtpInterest {
            part: r.part(),
            labels: self.routes[r.path().index()].clone(),
        })
    }

    /// When [`handle_timeout`](Self::handle_timeout) is next due.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.subscriber.poll_timeout()
    }

    /// The subflows' retransmission timers.
    pub fn handle_timeout(&mut self, now: Time) {
        self.subscriber.handle_timeout(now, &mut self.cc);
    }

    /// A Data for `part` arrived at `now` with route labels `labels` (in name order).
    pub fn on_data(&mut self, now: Time, part: Part, labels: &[u32]) -> Delivery {
        self.stats.data += 1;
        let routed = self.by_route.get(labels).copied();
        let asked = |p: PathIndex| self.pending.contains_key(&(part, p.0));
        let path = match routed {
            Some(p) if asked(p) => p,
            _ if asked(PathIndex(0)) => PathIndex(0),
            _ => {
                self.stats.stray += 1;
                return Delivery::Ignored;
            }
        };
        let echo = self.pending.remove(&(part, path.0)).expect("asked");
        if routed.is_none() && self.by_route.len() <= self.config.max_routes {
            let p = self.subscriber.add_path(&mut self.cc, 0);
            self.routes.push(labels.to_vec());
            self.by_route.insert(labels.to_vec(), p);
            self.stats.routes_found += 1;
        }
        let content = self.content;
        let reply = match part {
            Part::Metadata => Reply::Metadata(MetadataReply {
                content,
                path,
                echo,
                metadata: self.config.metadata.clone(),
            }),
            Part::Chunk(index) => Reply::Chunk(Chunk {
                content,
                index,
                path,
                echo,
                payload_bytes: self.config.metadata.chunk_len(index).unwrap_or(0),
            }),
        };
        self.subscriber.handle_reply(now, &reply, &mut self.cc)
    }

    /// A NACK of the Interest for `part` with labels `labels` arrived. A steered Interest's
    /// NACK, unless a duplicate's, ends its route's subflow; an unsteered one's is left to
    /// the retransmission timer.
    pub fn on_nack(&mut self, part: Part, labels: &[u32], duplicate: bool) {
        self.stats.nacks += 1;
        if duplicate || labels.is_empty() {
            return;
        }
        if let Some(p) = self.by_route.remove(labels) {
            self.pending.remove(&(part, p.0));
            self.subscriber.remove_path(&mut self.cc, p);
            self.stats.routes_lost += 1;
        }
    }

    /// Whether every chunk has arrived.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.subscriber.is_complete()
    }

    /// The subscriber (its subflows, chunks and progress).
    #[must_use]
    pub fn subscriber(&self) -> &Subscriber {
        &self.subscriber
    }

    /// The coupled controller.
    #[must_use]
    pub fn controller(&self) -> &C {
        &self.cc
    }

    /// Each subflow's route labels, by subflow index (subflow 0: none).
    #[must_use]
    pub fn routes(&self) -> &[Vec<u32>] {
        &self.routes
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> &MmtpNdnStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use pathpool_cc::{CcKind, CcOptions, WindowConfig};
    use pathpool_core::Dur;

    use super::*;
    use crate::mmtp::SubflowState;

    const CHUNK: u32 = 1024;

    fn consumer(chunks: u64) -> MmtpNdnConsumer<pathpool_cc::AnyController> {
        let config = MmtpNdnConfig {
            subscriber: SubscriberConfig::default(),
            metadata: Metadata::new(chunks * u64::from(CHUNK), CHUNK, [0; 32], "test"),
            max_routes: 2,
        };
        let cc = CcKind::Nmcc.build_with(WindowConfig::default(), CcOptions::default());
        MmtpNdnConsumer::new(ContentId(7), config, cc)
    }

    fn drain(c: &mut MmtpNdnConsumer<pathpool_cc::AnyController>, now: Time) -> Vec<MmtpInterest> {
        std::iter::from_fn(|| c.poll_transmit(now)).collect()
    }

    fn at(ms: u64) -> Time {
        Time::ZERO + Dur::from_ms(ms)
    }

    #[test]
    fn labels_of_unsteered_data_become_steered_subflows() {
        let mut c = consumer(100);
        // Subflow 0 asks for the metadata and chunk 0, unsteered.
        let first = drain(&mut c, at(0));
        assert_eq!(
            first,
            vec![
                MmtpInterest {
                    part: Part::Metadata,
                    labels: vec![]
                },
                MmtpInterest {
                    part: Part::Chunk(0),
                    labels: vec![]
                },
            ]
        );
        // The metadata came by route [2, 1]: a subflow for it.
        assert_eq!(
            c.on_data(at(10), Part::Metadata, &[2, 1]),
            Delivery::Metadata
        );
        assert_eq!(c.routes(), &[vec![], vec![2, 1]]);
        assert_eq!(
            c.on_data(at(11), Part::Chunk(0), &[1]),
            Delivery::Chunk { index: 0 }
        );
        assert_eq!(c.routes(), &[vec![], vec![2, 1], vec![1]]);
        // max_routes = 2: a third route is answered on subflow 0, not added.
        let next = drain(&mut c, at(11));
        let steered: Vec<_> = next.iter().filter(|i| i.labels == [2, 1]).collect();
        assert!(!steered.is_empty(), "{next:?}");
        let unsteered = next
            .iter()
            .find(|i| i.labels.is_empty())
            .expect("subflow 0");
        assert!(matches!(
            c.on_data(at(20), unsteered.part, &[3]),
            Delivery::Chunk { .. }
        ));
        assert_eq!(c.routes().len(), 3);
        assert_eq!(c.stats().routes_found, 2);
        // A steered Interest's Data answers its subflow, whose chunk it was.
        let part = steered[0].part;
        assert!(matches!(
            c.on_data(at(30), part, &[2, 1]),
            Delivery::Chunk { .. }
        ));
        assert_eq!(
            c.subscriber()
                .subflow(PathIndex(1))
                .stats()
                .chunks_delivered,
            1
        );
        // The same Data again: nobody waits for it.
        assert_eq!(c.on_data(at(31), part, &[2, 1]), Delivery::Ignored);
        assert_eq!(c.stats().stray, 1);
    }

    #[test]
    fn a_nack_on_a_route_removes_its_subflow_and_the_download_completes() {
        let mut c = consumer(40);
        let mut now = at(0);
        let mut sent = drain(&mut c, now);
        let mut nacked = false;
        // Two routes; route [2] refuses once, after which its chunks go to the others.
        let mut turn = 0u32;
        for _ in 0..10_000 {
            if c.is_complete() {
                break;
            }
            now += Dur::from_ms(5);
            for i in std::mem::take(&mut sent) {
                if i.labels == [2] && !nacked && c.routes().len() == 3 {
                    c.on_nack(i.part, &i.labels, false);
                    nacked = true;
                    continue;
                }
                let labels = if i.labels.is_empty() {
                    turn += 1;
                    vec![1 + turn % 2]
                } else {
                    i.labels.clone()
                };
                c.on_data(now, i.part, &labels);
            }
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
            sent = drain(&mut c, now);
        }
        assert!(c.is_complete(), "{:?}", c.subscriber().progress());
        assert!(nacked);
        assert_eq!(c.stats().routes_lost, 1);
        let lost = c
            .routes()
            .iter()
            .position(|r| r == &[2])
            .expect("route [2]");
        assert_eq!(
            c.subscriber().subflow(PathIndex(lost as u32)).state(),
            SubflowState::Removed
        );
    }
}
