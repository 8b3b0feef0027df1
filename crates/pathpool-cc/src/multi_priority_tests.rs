use super::*;
use pathpool_core::Dur;
use proptest::prelude::*;

const MSS: u64 = 1000;
const BASE: PathId = PathId(0);

/// Multi-Priority TCP over four paths of 1000-byte segments: the base (path 0) in congestion
/// avoidance at 10 segments, the three background paths at one segment (probe mode).
fn mp(accounting: Accounting, borrow_unit: BorrowUnit) -> MultiPriority {
    let config = MultiPriorityConfig {
        base: 0,
        accounting,
        borrow_unit,
    };
    let mut c = MultiPriority::new(config, TcpLpConfig::default(), WindowConfig::default());
    for _ in 0..4 {
        c.add_path(MSS);
    }
    for i in 0..4 {
        let p = c.inner.path_mut(PathId(i));
        p.ssthresh = 2 * MSS;
        p.cwnd = if i == 0 { 10 * MSS } else { MSS };
    }
    c
}

fn ack(now_ms: u64, acked: u64, owd_ms: Option<u64>, srtt_ms: u64) -> AckSample {
    AckSample {
        now: Time::from_ms(now_ms),
        acked_bytes: acked,
        rtt_sample: Some(Dur::from_ms(srtt_ms)),
        one_way_delay: owd_ms.map(Dur::from_ms),
        srtt: Dur::from_ms(srtt_ms),
        flight_bytes: 0,
    }
}

/// Gives background path `i` the delay extremes d_min 20 ms, d_max 60 ms (sowd 25 ms, below
/// the CI threshold 26 ms), leaving it at one segment.
fn learn_extremes(c: &mut MultiPriority, i: u32, now_ms: u64) {
    c.on_ack(PathId(i), &ack(now_ms, MSS, Some(20), 100));
    c.on_ack(PathId(i), &ack(now_ms + 1, MSS, Some(60), 100));
    assert!(!c.inner.coupling().lp().path(i as usize).holds_growth());
    c.inner.path_mut(PathId(i)).cwnd = MSS;
}

/// Bytes in flight: `base` on the base path, nothing elsewhere; data to send everywhere.
fn flights(base: u64) -> impl Fn(PathId) -> SendView {
    move |p| SendView {
        flight_bytes: if p == BASE { base } else { 0 },
        has_data: true,
    }
}

#[test]
fn a_probe_holds_a_base_slot() {
    // Issue 20 acceptance 1: cwnd_B 10 segments with 9 in flight leaves one slot; a probe
    // takes it, and the base may send nothing more until the probe returns.
    let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Slot);
    c.on_ack(BASE, &ack(0, MSS, None, 100));
    c.inner.path_mut(BASE).cwnd = 10 * MSS;
    assert!(
        !c.may_send(PathId(1), Time::from_ms(0), flights(10 * MSS)),
        "no free slot"
    );
    assert!(c.may_send(PathId(1), Time::from_ms(0), flights(9 * MSS)));
    c.on_sent(PathId(1), Time::from_ms(0));
    assert_eq!(c.borrowed(), 1);
    assert_eq!(c.window(BASE), 9 * MSS, "9 in flight: no room");
    assert_eq!(
        c.window(PathId(1)),
        MSS,
        "the probe's own window is untouched"
    );
    // Its ACK (not slow: the path has no delay history) frees the slot.
    c.on_ack(PathId(1), &ack(50, MSS, None, 100));
    assert_eq!(c.borrowed(), 0);
    assert_eq!(c.window(BASE), 10 * MSS);
}

#[test]
fn a_slow_probe_ack_returns_one_cwnd_b_th_of_a_segment() {
    // Issue 20 acceptance 1: cwnd_B 10 → 10.1 segments on a probe ACK that shows a CI.
    let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Slot);
    learn_extremes(&mut c, 1, 0);
    c.on_ack(BASE, &ack(10, MSS, None, 100));
    c.inner.path_mut(BASE).cwnd = 10 * MSS;
    assert!(c.may_send(PathId(1), Time::from_ms(10), flights(0)));
    c.on_sent(PathId(1), Time::from_ms(10));
    // sowd 25 → 25 − 25/8 + 60/8 = 29.4 ms > d_min + 0.15·(d_max − d_min) = 26 ms: a CI.
    c.on_ack(PathId(1), &ack(60, MSS, Some(60), 100));
    assert!(c.inner.coupling().lp().path(1).holds_growth());
    assert_eq!(c.windows().paths()[0].cwnd, 10_100, "10 + 1/10 segment");
    assert_eq!(c.windows().paths()[1].cwnd, MSS, "TCP-LP did not grow");
    assert_eq!(c.borrowed(), 0);
    // Without returning, the same ACK leaves the base alone.
    let mut c = mp(Accounting::Borrow, BorrowUnit::Slot);
    learn_extremes(&mut c, 1, 0);
    c.on_ack(BASE, &ack(10, MSS, None, 100));
    c.inner.path_mut(BASE).cwnd = 10 * MSS;
    c.on_sent(PathId(1), Time::from_ms(10));
    c.on_ack(PathId(1), &ack(60, MSS, Some(60), 100));
    assert_eq!(c.windows().paths()[0].cwnd, 10 * MSS);
}

#[test]
fn a_fast_probe_ack_lets_tcp_lp_grow_and_returns_nothing() {
    let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Slot);
    learn_extremes(&mut c, 1, 0);
    c.on_sent(PathId(1), Time::from_ms(10));
    c.on_ack(PathId(1), &ack(60, MSS, Some(20), 100));
    assert_eq!(
        c.windows().paths()[1].cwnd,
        2 * MSS,
        "slow start from one segment"
    );
    assert_eq!(c.windows().paths()[0].cwnd, 10 * MSS);
}

#[test]
fn a_second_probe_waits_one_base_srtt() {
    // Issue 20 acceptance 1: base srtt 100 ms; a probe at 1000 ms; another background path
    // may probe only from 1100 ms.
    let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Slot);
    c.on_ack(BASE, &ack(900, MSS, None, 100));
    c.inner.path_mut(BASE).cwnd = 10 * MSS;
    assert!(c.may_send(PathId(1), Time::from_ms(1000), flights(0)));
    c.on_sent(PathId(1), Time::from_ms(1000));
    assert!(!c.may_send(PathId(2), Time::from_ms(1050), flights(0)));
    assert!(!c.may_send(PathId(2), Time::from_ms(1099), flights(0)));
    assert!(c.may_send(PathId(2), Time::from_ms(1100), flights(0)));
}

#[test]
fn probes_go_round_robin() {
    let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Slot);
    let mut order = Vec::new();
    for k in 0..6u64 {
        let now = Time::from_ms(k * 200);
        let turn: Vec<u32> = (1..4)
            .filter(|&j| c.may_send(PathId(j), now, flights(0)))
            .collect();
        assert_eq!(
            turn.len(),
            1,
            "one background path's turn at a time: {turn:?}"
        );
        c.on_sent(PathId(turn[0]), now);
        // Its ACK, not slow, would let it grow: put it back at one segment.
        c.on_ack(PathId(turn[0]), &ack(k * 200 + 50, MSS, None, 100));
        c.inner.path_mut(PathId(turn[0])).cwnd = MSS;
        order.push(turn[0]);
    }
    assert_eq!(order, [1, 2, 3, 1, 2, 3]);
}

#[test]
fn a_lost_probe_frees_its_slot_and_leaves_the_base_alone() {
    let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Slot);
    c.on_sent(PathId(2), Time::from_ms(0));
    assert_eq!(c.window(BASE), 9 * MSS);
    c.on_congestion_event(
        PathId(2),
        CongestionEvent::Timeout {
            flight_bytes: MSS,
            repeated: false,
        },
    );
    assert_eq!(c.borrowed(), 0);
    assert_eq!(c.window(BASE), 10 * MSS);
    assert_eq!(c.windows().paths()[0].ssthresh, 2 * MSS, "base untouched");
}

#[test]
fn decrement_takes_a_segment_for_good_and_naive_charges_nothing() {
    let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Decrement);
    c.on_sent(PathId(1), Time::from_ms(0));
    assert_eq!((c.windows().paths()[0].cwnd, c.borrowed()), (9 * MSS, 0));
    c.on_ack(PathId(1), &ack(50, MSS, None, 100));
    assert_eq!(c.windows().paths()[0].cwnd, 9 * MSS, "not given back");
    let mut c = mp(Accounting::Naive, BorrowUnit::Slot);
    assert!(!c.gates_sending());
    for j in 1..4 {
        assert!(c.may_send(PathId(j), Time::ZERO, flights(10 * MSS)));
        c.on_sent(PathId(j), Time::ZERO);
    }
    assert_eq!((c.window(BASE), c.borrowed()), (10 * MSS, 0));
}

#[test]
fn a_background_path_above_one_segment_is_ordinary_tcp_lp() {
    let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Slot);
    c.inner.path_mut(PathId(3)).cwnd = 4 * MSS;
    assert!(c.may_send(PathId(3), Time::ZERO, flights(10 * MSS)));
    c.on_sent(PathId(3), Time::ZERO);
    assert_eq!(c.borrowed(), 0);
}

/// One step of a random script.
#[derive(Clone, Debug)]
enum Op {
    Advance(u64),
    BaseSend,
    BaseAck(u64),
    BaseLoss,
    Send(u32),
    Ack(u32, u64),
    Loss(u32),
    Collapse(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u64..150).prop_map(Op::Advance),
        Just(Op::BaseSend),
        (20u64..200).prop_map(Op::BaseAck),
        Just(Op::BaseLoss),
        (1u32..4).prop_map(Op::Send),
        ((1u32..4), (20u64..80)).prop_map(|(j, owd)| Op::Ack(j, owd)),
        (1u32..4).prop_map(Op::Loss),
        (1u32..4).prop_map(Op::Collapse),
    ]
}

proptest! {
    /// Issue 20 acceptance 2: whenever the base or a probe sends, the base's outstanding
    /// packets plus the borrowed slots fit in cwnd_B, and probes leave at least one base
    /// srtt apart, whatever the script of sends, ACKs (slow or not), losses and collapses.
    #[test]
    fn borrowing_keeps_the_base_window_and_the_probe_rate(
        ops in proptest::collection::vec(op(), 1..200)
    ) {
        let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Slot);
        let mut now = Time::from_ms(1);
        let mut flight = [0u64; 4];
        let mut last_probe: Option<Time> = None;
        for o in &ops {
            let mut sent = false;
            let f = flight;
            let flight_of = move |p: PathId| SendView {
                flight_bytes: f[p.index()],
                has_data: true,
            };
            match *o {
                Op::Advance(ms) => now += Dur::from_ms(ms),
                Op::BaseSend => {
                    if flight[0] + MSS <= c.window(BASE) && c.may_send(BASE, now, flight_of) {
                        flight[0] += MSS;
                        c.on_sent(BASE, now);
                        sent = true;
                    }
                }
                Op::BaseAck(srtt) => {
                    if flight[0] >= MSS {
                        flight[0] -= MSS;
                        c.on_ack(BASE, &ack(now.as_ps() / 1_000_000_000, MSS, None, srtt));
                    }
                }
                Op::BaseLoss => {
                    c.on_congestion_event(BASE, CongestionEvent::FastRetransmit { flight_bytes: flight[0] });
                    c.on_recovery_ack(BASE, RecoveryAck::Full { flight_bytes: flight[0] });
                }
                Op::Send(j) => {
                    let p = PathId(j);
                    let probe = c.windows().paths()[j as usize].cwnd <= MSS;
                    if flight[j as usize] + MSS <= c.window(p) && c.may_send(p, now, flight_of) {
                        flight[j as usize] += MSS;
                        c.on_sent(p, now);
                        // Only a probe takes a base slot; a background path above one
                        // segment sends on its own window.
                        sent = probe;
                        if probe {
                            let srtt = c.windows().paths()[0].srtt;
                            if let Some(t) = last_probe {
                                prop_assert!(now.saturating_since(t) >= srtt, "probes {:?} apart, srtt {:?}", now.saturating_since(t), srtt);
                            }
                            last_probe = Some(now);
                        }
                    }
                }
                Op::Ack(j, owd) => {
                    if flight[j as usize] >= MSS {
                        flight[j as usize] -= MSS;
                        c.on_ack(PathId(j), &ack(now.as_ps() / 1_000_000_000, MSS, Some(owd), 100));
                    }
                }
                Op::Loss(j) => {
                    if flight[j as usize] > 0 {
                        c.on_congestion_event(PathId(j), CongestionEvent::Timeout { flight_bytes: flight[j as usize], repeated: false });
                        flight[j as usize] = 0;
                    }
                }
                Op::Collapse(j) => c.inner.path_mut(PathId(j)).cwnd = MSS,
            }
            if sent {
                let cwnd_b = c.inner.window(BASE);
                prop_assert!(
                    flight[0] + c.borrowed() * MSS <= cwnd_b,
                    "base {} + borrowed {} > cwnd_B {}", flight[0], c.borrowed() * MSS, cwnd_b
                );
            }
            let out = c.probe_out.iter().filter(|&&b| b).count() as u64;
            prop_assert_eq!(c.borrowed(), out);
        }
    }
}

#[test]
fn a_due_probe_goes_before_the_base_and_one_without_data_does_not_block_it() {
    let mut c = mp(Accounting::BorrowReturn, BorrowUnit::Slot);
    c.on_ack(BASE, &ack(0, MSS, None, 100));
    c.inner.path_mut(BASE).cwnd = 10 * MSS;
    // 9 of 10 base segments in flight: the free slot is the probe's.
    assert!(!c.may_send(BASE, Time::ZERO, flights(9 * MSS)));
    assert!(c.may_send(PathId(1), Time::ZERO, flights(9 * MSS)));
    // Background paths with nothing to send leave the slot to the base.
    let idle = |p: PathId| SendView {
        flight_bytes: if p == BASE { 9 * MSS } else { 0 },
        has_data: p == BASE,
    };
    assert!(c.may_send(BASE, Time::ZERO, idle));
    // Path 1 has nothing to send, path 2 has: the turn passes to path 2.
    let two = |p: PathId| SendView {
        flight_bytes: 0,
        has_data: p != PathId(1),
    };
    assert!(c.may_send(PathId(2), Time::ZERO, two));
    assert!(!c.may_send(PathId(1), Time::ZERO, two));
    c.on_sent(PathId(2), Time::ZERO);
    assert!(
        c.may_send(BASE, Time::ZERO, flights(8 * MSS)),
        "probe out: the base's turn"
    );
}
