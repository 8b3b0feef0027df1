//! Invariants of the INRPP router (issue 21) under random sequences of events: data in,
//! ACKs with random notifications, time passing, queues filling and draining, and
//! advertisements.
//!
//! After every event:
//! 1. conservation: every packet handed in is exactly once either forwarded at once,
//!    dropped by a full cache, held by the cache, or sent out later (by the drain, a detour
//!    or an ACK's release); none is invented or duplicated;
//! 2. the cache's accounting: S_n is the sum of the packets it holds and never exceeds its
//!    capacity;
//! 3. order within a flow: the packets of one flow leave the router (by any way) in the order
//!    they arrived;
//! 4. an interface in P with nothing cached forwards at once; a detour is taken only on an
//!    interface in P, and only with a positive advertised residual.
//!
//! `PROPTEST_CASES` sets the number of cases.

use std::collections::HashMap;

use pathpool_core::{Dur, Time};
use pathpool_proto::inrpp::interface::InterfaceState;
use pathpool_proto::inrpp::router::{DataOutcome, InterfaceConfig, Out, Router, RouterConfig};
use pathpool_proto::inrpp::signalling::{AckSignal, Notification};
use proptest::prelude::*;

const PKT: u32 = 1500;
const CACHE: u64 = 60 * PKT as u64;

#[derive(Clone, Debug)]
enum Event {
    /// A data packet of flow `.0` carrying nonce `.1` (0: none); flow f's primary interface
    /// is f mod 3.
    Data(u64, u32),
    /// An ACK of flow `.0` (arriving on its primary interface) with notification `.1` and
    /// nonce `.2`.
    Ack(u64, u8, u32),
    /// Time passes by `.0` ms; queue `.1` takes `.2` bytes.
    Tick(u64, usize, u64),
    /// An advertisement for interface `.0`'s detour via `.1`.
    Advert(usize, usize, f64),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => (0..6u64, prop_oneof![Just(0u32), Just(7u32), Just(8u32)])
            .prop_map(|(f, n)| Event::Data(f, n)),
        2 => (0..6u64, 0..3u8, prop_oneof![Just(0u32), Just(7u32), Just(8u32)])
            .prop_map(|(f, k, n)| Event::Ack(f, k, n)),
        2 => (0..300u64, 0..3usize, 0..70_000u64).prop_map(|(ms, i, q)| Event::Tick(ms, i, q)),
        1 => (0..2usize, 0..2usize, 0.0..20e6f64).prop_map(|(i, v, r)| Event::Advert(i, v, r)),
    ]
}

fn router() -> Router<(u64, u64)> {
    let iface = |nonce, detours: Vec<usize>| InterfaceConfig {
        capacity_bps: 10e6,
        queue_high_bytes: 50_000,
        queue_low_bytes: 25_000,
        nonce,
        detours,
    };
    Router::new(
        RouterConfig {
            cache_bytes: CACHE,
            cache_high_bytes: 40 * u64::from(PKT),
            cache_low_bytes: 20 * u64::from(PKT),
            db_duration: Dur::from_ms(500),
            nonce_timeout: Dur::from_ms(700),
            meter_weight: 0.5,
        },
        vec![iface(1, vec![1]), iface(2, vec![0]), iface(3, vec![])],
    )
}

/// Checks the invariants over one run of `events`; returns what left the router, in order.
fn run(events: &[Event]) -> Vec<(u64, u64)> {
    let mut r = router();
    let mut now = Time::ZERO;
    let mut queues = [0u64; 3];
    let mut next_seq: HashMap<u64, u64> = HashMap::new();
    let mut handed_in = 0u64;
    let (mut out, mut dropped) = (Vec::new(), 0u64);
    let mut last_out: HashMap<u64, u64> = HashMap::new();
    let mut leave = |p: (u64, u64), out: &mut Vec<(u64, u64)>| {
        // 3. order within a flow.
        if let Some(&prev) = last_out.get(&p.0) {
            assert!(p.1 > prev, "flow {} left {} after {prev}", p.0, p.1);
        }
        last_out.insert(p.0, p.1);
        out.push(p);
    };
    for e in events {
        match *e {
            Event::Data(flow, nonce) => {
                let i = (flow % 3) as usize;
                let seq = next_seq.entry(flow).or_insert(0);
                *seq += 1;
                handed_in += 1;
                let direct = r.state(i) == InterfaceState::Push
                    && r.cache().interface_bytes(i) == 0
                    && !r.signalling().is_listed(nonce);
                match r.on_data(i, flow, nonce, (flow, *seq), PKT) {
                    DataOutcome::Forward(p) => {
                        leave(p, &mut out);
                        queues[i] += u64::from(PKT);
                    }
                    DataOutcome::Cached => assert!(!direct, "4. P with an empty cache forwards"),
                    DataOutcome::Dropped(_) => dropped += 1,
                }
            }
            Event::Ack(flow, kind, nonce) => {
                let i = (flow % 3) as usize;
                let notification = match kind {
                    0 => Notification::None,
                    1 => Notification::SlowDown,
                    _ => Notification::Cancel,
                };
                let mut ack = AckSignal {
                    notification,
                    nonce,
                };
                if let Some((p, _)) = r.on_ack(now, i, flow, &mut ack) {
                    leave(p, &mut out);
                    queues[i] += u64::from(PKT);
                }
            }
            Event::Tick(ms, i, q) => {
                now += Dur::from_ms(ms);
                queues[i] = q;
                r.handle_timeout(now, &queues);
            }
            Event::Advert(i, via, rate) => r.on_advert(i, via, rate),
        }
        r.evaluate(now, &queues);
        while let Some((to, p, bytes)) = r.poll_transmit(now, &queues) {
            match to {
                Out::Primary(i) => queues[i] += u64::from(bytes),
                Out::Detour { via, .. } => {
                    assert_eq!(r.state(via), InterfaceState::Push, "4. detour via P only");
                    queues[via] += u64::from(bytes);
                }
            }
            leave(p, &mut out);
            r.evaluate(now, &queues);
        }
        // 2. accounting.
        let held = r.cache().bytes();
        assert!(held <= CACHE);
        assert_eq!(held % u64::from(PKT), 0);
        assert_eq!(
            (0..3).map(|i| r.cache().interface_bytes(i)).sum::<u64>(),
            held
        );
        // 1. conservation.
        assert_eq!(
            handed_in,
            out.len() as u64 + dropped + held / u64::from(PKT),
            "in = out + dropped + held"
        );
        assert_eq!(r.cache_stats().dropped_packets, dropped);
    }
    out
}

proptest! {
    #[test]
    fn packets_are_conserved_in_order_and_accounted(events in prop::collection::vec(event(), 1..400)) {
        let first = run(&events);
        // Deterministic: the same events give the same output.
        prop_assert_eq!(first, run(&events));
    }
}
