use std::cmp::Reverse;
use std::collections::BinaryHeap;

use pathpool_cc::{Feedback, LossCombination, TfrcReceiverConfig};
use proptest::prelude::*;

use super::*;
use crate::mptfrc::{FirstInterval, MpTfrcReceiver, Nack};

fn feedback(subflow: u32, rtt_ms: u64, p: f64, x_recv: f64, now: Time) -> MpFeedback {
    MpFeedback {
        subflow,
        tfrc: Feedback {
            timestamp_echo: now - Dur::from_ms(rtt_ms),
            echo_delay: Dur::ZERO,
            x_recv_bytes_per_s: x_recv,
            loss_event_rate: p,
            losses_last_rtt: 0,
        },
        nacks: Vec::new(),
        cumulative: 0,
        above_gap: Vec::new(),
        connection_loss_event_rate: None,
    }
}

#[test]
fn bilevel_paces_the_subflows_at_shares_of_the_master_rate() {
    let mut s = MpTfrcSender::new(MpTfrcConfig::default(), 2, Time::ZERO);
    let now = Time::from_secs(1);
    s.on_feedback(now, &feedback(0, 100, 0.01, 1e6, now));
    s.on_feedback(now, &feedback(1, 100, 0.04, 1e6, now));
    let (x0, x1) = (
        s.subflow(0).rate_bytes_per_s(),
        s.subflow(1).rate_bytes_per_s(),
    );
    let r_m = s.master_rate_bytes_per_s().unwrap();
    let (p0, p1) = (
        s.subflow(0).paced_rate_bytes_per_s(),
        s.subflow(1).paced_rate_bytes_per_s(),
    );
    // Tse eq. 3.1: R'_i = R_M·R_i/ΣR; the paced rates sum to R_M.
    assert!((p0 - r_m * x0 / (x0 + x1)).abs() < 1e-6 * r_m);
    assert!((p0 + p1 - r_m).abs() < 1e-6 * r_m);
    // f^M (eq. 3.3) lies between 0.01 and 0.04: R_M lies between the two equation rates.
    let rate = |p| pathpool_cc::tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), p);
    assert!(rate(0.04) < r_m && r_m < rate(0.01), "{r_m}");
}

/// Decision D263: with p = 0.01 at 100 ms the equation gives 112 332 B/s (D230's vector);
/// subflow 0 reports X_recv 20 kB/s and subflow 1 100 kB/s. Capped by its own receive rate
/// subflow 0's nominal rate is 40 kB/s; by the connection's, 2·120 kB/s, the equation's.
#[test]
fn a_bilevel_subflows_nominal_rate_is_capped_by_the_connection_rate() {
    let x_calc = pathpool_cc::tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), 0.01);
    assert!((x_calc - 112_332.2).abs() < 0.1, "{x_calc}");
    for (cap, want) in [
        (NominalCap::Connection, x_calc),
        (NominalCap::Subflow, 40_000.0),
    ] {
        let cfg = MpTfrcConfig {
            mode: MultipathTfrc::Bilevel(BilevelConfig {
                nominal_cap: cap,
                ..BilevelConfig::default()
            }),
            ..MpTfrcConfig::default()
        };
        let mut s = MpTfrcSender::new(cfg, 2, Time::ZERO);
        let now = Time::from_secs(1);
        s.on_feedback(now, &feedback(1, 100, 0.0, 100_000.0, now));
        s.on_feedback(now, &feedback(0, 100, 0.01, 20_000.0, now));
        let got = s.subflow(0).rate_bytes_per_s();
        assert!((got - want).abs() < 1e-6 * want, "{cap:?}: {got}");
        // What is sent stays capped by the master: R_M ≤ 2·Σ X_recv = 240 kB/s.
        assert!(s.master_rate_bytes_per_s().unwrap() <= 240_000.0);
    }
}

/// Decision D264: with `connection-history` the master runs the equation at the reported
/// connection loss event rate (0.01: 112 332 B/s, under the 2·Σ X_recv cap), whatever the
/// subflows' own rates say; `rate-weighted` ignores the report.
#[test]
fn the_master_uses_the_connection_loss_history_when_reported() {
    let x_calc = pathpool_cc::tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), 0.01);
    for how in [
        LossCombination::ConnectionHistory,
        LossCombination::RateWeighted,
    ] {
        let cfg = MpTfrcConfig {
            mode: MultipathTfrc::Bilevel(BilevelConfig {
                loss_combination: how,
                ..BilevelConfig::default()
            }),
            ..MpTfrcConfig::default()
        };
        let mut s = MpTfrcSender::new(cfg, 2, Time::ZERO);
        let now = Time::from_secs(1);
        let mut fb = feedback(0, 100, 0.04, 1e6, now);
        fb.connection_loss_event_rate = Some(0.01);
        s.on_feedback(now, &fb);
        let r_m = s.master_rate_bytes_per_s().unwrap();
        let want = match how {
            LossCombination::ConnectionHistory => x_calc,
            _ => pathpool_cc::tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), 0.04),
        };
        assert!((r_m - want).abs() < 1e-6 * want, "{how:?}: {r_m} vs {want}");
    }
}

#[test]
fn fractional_paces_each_subflow_at_a_third_of_its_rate() {
    let cfg = MpTfrcConfig {
        mode: MultipathTfrc::Fractional(RecvCap::Sent),
        ..MpTfrcConfig::default()
    };
    let mut s = MpTfrcSender::new(cfg, 3, Time::ZERO);
    let now = Time::from_secs(1);
    s.on_feedback(now, &feedback(1, 100, 0.01, 1e6, now));
    let x = s.subflow(1).rate_bytes_per_s();
    assert!((s.subflow(1).paced_rate_bytes_per_s() - x / 3.0).abs() < 1e-9 * x);
    // With "sent", the nominal rate is not capped at 2·X_recv, what is sent is.
    s.on_feedback(now, &feedback(1, 100, 0.01, 100.0, now));
    assert!(s.subflow(1).rate_bytes_per_s() > 200.0);
    assert_eq!(s.subflow(1).paced_rate_bytes_per_s(), 200.0);
}

#[test]
fn a_nacked_packet_goes_on_the_other_subflow_ahead_of_new_data() {
    let mut s = MpTfrcSender::new(MpTfrcConfig::default(), 2, Time::ZERO);
    let h0 = s.poll_send(Time::ZERO, 0, 1000).unwrap();
    let h1 = s.poll_send(Time::ZERO, 1, 1000).unwrap();
    assert_eq!((h0.conn_seq, h1.conn_seq), (0, 1));
    // Not yet its time: nothing.
    assert!(s.poll_send(Time::from_ms(1), 1, 1000).is_none());
    let now = Time::from_secs(1);
    let mut fb = feedback(0, 100, 0.0, 0.0, now);
    fb.nacks = vec![Nack { subflow: 0, seq: 0 }];
    s.on_feedback(now, &fb);
    let t = s.next_send_time(1).unwrap();
    let h = s.poll_send(t, 1, 1000).unwrap();
    assert_eq!((h.conn_seq, h.new_data, h.subflow), (0, false, 1));
    let h = s.poll_send(s.next_send_time(0).unwrap(), 0, 1000).unwrap();
    assert_eq!((h.conn_seq, h.new_data), (2, true));
    assert_eq!(s.reliability().resends(), 1);
}

/// A tiny deterministic generator for the network's choices.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

enum Event {
    Data(MpDataHeader),
    Feedback(MpFeedback),
}

/// Runs a connection of `subflows` subflows sending `packets` connection packets over paths
/// that lose, delay by a random extra (reordering) and duplicate packets in both
/// directions; returns how often each connection packet was delivered as new, and whether
/// the sender finished.
fn transfer(
    subflows: usize,
    packets: u64,
    loss: f64,
    dup: f64,
    jitter_ms: f64,
    seed: u64,
    mode: MultipathTfrc,
) -> (Vec<u32>, bool, u64) {
    let (first, history) = match &mode {
        MultipathTfrc::Bilevel(b) => (
            FirstInterval::Connection,
            b.loss_combination == LossCombination::ConnectionHistory,
        ),
        MultipathTfrc::Fractional(_) => (FirstInterval::Subflow, false),
    };
    let cfg = MpTfrcConfig {
        mode,
        ..MpTfrcConfig::default()
    };
    let mut tx = MpTfrcSender::new(cfg, subflows, Time::ZERO);
    tx.limit_new_data(packets);
    let mut rx =
        MpTfrcReceiver::new(subflows, &TfrcReceiverConfig::default(), first, history).unwrap();
    let mut rng = Lcg(seed);
    let mut queue: BinaryHeap<Reverse<(Time, u64)>> = BinaryHeap::new();
    let mut events: Vec<Option<Event>> = Vec::new();
    let mut delivered = vec![0u32; packets as usize];
    let end = Time::from_secs(3000);
    let mut now = Time::ZERO;
    let mut same_instant = 0;
    let send = |rng: &mut Lcg,
                ev: Event,
                base_ms: f64,
                now: Time,
                events: &mut Vec<Option<Event>>,
                queue: &mut BinaryHeap<Reverse<(Time, u64)>>| {
        if rng.next() < loss {
            return;
        }
        let copies = if rng.next() < dup { 2 } else { 1 };
        for c in 0..copies {
            let at = now + Dur::from_secs_f64((base_ms + jitter_ms * rng.next()) / 1000.0);
            let ev = match (&ev, c) {
                (Event::Data(h), _) => Event::Data(*h),
                (Event::Feedback(f), _) => Event::Feedback(f.clone()),
            };
            queue.push(Reverse((at, events.len() as u64)));
            events.push(Some(ev));
        }
    };
    while !tx.finished() && now < end {
        let mut next = end;
        for i in 0..subflows {
            if let Some(t) = tx.next_send_time(i) {
                next = next.min(t);
            }
        }
        next = next.min(tx.nofeedback_deadline());
        if let Some(t) = rx.next_timer() {
            next = next.min(t);
        }
        if let Some(Reverse((t, _))) = queue.peek() {
            next = next.min(*t);
        }
        same_instant = if next == now { same_instant + 1 } else { 0 };
        assert!(same_instant < 10_000, "stuck at {now:?}");
        now = next.max(now);
        while let Some(&Reverse((t, id))) = queue.peek() {
            if t > now {
                break;
            }
            queue.pop();
            match events[id as usize].take() {
                Some(Event::Data(h)) => {
                    let (new, fb) = rx.on_data(now, &h);
                    if new {
                        delivered[h.conn_seq as usize] += 1;
                    }
                    if let Some(fb) = fb {
                        let base = 20.0 + 10.0 * fb.subflow as f64;
                        send(
                            &mut rng,
                            Event::Feedback(fb),
                            base,
                            now,
                            &mut events,
                            &mut queue,
                        );
                    }
                }
                Some(Event::Feedback(fb)) => tx.on_feedback(now, &fb),
                None => {}
            }
        }
        for fb in rx.on_timer(now) {
            let base = 20.0 + 10.0 * fb.subflow as f64;
            send(
                &mut rng,
                Event::Feedback(fb),
                base,
                now,
                &mut events,
                &mut queue,
            );
        }
        tx.on_timer(now);
        for i in 0..subflows {
            if tx.next_send_time(i).is_some_and(|t| t <= now) {
                if let Some(h) = tx.poll_send(now, i, 1000) {
                    let base = 20.0 + 10.0 * i as f64;
                    send(&mut rng, Event::Data(h), base, now, &mut events, &mut queue);
                }
            }
        }
    }
    if tx.finished() {
        assert_eq!(rx.delivered(), packets);
    }
    (delivered, tx.finished(), tx.reliability().resends())
}

#[test]
fn a_lossy_transfer_completes_with_every_packet_once() {
    let (delivered, finished, resends) = transfer(
        3,
        500,
        0.05,
        0.02,
        15.0,
        7,
        MultipathTfrc::Bilevel(pathpool_cc::BilevelConfig::default()),
    );
    assert!(finished);
    assert!(delivered.iter().all(|&d| d == 1));
    assert!(resends >= 10, "{resends} resends at 5% loss of 500 packets");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Issue 20, acceptance 2: multipath TFRC delivers every connection packet (every byte)
    /// exactly once under loss, reordering and duplicates, in either mode.
    #[test]
    fn every_packet_is_delivered_once(
        subflows in 1usize..4,
        packets in 1u64..300,
        loss in 0.0f64..0.3,
        dup in 0.0f64..0.2,
        jitter_ms in 0.0f64..40.0,
        seed in any::<u64>(),
        bilevel in any::<bool>(),
    ) {
        let mode = if bilevel {
            MultipathTfrc::Bilevel(pathpool_cc::BilevelConfig::default())
        } else {
            MultipathTfrc::Fractional(RecvCap::Sent)
        };
        let (delivered, finished, _) =
            transfer(subflows, packets, loss, dup, jitter_ms, seed, mode);
        prop_assert!(finished, "not finished: {:?}", delivered.iter().filter(|&&d| d == 0).count());
        prop_assert!(delivered.iter().all(|&d| d == 1), "{delivered:?}");
    }
}
