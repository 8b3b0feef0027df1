//! Behaviour of the subscriber, driven by hand request by request: the metadata phase, the
//! start-up window, timeouts and their backoff, Karn's rule, release after two expiries, no
//! window growth for replies to requests sent before a loss, duplicates, refusals and path
//! changes.

use pathpool_cc::{MultipathController, PathState, Reno, WindowConfig, Windows};
use pathpool_core::{Dur, PathId, Time};

use super::*;

const CHUNK: u32 = 1000;

struct Harness {
    sub: Subscriber,
    cc: Windows<Reno>,
    publisher: Publisher<MemoryStore>,
}

impl Harness {
    /// A subscriber for a content of `chunks` full chunks, with `paths` subflows and a
    /// controller whose initial window is `iw` chunks.
    fn new(chunks: u32, paths: usize, iw: u64, config: SubscriberConfig) -> Self {
        let mut store = MemoryStore::new();
        let bytes: Vec<u8> = (0..chunks * CHUNK).map(|i| (i % 251) as u8).collect();
        let id = store.insert("/test/content", bytes, CHUNK, "test");
        let mut cc = Windows::new(
            Reno::default(),
            WindowConfig {
                initial_window: iw,
                ..WindowConfig::default()
            },
        );
        let mut sub = Subscriber::new(id, config);
        for _ in 0..paths {
            sub.add_path(&mut cc, 0);
        }
        Harness {
            sub,
            cc,
            publisher: Publisher::new(store),
        }
    }

    fn poll(&mut self, now: Time) -> Vec<Request> {
        std::iter::from_fn(|| self.sub.poll_transmit(now, &self.cc)).collect()
    }

    fn answer(&mut self, now: Time, req: &Request) -> Delivery {
        let reply = self.publisher.respond(req);
        self.sub.handle_reply(now, &reply, &mut self.cc)
    }

    fn timeout(&mut self, now: Time) {
        self.sub.handle_timeout(now, &mut self.cc);
    }

    /// The controller's state of subflow `sf`'s path (window, byte-counting credit, …).
    fn path_state(&self, sf: u32) -> PathState {
        let path = self.sub.subflow(PathIndex(sf)).controller_path().unwrap();
        self.cc.paths()[path.index()].clone()
    }

    fn cwnd_chunks(&self, sf: u32) -> u64 {
        self.path_state(sf).cwnd / u64::from(CHUNK)
    }
}

/// (path, part, retransmission) of each request.
fn summary(reqs: &[Request]) -> Vec<(u32, Part, bool)> {
    reqs.iter()
        .map(|r| (r.path().0, r.part(), r.echo().retransmission))
        .collect()
}

fn ms(t: u64) -> Time {
    Time::from_ms(t)
}

const M: Part = Part::Metadata;
fn c(i: u32) -> Part {
    Part::Chunk(i)
}

#[test]
fn metadata_first_with_chunk_0_then_data() {
    let mut h = Harness::new(10, 2, 1, SubscriberConfig::default());
    let first = h.poll(ms(0));
    assert_eq!(
        summary(&first),
        vec![(0, M, false), (0, c(0), false)],
        "the metadata and chunk 0 on the first subflow, nothing on the second yet"
    );
    assert!(h.sub.subflow(PathIndex(1)).controller_path().is_none());
    assert_eq!(h.answer(ms(100), &first[0]), Delivery::Metadata);
    assert_eq!(h.sub.progress().chunk_count, Some(10));
    assert!(h.sub.subflow(PathIndex(1)).controller_path().is_some());
    assert_eq!(
        summary(&h.poll(ms(100))),
        vec![(1, c(1), false)],
        "data transfer starts: one request on the second subflow (start-up window 1)"
    );
    assert_eq!(h.answer(ms(110), &first[1]), Delivery::Chunk { index: 0 });
    assert_eq!(h.cwnd_chunks(0), 2, "slow start: one chunk delivered, +1");
    assert_eq!(
        summary(&h.poll(ms(110))),
        vec![(0, c(2), false), (0, c(3), false)]
    );
}

#[test]
fn metadata_alone_when_chunk_0_is_not_requested_with_it() {
    let config = SubscriberConfig {
        first_chunk_with_metadata: false,
        ..SubscriberConfig::default()
    };
    let mut h = Harness::new(10, 2, 1, config);
    let first = h.poll(ms(0));
    assert_eq!(summary(&first), vec![(0, M, false)]);
    h.answer(ms(50), &first[0]);
    assert_eq!(
        summary(&h.poll(ms(50))),
        vec![(0, c(0), false), (1, c(1), false)],
        "both subflows start with one chunk each, in ascending order"
    );
}

#[test]
fn start_up_window_holds_until_the_first_reply() {
    // The controller would allow 10 chunks; before its first reply a subflow asks for one.
    let config = SubscriberConfig {
        initial_window_chunks: 1,
        ..SubscriberConfig::default()
    };
    let mut h = Harness::new(100, 2, 10, config);
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    let reqs = h.poll(ms(100));
    assert_eq!(
        reqs.len(),
        10 - 1 + 1,
        "subflow 0 fills 10 (holds chunk 0), subflow 1 one"
    );
    assert_eq!(reqs.iter().filter(|r| r.path() == PathIndex(1)).count(), 1);
    let one = *reqs.iter().find(|r| r.path() == PathIndex(1)).unwrap();
    h.answer(ms(150), &one);
    assert_eq!(
        h.poll(ms(150)).len(),
        11,
        "after its first reply the controller's window (10, +1) rules"
    );
}

/// One subflow with the metadata and chunk 0 answered 100 ms after sending (SRTT 100 ms,
/// RTO 300 ms); its window is then 2 chunks and it has requested chunks 1 and 2.
fn one_path_after_first_rtt() -> Harness {
    let mut h = Harness::new(20, 1, 1, SubscriberConfig::default());
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    h.answer(ms(100), &first[1]);
    assert_eq!(
        summary(&h.poll(ms(100))),
        vec![(0, c(1), false), (0, c(2), false)]
    );
    h
}

#[test]
fn a_timeout_rerequests_on_the_same_path_and_backs_off() {
    let mut h = one_path_after_first_rtt();
    let sf = h.sub.subflow(PathIndex(0));
    assert_eq!(sf.srtt(), Some(Dur::from_ms(100)));
    // Two samples of 100 ms: RTTVAR 37.5 ms, RTO 250 ms from the requests sent at 100 ms.
    assert_eq!(sf.rtt().rto(), Dur::from_ms(250));
    assert_eq!(sf.deadline(), Some(ms(350)));
    h.timeout(ms(349));
    assert_eq!(h.sub.subflow(PathIndex(0)).stats().timeouts, 0, "not yet");
    h.timeout(ms(350));
    let sf = h.sub.subflow(PathIndex(0));
    assert_eq!(sf.stats().timeouts, 1);
    assert_eq!(sf.chunks_in_flight(), 0, "both presumed lost");
    assert_eq!(h.cwnd_chunks(0), 1, "the controller's loss window");
    let path = sf.controller_path().unwrap();
    assert_eq!(
        h.cc.metrics(path).ssthresh,
        2 * u64::from(CHUNK),
        "max(flight / 2, 2 chunks)"
    );
    assert_eq!(
        summary(&h.poll(ms(350))),
        vec![(0, c(1), true)],
        "the lowest presumed-lost chunk again, on the same path; the window allows one"
    );
    let sf = h.sub.subflow(PathIndex(0));
    assert_eq!(sf.deadline(), Some(ms(850)), "RTO doubled to 500 ms");
    assert_eq!(sf.stats().retransmissions, 1);
    assert_eq!(
        sf.own_chunks().collect::<Vec<_>>(),
        vec![1],
        "only the oldest request expired; chunk 2 is presumed lost and back in the array"
    );
    assert_eq!(sf.stats().released, 1);
    assert_eq!(h.sub.chunks().state(2), ChunkState::Idle);
    assert_eq!(h.sub.chunks().next_idle(), Some(2));
}

#[test]
fn karn_no_rtt_sample_from_a_rerequested_chunk() {
    let mut h = one_path_after_first_rtt();
    h.timeout(ms(350));
    let again = h.poll(ms(350));
    // The re-request is answered 50 ms later: no sample, so SRTT stays and the backoff holds.
    assert_eq!(h.answer(ms(400), &again[0]), Delivery::Chunk { index: 1 });
    let sf = h.sub.subflow(PathIndex(0));
    assert_eq!(sf.srtt(), Some(Dur::from_ms(100)));
    assert_eq!(sf.rtt().latest(), Dur::from_ms(100));
    assert_eq!(sf.rtt().backoff(), 1);
    // Chunk 2 is re-taken after the timeout; the reply to its first request (at 100 ms)
    // arrives: ambiguous on this path, so no sample either, although it echoes a first
    // request.
    let next = h.poll(ms(400));
    assert_eq!(summary(&next), vec![(0, c(2), true), (0, c(3), false)]);
    let first_request_of_2 = Request::Chunk(ChunkRequest {
        content: h.sub.content(),
        index: 2,
        path: PathIndex(0),
        echo: Echo {
            sent_at: ms(100),
            retransmission: false,
        },
    });
    assert_eq!(
        h.answer(ms(405), &first_request_of_2),
        Delivery::Chunk { index: 2 }
    );
    let sf = h.sub.subflow(PathIndex(0));
    assert_eq!(sf.rtt().latest(), Dur::from_ms(100));
    assert_eq!(sf.rtt().backoff(), 1);
    h.answer(ms(420), &next[1]);
    let sf = h.sub.subflow(PathIndex(0));
    assert_eq!(
        sf.rtt().latest(),
        Dur::from_ms(20),
        "a fresh chunk's reply samples"
    );
    assert_eq!(sf.rtt().backoff(), 0, "a valid sample clears the backoff");
}

#[test]
fn karn_no_rtt_sample_from_the_retransmitted_request_of_a_re_taken_chunk() {
    let mut h = one_path_after_first_rtt();
    h.timeout(ms(350));
    let again = h.poll(ms(350));
    h.answer(ms(400), &again[0]);
    // Window 2 now: chunk 2 (given back at the timeout, so a retransmission on this path)
    // comes before a fresh chunk 3, whose reply samples.
    let next = h.poll(ms(400));
    assert_eq!(summary(&next), vec![(0, c(2), true), (0, c(3), false)]);
    h.answer(ms(410), &next[0]);
    assert_eq!(
        h.sub.subflow(PathIndex(0)).rtt().backoff(),
        1,
        "no sample from the re-taken chunk 2"
    );
}

#[test]
fn replies_to_requests_sent_before_a_loss_are_kept_without_window_growth() {
    let mut h = one_path_after_first_rtt();
    h.timeout(ms(350));
    let again = h.poll(ms(350));
    assert_eq!(summary(&again), vec![(0, c(1), true)]);
    // The original request for chunk 2, sent before the timeout, is answered late.
    let late = Request::Chunk(ChunkRequest {
        content: h.sub.content(),
        index: 2,
        path: PathIndex(0),
        echo: Echo {
            sent_at: ms(100),
            retransmission: false,
        },
    });
    assert_eq!(h.answer(ms(420), &late), Delivery::Chunk { index: 2 });
    assert_eq!(
        h.path_state(0).cwnd,
        u64::from(CHUNK),
        "kept, but no growth"
    );
    assert_eq!(
        h.sub.subflow(PathIndex(0)).rtt().latest(),
        Dur::from_ms(100),
        "no RTT sample from a request the subflow no longer holds"
    );
    assert!(
        h.poll(ms(420)).is_empty(),
        "chunk 2 is not requested again; chunk 1 fills the window"
    );
    // The re-request sent after the loss does grow the window.
    h.answer(ms(450), &again[0]);
    assert_eq!(h.cwnd_chunks(0), 2);
}

#[test]
fn a_late_reply_to_the_first_request_of_a_re_taken_chunk_does_not_grow_the_window() {
    let mut h = one_path_after_first_rtt();
    h.timeout(ms(350));
    let again = h.poll(ms(350));
    h.answer(ms(400), &again[0]);
    let next = h.poll(ms(400));
    assert_eq!(summary(&next), vec![(0, c(2), true), (0, c(3), false)]);
    let before = h.path_state(0);
    assert_eq!(before.cwnd, 2 * u64::from(CHUNK));
    assert_eq!(
        before.cwnd, before.ssthresh,
        "congestion avoidance: growth is credit first"
    );
    // The reply to chunk 2's request of 100 ms (before the timeout) overtakes the new one.
    let late = Request::Chunk(ChunkRequest {
        content: h.sub.content(),
        index: 2,
        path: PathIndex(0),
        echo: Echo {
            sent_at: ms(100),
            retransmission: false,
        },
    });
    assert_eq!(h.answer(ms(420), &late), Delivery::Chunk { index: 2 });
    assert_eq!(h.path_state(0), before, "sent before the loss: no growth");
    assert_eq!(h.sub.subflow(PathIndex(0)).chunks_in_flight(), 1);
    assert_eq!(h.answer(ms(430), &next[0]), Delivery::Duplicate);
    assert_eq!(h.path_state(0), before);
    h.answer(ms(440), &next[1]);
    assert!(
        h.path_state(0).ca_credit > before.ca_credit,
        "a reply to a request sent after the loss does count"
    );
}

#[test]
fn after_two_expiries_a_chunk_goes_to_another_subflow_and_the_silent_one_probes() {
    let mut h = Harness::new(3, 2, 1, SubscriberConfig::default());
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    // Subflow 0 holds chunk 0 and its source goes silent; subflow 1 downloads 1 and 2.
    let r1 = h.poll(ms(100));
    assert_eq!(summary(&r1), vec![(1, c(1), false)]);
    h.answer(ms(150), &r1[0]);
    let r2 = h.poll(ms(150));
    assert_eq!(summary(&r2), vec![(1, c(2), false)]);
    h.answer(ms(200), &r2[0]);
    assert!(h.poll(ms(200)).is_empty(), "chunk 0 is subflow 0's");
    let d1 = h.sub.subflow(PathIndex(0)).deadline().unwrap();
    h.timeout(d1);
    assert_eq!(summary(&h.poll(d1)), vec![(0, c(0), true)]);
    assert_eq!(h.sub.chunks().state(0), ChunkState::Requested(PathIndex(0)));
    let d2 = h.sub.subflow(PathIndex(0)).deadline().unwrap();
    assert_eq!(
        d2 - d1,
        Dur::from_ms(600),
        "backed off: twice the 300 ms RTO"
    );
    h.timeout(d2);
    assert_eq!(
        summary(&h.poll(d2)),
        vec![(1, c(0), false), (0, M, true)],
        "released: subflow 1 takes chunk 0; subflow 0 probes its source with the metadata \
         request it sent before"
    );
    let sf0 = h.sub.subflow(PathIndex(0));
    assert!(sf0.is_stalled());
    assert_eq!(sf0.stats().released, 1);
    assert_eq!(sf0.stats().probes, 1);
    assert_eq!(sf0.own_chunks().count(), 0);
}

#[test]
fn a_stalled_subflow_recovers_when_its_probe_is_answered() {
    let mut h = Harness::new(50, 2, 1, SubscriberConfig::default());
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    h.poll(ms(100));
    for _ in 0..2 {
        let d = h.sub.subflow(PathIndex(0)).deadline().unwrap();
        h.timeout(d);
        h.poll(d);
    }
    assert!(h.sub.subflow(PathIndex(0)).is_stalled());
    // The third expiry re-sends the probe (a retransmission on the same path).
    let d = h.sub.subflow(PathIndex(0)).deadline().unwrap();
    h.timeout(d);
    let probe = h.poll(d);
    assert_eq!(
        summary(&probe)
            .into_iter()
            .filter(|r| r.0 == 0)
            .collect::<Vec<_>>(),
        vec![(0, M, true)]
    );
    assert_eq!(
        h.answer(d + Dur::from_ms(80), &probe[0]),
        Delivery::Duplicate
    );
    let sf0 = h.sub.subflow(PathIndex(0));
    assert!(!sf0.is_stalled());
    assert_eq!(sf0.stats().timeouts, 3);
    let next: Vec<_> = h
        .poll(d + Dur::from_ms(80))
        .into_iter()
        .filter(|r| r.path() == PathIndex(0))
        .collect();
    assert_eq!(next.len(), 1, "requests chunks again, from a window of one");
    assert!(matches!(next[0], Request::Chunk(_)));
}

#[test]
fn a_silent_source_is_probed_at_most_every_max_rto() {
    // D117: the backoff doubles 300 ms → 600 ms → 1.2 s → then stops at 2 s, where TCP's
    // (up to `max_rto`, 60 s) would go on to 2.4, 4.8, 9.6 s, ...
    let mut h = Harness::new(50, 2, 1, SubscriberConfig::default());
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    h.poll(ms(100));
    let mut gaps = Vec::new();
    let mut d = h.sub.subflow(PathIndex(0)).deadline().unwrap();
    for _ in 0..6 {
        h.timeout(d);
        h.poll(d);
        let next = h.sub.subflow(PathIndex(0)).deadline().unwrap();
        gaps.push(next - d);
        d = next;
    }
    let ms_dur = Dur::from_ms;
    assert_eq!(
        gaps,
        vec![
            ms_dur(600),
            ms_dur(1200),
            ms_dur(2000),
            ms_dur(2000),
            ms_dur(2000),
            ms_dur(2000)
        ]
    );
    let mut tcp_bound = SubscriberConfig::default();
    tcp_bound.rtt.backoff_limit = None;
    let mut h = Harness::new(50, 2, 1, tcp_bound);
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    h.poll(ms(100));
    let mut d = h.sub.subflow(PathIndex(0)).deadline().unwrap();
    for _ in 0..4 {
        h.timeout(d);
        h.poll(d);
        d = h.sub.subflow(PathIndex(0)).deadline().unwrap();
    }
    h.timeout(d);
    h.poll(d);
    let next = h.sub.subflow(PathIndex(0)).deadline().unwrap();
    assert_eq!(next - d, Dur::from_ms(9600));
}

#[test]
fn duplicates_are_ignored_and_counted() {
    let mut h = one_path_after_first_rtt();
    let req = Request::Chunk(ChunkRequest {
        content: h.sub.content(),
        index: 0,
        path: PathIndex(0),
        echo: Echo {
            sent_at: ms(0),
            retransmission: false,
        },
    });
    let done = h.sub.progress();
    assert_eq!(h.answer(ms(200), &req), Delivery::Duplicate);
    assert_eq!(h.sub.subflow(PathIndex(0)).stats().duplicates, 1);
    assert_eq!(h.sub.progress(), done);
}

#[test]
fn replies_that_do_not_fit_are_ignored() {
    let mut h = one_path_after_first_rtt();
    let content = h.sub.content();
    let chunk = |content, index, payload_bytes, path| {
        Reply::Chunk(Chunk {
            content,
            index,
            path: PathIndex(path),
            echo: Echo {
                sent_at: ms(100),
                retransmission: false,
            },
            payload_bytes,
        })
    };
    for reply in [
        chunk(ContentId(7), 1, CHUNK, 0),
        chunk(content, 1, CHUNK, 9),
        chunk(content, 1, CHUNK - 1, 0),
        chunk(content, 20, CHUNK, 0),
    ] {
        assert_eq!(
            h.sub.handle_reply(ms(150), &reply, &mut h.cc),
            Delivery::Ignored,
            "{reply:?}"
        );
    }
    assert_eq!(h.sub.stats().ignored_replies, 4);
    assert_eq!(h.sub.progress().chunks_done, 1);
}

#[test]
fn a_source_without_the_content_refuses_and_the_others_take_over() {
    let mut h = Harness::new(4, 2, 1, SubscriberConfig::default());
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    let r = h.poll(ms(100));
    assert_eq!(summary(&r), vec![(1, c(1), false)]);
    let refusal = Reply::Error(ErrorReply {
        content: h.sub.content(),
        part: Part::Chunk(1),
        path: PathIndex(1),
        echo: r[0].echo(),
        kind: ErrorKind::UnknownContent,
    });
    assert_eq!(
        h.sub.handle_reply(ms(120), &refusal, &mut h.cc),
        Delivery::Refused(ErrorKind::UnknownContent)
    );
    let sf1 = h.sub.subflow(PathIndex(1));
    assert_eq!(
        sf1.state(),
        SubflowState::Refused(ErrorKind::UnknownContent)
    );
    assert!(!h.cc.paths()[sf1.controller_path().unwrap().index()].active);
    assert_eq!(h.sub.chunks().state(1), ChunkState::Idle);
    h.answer(ms(130), &first[1]);
    assert_eq!(
        summary(&h.poll(ms(130))),
        vec![(0, c(1), false), (0, c(2), false)],
        "subflow 0 takes the refused chunk first"
    );
}

#[test]
fn removing_a_path_releases_its_chunks_and_groups_reach_the_controller() {
    let mut h = Harness::new(10, 3, 1, SubscriberConfig::default());
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    let r = h.poll(ms(100));
    assert_eq!(summary(&r), vec![(1, c(1), false), (2, c(2), false)]);
    h.sub.set_group(&mut h.cc, PathIndex(2), 7);
    let p2 = h.sub.subflow(PathIndex(2)).controller_path().unwrap();
    assert_eq!(h.cc.paths()[p2.index()].group, 7);
    assert_eq!(h.sub.subflow(PathIndex(2)).group(), 7);
    h.sub.remove_path(&mut h.cc, PathIndex(1));
    let p1 = h.sub.subflow(PathIndex(1)).controller_path().unwrap();
    assert!(!h.cc.paths()[p1.index()].active);
    assert_eq!(h.sub.chunks().state(1), ChunkState::Idle);
    // A late reply on the removed subflow still delivers its data.
    assert_eq!(h.answer(ms(150), &r[0]), Delivery::Chunk { index: 1 });
    assert!(h.poll(ms(150)).iter().all(|r| r.path() != PathIndex(1)));
    // A path added later joins the controller at once, in its group.
    let new = h.sub.add_path(&mut h.cc, 3);
    let p3 = h.sub.subflow(new).controller_path().unwrap();
    assert_eq!(p3, PathId(3));
    assert_eq!(h.cc.paths()[p3.index()].group, 3);
}

#[test]
fn an_empty_content_completes_with_its_metadata() {
    let mut store = MemoryStore::new();
    let id = store.insert("/test/empty", Vec::new(), CHUNK, "");
    let publisher = Publisher::new(store);
    let mut cc = Windows::new(Reno::default(), WindowConfig::default());
    let mut sub = Subscriber::new(id, SubscriberConfig::default());
    sub.add_path(&mut cc, 0);
    let reqs: Vec<_> = std::iter::from_fn(|| sub.poll_transmit(ms(0), &cc)).collect();
    assert_eq!(reqs.len(), 2);
    // Chunk 0's error reply overtakes the metadata.
    let err = publisher.respond(&reqs[1]);
    assert!(matches!(err, Reply::Error(e) if e.kind == ErrorKind::IndexOutOfRange));
    assert_eq!(sub.handle_reply(ms(10), &err, &mut cc), Delivery::Ignored);
    assert_eq!(sub.subflows()[0].state(), SubflowState::Active);
    assert!(!sub.is_complete());
    let meta = publisher.respond(&reqs[0]);
    assert_eq!(sub.handle_reply(ms(11), &meta, &mut cc), Delivery::Metadata);
    assert!(sub.is_complete());
    assert_eq!(sub.poll_timeout(), None);
    assert_eq!(sub.poll_transmit(ms(11), &cc), None);
}

#[test]
fn chunk_0_overtaking_the_metadata_counts_once_the_metadata_arrives() {
    let mut h = Harness::new(3, 1, 1, SubscriberConfig::default());
    let first = h.poll(ms(0));
    assert_eq!(h.answer(ms(50), &first[1]), Delivery::Chunk { index: 0 });
    assert_eq!(h.sub.progress().chunks_done, 1);
    assert_eq!(h.sub.progress().chunk_count, None);
    assert_eq!(h.answer(ms(60), &first[0]), Delivery::Metadata);
    let p = h.sub.progress();
    assert_eq!(
        (p.chunks_done, p.chunk_count, p.bytes_done),
        (1, Some(3), 1000)
    );
    assert_eq!(summary(&h.poll(ms(60))), vec![(0, c(1), false)]);
}

#[test]
fn gap_detection_releases_a_chunk_after_three_later_replies_and_halves_once_per_round() {
    let config = SubscriberConfig {
        gap_threshold: Some(3),
        ..SubscriberConfig::default()
    };
    let mut h = Harness::new(60, 1, 10, config);
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    h.answer(ms(100), &first[1]);
    let reqs = h.poll(ms(100));
    let n = reqs.len();
    assert!(n >= 9, "a window of several chunks: {n}");
    assert_eq!(reqs[0].part(), c(1));
    // Chunk 1's request is lost; the replies to the next two do not yet condemn it.
    h.answer(ms(200), &reqs[1]);
    h.answer(ms(200), &reqs[2]);
    assert_eq!(h.sub.subflow(PathIndex(0)).stats().gap_losses, 0);
    assert_eq!(h.sub.chunks().state(1), ChunkState::Requested(PathIndex(0)));
    let cwnd_before = h.path_state(0).cwnd;
    h.answer(ms(200), &reqs[3]);
    let sf = h.sub.subflow(PathIndex(0));
    assert_eq!(sf.stats().gap_losses, 1);
    assert_eq!(
        h.sub.chunks().state(1),
        ChunkState::Idle,
        "back in the shared array"
    );
    // One decrease: ssthresh = max(FlightSize / 2, 2 chunks), FlightSize counting the lost
    // request; cwnd = ssthresh (the recovery ends at once).
    let flight = (n as u64 - 3) * u64::from(CHUNK);
    let ssthresh = (flight / 2).max(2 * u64::from(CHUNK));
    assert_eq!(h.path_state(0).ssthresh, ssthresh);
    assert_eq!(h.path_state(0).cwnd, ssthresh);
    assert!(ssthresh < cwnd_before);
    // The lost chunk is requested again first, marked as a retransmission on this path.
    let again = h.poll(ms(200));
    assert_eq!(
        again.first().map(|r| (r.part(), r.echo().retransmission)),
        Some((c(1), true))
    );
    // A second loss in the same round (chunk of reqs[4], sent before the decrease) is
    // repaired the same way without a second decrease.
    for r in &reqs[5..8] {
        h.answer(ms(210), r);
    }
    assert_eq!(h.sub.subflow(PathIndex(0)).stats().gap_losses, 2);
    assert_eq!(h.path_state(0).ssthresh, ssthresh, "one decrease per round");
    // Every chunk still arrives: answer everything until complete.
    let mut now = 300;
    while !h.sub.is_complete() {
        for r in h.poll(ms(now)) {
            h.answer(ms(now + 50), &r);
        }
        now += 100;
        h.timeout(ms(now));
        assert!(now < 100_000, "stuck");
    }
}

#[test]
fn without_a_gap_threshold_only_the_timer_detects_losses() {
    let mut h = Harness::new(60, 1, 10, SubscriberConfig::default());
    let first = h.poll(ms(0));
    h.answer(ms(100), &first[0]);
    h.answer(ms(100), &first[1]);
    let reqs = h.poll(ms(100));
    for r in &reqs[1..] {
        h.answer(ms(200), r);
    }
    assert_eq!(h.sub.subflow(PathIndex(0)).stats().gap_losses, 0);
    assert_eq!(h.sub.chunks().state(1), ChunkState::Requested(PathIndex(0)));
}
