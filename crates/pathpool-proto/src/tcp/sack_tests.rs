//! Tests of SACK loss recovery: a scripted episode with the pipe and every segment sent
//! worked out by hand from RFC 6675, the timeout rules, and multiple losses in one window
//! repaired in one round trip where NewReno needs one per loss.

use super::super::super::receiver::{TcpReceiver, TcpReceiverConfig};
use super::super::super::segment::SackBlocks;
use super::super::SenderStats;
use super::super::{PartialAckTimer, TcpSenderConfig};
use super::*;
use pathpool_cc::{Reno, WindowConfig, Windows};
use pathpool_core::{Dur, PathId};

const MSS: u64 = 1000;

fn sender(sack: bool, initial_window: u64, initial_ssthresh: u64) -> (TcpSender, Windows<Reno>) {
    let mut cc = Windows::new(
        Reno::default(),
        WindowConfig {
            initial_window,
            initial_ssthresh: Some(initial_ssthresh),
            ..Default::default()
        },
    );
    let path = cc.add_path(MSS);
    let config = TcpSenderConfig {
        mss: MSS,
        sack,
        partial_ack_timer: PartialAckTimer::SlowButSteady,
        ..TcpSenderConfig::default()
    };
    (TcpSender::new(config, path), cc)
}

fn send_all(tx: &mut TcpSender, cc: &Windows<Reno>, now: Time) -> Vec<u64> {
    let mut out = Vec::new();
    while let Some(s) = tx.poll_transmit(now, cc) {
        out.push(s.seq);
    }
    out
}

/// Hands `tx` an ACK of `ack` with SACK blocks `blocks`.
fn sack_ack(
    tx: &mut TcpSender,
    cc: &mut Windows<Reno>,
    now: Time,
    ack: u64,
    blocks: &[(u64, u64)],
) {
    let sack = SackBlocks::from_blocks(blocks);
    tx.handle_ack_with_sack(now, &AckSegment::new(ack, Time::ZERO), &sack, cc);
}

/// One scripted ACK: its cumulative acknowledgement and SACK blocks, then the segments sent
/// and the pipe after them.
type Row = (u64, &'static [(u64, u64)], &'static [u64], u64);

/// Ten segments in flight (cwnd 10 = ssthresh, so no growth on ACKs), segments 0 and 3 lost.
/// Each row: the ACK and its blocks as the receiver of RFC 2018 sends them, then the segments
/// the sender sends and its pipe afterwards, each worked out from RFC 6675 by hand.
#[test]
fn two_losses_scripted_pipe_and_segments() {
    let (mut tx, mut cc) = sender(true, 10, 10);
    let now = Time::from_ms(100);
    assert_eq!(send_all(&mut tx, &cc, Time::ZERO).len(), 10);
    assert_eq!(tx.pipe_bytes(), 10_000);
    const B: (u64, u64) = (1000, 3000);
    #[rustfmt::skip]
    let script: [Row; 12] = [
        // SACKs free the pipe before recovery: limited transmit (§5 step 3).
        (0, &[(1000, 2000)], &[10_000], 10_000),
        (0, &[(1000, 3000)], &[11_000], 10_000),
        // Third duplicate: recovery; ssthresh = cwnd = min(12000, 10000)/2; IsLost holds
        // for 0..1000 only; pipe = unSACKed 1000..12000 = 8000, + the fast retransmission.
        (0, &[(4000, 5000), B], &[0], 9000),
        (0, &[(4000, 6000), B], &[], 8000),
        // More than 2 SMSS SACKed above 3000..4000: it is lost, out of the pipe.
        (0, &[(4000, 7000), B], &[], 6000),
        (0, &[(4000, 8000), B], &[], 5000),
        (0, &[(4000, 9000), B], &[3000], 5000),
        // Every lost byte resent: new data (rule 2).
        (0, &[(4000, 10_000), B], &[12_000], 5000),
        (0, &[(4000, 11_000), B], &[13_000], 5000),
        (0, &[(4000, 12_000), B], &[14_000], 5000),
        // The first retransmission arrives: a partial ACK.
        (3000, &[(4000, 12_000)], &[15_000], 5000),
        // The second: RecoveryPoint (12000) acknowledged, recovery over, cwnd = ssthresh.
        (12_000, &[], &[16_000], 5000),
    ];
    for (row, &(ack, blocks, sent, pipe)) in script.iter().enumerate() {
        sack_ack(&mut tx, &mut cc, now, ack, blocks);
        assert_eq!(
            send_all(&mut tx, &cc, now),
            sent,
            "row {row}: segments sent"
        );
        assert_eq!(tx.pipe_bytes(), pipe, "row {row}: pipe");
        if row == 2 {
            let m = cc.metrics(PathId(0));
            assert_eq!((m.cwnd, m.ssthresh), (5000, 5000), "RFC 6675 step 4.2");
            assert_eq!(cc.window(PathId(0)), 5000, "no inflation with SACK");
        }
        assert_eq!(tx.in_recovery(), (2..11).contains(&row), "row {row}");
    }
    let st = tx.stats();
    assert_eq!(
        (st.fast_recoveries, st.retransmissions, st.timeouts),
        (1, 2, 0)
    );
}

#[test]
fn the_rescue_retransmission_resends_the_tail_once() {
    // Four segments; 1000..2000 and 3000..4000 lost, nothing new to send. DupThresh 1 here,
    // so the one SACK of 2000..3000 starts recovery and 1000 is resent. Its ACK leaves the
    // tail hole 3000..4000, which nothing marks lost: the rescue (rule 4) resends it, once.
    let cfg = TcpSenderConfig {
        mss: MSS,
        sack: true,
        data_bytes: Some(4000),
        dupack_threshold: 1,
        ..TcpSenderConfig::default()
    };
    let mut cc = Windows::new(Reno::default(), WindowConfig::default());
    let mut tx = TcpSender::new(cfg, cc.add_path(MSS));
    assert_eq!(
        send_all(&mut tx, &cc, Time::ZERO),
        vec![0, 1000, 2000, 3000]
    );
    let now = Time::from_ms(10);
    sack_ack(&mut tx, &mut cc, now, 1000, &[]);
    assert!(send_all(&mut tx, &cc, now).is_empty(), "everything is sent");
    sack_ack(&mut tx, &mut cc, now, 1000, &[(2000, 3000)]);
    assert!(tx.in_recovery());
    assert_eq!(send_all(&mut tx, &cc, now), vec![1000], "step 4.3");
    // RescueRxt = 2000 until HighACK passes it.
    sack_ack(&mut tx, &mut cc, now, 3000, &[]);
    assert!(tx.in_recovery());
    assert_eq!(send_all(&mut tx, &cc, now), vec![3000], "rule 4");
    sack_ack(&mut tx, &mut cc, now, 3000, &[]);
    assert!(
        send_all(&mut tx, &cc, now).is_empty(),
        "one rescue per recovery"
    );
    assert_eq!(tx.stats().timeouts, 0);
}

#[test]
fn a_timeout_forgets_the_scoreboard_and_resends_only_holes_heard_of_after() {
    let (mut tx, mut cc) = sender(true, 10, 10);
    send_all(&mut tx, &cc, Time::ZERO);
    sack_ack(&mut tx, &mut cc, Time::from_ms(10), 0, &[(1000, 2000)]);
    let deadline = tx.poll_timeout().unwrap();
    tx.handle_timeout(deadline, &mut cc);
    assert_eq!(tx.stats().timeouts, 1);
    assert_eq!(tx.pipe_bytes(), 0);
    // Go back N from 0 with one segment of window (RFC 5681 loss window).
    assert_eq!(send_all(&mut tx, &cc, deadline), vec![0]);
    // The receiver still reports what it holds: 1000..5000. The ACK of 0 covers 0..1000;
    // the go-back-N skips what is SACKed and goes on at 5000.
    let later = deadline + Dur::from_ms(10);
    sack_ack(&mut tx, &mut cc, later, 1000, &[(2000, 5000)]);
    assert!(
        !tx.in_recovery(),
        "not before everything sent before the timeout is ACKed"
    );
    assert_eq!(send_all(&mut tx, &cc, later), vec![1000, 5000]);
}

/// A loop of one round trip per step: every segment sent in a round reaches the receiver
/// (unless `lost` says so) and its ACK comes back before the next round. Returns the rounds
/// until everything sent in the first round is acknowledged, and the sender's counters.
fn rounds_to_repair(sack: bool, lost: &[u64]) -> (u32, SenderStats) {
    let (mut tx, mut cc) = sender(sack, 20, 1000);
    let mut rx = TcpReceiver::new(TcpReceiverConfig {
        sack,
        ..TcpReceiverConfig::default()
    });
    let rtt = Dur::from_ms(100);
    let mut now = Time::ZERO;
    let mut in_flight: Vec<DataSegment> = Vec::new();
    while let Some(s) = tx.poll_transmit(now, &cc) {
        in_flight.push(s);
    }
    let first_flight_end = tx.snd_max();
    let mut dropped_once = Vec::new();
    for round in 1..=40 {
        now += rtt;
        let mut next = Vec::new();
        for seg in std::mem::take(&mut in_flight) {
            if lost.contains(&(seg.seq / MSS)) && !dropped_once.contains(&seg.seq) {
                dropped_once.push(seg.seq);
                continue;
            }
            if let Some(a) = rx.handle_segment(now, &seg) {
                tx.handle_ack_with_sack(now, &a, rx.sack_blocks(), &mut cc);
                while let Some(s) = tx.poll_transmit(now, &cc) {
                    next.push(s);
                }
            }
        }
        tx.handle_timeout(now, &mut cc);
        while let Some(s) = tx.poll_transmit(now, &cc) {
            next.push(s);
        }
        if tx.snd_una() >= first_flight_end {
            return (round, *tx.stats());
        }
        in_flight = next;
    }
    panic!("not repaired in 40 rounds");
}

/// Acceptance 2b: ten losses in one window of twenty. The losses are seen in round 1 (the
/// ACKs of the first window) and with SACK every hole is resent in round 1 or 2, as the pipe
/// lets it: the last hole, 19, is marked lost only once data sent after it is SACKed
/// (round 2). Everything is acknowledged in round 3. NewReno (Slow-but-Steady) repairs one
/// hole per round trip.
#[test]
fn ten_losses_in_one_window_take_one_round_trip_with_sack_and_ten_without() {
    let lost: Vec<u64> = (0..10).map(|k| 2 * k + 1).collect();
    let (sack_rounds, sack_stats) = rounds_to_repair(true, &lost);
    let (reno_rounds, reno_stats) = rounds_to_repair(false, &lost);
    assert_eq!(sack_stats.fast_recoveries, 1);
    assert_eq!(sack_stats.timeouts, 0);
    assert_eq!(sack_stats.retransmissions, 10, "each hole resent once");
    assert_eq!(
        sack_rounds, 3,
        "all repaired in the round after the losses are seen"
    );
    assert_eq!(reno_stats.timeouts, 0);
    assert!(
        reno_rounds >= 10,
        "NewReno: one hole per round trip ({reno_rounds})"
    );
}
