use super::*;
use crate::event::{AckSample, CongestionEvent};
use crate::windows::{CaIncrease, WindowConfig, Windows};
use crate::MultipathController;
use pathpool_core::PathId;
use proptest::prelude::*;

const MSS: u64 = 1000;
const P: PathId = PathId(0);
const SRTT: Dur = Dur::from_ms(100);

/// A TCP-LP connection of one path in congestion avoidance at `cwnd_segments`.
fn lp(config: TcpLpConfig, cwnd_segments: u64) -> Windows<TcpLp> {
    let mut w = Windows::new(
        TcpLp::new(config, Reno::new(CaIncrease::PerAck)),
        WindowConfig::default(),
    );
    w.add_path(MSS);
    let p = w.path_mut(P);
    p.cwnd = cwnd_segments * MSS;
    p.ssthresh = MSS;
    w
}

fn ack(now_ms: u64, owd_ms: Option<u64>) -> AckSample {
    AckSample {
        now: Time::from_ms(now_ms),
        acked_bytes: MSS,
        rtt_sample: Some(SRTT),
        one_way_delay: owd_ms.map(Dur::from_ms),
        srtt: SRTT,
        flight_bytes: 0,
    }
}

/// Feeds d_min = 20 ms, d_max = 60 ms, then 20 ms samples until sowd is back near d_min.
fn learn_extremes(w: &mut Windows<TcpLp>, t_ms: &mut u64) {
    for owd in [20, 60] {
        w.on_ack(P, &ack(*t_ms, Some(owd)));
        *t_ms += 1;
    }
}

#[test]
fn threshold_is_fifteen_percent_above_d_min() {
    // d_min 20 ms, d_max 60 ms: 20 + 0.15·40 = 26 ms.
    let lp = TcpLp::new(TcpLpConfig::default(), Reno::default());
    let ms = Dur::from_ms(1).as_ps();
    assert_eq!(lp.threshold_ps(20 * ms, 60 * ms), 26 * ms);
}

#[test]
fn sowd_is_an_eighth_weighted_average() {
    let mut w = lp(TcpLpConfig::default(), 20);
    w.on_ack(P, &ack(0, Some(20)));
    assert_eq!(w.coupling().path(0).sowd(), Some(Dur::from_ms(20)));
    w.on_ack(P, &ack(1, Some(36)));
    // 7/8·20 + 1/8·36 = 22 ms.
    assert_eq!(w.coupling().path(0).sowd(), Some(Dur::from_ms(22)));
    assert_eq!(
        w.coupling().path(0).extremes(),
        Some((Dur::from_ms(20), Dur::from_ms(36)))
    );
}

#[test]
fn a_ci_halves_and_a_second_within_itt_sends_cwnd_to_one() {
    let mut w = lp(TcpLpConfig::default(), 20);
    let mut t = 0;
    // Samples 20 then 60 ms: sowd = 17.5 + 7.5 = 25 ms, under the 26 ms threshold.
    learn_extremes(&mut w, &mut t);
    assert!(!w.coupling().last_ack_slow(0));
    let grown = w.paths()[0].cwnd;
    assert!(grown > 20 * MSS, "no CI: NewReno growth");
    w.path_mut(P).cwnd = 20 * MSS;
    // 60 ms again: sowd = 7/8·25 + 7.5 = 29.375 ms > 26 ms: a CI, outside any itt.
    w.on_ack(P, &ack(t, Some(60)));
    assert!(w.coupling().last_ack_slow(0));
    assert_eq!(w.paths()[0].cwnd, 10 * MSS, "20 → 10");
    // Another CI 100 ms later, inside itt = 3·100 ms: cwnd = 1.
    w.on_ack(P, &ack(t + 100, Some(60)));
    assert_eq!(w.paths()[0].cwnd, MSS, "second CI within 3·srtt");
    assert!(TcpLp::in_probe_mode(w.paths(), 0));
}

#[test]
fn a_ci_after_itt_halves_again() {
    let mut w = lp(TcpLpConfig::default(), 20);
    let mut t = 0;
    learn_extremes(&mut w, &mut t);
    w.path_mut(P).cwnd = 20 * MSS;
    w.on_ack(P, &ack(t, Some(60)));
    assert_eq!(w.paths()[0].cwnd, 10 * MSS);
    // 300 ms later is no longer inside itt (strictly less than 3·srtt).
    w.on_ack(P, &ack(t + 300, Some(60)));
    assert_eq!(w.paths()[0].cwnd, 5 * MSS);
}

#[test]
fn no_growth_inside_itt_then_newreno() {
    let mut w = lp(TcpLpConfig::default(), 20);
    let mut t = 0;
    learn_extremes(&mut w, &mut t);
    w.path_mut(P).cwnd = 20 * MSS;
    w.on_ack(P, &ack(t, Some(60)));
    assert_eq!(w.paths()[0].cwnd, 10 * MSS);
    // 20 ms samples inside itt: sowd falls 28.2, 27.2, 26.3 ms (still CIs, each inside itt of
    // the one before: cwnd = 1), then 25.5 ms and below (no CI), and the window never grows.
    let mut prev = w.paths()[0].cwnd;
    for k in 1..=20 {
        w.on_ack(P, &ack(t + 10 * k, Some(20)));
        let slow = w.coupling().last_ack_slow(0);
        assert_eq!(slow, k <= 3, "CI at +{} ms", 10 * k);
        assert!(
            w.paths()[0].cwnd <= prev,
            "grew inside itt at +{} ms",
            10 * k
        );
        prev = w.paths()[0].cwnd;
    }
    assert_eq!(prev, MSS, "probe mode");
    // Without a delay sample, still inside itt of the last CI (at +30 ms): no growth.
    w.on_ack(P, &ack(t + 250, None));
    assert_eq!(w.paths()[0].cwnd, MSS);
    // After itt the probe's fast ACK grows the window again.
    w.on_ack(P, &ack(t + 400, Some(20)));
    assert!(!w.coupling().last_ack_slow(0));
    assert!(w.paths()[0].cwnd > MSS);
}

#[test]
fn linux_reset_moves_the_extremes_to_sowd() {
    let config = TcpLpConfig {
        reset_extremes_on_ci: true,
        ..TcpLpConfig::default()
    };
    let mut w = lp(config, 20);
    let mut t = 0;
    learn_extremes(&mut w, &mut t);
    w.on_ack(P, &ack(t, Some(60)));
    let sowd = w.coupling().path(0).sowd().unwrap();
    assert_eq!(w.coupling().path(0).extremes(), Some((sowd, sowd * 2)));
}

#[test]
fn without_delay_samples_it_is_newreno() {
    let mut lp_w = lp(TcpLpConfig::default(), 10);
    let mut reno = Windows::new(Reno::new(CaIncrease::PerAck), WindowConfig::default());
    reno.add_path(MSS);
    reno.path_mut(P).cwnd = 10 * MSS;
    reno.path_mut(P).ssthresh = MSS;
    for k in 0..50 {
        lp_w.on_ack(P, &ack(k, None));
        reno.on_ack(P, &ack(k, None));
    }
    let loss = CongestionEvent::FastRetransmit {
        flight_bytes: lp_w.paths()[0].cwnd,
    };
    lp_w.on_congestion_event(P, loss);
    reno.on_congestion_event(P, loss);
    assert_eq!(lp_w.paths()[0].cwnd, reno.paths()[0].cwnd);
}

proptest! {
    /// On any script of ACKs (one-way delays 10..100 ms or none, 1..60 ms apart) and
    /// losses, with any of the reference rules (D265, D266), cwnd stays at least one segment
    /// and never grows within itt of a reduction.
    #[test]
    fn cwnd_at_least_one_and_no_growth_inside_itt(
        script in prop::collection::vec((1u64..60, prop::option::of(10u64..100), 0u8..20), 1..300),
        rules in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
    ) {
        let config = TcpLpConfig {
            reset_extremes_on_ci: rules.0,
            ci_lowers_ssthresh: rules.1,
            itt_rtt: if rules.2 { IttRtt::Latest } else { IttRtt::Srtt },
            forget_largest_owd: rules.3,
            ..TcpLpConfig::default()
        };
        let mut w = lp(config, 10);
        let mut t = 0;
        let mut last_reduction: Option<u64> = None;
        for (gap, owd, event) in script {
            t += gap;
            let before = w.paths()[0].cwnd;
            if event == 0 {
                w.on_congestion_event(P, CongestionEvent::Timeout { flight_bytes: before, repeated: false });
            } else {
                w.on_ack(P, &ack(t, owd));
                if w.coupling().path(0).last_reduction == Some(Time::from_ms(t)) {
                    last_reduction = Some(t);
                }
                let after = w.paths()[0].cwnd;
                if last_reduction.is_some_and(|r| t - r < 300) {
                    prop_assert!(after <= before, "grew {before} → {after} inside itt at {t} ms");
                }
            }
            prop_assert!(w.paths()[0].cwnd >= MSS);
        }
    }
}

/// One CI on a path in slow start (ssthresh unlimited) at 20 segments, then after itt eight
/// ACKs without a delay sample: returns (ssthresh after the CI, cwnd after the ACKs).
fn ci_in_slow_start(config: TcpLpConfig) -> (u64, u64) {
    let mut w = lp(config, 20);
    w.path_mut(P).ssthresh = u64::MAX;
    let mut t = 0;
    learn_extremes(&mut w, &mut t);
    w.path_mut(P).cwnd = 20 * MSS;
    w.on_ack(P, &ack(t, Some(60)));
    assert_eq!(w.paths()[0].cwnd, 10 * MSS, "halved");
    let ssthresh = w.paths()[0].ssthresh;
    for k in 0..8 {
        w.on_ack(P, &ack(t + 300 + k, None));
    }
    (ssthresh, w.paths()[0].cwnd)
}

#[test]
fn a_ci_lowers_ssthresh_by_default_so_growth_after_itt_is_additive() {
    let (ssthresh, cwnd) = ci_in_slow_start(TcpLpConfig::default());
    assert_eq!(ssthresh, 10 * MSS, "D242");
    assert!(cwnd < 11 * MSS, "congestion avoidance: {cwnd}");
}

#[test]
fn like_linux_a_ci_can_leave_ssthresh_and_slow_start_again() {
    let config = TcpLpConfig {
        ci_lowers_ssthresh: false,
        ..TcpLpConfig::default()
    };
    let (ssthresh, cwnd) = ci_in_slow_start(config);
    assert_eq!(ssthresh, u64::MAX, "only cwnd changes");
    assert_eq!(cwnd, 18 * MSS, "slow start: one segment per ACK");
}

#[test]
fn itt_can_count_in_the_latest_rtt_sample_as_linux() {
    // srtt 100 ms, latest RTT sample 50 ms: a second CI 200 ms after the first is inside
    // 3·srtt (cwnd 1) but outside 3·latest (halved again).
    for (itt_rtt, expected) in [(IttRtt::Srtt, MSS), (IttRtt::Latest, 5 * MSS)] {
        let config = TcpLpConfig {
            itt_rtt,
            ..TcpLpConfig::default()
        };
        let mut w = lp(config, 20);
        let mut t = 0;
        learn_extremes(&mut w, &mut t);
        w.path_mut(P).cwnd = 20 * MSS;
        let fast = |now_ms| AckSample {
            rtt_sample: Some(Dur::from_ms(50)),
            ..ack(now_ms, Some(60))
        };
        w.on_ack(P, &fast(t));
        assert_eq!(w.paths()[0].cwnd, 10 * MSS);
        w.on_ack(P, &fast(t + 200));
        assert_eq!(w.paths()[0].cwnd, expected, "{itt_rtt:?}");
    }
}

#[test]
fn linux_d_max_forgets_the_largest_sample() {
    let config = TcpLpConfig {
        forget_largest_owd: true,
        ..TcpLpConfig::default()
    };
    let mut w = lp(config, 20);
    let ms = Dur::from_ms;
    // Samples 20, 60, 40 ms: d_max is 40 (60 is the reserve); then 70: d_max 60.
    for (k, owd) in [20, 60, 40].into_iter().enumerate() {
        w.on_ack(P, &ack(k as u64, Some(owd)));
    }
    assert_eq!(w.coupling().path(0).extremes(), Some((ms(20), ms(40))));
    w.on_ack(P, &ack(3, Some(70)));
    assert_eq!(w.coupling().path(0).extremes(), Some((ms(20), ms(60))));
    // The paper's d_max is the largest.
    let mut w = lp(TcpLpConfig::default(), 20);
    for (k, owd) in [20, 60, 40].into_iter().enumerate() {
        w.on_ack(P, &ack(k as u64, Some(owd)));
    }
    assert_eq!(w.coupling().path(0).extremes(), Some((ms(20), ms(60))));
}
