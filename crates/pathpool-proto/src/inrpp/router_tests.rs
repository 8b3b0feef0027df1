//! Unit tests of the INRPP router: the dumbbell's figures at 10 Mb/s (queue 62,500 B, L
//! 50,000/25,000 B, S 1,000,000/500,000 B) on a router with two interfaces that detour for
//! each other (Fig. 3's r, with n on interface 0 and d on interface 1) and a third without
//! detours.

use super::*;

const PKT: u32 = 1500;
const MBPS: f64 = 1e6;

fn router() -> Router<u32> {
    let iface = |nonce, detours: Vec<usize>| InterfaceConfig {
        capacity_bps: 10.0 * MBPS,
        queue_high_bytes: 50_000,
        queue_low_bytes: 25_000,
        nonce,
        detours,
    };
    Router::new(
        RouterConfig {
            cache_bytes: 1_250_000,
            cache_high_bytes: 1_000_000,
            cache_low_bytes: 500_000,
            db_duration: Dur::from_secs(1),
            nonce_timeout: Dur::from_secs(2),
            meter_weight: 1.0,
        },
        vec![iface(11, vec![1]), iface(12, vec![0]), iface(13, vec![])],
    )
}

fn at(ms: u64) -> Time {
    Time::from_ms(ms)
}

#[test]
fn push_forwards_until_the_queue_passes_l_high_then_caches_and_feeds_the_queue() {
    let mut r = router();
    assert_eq!(r.on_data(0, 1, 0, 7, PKT), DataOutcome::Forward(7));
    r.evaluate(at(0), &[50_000, 0, 0]);
    assert_eq!(r.state(0), InterfaceState::Push);
    r.evaluate(at(0), &[50_001, 0, 0]);
    assert_eq!(r.state(0), InterfaceState::StoreAndDetour);
    assert_eq!(r.on_data(0, 1, 0, 8, PKT), DataOutcome::Cached);
    assert_eq!(r.on_data(0, 2, 0, 9, PKT), DataOutcome::Cached);
    // The queue is above L_high: nothing leaves; it falls below at the link's rate, the
    // 1501 bytes over the mark in 1.2008 ms.
    assert_eq!(r.poll_transmit(at(0), &[51_500, 0, 0]), None);
    assert_eq!(
        r.poll_timeout(at(0), &[51_500, 0, 0]),
        Some(at(0) + Dur::from_ps(1_200_800_000))
    );
    // Below L_high the cache feeds the queue, a flow at a time.
    assert_eq!(
        r.poll_transmit(at(2), &[49_999, 0, 0]),
        Some((Out::Primary(0), 8, PKT))
    );
    assert_eq!(
        r.poll_transmit(at(2), &[49_999 + 1500, 0, 0]),
        None,
        "the queue is full again"
    );
    assert_eq!(
        r.poll_transmit(at(3), &[30_000, 0, 0]),
        Some((Out::Primary(0), 9, PKT))
    );
    // Cache empty and queue under L_low: back to P.
    r.evaluate(at(4), &[24_999, 0, 0]);
    assert_eq!(r.state(0), InterfaceState::Push);
}

#[test]
fn a_full_cache_drops_the_arrival() {
    let mut r = router();
    r.evaluate(at(0), &[62_500, 0, 0]);
    for k in 0..833 {
        assert_eq!(r.on_data(0, 1, 0, k, PKT), DataOutcome::Cached);
    }
    assert_eq!(r.on_data(0, 1, 0, 999, PKT), DataOutcome::Dropped(999));
    assert_eq!(r.cache_stats().dropped_packets, 1);
}

#[test]
fn backpressure_writes_slow_down_and_disable_writes_cancel_on_acks_from_downstream() {
    let mut r = router();
    r.evaluate(at(0), &[62_500, 0, 0]);
    for k in 0..700 {
        r.on_data(0, 1, 0, k, PKT);
    }
    r.evaluate(at(0), &[62_500, 0, 0]);
    assert_eq!(r.state(0), InterfaceState::Backpressure);
    // An ACK of the flow arriving on interface 0 leaves with this interface's nonce.
    let mut ack = AckSignal::default();
    assert_eq!(r.on_ack(at(1), 0, 1, &mut ack), None);
    assert_eq!(
        ack,
        AckSignal {
            notification: Notification::SlowDown,
            nonce: 11
        }
    );
    // One arriving on interface 2 (in P) is left as it is.
    let mut other = AckSignal::default();
    r.on_ack(at(1), 2, 5, &mut other);
    assert_eq!(other, AckSignal::default());
    // Drain below S_low: DB, and CANCEL on the ACKs.
    let mut q = 62_500;
    while r.cache().bytes() >= 500_000 {
        if r.poll_transmit(at(2), &[q - 30_000, 0, 0]).is_none() {
            break;
        }
        q = 62_500;
    }
    r.evaluate(at(2), &[q, 0, 0]);
    assert_eq!(r.state(0), InterfaceState::DisableBackpressure);
    let mut ack = AckSignal::default();
    r.on_ack(at(3), 0, 1, &mut ack);
    assert_eq!(
        ack,
        AckSignal {
            notification: Notification::Cancel,
            nonce: 11
        }
    );
    // The DB timer runs out a second after DB began.
    assert_eq!(
        r.poll_timeout(at(3), &[0, 0, 0]).map(|t| t <= at(1_002)),
        Some(true)
    );
    r.handle_timeout(at(1_002), &[q, 0, 0]);
    assert_eq!(r.state(0), InterfaceState::StoreAndDetour);
}

#[test]
fn packets_of_a_listed_nonce_are_held_and_released_one_per_slow_down_ack() {
    let mut r = router();
    let mut ack = AckSignal {
        notification: Notification::SlowDown,
        nonce: 99,
    };
    // A SLOW-DOWN for a flow with nothing cached lists the nonce and releases nothing.
    assert_eq!(r.on_ack(at(0), 0, 1, &mut ack), None);
    assert!(r.signalling().is_listed(99));
    // Interface 0 is in P, but a packet carrying the nonce is cached.
    assert_eq!(r.on_data(0, 1, 99, 1, PKT), DataOutcome::Cached);
    assert_eq!(r.on_data(0, 1, 99, 2, PKT), DataOutcome::Cached);
    assert_eq!(
        r.on_data(0, 1, 0, 3, PKT),
        DataOutcome::Cached,
        "behind held packets of its flow"
    );
    assert_eq!(r.poll_transmit(at(0), &[0, 0, 0]), None);
    let mut ack = AckSignal {
        notification: Notification::SlowDown,
        nonce: 99,
    };
    assert_eq!(r.on_ack(at(1), 0, 1, &mut ack), Some((1, PKT)));
    // CLEAR mode: the notification is cleared, the nonce kept.
    assert_eq!(ack.notification, Notification::None);
    assert_eq!(ack.nonce, 99);
    // After the nonce expires the cache drains the rest to the primary interface.
    r.handle_timeout(at(2_001), &[0, 0, 0]);
    assert!(!r.signalling().is_listed(99));
    assert_eq!(
        r.poll_transmit(at(2_001), &[0, 0, 0]),
        Some((Out::Primary(0), 2, PKT))
    );
    assert_eq!(
        r.poll_transmit(at(2_001), &[0, 0, 0]),
        Some((Out::Primary(0), 3, PKT))
    );
}

#[test]
fn detours_pace_at_the_smaller_residual_of_their_two_hops() {
    let mut r = router();
    // A period of 1 s in which interface 1 carried 2 Mb/s (250,000 bytes).
    for _ in 0..(250_000 / PKT as u64) {
        r.on_detoured(2, 1, PKT);
    }
    r.on_detoured(2, 1, 250_000 - 166 * PKT);
    r.advertise(Time::from_secs(1));
    // The neighbour behind interface 1 advertises 5 Mb/s for its link to interface 0's
    // neighbour: min(10 − 2, 5) = 5 Mb/s.
    r.on_advert(0, 1, 5.0 * MBPS);
    assert!((r.detour_capacity_bps(0) - 5.0 * MBPS).abs() < 1.0);
    // Then with 3 Mb/s advertised: min(8, 3) = 3 (acceptance 1's min(3, 5) the other way).
    r.on_advert(0, 1, 3.0 * MBPS);
    assert!((r.detour_capacity_bps(0) - 3.0 * MBPS).abs() < 1.0);
    r.on_advert(0, 1, 5.0 * MBPS);
    // Interface 0 in S&D with a full queue: cached packets leave on the detour, 2.4 ms
    // apart at 5 Mb/s.
    let t = Time::from_secs(1);
    r.evaluate(t, &[62_500, 0, 0]);
    for k in 0..3 {
        r.on_data(0, 1, 0, k, PKT);
    }
    let full = [62_500, 0, 0];
    assert_eq!(
        r.poll_transmit(t, &full),
        Some((Out::Detour { primary: 0, via: 1 }, 0, PKT))
    );
    assert_eq!(r.poll_transmit(t, &full), None);
    let next = t + Dur::from_secs_f64(1500.0 * 8.0 / 5e6);
    assert_eq!(r.poll_timeout(t, &full), Some(next));
    assert_eq!(
        r.poll_transmit(next, &full),
        Some((Out::Detour { primary: 0, via: 1 }, 1, PKT))
    );
    // A first hop out of P carries no detour.
    r.evaluate(next, &[62_500, 62_500, 0]);
    assert_eq!(r.detour_capacity_bps(0), 0.0);
}

#[test]
fn advertisements_follow_algorithm_2() {
    let mut r = router();
    // Interface 0 (10 Mb/s) carried 6 Mb/s over a 1 s period, of which 1 Mb/s was detour
    // traffic from the neighbour behind interface 1; m = 1 here (only interface 1 detours
    // through 0): 1 + 4/1 = 5 Mb/s.
    r.on_detoured(1, 0, 125_000);
    r.on_data(0, 7, 0, 0, 625_000);
    let ads = r.advertise(Time::from_secs(1));
    let to_1: Vec<f64> = ads
        .iter()
        .filter(|a| a.0 == 1 && a.1 == 0)
        .map(|a| a.2 / MBPS)
        .collect();
    assert_eq!(to_1.len(), 1);
    assert!((to_1[0] - 5.0).abs() < 1e-9, "{to_1:?}");
    // Interface 2 has no detours and so no one to advertise to.
    assert!(ads.iter().all(|a| a.1 != 2));
    // Out of P, 0.
    r.evaluate(Time::from_secs(1), &[62_500, 0, 0]);
    let ads = r.advertise(Time::from_secs(2));
    assert!(ads.iter().filter(|a| a.1 == 0).all(|a| a.2 == 0.0));
}
