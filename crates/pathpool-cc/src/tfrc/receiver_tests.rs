//! Scripted tests of the TFRC receiver rules (RFC 3448 §5–6) and the wrap-around bug.

use super::*;
use crate::tfrc::equation::loss_event_rate_for_rate;
use pathpool_core::Rng;

const RTT: Dur = Dur::from_ms(100);

/// Packet `seq` sent at `seq` ms with the sender's RTT estimate 100 ms.
fn hdr(seq: u64) -> DataHeader {
    DataHeader {
        seq,
        timestamp: Time::from_ms(seq),
        rtt_estimate: Some(RTT),
        size_bytes: 1000,
    }
}

/// Delivers `seq` 50 ms after it was sent; returns the feedback it caused.
fn deliver(rx: &mut TfrcReceiver, seq: u64) -> Option<Feedback> {
    rx.on_data(Time::from_ms(seq + 50), &hdr(seq))
}

fn receiver() -> TfrcReceiver {
    TfrcReceiver::new(TfrcReceiverConfig::default()).unwrap()
}

#[test]
fn the_first_packet_gets_feedback_at_once() {
    let mut rx = receiver();
    assert_eq!(rx.next_timer(), None);
    let fb = deliver(&mut rx, 0).expect("feedback on the first packet");
    assert_eq!(fb.timestamp_echo, Time::ZERO);
    assert_eq!(fb.echo_delay, Dur::ZERO);
    assert_eq!(
        (
            fb.x_recv_bytes_per_s,
            fb.loss_event_rate,
            fb.losses_last_rtt
        ),
        (0.0, 0.0, 0)
    );
    assert_eq!(rx.next_timer(), Some(Time::from_ms(150)));
}

#[test]
fn feedback_each_rtt_carries_the_receive_rate() {
    let mut rx = receiver();
    for seq in 0..100 {
        assert_eq!(deliver(&mut rx, seq).is_some(), seq == 0);
    }
    // Too early: nothing.
    assert_eq!(rx.on_timer(Time::from_ms(149)), None);
    // 99 packets arrived in the 100 ms since the first feedback (at 50 ms); the last, sent at
    // 99 ms, arrived at 149 ms.
    let fb = rx.on_timer(Time::from_ms(150)).expect("timer feedback");
    assert!(
        (fb.x_recv_bytes_per_s - 990_000.0).abs() < 1e-6,
        "{}",
        fb.x_recv_bytes_per_s
    );
    assert_eq!(
        (fb.timestamp_echo, fb.echo_delay),
        (Time::from_ms(99), Dur::from_ms(1))
    );
    assert_eq!(rx.next_timer(), Some(Time::from_ms(250)));
    // No data in the next RTT: no feedback, the timer restarts.
    assert_eq!(rx.on_timer(Time::from_ms(250)), None);
    assert_eq!(rx.next_timer(), Some(Time::from_ms(350)));
}

#[test]
fn a_packet_is_lost_once_three_later_packets_arrived() {
    let mut rx = receiver();
    for seq in [0, 1, 2, 4, 5] {
        assert_eq!(deliver(&mut rx, seq).is_some(), seq == 0);
    }
    assert_eq!(
        rx.loss_event_rate(),
        0.0,
        "two later arrivals are not enough"
    );
    let fb = deliver(&mut rx, 6).expect("a new loss event sends feedback");
    assert_eq!(fb.losses_last_rtt, 1);
    assert!(fb.loss_event_rate > 0.0);
}

#[test]
fn reordering_within_three_packets_is_not_a_loss() {
    let mut rx = receiver();
    for seq in [0, 1, 3, 4, 2, 5, 6, 7] {
        deliver(&mut rx, seq);
    }
    assert_eq!(rx.loss_event_rate(), 0.0);
    assert_eq!(rx.intervals().closed().count(), 0);
}

#[test]
fn the_first_interval_inverts_the_equation_at_x_recv() {
    let mut rx = receiver();
    for seq in 0..100 {
        deliver(&mut rx, seq);
    }
    let fb = rx.on_timer(Time::from_ms(150)).unwrap();
    // Lose 120; 121..123 arrive (at 171..173 ms): X_recv since the feedback at 150 ms is
    // 23 packets in 23 ms (1 MB/s), more than the last report (990 kB/s).
    for seq in (100..=123).filter(|&s| s != 120) {
        deliver(&mut rx, seq);
    }
    let x_recv = 23_000.0 / 0.023;
    assert!(x_recv > fb.x_recv_bytes_per_s);
    let first = rx.intervals().closed().next().expect("one interval");
    let want = 1.0 / loss_event_rate_for_rate(1000, RTT, x_recv);
    assert!((first - want).abs() < 1e-6 * want, "{first} vs {want}");
    // The open interval is 120..=123: 4 packets; I_mean = max(4, first)/1.
    assert!((rx.loss_event_rate() - 1.0 / first).abs() < 1e-12);
}

/// Decision D262: a subflow of a connection seeds its first interval at the connection's
/// receive rate, its own 1 MB/s (as above) plus its peers' 3 MB/s; later packets' peer rates
/// change nothing.
#[test]
fn a_subflow_seeds_its_first_interval_at_the_connection_rate() {
    let mut rx = receiver();
    let mut plain = receiver();
    for seq in 0..100 {
        rx.on_data_with_peers(Time::from_ms(seq + 50), &hdr(seq), 3e6);
        deliver(&mut plain, seq);
    }
    rx.on_timer(Time::from_ms(150)).unwrap();
    plain.on_timer(Time::from_ms(150)).unwrap();
    assert!(rx.awaiting_first_loss());
    for seq in (100..=123).filter(|&s| s != 120) {
        rx.on_data_with_peers(Time::from_ms(seq + 50), &hdr(seq), 3e6);
        deliver(&mut plain, seq);
    }
    assert!(!rx.awaiting_first_loss());
    let first = rx.intervals().closed().next().unwrap();
    let want = 1.0 / loss_event_rate_for_rate(1000, RTT, 4e6);
    assert!((first - want).abs() < 1e-6 * want, "{first} vs {want}");
    // Four times the rate needs about a sixteenth of the loss rate (X ∝ 1/√p for small p).
    let own = plain.intervals().closed().next().unwrap();
    assert!((14.0..=16.5).contains(&(first / own)), "{first} / {own}");
    // Lose 130, 131..133 arrive: a second event (sent 10 ms after the first's start, within
    // the RTT, so it joins it) changes no closed interval whatever the peers receive.
    for seq in (124..=133).filter(|&s| s != 130) {
        rx.on_data_with_peers(Time::from_ms(seq + 50), &hdr(seq), 1e9);
    }
    assert_eq!(rx.intervals().closed().collect::<Vec<_>>(), vec![first]);
}

#[test]
fn losses_within_one_rtt_of_the_event_start_join_it() {
    let mut rx = receiver();
    let lost = [10, 60, 110, 111, 300];
    let mut events = 0;
    for seq in (0..400).filter(|s| !lost.contains(s)) {
        if let Some(fb) = deliver(&mut rx, seq) {
            events += usize::from(fb.losses_last_rtt > 0);
        }
    }
    // 10 starts an event; 60 (sent 50 ms later) and 110 (100 ms later, not more than R)
    // join it; 111 (101 ms) starts the second, 300 the third.
    assert_eq!(events, 3);
    assert_eq!(
        rx.intervals().closed().take(2).collect::<Vec<_>>(),
        vec![189.0, 101.0]
    );
}

/// Delivers `packets` packets with Bernoulli(1%) loss, returning p at the end.
fn p_after(mode: HistoryMode, slots: usize, packets: u64) -> f64 {
    let cfg = TfrcReceiverConfig {
        history: mode,
        history_slots: slots,
        ..TfrcReceiverConfig::default()
    };
    let mut rx = TfrcReceiver::new(cfg).unwrap();
    let mut rng = Rng::seed_from_u64(20);
    for seq in 0..packets {
        let now = Time::from_ms(seq + 50);
        if seq == 0 || !rng.bernoulli(0.01) {
            rx.on_data(now, &hdr(seq));
        }
        if rx.next_timer().is_some_and(|t| t <= now) {
            rx.on_timer(now);
        }
    }
    rx.loss_event_rate()
}

/// Issue 20, acceptance 3 (and spec §4.3.4): after three wraps of ns-2's 100,000-slot array
/// at 1% loss, `fixed-array`'s p is under 1/10 of the wrap-safe p.
#[test]
fn the_fixed_array_loses_sight_of_losses_after_wrapping() {
    let safe = p_after(HistoryMode::WrapSafe, DEFAULT_HISTORY_SLOTS, 350_000);
    let buggy = p_after(HistoryMode::FixedArray, DEFAULT_HISTORY_SLOTS, 350_000);
    eprintln!("wrap-safe p {safe}, fixed-array p {buggy}");
    // 100 packets per RTT and 1% loss: about one loss event per ~100 packets.
    assert!(safe > 0.003 && safe < 0.02, "wrap-safe p {safe}");
    assert!(
        buggy < safe / 10.0,
        "fixed-array p {buggy} vs wrap-safe {safe}"
    );
    // Before the first wrap both histories agree exactly.
    assert_eq!(
        p_after(HistoryMode::WrapSafe, DEFAULT_HISTORY_SLOTS, 90_000),
        p_after(HistoryMode::FixedArray, DEFAULT_HISTORY_SLOTS, 90_000)
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// On any script of arrivals (losses, reordering by a few places, duplicates) the
        /// receiver's p stays in [0, 1], it never reports more losses than packets missing,
        /// and without a missing packet it finds no loss.
        #[test]
        fn p_is_a_rate_and_losses_are_real(
            script in prop::collection::vec((0u8..100, 0u64..4, any::<bool>()), 1..400),
        ) {
            let mut rx = receiver();
            // seq i is dropped when its draw is below 5, sent at i ms, displaced by up to 3.
            let mut order: Vec<(u64, u64)> = script
                .iter()
                .enumerate()
                .filter(|(_, (drop, _, _))| *drop >= 5)
                .map(|(i, (_, shift, _))| (i as u64 + shift, i as u64))
                .collect();
            order.sort_unstable();
            let mut reported = 0u64;
            for (k, &(_, seq)) in order.iter().enumerate() {
                let now = Time::from_ms(k as u64 + 50);
                let copies = if script[seq as usize].2 { 2 } else { 1 };
                for _ in 0..copies {
                    let mut h = hdr(seq);
                    h.timestamp = Time::from_ms(seq);
                    if let Some(fb) = rx.on_data(now, &h) {
                        reported += u64::from(fb.losses_last_rtt);
                        prop_assert!((0.0..=1.0).contains(&fb.loss_event_rate));
                    }
                }
                if let Some(fb) = rx.on_timer(now) {
                    reported += u64::from(fb.losses_last_rtt);
                }
            }
            let missing = script.len() as u64 - order.len() as u64;
            prop_assert!((0.0..=1.0).contains(&rx.loss_event_rate()));
            prop_assert!(reported <= missing, "{reported} reported, {missing} missing");
            if missing == 0 {
                prop_assert_eq!(rx.loss_event_rate(), 0.0);
            }
        }
    }
}
