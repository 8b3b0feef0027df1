//! A multipath connection over a toy network: every subflow's path has a one-way delay, a
//! rate (one packet per `gap`), a drop probability and optional jitter that reorders packets.
//! The tests check what must hold whatever the network does: a finite transfer completes with
//! every byte delivered exactly once in order, including when subflows are added and closed
//! mid-transfer.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use pathpool_cc::{CcKind, WindowConfig};
use pathpool_core::{Dur, Rng, Time};
use pathpool_proto::mptcp::{
    DataAck, MpReceiver, MpSender, ReceiveWindowConfig, Scheduler, SubflowState,
};
use pathpool_proto::tcp::{AckSegment, DataSegment, TcpReceiverConfig, TcpSenderConfig};

const MSS: u64 = 1000;

#[derive(Clone, Copy)]
struct PathModel {
    delay: Dur,
    /// Serialisation time of one data packet (the path's rate).
    gap: Dur,
    loss: f64,
    jitter: Dur,
}

enum Event {
    Data(usize, DataSegment),
    Ack(usize, AckSegment, DataAck),
    /// Close (or open, for an index beyond the current subflows) a subflow.
    Close(usize),
    Open,
}

struct Net {
    now: Time,
    queue: BinaryHeap<Reverse<(Time, u64, usize)>>,
    events: Vec<Option<Event>>,
    paths: Vec<PathModel>,
    /// When each path's sender-side link is free again.
    busy_until: Vec<Time>,
    rng: Rng,
}

impl Net {
    fn push(&mut self, at: Time, e: Event) {
        let id = self.events.len();
        self.events.push(Some(e));
        self.queue.push(Reverse((at, id as u64, id)));
    }
    fn send_data(&mut self, sf: usize, seg: DataSegment) {
        let p = self.paths[sf];
        let depart = self.busy_until[sf].max(self.now) + p.gap;
        self.busy_until[sf] = depart;
        if self.rng.bernoulli(p.loss) {
            return;
        }
        let jitter = Dur::from_ps(self.rng.below(p.jitter.as_ps() + 1));
        self.push(depart + p.delay + jitter, Event::Data(sf, seg));
    }
    fn send_ack(&mut self, sf: usize, ack: AckSegment, data_ack: DataAck) {
        let p = self.paths[sf];
        if self.rng.bernoulli(p.loss / 2.0) {
            return;
        }
        self.push(self.now + p.delay, Event::Ack(sf, ack, data_ack));
    }
}

struct Outcome {
    delivered: u64,
    finished_at: Option<Time>,
    duplicates: u64,
    sent_per_subflow: Vec<u64>,
}

/// Which subflows exist when: one per path, the first `initial` open at once, the others
/// opened at the times in `opens`; subflows closed at the times in `closes`.
struct Plan<'a> {
    paths: &'a [PathModel],
    initial: usize,
    opens: &'a [Time],
    closes: &'a [(Time, usize)],
    /// A finite connection-level receive buffer, if any.
    window: Option<ReceiveWindowConfig>,
}

/// Runs a transfer of `bytes` following `plan`.
fn transfer(cc: CcKind, scheduler: Scheduler, bytes: u64, plan: Plan<'_>, seed: u64) -> Outcome {
    let Plan {
        paths,
        initial,
        opens,
        closes,
        window,
    } = plan;
    let mut cc = cc.build(WindowConfig::default());
    let tcp = TcpSenderConfig {
        mss: MSS,
        data_bytes: Some(bytes),
        ..TcpSenderConfig::default()
    };
    let mut tx = MpSender::new(tcp, scheduler);
    let mut rx = MpReceiver::new(TcpReceiverConfig::default());
    if let Some(w) = window {
        tx = tx.with_receive_window(w);
        rx = rx.with_receive_buffer(w.receive_buffer_bytes);
    }
    let mut net = Net {
        now: Time::ZERO,
        queue: BinaryHeap::new(),
        events: Vec::new(),
        paths: paths.to_vec(),
        busy_until: vec![Time::ZERO; paths.len()],
        rng: Rng::seed_from_u64(seed),
    };
    for _ in 0..initial {
        tx.add_subflow(&mut cc, 0);
        rx.add_subflow();
    }
    for &t in opens {
        net.push(t, Event::Open);
    }
    for &(t, i) in closes {
        net.push(t, Event::Close(i));
    }
    let horizon = Time::from_secs(600);
    let mut finished_at = None;
    loop {
        while let Some(s) = tx.poll_transmit(net.now, &mut cc) {
            // Nothing goes beyond the receive window's right edge.
            let mut end = 0;
            tx.for_each_mapping(s.subflow, s.seg.seq, u64::from(s.seg.len), |_, b| {
                end = end.max(b);
            });
            assert!(
                end <= tx.right_edge(),
                "data to {end} beyond {}",
                tx.right_edge()
            );
            net.send_data(s.subflow, s.seg);
        }
        // The sender learns of data only through ACKs of what the receiver has.
        assert!(tx.data_acked() <= rx.delivered_bytes());
        if tx.is_finished() {
            assert_eq!(tx.data_acked(), bytes);
            finished_at = Some(net.now);
            break;
        }
        // The ends keep their subflows' deadlines cached: they must equal the subflows' own.
        let tx_timer = tx
            .subflows()
            .iter()
            .filter(|sf| sf.state() == SubflowState::Active)
            .filter_map(|sf| sf.sender().poll_timeout())
            .min();
        assert_eq!(tx.poll_timeout(), tx_timer);
        for t in [net.now, net.now + Dur::from_ms(50), Time::MAX] {
            assert_eq!(tx.poll_timeout_before(t), tx_timer.filter(|&d| d < t));
        }
        let rx_timer = rx.subflows().iter().filter_map(|r| r.poll_timeout()).min();
        assert_eq!(rx.poll_timeout(), rx_timer);
        let next_timer = [tx.poll_timeout(), rx.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let next_event = net.queue.peek().map(|r| r.0 .0);
        let t = match (next_timer, next_event) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(t) => t,
                None => break,
            },
        };
        if t > horizon {
            break;
        }
        net.now = t;
        if next_event == Some(t) {
            let Reverse((_, _, id)) = net.queue.pop().unwrap();
            match net.events[id].take().unwrap() {
                Event::Data(sf, seg) => {
                    let ack = rx.handle_segment(net.now, sf, &seg);
                    tx.for_each_mapping(sf, seg.seq, u64::from(seg.len), |a, b| {
                        rx.handle_mapping(a, b)
                    });
                    // The receive buffer never holds more than its size.
                    assert!(rx.held_out_of_order_bytes() <= rx.receive_buffer_bytes());
                    if let Some(a) = ack {
                        net.send_ack(sf, a, rx.data_ack());
                    }
                }
                Event::Ack(sf, ack, data_ack) => {
                    tx.handle_data_ack(data_ack);
                    tx.handle_ack(net.now, sf, &ack, &mut cc);
                }
                Event::Close(i) => tx.close_subflow(i, &mut cc),
                Event::Open => {
                    tx.add_subflow(&mut cc, 0);
                    rx.add_subflow();
                }
            }
        } else {
            tx.handle_timeout(net.now, &mut cc);
            let mut acks = Vec::new();
            rx.handle_timeout(net.now, |sf, a, _| acks.push((sf, a)));
            for (sf, a) in acks {
                net.send_ack(sf, a, rx.data_ack());
            }
        }
    }
    Outcome {
        delivered: rx.delivered_bytes(),
        finished_at,
        duplicates: rx.duplicate_data_bytes(),
        sent_per_subflow: tx
            .subflows()
            .iter()
            .map(|s| s.sender().stats().bytes_sent)
            .collect(),
    }
}

fn path(delay_ms: u64, mbps: u64, loss: f64, jitter_ms: u64) -> PathModel {
    PathModel {
        delay: Dur::from_ms(delay_ms),
        gap: Dur::from_ps(MSS * 8 * 1_000_000 / mbps),
        loss,
        jitter: Dur::from_ms(jitter_ms),
    }
}

#[test]
fn two_clean_paths_deliver_everything_and_use_both() {
    let o = transfer(
        CcKind::Lia,
        Scheduler::LowestRtt,
        2_000_000,
        Plan {
            paths: &[path(10, 10, 0.0, 0), path(30, 10, 0.0, 0)],
            initial: 2,
            opens: &[],
            closes: &[],
            window: None,
        },
        1,
    );
    assert_eq!(o.delivered, 2_000_000);
    assert!(o.finished_at.is_some());
    assert_eq!(o.duplicates, 0, "no loss, no duplicate");
    assert!(
        o.sent_per_subflow.iter().all(|&b| b > 200_000),
        "both subflows carry data: {:?}",
        o.sent_per_subflow
    );
}

#[test]
fn completes_under_loss_and_reordering_for_every_controller_and_scheduler() {
    for &cc in CcKind::ALL {
        for &sched in Scheduler::ALL {
            for seed in 0..3 {
                let o = transfer(
                    cc,
                    sched,
                    300_000 + seed * 777,
                    Plan {
                        paths: &[
                            path(5, 20, 0.02, 3),
                            path(40, 5, 0.05, 10),
                            path(15, 8, 0.0, 20),
                        ],
                        initial: 3,
                        opens: &[],
                        closes: &[],
                        window: None,
                    },
                    seed,
                );
                assert_eq!(
                    o.delivered,
                    300_000 + seed * 777,
                    "{cc} {sched} seed {seed}: every byte in order"
                );
                assert!(o.finished_at.is_some(), "{cc} {sched} seed {seed}");
            }
        }
    }
}

#[test]
fn closing_a_subflow_reinjects_its_data_and_the_transfer_completes() {
    // Subflow 1 is the fast one; it is closed with a window of data in flight, which must go
    // again on subflow 0. Subflow 2 opens later and takes a share too.
    let paths = [
        path(20, 5, 0.0, 0),
        path(5, 50, 0.01, 0),
        path(10, 10, 0.0, 0),
    ];
    let o = transfer(
        CcKind::Nmcc,
        Scheduler::LowestRtt,
        3_000_000,
        Plan {
            paths: &paths,
            initial: 2,
            opens: &[Time::from_ms(400)],
            closes: &[(Time::from_ms(300), 1)],
            window: None,
        },
        7,
    );
    assert_eq!(o.delivered, 3_000_000);
    assert!(o.finished_at.is_some());
    assert!(o.sent_per_subflow[2] > 100_000, "{:?}", o.sent_per_subflow);
}

#[test]
fn closing_every_subflow_but_one_mid_flight_still_completes() {
    for seed in 0..5 {
        let paths = [
            path(10, 10, 0.01, 2),
            path(10, 10, 0.01, 2),
            path(10, 10, 0.01, 2),
        ];
        let o = transfer(
            CcKind::Olia,
            Scheduler::RoundRobin,
            1_000_000,
            Plan {
                paths: &paths,
                initial: 3,
                opens: &[],
                closes: &[(Time::from_ms(150), 0), (Time::from_ms(151), 2)],
                window: None,
            },
            seed,
        );
        assert_eq!(o.delivered, 1_000_000, "seed {seed}");
    }
}

#[test]
fn a_finite_receive_buffer_is_never_overrun_and_every_transfer_completes() {
    // Heterogeneous lossy, reordering paths; buffers from two segments to a hundred; every
    // combination of the mitigations; a subflow closed mid-transfer in half the runs.
    let paths = [
        path(5, 20, 0.02, 3),
        path(60, 3, 0.03, 10),
        path(15, 8, 0.0, 20),
    ];
    for buffer in [2 * MSS, 5 * MSS, 30 * MSS, 100 * MSS] {
        for (opportunistic_retransmission, penalisation) in
            [(false, false), (true, false), (false, true), (true, true)]
        {
            for seed in 0..3 {
                let bytes = 200_000 + seed * 333;
                let closes = [(Time::from_ms(400), 2)];
                let o = transfer(
                    CcKind::Lia,
                    Scheduler::LowestRtt,
                    bytes,
                    Plan {
                        paths: &paths,
                        initial: 3,
                        opens: &[],
                        closes: if seed % 2 == 0 { &closes } else { &[] },
                        window: Some(ReceiveWindowConfig {
                            receive_buffer_bytes: buffer,
                            opportunistic_retransmission,
                            penalisation,
                        }),
                    },
                    seed,
                );
                let case = format!(
                    "buffer {buffer} opportunistic {opportunistic_retransmission} \
                     penalisation {penalisation} seed {seed}"
                );
                assert_eq!(o.delivered, bytes, "{case}");
                assert!(o.finished_at.is_some(), "{case}");
            }
        }
    }
}

#[test]
fn a_closed_subflow_leaves_the_controller_and_ignores_late_acks() {
    let mut cc = CcKind::Lia.build(WindowConfig::default());
    let tcp = TcpSenderConfig {
        mss: MSS,
        data_bytes: Some(100_000),
        ..TcpSenderConfig::default()
    };
    let mut tx = MpSender::new(tcp, Scheduler::LowestRtt);
    tx.add_subflow(&mut cc, 0);
    tx.add_subflow(&mut cc, 0);
    let mut sent = Vec::new();
    while let Some(s) = tx.poll_transmit(Time::ZERO, &mut cc) {
        sent.push(s);
    }
    assert_eq!(sent.len(), 20, "two initial windows of 10 segments");
    tx.close_subflow(1, &mut cc);
    assert_eq!(tx.subflows()[1].state(), SubflowState::Closed);
    assert_eq!(
        tx.reinjection_queue()
            .iter()
            .map(|r| r.1 - r.0)
            .sum::<u64>(),
        10 * MSS,
        "subflow 1's window is queued again"
    );
    let late = AckSegment::new(5 * MSS, Time::ZERO);
    tx.handle_ack(Time::from_ms(10), 1, &late, &mut cc);
    assert_eq!(tx.subflows()[1].sender().snd_una(), 0, "ignored");
    // The reinjected data goes out on subflow 0 as soon as its window opens.
    let ack = AckSegment::new(10 * MSS, Time::ZERO);
    tx.handle_ack(Time::from_ms(10), 0, &ack, &mut cc);
    let next = tx.poll_transmit(Time::from_ms(10), &mut cc).unwrap();
    assert_eq!(next.subflow, 0);
    let mut first = None;
    tx.for_each_mapping(0, next.seg.seq, u64::from(next.seg.len), |a, _| {
        first = Some(a)
    });
    let reinjected_from = sent.iter().find(|s| s.subflow == 1).unwrap().seg.seq;
    assert_eq!(reinjected_from, 0);
    assert!(
        first.is_some_and(|d| d % MSS == 0),
        "maps to a whole reinjected segment"
    );
}

#[test]
fn lowest_rtt_scheduler_fills_the_fast_subflow_first() {
    let o = transfer(
        CcKind::Uncoupled,
        Scheduler::LowestRtt,
        200_000,
        Plan {
            paths: &[path(100, 100, 0.0, 0), path(2, 100, 0.0, 0)],
            initial: 2,
            opens: &[],
            closes: &[],
            window: None,
        },
        3,
    );
    assert_eq!(o.delivered, 200_000);
    assert!(
        o.sent_per_subflow[1] > 3 * o.sent_per_subflow[0],
        "the 4 ms path carries most: {:?}",
        o.sent_per_subflow
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Random connections with a finite receive buffer: any controller, scheduler, buffer
    /// (one segment to two hundred), mitigation options and two or three random paths (delay,
    /// rate, loss, reordering), sometimes with a subflow closed mid-transfer. `transfer`
    /// checks on every segment that nothing goes beyond the right edge and on every arrival
    /// that the buffer is not overrun; every byte must be delivered in order.
    #[test]
    fn random_connections_with_a_receive_buffer_complete(
        cc in 0..CcKind::ALL.len(),
        round_robin: bool,
        buffer_segments in 1u64..200,
        opportunistic_retransmission: bool,
        penalisation: bool,
        paths in proptest::collection::vec((1u64..80, 1u64..30, 0u32..5, 0u64..20), 2..4),
        close: bool,
        seed in 0u64..1000,
    ) {
        let paths: Vec<PathModel> = paths
            .into_iter()
            .map(|(delay, mbps, loss_pct, jitter)| path(delay, mbps, f64::from(loss_pct) / 100.0, jitter))
            .collect();
        let closes = [(Time::from_ms(200), paths.len() - 1)];
        let bytes = 100_000 + seed;
        let o = transfer(
            CcKind::ALL[cc],
            if round_robin { Scheduler::RoundRobin } else { Scheduler::LowestRtt },
            bytes,
            Plan {
                paths: &paths,
                initial: paths.len(),
                opens: &[],
                closes: if close { &closes } else { &[] },
                window: Some(ReceiveWindowConfig {
                    receive_buffer_bytes: buffer_segments * MSS,
                    opportunistic_retransmission,
                    penalisation,
                }),
            },
            seed,
        );
        proptest::prop_assert_eq!(o.delivered, bytes);
        proptest::prop_assert!(o.finished_at.is_some());
    }
}
