//! mmTP over a toy network: each path leads to one of several stateless sources, carries
//! requests after a one-way delay and replies through a drop-tail queue at the path's rate,
//! and may lose requests and replies, reorder replies (jitter) and duplicate them; a source
//! may go silent for a while. The driver stores the payload of every chunk the subscriber
//! reports as new and checks the reassembled content with the metadata's SHA-256.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use pathpool_cc::{CcKind, WindowConfig};
use pathpool_core::{Dur, Rng, Time};
use pathpool_proto::mmtp::{
    verify, ContentId, Delivery, IntegrityError, MemoryStore, Part, PathIndex, Publisher, Reply,
    Request, Selection, Subscriber, SubscriberConfig,
};

const CHUNK: u32 = 1000;
const NAME: &str = "/test/file";

#[derive(Clone, Copy)]
struct PathModel {
    source: usize,
    /// One-way propagation delay.
    delay: Dur,
    /// Serialisation time of one reply (the path's rate).
    gap: Dur,
    /// Replies the queue holds before it drops.
    queue: u64,
    loss: f64,
    jitter: Dur,
    duplicate: f64,
}

fn path(source: usize, delay_ms: u64, mbps: u64) -> PathModel {
    PathModel {
        source,
        delay: Dur::from_ms(delay_ms),
        gap: Dur::from_ps(u64::from(CHUNK) * 8 * 1_000_000 / mbps),
        queue: 50,
        loss: 0.0,
        jitter: Dur::ZERO,
        duplicate: 0.0,
    }
}

struct SourceModel {
    publisher: Publisher<MemoryStore>,
    /// Requests arriving in `[from, to)` are not answered.
    silent: Option<(Time, Time)>,
}

enum Event {
    Request(usize, Request),
    Reply(Reply, Vec<u8>),
}

struct Net {
    now: Time,
    queue: BinaryHeap<Reverse<(Time, u64)>>,
    events: Vec<Option<Event>>,
    paths: Vec<PathModel>,
    busy_until: Vec<Time>,
    rng: Rng,
}

impl Net {
    fn push(&mut self, at: Time, e: Event) {
        let id = self.events.len() as u64;
        self.events.push(Some(e));
        self.queue.push(Reverse((at, id)));
    }
    fn send_request(&mut self, req: Request) {
        let i = req.path().index();
        let p = self.paths[i];
        if self.rng.bernoulli(p.loss) {
            return;
        }
        self.push(self.now + p.delay, Event::Request(i, req));
    }
    fn send_reply(&mut self, i: usize, reply: Reply, payload: Vec<u8>) {
        let p = self.paths[i];
        let start = self.busy_until[i].max(self.now);
        if (start - self.now).as_ps() > p.queue * p.gap.as_ps() {
            return; // drop-tail
        }
        self.busy_until[i] = start + p.gap;
        let copies = if self.rng.bernoulli(p.duplicate) {
            2
        } else {
            1
        };
        for _ in 0..copies {
            if self.rng.bernoulli(p.loss) {
                continue;
            }
            let jitter = Dur::from_ps(self.rng.below(p.jitter.as_ps() + 1));
            let at = self.busy_until[i] + p.delay + jitter;
            self.push(at, Event::Reply(reply.clone(), payload.clone()));
        }
    }
}

struct Outcome {
    sub: Subscriber,
    finished_at: Option<Time>,
    content: Vec<u8>,
    /// (arrival time, subflow, index) of every new chunk.
    deliveries: Vec<(Time, PathIndex, u32)>,
    /// (time, subflow, part, retransmission) of every request sent.
    requests: Vec<(Time, u32, Part, bool)>,
    /// When the metadata arrived.
    metadata_at: Option<Time>,
}

impl Outcome {
    fn delivered_by(&self, sf: u32, from: Time, to: Time) -> usize {
        self.deliveries
            .iter()
            .filter(|(t, p, _)| p.0 == sf && *t >= from && *t < to)
            .count()
    }
}

struct Setup<'a> {
    sources: Vec<SourceModel>,
    paths: &'a [PathModel],
    groups: &'a [u32],
    cc: CcKind,
    config: SubscriberConfig,
    seed: u64,
}

fn store(bytes: &[u8]) -> MemoryStore {
    let mut s = MemoryStore::new();
    s.insert(NAME, bytes.to_vec(), CHUNK, "test content");
    s
}

fn content(size: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::seed_from_u64(seed ^ 0xc0ffee);
    (0..size).map(|_| rng.next_u64() as u8).collect()
}

fn sources(bytes: &[u8], n: usize) -> Vec<SourceModel> {
    (0..n)
        .map(|_| SourceModel {
            publisher: Publisher::new(store(bytes)),
            silent: None,
        })
        .collect()
}

fn run(setup: Setup<'_>) -> Outcome {
    let Setup {
        sources,
        paths,
        groups,
        cc,
        config,
        seed,
    } = setup;
    let mut cc = cc.build(WindowConfig {
        initial_window: 1,
        ..WindowConfig::default()
    });
    let mut sub = Subscriber::new(ContentId::from_name(NAME), config);
    for &g in groups {
        sub.add_path(&mut cc, g);
    }
    let mut net = Net {
        now: Time::ZERO,
        queue: BinaryHeap::new(),
        events: Vec::new(),
        paths: paths.to_vec(),
        busy_until: vec![Time::ZERO; paths.len()],
        rng: Rng::seed_from_u64(seed),
    };
    let mut stored: Vec<Option<Vec<u8>>> = Vec::new();
    let mut deliveries = Vec::new();
    let mut requests = Vec::new();
    let mut metadata_at = None;
    let mut finished_at = None;
    let horizon = Time::from_secs(600);
    loop {
        while let Some(req) = sub.poll_transmit(net.now, &cc) {
            requests.push((net.now, req.path().0, req.part(), req.echo().retransmission));
            net.send_request(req);
        }
        if sub.is_complete() {
            finished_at = Some(net.now);
            break;
        }
        let next_event = net.queue.peek().map(|r| r.0 .0);
        let Some(t) = [sub.poll_timeout(), next_event].into_iter().flatten().min() else {
            break;
        };
        if t > horizon {
            break;
        }
        net.now = t;
        if next_event != Some(t) {
            sub.handle_timeout(net.now, &mut cc);
            continue;
        }
        let Reverse((_, id)) = net.queue.pop().unwrap();
        match net.events[id as usize].take().unwrap() {
            Event::Request(i, req) => {
                let src = &sources[paths[i].source];
                if src.silent.is_some_and(|(a, b)| a <= net.now && net.now < b) {
                    continue;
                }
                let mut payload = Vec::new();
                let reply = src
                    .publisher
                    .respond_with_payload(&req, &mut payload)
                    .unwrap();
                net.send_reply(i, reply, payload);
            }
            Event::Reply(reply, payload) => match sub.handle_reply(net.now, &reply, &mut cc) {
                Delivery::Metadata => {
                    metadata_at = Some(net.now);
                    stored.resize(sub.metadata().unwrap().chunk_count as usize, None);
                }
                Delivery::Chunk { index } => {
                    if stored.len() <= index as usize {
                        stored.resize(index as usize + 1, None);
                    }
                    let slot = &mut stored[index as usize];
                    assert!(slot.is_none(), "chunk {index} reported new twice");
                    *slot = Some(payload);
                    deliveries.push((net.now, reply.path(), index));
                }
                Delivery::Duplicate | Delivery::Ignored | Delivery::Refused(_) => {}
            },
        }
    }
    let content = stored.into_iter().flatten().flatten().collect();
    Outcome {
        sub,
        finished_at,
        content,
        deliveries,
        requests,
        metadata_at,
    }
}

fn lossy(mut p: PathModel, loss: f64, jitter_ms: u64, duplicate: f64) -> PathModel {
    p.loss = loss;
    p.jitter = Dur::from_ms(jitter_ms);
    p.duplicate = duplicate;
    p
}

#[test]
fn every_chunk_exactly_once_under_loss_reordering_and_duplication() {
    let mut duplicates = 0;
    let mut retransmissions = 0;
    for seed in 0..6 {
        let bytes = content(300_500 + seed as usize * 37, seed);
        let paths = [
            lossy(path(0, 10, 20), 0.03, 15, 0.05),
            lossy(path(1, 30, 10), 0.05, 5, 0.05),
            lossy(path(1, 20, 10), 0.02, 30, 0.05),
        ];
        let o = run(Setup {
            sources: sources(&bytes, 2),
            paths: &paths,
            groups: &[0, 1, 2],
            cc: CcKind::NewReno,
            config: SubscriberConfig::default(),
            seed,
        });
        assert!(o.finished_at.is_some(), "seed {seed}: incomplete");
        let m = o.sub.metadata().unwrap();
        assert_eq!(o.deliveries.len(), m.chunk_count as usize, "seed {seed}");
        verify(m, &o.content).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let p = o.sub.progress();
        assert_eq!(p.bytes_done, bytes.len() as u64);
        assert_eq!(p.chunks_done, m.chunk_count);
        for sf in o.sub.subflows() {
            duplicates += sf.stats().duplicates;
            retransmissions += sf.stats().retransmissions;
        }
    }
    assert!(duplicates > 0, "the network duplicated replies");
    assert!(retransmissions > 0, "losses were repaired by re-requests");
}

#[test]
fn the_metadata_comes_first_then_data() {
    let bytes = content(50_000, 1);
    let paths = [path(0, 20, 10), path(1, 40, 10)];
    let o = run(Setup {
        sources: sources(&bytes, 2),
        paths: &paths,
        groups: &[0, 0],
        cc: CcKind::NewReno,
        config: SubscriberConfig::default(),
        seed: 1,
    });
    assert!(o.finished_at.is_some());
    let meta_at = o.metadata_at.unwrap();
    assert_eq!(o.requests[0].2, Part::Metadata, "the first request");
    let before: Vec<_> = o.requests.iter().filter(|r| r.0 < meta_at).collect();
    assert_eq!(
        before.iter().map(|r| (r.1, r.2)).collect::<Vec<_>>(),
        vec![(0, Part::Metadata), (0, Part::Chunk(0))],
        "before the metadata arrives only chunk 0 goes with it"
    );
    assert!(
        o.requests.iter().any(|r| r.0 == meta_at && r.1 == 1),
        "the second subflow starts when the metadata arrives"
    );
}

#[test]
fn three_sources_with_different_delays_and_rates_all_contribute() {
    let bytes = content(4_000_000, 2);
    let paths = [path(0, 10, 16), path(1, 30, 8), path(2, 60, 4)];
    let setup = |paths| Setup {
        sources: sources(&bytes, 3),
        paths,
        groups: &[0, 1, 2][..paths.len()],
        cc: CcKind::NewReno,
        config: SubscriberConfig::default(),
        seed: 2,
    };
    let o = run(setup(&paths));
    let end = o.finished_at.expect("complete");
    verify(o.sub.metadata().unwrap(), &o.content).unwrap();
    let shares: Vec<usize> = (0..3)
        .map(|sf| o.delivered_by(sf, Time::ZERO, Time::MAX))
        .collect();
    assert!(
        shares.iter().all(|&s| s >= 200),
        "every source delivered: {shares:?}"
    );
    assert!(
        shares[0] > shares[1] && shares[1] > shares[2],
        "the faster the source, the more it delivered: {shares:?}"
    );
    // Thesis E1: multisource beats the best single source (3.07 s against 4.8 s there).
    let alone = run(setup(&paths[..1]));
    let alone_end = alone.finished_at.expect("complete");
    verify(alone.sub.metadata().unwrap(), &alone.content).unwrap();
    assert!(
        end.as_secs_f64() < 0.9 * alone_end.as_secs_f64(),
        "{end:?} with three sources, {alone_end:?} with the best alone"
    );
}

#[test]
fn a_source_silent_for_seven_seconds_is_covered_by_the_others_and_recovers() {
    let bytes = content(5_000_000, 3);
    let paths = [path(0, 15, 1), path(1, 10, 1), path(2, 30, 1)];
    let mut srcs = sources(&bytes, 3);
    let (down, up) = (Time::from_secs(2), Time::from_secs(9));
    srcs[1].silent = Some((down, up));
    let o = run(Setup {
        sources: srcs,
        paths: &paths,
        groups: &[0, 1, 2],
        cc: CcKind::NewReno,
        config: SubscriberConfig::default(),
        seed: 3,
    });
    let end = o.finished_at.expect("complete despite the outage");
    verify(o.sub.metadata().unwrap(), &o.content).unwrap();
    assert!(end > up, "the outage lies inside the transfer ({end:?})");
    let settle = down + Dur::from_secs(1);
    assert_eq!(
        o.delivered_by(1, settle, up),
        0,
        "the silent source delivers nothing"
    );
    // The chunks subflow 1 had asked for when its source went silent were delivered by the
    // others during the outage.
    let by_1: BTreeSet<u32> = o
        .deliveries
        .iter()
        .filter(|d| d.1 == PathIndex(1))
        .map(|d| d.2)
        .collect();
    let stranded: BTreeSet<u32> = o
        .requests
        .iter()
        .filter(|r| r.1 == 1 && r.0 < down)
        .filter_map(|r| match r.2 {
            Part::Chunk(c) if !by_1.contains(&c) => Some(c),
            _ => None,
        })
        .collect();
    assert!(stranded.len() >= 3, "{stranded:?}");
    for d in o.deliveries.iter().filter(|d| stranded.contains(&d.2)) {
        assert!(
            d.1 != PathIndex(1) && d.0 < up,
            "chunk {} taken over: {d:?}",
            d.2
        );
    }
    let rate = |sf, a: Time, b: Time| o.delivered_by(sf, a, b) as f64 / (b - a).as_secs_f64();
    for sf in [0, 2] {
        let before = rate(sf, Time::from_secs(1), down);
        let during = rate(sf, settle, up);
        assert!(
            during > 0.8 * before && during > 50.0,
            "subflow {sf} carries on during the outage: {before:.0} -> {during:.0} chunks/s"
        );
    }
    assert!(
        o.delivered_by(1, up, end) > 50,
        "the source delivers again after it comes back"
    );
    let sf1 = o.sub.subflow(PathIndex(1));
    assert!(sf1.stats().timeouts >= 3, "{:?}", sf1.stats());
    assert!(sf1.stats().released > 0, "its chunks went to the others");
    assert!(sf1.stats().probes > 0);
    assert!(!sf1.is_stalled());
}

#[test]
fn a_source_with_different_bytes_fails_the_integrity_check() {
    let bytes = content(200_000, 4);
    let mut corrupt = bytes.clone();
    for b in &mut corrupt {
        *b ^= 0x5a;
    }
    let mut bad = MemoryStore::new();
    let good_store = store(&bytes);
    let id = ContentId::from_name(NAME);
    let m = pathpool_proto::mmtp::ContentStore::metadata(&good_store, id)
        .unwrap()
        .clone();
    bad.insert_with_metadata(id, m, corrupt);
    let srcs = vec![
        SourceModel {
            publisher: Publisher::new(good_store),
            silent: None,
        },
        SourceModel {
            publisher: Publisher::new(bad),
            silent: None,
        },
    ];
    let paths = [path(0, 10, 10), path(1, 10, 10)];
    let o = run(Setup {
        sources: srcs,
        paths: &paths,
        groups: &[0, 1],
        cc: CcKind::NewReno,
        config: SubscriberConfig::default(),
        seed: 4,
    });
    assert!(o.finished_at.is_some());
    assert!(o.delivered_by(1, Time::ZERO, Time::MAX) > 0);
    let e = verify(o.sub.metadata().unwrap(), &o.content).unwrap_err();
    assert!(matches!(e, IntegrityError::HashMismatch { .. }), "{e}");
    assert!(e.to_string().contains("does not match"));
}

#[test]
fn the_scan_and_the_fast_path_send_the_same_requests() {
    let bytes = content(400_000, 5);
    let paths = [
        lossy(path(0, 10, 10), 0.04, 10, 0.02),
        lossy(path(1, 25, 10), 0.04, 10, 0.02),
        lossy(path(1, 40, 5), 0.04, 10, 0.02),
    ];
    let trace = |selection| {
        run(Setup {
            sources: sources(&bytes, 2),
            paths: &paths,
            groups: &[0, 0, 0],
            cc: CcKind::Lia,
            config: SubscriberConfig {
                selection,
                ..SubscriberConfig::default()
            },
            seed: 5,
        })
    };
    let fast = trace(Selection::Fast);
    let scan = trace(Selection::Scan);
    assert!(fast.finished_at.is_some());
    assert!(
        fast.requests.iter().any(|r| r.3),
        "the run includes re-requests"
    );
    assert_eq!(fast.requests.len(), scan.requests.len());
    assert!(fast.requests == scan.requests, "identical request traces");
    assert_eq!(fast.finished_at, scan.finished_at);
}

#[test]
fn completes_with_every_controller_coupled_or_in_tm_groups() {
    let bytes = content(150_000, 6);
    let paths = [
        lossy(path(0, 10, 10), 0.02, 5, 0.0),
        lossy(path(0, 20, 10), 0.02, 5, 0.0),
        lossy(path(1, 30, 5), 0.02, 5, 0.0),
    ];
    for &cc in CcKind::ALL {
        // No assistance (one group) and the topology manager's groups (two shared, one alone).
        for groups in [[0, 0, 0], [0, 0, 1]] {
            let o = run(Setup {
                sources: sources(&bytes, 2),
                paths: &paths,
                groups: &groups,
                cc,
                config: SubscriberConfig::default(),
                seed: 6,
            });
            assert!(o.finished_at.is_some(), "{cc} {groups:?}");
            verify(o.sub.metadata().unwrap(), &o.content).unwrap();
        }
    }
}
