//! The receive window and head-of-line blocking with scripted acknowledgements: which data
//! each subflow sends, when it is blocked, what opportunistic retransmission sends again and
//! whom penalisation halves (`docs/decisions.md` D175–D179).

use pathpool_cc::{AnyController, CcKind, MultipathController, WindowConfig};
use pathpool_core::Time;

use super::{DataAck, MpSender, ReceiveWindowConfig, ReceiveWindowStats, Scheduler};
use crate::tcp::{AckSegment, TcpSenderConfig};

const MSS: u64 = 1000;

/// Two subflows of an uncoupled connection with a two-segment initial window and a
/// connection-level receive buffer of four segments.
fn connection(config: ReceiveWindowConfig) -> (MpSender, AnyController) {
    let mut cc = CcKind::Uncoupled.build(WindowConfig {
        initial_window: 2,
        ..WindowConfig::default()
    });
    let tcp = TcpSenderConfig {
        mss: MSS,
        data_bytes: None,
        ..TcpSenderConfig::default()
    };
    let mut tx = MpSender::new(tcp, Scheduler::LowestRtt).with_receive_window(config);
    tx.add_subflow(&mut cc, 0);
    tx.add_subflow(&mut cc, 0);
    (tx, cc)
}

/// Everything the sender sends at `now`: (subflow, first data byte, one past the last).
fn send(tx: &mut MpSender, cc: &mut AnyController, now: Time) -> Vec<(usize, u64, u64)> {
    let mut sent = Vec::new();
    while let Some(s) = tx.poll_transmit(now, cc) {
        let mut data = Vec::new();
        tx.for_each_mapping(s.subflow, s.seg.seq, u64::from(s.seg.len), |a, b| {
            data.push((a, b));
        });
        assert_eq!(data.len(), 1, "one mapping a segment");
        sent.push((s.subflow, data[0].0, data[0].1));
    }
    sent
}

/// Subflow `sf`'s ACK of its bytes below `ack`, for segments sent at `sent`, carrying
/// `data_ack`.
fn ack(
    tx: &mut MpSender,
    cc: &mut AnyController,
    now: Time,
    (sf, ack, sent): (usize, u64, Time),
    data_ack: DataAck,
) {
    tx.handle_data_ack(data_ack);
    tx.handle_ack(now, sf, &AckSegment::new(ack, sent), cc);
}

fn d(data_ack: u64, window: u64) -> DataAck {
    DataAck { data_ack, window }
}

fn ms(t: u64) -> Time {
    Time::from_ms(t)
}

#[test]
fn a_slow_subflow_holding_the_left_edge_blocks_the_fast_one_until_mitigated() {
    let (mut tx, mut cc) = connection(ReceiveWindowConfig::with_mitigations(4 * MSS));
    // Neither subflow has an RTT sample: the lower index first, until its window is full.
    assert_eq!(
        send(&mut tx, &mut cc, ms(0)),
        [
            (0, 0, 1000),
            (0, 1000, 2000),
            (1, 2000, 3000),
            (1, 3000, 4000)
        ]
    );
    assert_eq!(tx.right_edge(), 4000, "the whole buffer before any report");

    // 20 ms: the fast subflow's two segments are acknowledged; the right edge moves to 6000.
    // Subflow 0 (cwnd 3 segments) sends up to the edge, is blocked, and sends again the data
    // at the left edge, 2000..3000, which the slow subflow holds. Subflow 1 has no RTT sample
    // yet, so it is not known to be slower and is not penalised.
    ack(&mut tx, &mut cc, ms(20), (0, 2000, ms(0)), d(2000, 4000));
    assert_eq!(tx.right_edge(), 6000);
    assert_eq!(
        send(&mut tx, &mut cc, ms(20)),
        [(0, 4000, 5000), (0, 5000, 6000), (0, 2000, 3000)]
    );
    assert_eq!(
        tx.receive_window_stats(),
        Some(ReceiveWindowStats {
            blocked: 1,
            opportunistic_retransmissions: 1,
            penalisations: 0
        })
    );

    // 150 ms: the slow subflow's first segment is acknowledged (its RTT is 150 ms). The
    // receiver holds 4000..6000 above the gap at 3000, so the window (2000) does not move the
    // edge; subflow 1 is blocked, but it holds the left edge itself: nothing to do.
    ack(&mut tx, &mut cc, ms(150), (1, 1000, ms(0)), d(3000, 2000));
    assert_eq!(tx.right_edge(), 6000);
    assert_eq!(send(&mut tx, &mut cc, ms(150)), []);
    let slow = tx.subflows()[1].path();
    let before = cc.metrics(slow);
    assert_eq!(before.cwnd, 3 * MSS);

    // 160 ms: subflow 0's segments are all acknowledged, still blocked at 6000 with the left
    // edge (3000) held by the slower subflow 1: it is penalised (cwnd and ssthresh halved to
    // 1500 B) and subflow 0 sends 3000..4000 again.
    ack(&mut tx, &mut cc, ms(160), (0, 5000, ms(20)), d(3000, 2000));
    assert_eq!(send(&mut tx, &mut cc, ms(160)), [(0, 3000, 4000)]);
    let after = cc.metrics(slow);
    assert_eq!((after.cwnd, after.ssthresh), (1500, 1500));
    let stats = tx.receive_window_stats().unwrap();
    assert_eq!(
        (stats.opportunistic_retransmissions, stats.penalisations),
        (2, 1)
    );

    // 170 ms: the copy arrives, the data is delivered up to 6000 and the edge moves to
    // 10000: the fast subflow fills it (the slow one's window has no room for a segment).
    ack(&mut tx, &mut cc, ms(170), (0, 6000, ms(160)), d(6000, 4000));
    assert_eq!(tx.right_edge(), 10_000);
    assert_eq!(
        send(&mut tx, &mut cc, ms(170)),
        [
            (0, 6000, 7000),
            (0, 7000, 8000),
            (0, 8000, 9000),
            (0, 9000, 10_000)
        ]
    );
    assert_eq!(tx.data_acked(), 6000, "the explicit DATA_ACK");
}

#[test]
fn without_mitigations_a_blocked_subflow_waits() {
    let (mut tx, mut cc) = connection(ReceiveWindowConfig {
        receive_buffer_bytes: 4 * MSS,
        opportunistic_retransmission: false,
        penalisation: false,
    });
    send(&mut tx, &mut cc, ms(0));
    ack(&mut tx, &mut cc, ms(20), (0, 2000, ms(0)), d(2000, 4000));
    assert_eq!(
        send(&mut tx, &mut cc, ms(20)),
        [(0, 4000, 5000), (0, 5000, 6000)]
    );
    ack(&mut tx, &mut cc, ms(40), (0, 4000, ms(20)), d(2000, 2000));
    assert_eq!(send(&mut tx, &mut cc, ms(40)), [], "blocked at 6000");
    let stats = tx.receive_window_stats().unwrap();
    assert_eq!(stats.blocked, 2);
    assert_eq!(stats.opportunistic_retransmissions + stats.penalisations, 0);
}

#[test]
fn a_late_window_update_from_the_slow_subflow_does_not_shrink_the_window() {
    let (mut tx, mut cc) = connection(ReceiveWindowConfig::with_mitigations(4 * MSS));
    send(&mut tx, &mut cc, ms(0));
    ack(&mut tx, &mut cc, ms(20), (0, 2000, ms(0)), d(2000, 4000));
    assert_eq!(tx.right_edge(), 6000);
    // An older report arriving later on the slow subflow.
    ack(&mut tx, &mut cc, ms(150), (1, 1000, ms(0)), d(0, 1000));
    assert_eq!(tx.right_edge(), 6000);
    // What the subflows acknowledged (0..2000 on subflow 0, 2000..3000 on subflow 1) has
    // arrived too: the data-level acknowledgement is the larger of the two.
    assert_eq!(tx.data_acked(), 3000);
}
