//! Invariants of the controller family, checked on random situations.

use pathpool_cc::{
    AckSample, AlphaUpdate, Balia, CcKind, CcOptions, CongestionEvent, Coupled, Coupling, Ewtcp,
    Lia, LiaConfig, MultipathController, Nmcc, NmccConfig, PathState, RecoveryAck, WindowConfig,
    Windows, Wvegas,
};
use pathpool_core::{Dur, PathId, Time};
use proptest::prelude::*;

const MSS: u64 = 1000;

/// 1 to 6 paths: (window in segments, RTT in ms, in slow start?).
fn situation() -> impl Strategy<Value = Vec<PathState>> {
    proptest::collection::vec((1u64..500, 1u64..500, any::<bool>()), 1..7).prop_map(|v| {
        v.into_iter()
            .map(|(w, rtt, ss)| {
                let mut p = PathState::new(MSS, w * MSS);
                p.ssthresh = if ss { u64::MAX } else { MSS };
                p.srtt = Dur::from_ms(rtt);
                p
            })
            .collect()
    })
}

proptest! {
    /// NMCC: 1 ≤ m ≤ √N (paper eq. 9).
    #[test]
    fn nmcc_m_is_between_1_and_sqrt_n(paths in situation()) {
        let mut nmcc = Nmcc::new(NmccConfig::default());
        nmcc.on_paths_changed(&paths);
        let m2 = nmcc.estimate_m2(&paths, 0);
        prop_assert!(m2 >= 1.0 - 1e-12, "m² = {}", m2);
        prop_assert!(m2 <= paths.len() as f64 + 1e-9, "m² = {} > N = {}", m2, paths.len());
    }

    /// A coupled congestion-avoidance increase never exceeds what uncoupled Reno would add on
    /// the same subflow (acked·MSS/cwnd). wVegas has no per-ACK increase (it moves once per
    /// round); `wvegas_never_grows_more_than_reno_per_ack` covers it.
    #[test]
    fn coupled_increase_never_exceeds_reno(paths in situation(), acked in 1u64..3000) {
        for i in 0..paths.len() {
            let reno = acked as f64 * MSS as f64 / paths[i].cwnd as f64;
            let mut nmcc = Nmcc::new(NmccConfig::default());
            nmcc.on_paths_changed(&paths);
            nmcc.on_ack(&paths, i, acked);
            let mut lia_cached = Lia::new(LiaConfig { alpha_update: AlphaUpdate::OnWindowChange });
            lia_cached.on_paths_changed(&paths);
            let mut lia_htsim = Lia::new(LiaConfig { alpha_update: AlphaUpdate::OnSegmentGrowth });
            lia_htsim.on_paths_changed(&paths);
            let incs = [
                ("lia", Lia::default().ca_increase(&paths, i, acked)),
                ("lia on-window-change", lia_cached.ca_increase(&paths, i, acked)),
                ("lia on-segment-growth", lia_htsim.ca_increase(&paths, i, acked)),
                ("ewtcp", Ewtcp.ca_increase(&paths, i, acked)),
                ("coupled", Coupled.ca_increase(&paths, i, acked)),
                ("balia", Balia.ca_increase(&paths, i, acked)),
                ("nmcc", nmcc.ca_increase(&paths, i, acked)),
            ];
            for (name, inc) in incs {
                prop_assert!(inc <= reno * (1.0 + 1e-9), "{}: {} > reno {}", name, inc, reno);
                prop_assert!(inc >= 0.0, "{}: negative increase {}", name, inc);
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Ack(usize, u64, u64),
    Loss(usize, u64),
    Rto(usize, bool),
    Dup(usize),
    Partial(usize, u64),
    Full(usize, u64),
    Group(usize, u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..4, 1u64..5000, 1u64..400).prop_map(|(p, b, r)| Op::Ack(p, b, r)),
        1 => (0usize..4, 0u64..200_000).prop_map(|(p, f)| Op::Loss(p, f)),
        1 => (0usize..4, any::<bool>()).prop_map(|(p, r)| Op::Rto(p, r)),
        1 => (0usize..4).prop_map(Op::Dup),
        1 => (0usize..4, 1u64..5000).prop_map(|(p, b)| Op::Partial(p, b)),
        1 => (0usize..4, 0u64..100_000).prop_map(|(p, f)| Op::Full(p, f)),
        1 => (0usize..4, 0u32..2).prop_map(|(p, g)| Op::Group(p, g)),
    ]
}

/// Applies `o` to `cc`: an ACK of new data with its RTT sample, a loss, a recovery ACK or a
/// change of group.
fn apply(cc: &mut impl MultipathController, o: &Op) {
    match *o {
        Op::Ack(p, b, rtt) => {
            let ack = AckSample {
                now: Time::ZERO,
                acked_bytes: b,
                rtt_sample: Some(Dur::from_ms(rtt)),
                one_way_delay: None,
                srtt: Dur::from_ms(rtt),
                flight_bytes: 0,
            };
            cc.on_ack(PathId(p as u32), &ack);
        }
        Op::Loss(p, f) => cc.on_congestion_event(
            PathId(p as u32),
            CongestionEvent::FastRetransmit { flight_bytes: f },
        ),
        Op::Rto(p, r) => cc.on_congestion_event(
            PathId(p as u32),
            CongestionEvent::Timeout {
                flight_bytes: 0,
                repeated: r,
            },
        ),
        Op::Dup(p) => cc.on_recovery_ack(PathId(p as u32), RecoveryAck::Duplicate),
        Op::Partial(p, b) => {
            cc.on_recovery_ack(PathId(p as u32), RecoveryAck::Partial { acked_bytes: b })
        }
        Op::Full(p, f) => {
            cc.on_recovery_ack(PathId(p as u32), RecoveryAck::Full { flight_bytes: f })
        }
        Op::Group(p, g) => cc.set_group(PathId(p as u32), g),
    }
}

proptest! {
    /// Whatever happens, every controller keeps every window at one segment or more.
    #[test]
    fn windows_never_fall_below_one_segment(ops in proptest::collection::vec(op(), 1..150)) {
        let lia_cached = CcOptions {
            lia: LiaConfig { alpha_update: AlphaUpdate::OnWindowChange },
            ..CcOptions::default()
        };
        let lia_htsim = CcOptions {
            lia: LiaConfig { alpha_update: AlphaUpdate::OnSegmentGrowth },
            ..CcOptions::default()
        };
        let controllers = CcKind::ALL
            .iter()
            .map(|&k| (k.name(), k.build(WindowConfig::default())))
            .chain([
                ("lia on-window-change", CcKind::Lia.build_with(WindowConfig::default(), lia_cached)),
                ("lia on-segment-growth", CcKind::Lia.build_with(WindowConfig::default(), lia_htsim)),
            ]);
        for (kind, mut cc) in controllers {
            for _ in 0..4 {
                cc.add_path(MSS);
            }
            for o in &ops {
                apply(&mut cc, o);
                for p in 0..4 {
                    let m = cc.metrics(PathId(p));
                    prop_assert!(m.cwnd >= MSS, "{}: cwnd {}", kind, m.cwnd);
                    prop_assert!(m.ssthresh >= MSS, "{}: ssthresh {}", kind, m.ssthresh);
                    prop_assert!(cc.window(PathId(p)) >= MSS);
                }
            }
        }
    }
}

proptest! {
    /// wVegas never adds more on one ACK than Reno could with the same window configuration:
    /// min(acked, L·MSS) in slow start (RFC 3465), one MSS in congestion avoidance (RFC 3465
    /// §2.1: one segment per window acknowledged), nothing in fast recovery.
    #[test]
    fn wvegas_never_grows_more_than_reno_per_ack(ops in proptest::collection::vec(op(), 1..300)) {
        let config = WindowConfig::default();
        let mut cc = Windows::new(Wvegas::default(), config);
        for _ in 0..4 {
            cc.add_path(MSS);
        }
        for o in &ops {
            if let Op::Ack(p, b, _) = *o {
                let before = cc.paths()[p].clone();
                apply(&mut cc, o);
                let grown = cc.paths()[p].cwnd.saturating_sub(before.cwnd);
                let reno_max = if before.in_recovery {
                    0
                } else if before.cwnd < before.ssthresh {
                    b.min(config.abc_limit * MSS)
                } else {
                    MSS
                };
                prop_assert!(grown <= reno_max, "+{} > {} ({:?})", grown, reno_max, before);
            } else {
                apply(&mut cc, o);
            }
        }
    }
}

proptest! {
    /// No controller grows a window below ssthresh on one ACK by more than slow start may:
    /// abc_limit·SMSS (RFC 3465 §2.2), or Reno's acked·SMSS/cwnd where the controller is in
    /// congestion avoidance below ssthresh (NMCC's friendly slow start ends at ssthresh/m²).
    /// It once added 160 segments on one cumulative ACK after a timeout (issue 17). Above
    /// ssthresh `coupled_increase_never_exceeds_reno` holds the coupled increases.
    #[test]
    fn no_controller_grows_more_per_ack_than_the_slow_start_limit(ops in proptest::collection::vec(op(), 1..200), abc_limit in 1u64..3) {
        let config = WindowConfig { abc_limit, ..WindowConfig::default() };
        for kind in CcKind::ALL {
            let mut cc = kind.build(config);
            for _ in 0..4 {
                cc.add_path(MSS);
            }
            for o in &ops {
                if let Op::Ack(p, b, _) = *o {
                    let before = cc.metrics(PathId(p as u32));
                    apply(&mut cc, o);
                    let grown = cc.metrics(PathId(p as u32)).cwnd.saturating_sub(before.cwnd);
                    // + 1: a byte of carried fractional increase.
                    let limit = (abc_limit * MSS).max((b * MSS).div_ceil(before.cwnd)) + 1;
                    prop_assert!(before.cwnd >= before.ssthresh || grown <= limit, "{}: +{} > {} on an ACK of {} ({:?})", kind.name(), grown, limit, b, before);
                } else {
                    apply(&mut cc, o);
                }
            }
        }
    }
}
