//! Invariants of the TCP sender and every controller on random paths (issue 17, item 3).
//!
//! Each case drives one sans-IO sender, controller and receiver over a path drawn at random:
//! a FIFO bottleneck (rate, drop-tail buffer in packets, i.i.d. loss of data segments) and a
//! propagation delay each way, ACKs never lost; TCP options drawn too, SACK (RFC 2018, RFC
//! 6675) on in half the cases and NewReno in the others. It runs until 2,000
//! segments have been sent or 30 s have passed, checking after every event:
//!
//! 1. ssthresh set at a loss is at most the window in use when the loss was found (D124);
//! 2. a new segment leaves only while the pipe stays within cwnd plus limited transmit's two
//!    segments and one segment of rounding (the pipe is Linux's for Reno, RFC 5681's window
//!    inflation admits the same);
//! 3. the flight never exceeds the receive window, nor cwnd once an ACK has arrived (the
//!    initial window may be larger);
//! 4. one recovery, NewReno's or SACK's, acknowledges at most as many partial ACKs as there were segments
//!    outstanding when it began: every partial ACK repairs a different hole among them
//!    (RFC 6582: recovery ends at `recover`, the highest byte sent then), so the bound holds
//!    without a timeout and a longer recovery would be a bug;
//! 5. the sender never counts as acknowledged a byte the receiver has not delivered in order,
//!    and once the path drains they are equal;
//! 6. the same case run twice gives the same counters (determinism).
//!
//! `PROPTEST_CASES` sets the number of cases (`make test`: 5,000, about 5 s; `make soak`:
//! 100,000).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use pathpool_cc::{CcKind, MultipathController, WindowConfig};
use pathpool_core::{Dur, Rng, RttConfig, Time};
use pathpool_proto::tcp::{
    AckSegment, DataSegment, FlightEstimate, PartialAckTimer, SackBlocks, SenderStats, TcpReceiver,
    TcpReceiverConfig, TcpSender, TcpSenderConfig,
};
use proptest::prelude::*;

const MSS: u64 = 1000;
const MAX_SEGMENTS: u64 = 2000;

#[derive(Clone, Debug)]
struct Case {
    cc: CcKind,
    rate_bps: u64,
    delay: Dur,
    buffer_pkts: usize,
    loss: f64,
    initial_window: u64,
    abc_limit: u64,
    limited_transmit: bool,
    timer: PartialAckTimer,
    rwnd_segments: Option<u64>,
    sack: bool,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0..CcKind::ALL.len(),
        1u64..=100,
        1u64..=100,
        2usize..=200,
        prop_oneof![Just(0.0), 0.0..0.05],
        1u64..=10,
        1u64..=2,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(None), (4u64..=200).prop_map(Some)],
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(
            |(cc, mbps, delay_ms, buffer_pkts, loss, iw, abc, lt, sbs, rwnd, sack, seed)| Case {
                cc: CcKind::ALL[cc],
                rate_bps: mbps * 1_000_000,
                delay: Dur::from_ms(delay_ms),
                buffer_pkts,
                loss,
                initial_window: iw,
                abc_limit: abc,
                limited_transmit: lt,
                timer: if sbs {
                    PartialAckTimer::SlowButSteady
                } else {
                    PartialAckTimer::Impatient
                },
                rwnd_segments: rwnd,
                sack,
                seed,
            },
        )
}

enum Event {
    /// A data segment reaches the receiver.
    Data(DataSegment),
    /// An ACK and its SACK option reach the sender.
    Ack(AckSegment, SackBlocks),
}

/// Runs one case, checking the invariants; returns the sender's and receiver's counters.
fn run(c: &Case) -> Result<(SenderStats, u64, u64), TestCaseError> {
    let mut cc = c.cc.build(WindowConfig {
        initial_window: c.initial_window,
        abc_limit: c.abc_limit,
        ..WindowConfig::default()
    });
    let path = cc.add_path(MSS);
    let rwnd_bytes = c.rwnd_segments.map_or(u64::MAX, |s| s * MSS);
    let mut tx = TcpSender::new(
        TcpSenderConfig {
            mss: MSS,
            rtt: RttConfig::default(),
            limited_transmit: c.limited_transmit,
            partial_ack_timer: c.timer,
            rwnd_bytes,
            flight_estimate: FlightEstimate::Pipe,
            sack: c.sack,
            ..TcpSenderConfig::default()
        },
        path,
    );
    let mut rx = TcpReceiver::new(TcpReceiverConfig {
        sack: c.sack,
        ..TcpReceiverConfig::default()
    });
    let mut rng = Rng::seed_from_u64(c.seed);
    let mut events: BinaryHeap<Reverse<(Time, u64)>> = BinaryHeap::new();
    let mut pending: Vec<Option<Event>> = Vec::new();
    // Departure times of the segments in the bottleneck's buffer, oldest first.
    let mut queue: std::collections::VecDeque<Time> = std::collections::VecDeque::new();
    let mut busy_until = Time::ZERO;
    let tx_time = Dur::from_ps(MSS * 8 * 1_000_000_000_000 / c.rate_bps);
    let end = Time::from_secs(30);
    let mut now = Time::ZERO;
    let mut recovery_partials = 0u64;
    let mut recovery_limit = 0u64;

    let schedule = |events: &mut BinaryHeap<Reverse<(Time, u64)>>,
                    pending: &mut Vec<Option<Event>>,
                    at: Time,
                    e: Event| {
        events.push(Reverse((at, pending.len() as u64)));
        pending.push(Some(e));
    };

    loop {
        // Send what the window allows.
        while tx.stats().segments_sent < MAX_SEGMENTS {
            let Some(seg) = tx.poll_transmit(now, &cc) else {
                break;
            };
            let m = cc.metrics(path);
            prop_assert!(
                tx.flight_bytes() <= rwnd_bytes,
                "flight {} > rwnd {}",
                tx.flight_bytes(),
                rwnd_bytes
            );
            if !seg.retransmission {
                prop_assert!(
                    tx.pipe_bytes() <= m.cwnd + 3 * MSS,
                    "pipe {} > cwnd {} + 3 segments after sending new data ({:?})",
                    tx.pipe_bytes(),
                    m.cwnd,
                    m
                );
            }
            while queue.front().is_some_and(|&d| d <= now) {
                queue.pop_front();
            }
            if queue.len() >= c.buffer_pkts || rng.bernoulli(c.loss) {
                continue;
            }
            let depart = busy_until.max(now) + tx_time;
            busy_until = depart;
            queue.push_back(depart);
            schedule(
                &mut events,
                &mut pending,
                depart + c.delay,
                Event::Data(seg),
            );
        }
        // The next event: a delivery or the sender's timer.
        let next_event = events.peek().map(|Reverse((t, _))| *t);
        let timer = tx.poll_timeout();
        let at = match (next_event, timer) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(t) => t,
                None => break,
            },
        };
        if at > end {
            break;
        }
        now = at;
        // The window the sender fills: the controller's (with recovery inflation), limited
        // transmit's allowance, the receive window.
        let allowance = if c.limited_transmit && !tx.in_recovery() {
            u64::from(tx.dupacks().min(2)) * MSS
        } else {
            0
        };
        let window_before = (cc.window(path) + allowance).min(rwnd_bytes);
        let (ssthresh_before, losses_before) = (
            cc.metrics(path).ssthresh,
            tx.stats().fast_recoveries + tx.stats().timeouts,
        );
        let flight_segments = tx.flight_bytes().div_ceil(MSS);
        let (una_before, in_recovery_before) = (tx.snd_una(), tx.in_recovery());
        if next_event == Some(at) {
            let Reverse((_, id)) = events.pop().unwrap();
            match pending[id as usize].take().unwrap() {
                Event::Data(seg) => {
                    if let Some(ack) = rx.handle_segment(now, &seg) {
                        let e = Event::Ack(ack, *rx.sack_blocks());
                        schedule(&mut events, &mut pending, now + c.delay, e);
                    }
                }
                Event::Ack(ack, sack) => tx.handle_ack_with_sack(now, &ack, &sack, &mut cc),
            }
        } else {
            tx.handle_timeout(now, &mut cc);
        }
        let m = cc.metrics(path);
        if tx.snd_una() > 0 {
            // From the first ACK on (the initial window may exceed a small rwnd).
            prop_assert!(
                m.cwnd <= rwnd_bytes.max(MSS),
                "cwnd {} > rwnd {}",
                m.cwnd,
                rwnd_bytes
            );
        }
        let losses = tx.stats().fast_recoveries + tx.stats().timeouts;
        if losses > losses_before && m.ssthresh != ssthresh_before {
            prop_assert!(
                m.ssthresh <= window_before.max(2 * MSS),
                "{}: ssthresh {} after a loss with window {} in use",
                c.cc.name(),
                m.ssthresh,
                window_before
            );
        }
        if tx.in_recovery() && !in_recovery_before {
            recovery_partials = 0;
            recovery_limit = flight_segments;
        }
        if in_recovery_before && tx.in_recovery() && tx.snd_una() > una_before {
            recovery_partials += 1;
            prop_assert!(
                recovery_partials <= recovery_limit,
                "{} partial ACKs in one recovery begun with {} segments outstanding",
                recovery_partials,
                recovery_limit
            );
        }
        prop_assert!(
            tx.snd_una() <= rx.delivered_bytes(),
            "acknowledged {} > delivered {}",
            tx.snd_una(),
            rx.delivered_bytes()
        );
        if tx.stats().segments_sent >= MAX_SEGMENTS && events.is_empty() {
            break;
        }
    }
    if events.is_empty() {
        prop_assert_eq!(tx.snd_una(), rx.delivered_bytes(), "after the path drained");
    }
    Ok((*tx.stats(), rx.delivered_bytes(), tx.snd_una()))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(5000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_sender_keeps_its_invariants_on_random_paths(c in case()) {
        let first = run(&c)?;
        let again = run(&c)?;
        prop_assert_eq!(first, again, "the same case gave different counters");
    }
}
