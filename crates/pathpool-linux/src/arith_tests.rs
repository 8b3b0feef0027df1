//! The kernel arithmetic against pathpool-cc's controllers, on the controllers' own test
//! vectors and on random groups.

use pathpool_cc::windows::Coupling;
use pathpool_cc::{Balia, Lia, LiaConfig, Nmcc, NmccConfig, Olia, PathState};
use pathpool_core::Dur;
use proptest::prelude::*;

use super::*;

const MSS: u64 = 1000;

/// The simulator's paths: (window in segments, RTT in µs), congestion avoidance, group 0.
fn sim_paths(spec: &[(u32, u32)]) -> Vec<PathState> {
    spec.iter()
        .map(|&(w, rtt_us)| {
            let mut p = PathState::new(MSS, u64::from(w) * MSS);
            p.ssthresh = 1;
            p.srtt = Dur::from_us(u64::from(rtt_us));
            p
        })
        .collect()
}

/// The same paths as kernel views, all members.
fn views(spec: &[(u32, u32)]) -> Views {
    let mut v = Views::default();
    for (k, &(w, rtt_us)) in spec.iter().enumerate() {
        v[k] = View {
            cwnd: w,
            rtt_us,
            ssthresh: 1,
            member: 1,
            interval: 0,
        };
    }
    v
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-12)
}

/// The simulator's increase for one acknowledged segment, in segments.
fn sim_increase(c: &mut impl Coupling, paths: &[PathState], i: usize) -> f64 {
    c.ca_increase(paths, i, MSS) / MSS as f64
}

#[test]
fn software_float_operations_are_exact_to_two_to_the_minus_31() {
    for &(a, b) in &[
        (3u64, 7u64),
        (1 << 40, 3),
        (123_456_789, 987_654_321),
        (1, 1 << 50),
    ] {
        let (fa, fb) = (a as f64, b as f64);
        assert!(close(fp_op(a, b, 0), fa + fb, 1e-9), "{a} + {b}");
        assert!(close(fp_op(a, b, 2), fa * fb, 1e-9), "{a} · {b}");
        assert!(close(fp_op(a, b, 3), fa / fb, 1e-9), "{a} / {b}");
        if a > b {
            assert!(close(fp_op(a, b, 1), fa - fb, 1e-9), "{a} − {b}");
        } else {
            assert_eq!(fp_op(a, b, 1), 0.0, "a − b is zero when b ≥ a");
        }
    }
    assert_eq!(
        fp_op(5, 0, 3),
        0.0,
        "a zero divisor gives zero, not a fault"
    );
    assert_eq!(fp_value(3 << 30, -31), 1.5);
}

#[test]
fn lia_matches_the_simulator_on_its_test_vectors() {
    // lia.rs's vectors: equal paths, then RTTs 10 and 20 ms with windows 10 and 20.
    for spec in [
        &[(10, 10_000), (10, 10_000)][..],
        &[(10, 10_000), (20, 20_000)][..],
        &[(20, 10_000), (10, 10_000), (5, 20_000)][..],
        &[(40, 5_000)][..],
    ] {
        let paths = sim_paths(spec);
        let v = views(spec);
        for i in 0..spec.len() {
            let mut lia = Lia::new(LiaConfig::default());
            let (inc, alpha) = lia_increase(&v, i);
            assert!(
                close(inc, sim_increase(&mut lia, &paths, i), 1e-7),
                "{spec:?} path {i}"
            );
            let want = Lia::alpha(&paths, i).expect("RTTs known");
            assert!(close(alpha, want, 1e-7), "{spec:?} alpha {alpha} vs {want}");
        }
    }
}

#[test]
fn lia_two_equal_paths_increase_by_a_quarter_of_reno() {
    // alpha = 2·(10/r²)/(20/r)² = 1/2 ... per segment alpha/total = 1/40 = (1/10)/4.
    let (inc, alpha) = lia_increase(&views(&[(10, 10_000), (10, 10_000)]), 0);
    assert!(close(alpha, 0.5, 1e-8), "{alpha}");
    assert!(close(inc, 0.025, 1e-8), "{inc}");
}

#[test]
fn a_member_without_an_rtt_sample_leaves_lia_at_reno() {
    let mut v = views(&[(10, 10_000), (20, 0)]);
    v[1].rtt_us = 0;
    assert!(close(lia_increase(&v, 0).0, 0.1, 1e-9));
}

#[test]
fn olia_matches_the_simulator_with_loss_histories() {
    // olia.rs's vectors: the three-path case with losses after 500, 100 and 100 kB.
    let spec = [(10, 10_000), (10, 10_000), (20, 10_000)];
    let paths = sim_paths(&spec);
    let mut olia = Olia::default();
    olia.on_paths_changed(&paths);
    let mut v = views(&spec);
    for (j, kb) in [(0usize, 500u64), (1, 100), (2, 100)] {
        olia.on_ack(&paths, j, kb * 1000);
        olia.on_loss(&paths, j, false);
        // One loss after kb·1000 bytes: interval max(0 since, kb between) in segments.
        v[j].interval = kb;
    }
    for i in 0..3 {
        let (inc, eps) = olia_increase(&v, i);
        let want = sim_increase(&mut olia, &paths, i);
        assert!(close(inc, want, 1e-7), "path {i}: {inc} vs {want}");
        assert!(
            close(eps, olia.epsilon(&paths, i), 1e-9),
            "path {i} epsilon"
        );
    }
    // olia.rs: path 0 (best, not largest) gains 1/3, path 1 nothing, path 2 (largest) lends.
    let eps: Vec<f64> = (0..3).map(|i| olia_increase(&v, i).1).collect();
    assert!(close(eps[0], 1.0 / 3.0, 1e-12) && eps[1] == 0.0, "{eps:?}");
    assert!(close(eps[2], -1.0 / 3.0, 1e-12), "{eps:?}");
}

#[test]
fn olia_before_any_loss_the_smaller_window_gains() {
    let spec = [(10, 10_000), (20, 20_000)];
    let paths = sim_paths(&spec);
    let mut olia = Olia::default();
    olia.on_paths_changed(&paths);
    let v = views(&spec);
    // olia.rs: +75 and −12.5 bytes per 1000-byte ACK.
    assert!(close(olia_increase(&v, 0).0, 0.075, 1e-8));
    assert!(close(olia_increase(&v, 1).0, -0.0125, 1e-8));
    assert!(close(sim_increase(&mut olia, &paths, 1), -0.0125, 1e-12));
}

#[test]
fn balia_matches_the_simulator_increase_and_ssthresh() {
    for spec in [
        &[(10, 10_000), (20, 40_000)][..],
        &[(10, 10_000), (10, 10_000)][..],
        &[(20, 10_000), (10, 10_000), (5, 20_000)][..],
        &[(10, 10_000)][..],
    ] {
        let paths = sim_paths(spec);
        let v = views(spec);
        for i in 0..spec.len() {
            let (inc, alpha) = balia_increase(&v, i);
            assert!(
                close(inc, sim_increase(&mut Balia, &paths, i), 1e-7),
                "{spec:?} {i}"
            );
            assert!(
                close(alpha, Balia::alpha(&paths, i), 1e-7),
                "{spec:?} alpha {i}"
            );
            let sim = Balia.ssthresh_after_loss(&paths, i, paths[i].cwnd);
            assert_eq!(
                balia_ssthresh(&v, i),
                (sim / MSS).max(1),
                "{spec:?} ssthresh {i}"
            );
        }
    }
}

#[test]
fn nmcc_m2_mt_increase_and_ssthresh_match_the_simulator() {
    // nmcc.rs's paper example: RTTs 5 and 10 ms, m² = 1.25 in congestion avoidance.
    let spec = [(20, 5_000), (30, 10_000)];
    let mut paths = sim_paths(&spec);
    for p in &mut paths {
        p.ssthresh = 10 * MSS;
    }
    let mut nmcc = Nmcc::new(NmccConfig::default());
    nmcc.on_paths_changed(&paths);
    let mut v = views(&spec);
    for view in &mut v[..2] {
        view.ssthresh = 10;
    }
    let prev = nmcc.m2(&paths, 0);
    assert_eq!(prev, 2.0, "m² = N before estimates (footnote 6)");
    let m2 = nmcc_m2(&v, prev, 0);
    assert!(close(m2, nmcc.estimate_m2(&paths, 0), 1e-8), "m² {m2}");
    assert!(close(m2, 1.25, 1e-8), "the paper's m² = 1.25, m = 1.118");
    // Losses: path 0 after 300 segments, path 1 after 100 and again 200 later.
    nmcc.on_ack(&paths, 0, 300 * MSS);
    nmcc.on_loss(&paths, 0, false);
    nmcc.on_ack(&paths, 1, 100 * MSS);
    nmcc.on_loss(&paths, 1, false);
    nmcc.on_ack(&paths, 1, 200 * MSS);
    nmcc.on_loss(&paths, 1, false);
    v[0].interval = 300;
    v[1].interval = 200;
    let m2 = nmcc.m2(&paths, 0);
    let mt = nmcc_mt(&v, m2, 0);
    assert!(
        close(mt, nmcc.loss_time_factor(&paths, 0), 1e-7),
        "m_t {mt}"
    );
    for i in 0..2 {
        let inc = nmcc_ca_increase(&v, i, m2);
        assert!(
            close(inc, sim_increase(&mut nmcc, &paths, i), 1e-7),
            "increase {i}"
        );
        let sim = nmcc.ssthresh_after_loss(&paths, i, paths[i].cwnd);
        assert_eq!(
            nmcc_ssthresh(&v, i, m2, 3, (0, 0)),
            sim / MSS,
            "ssthresh {i}"
        );
    }
}

#[test]
fn nmcc_alone_halves_like_reno_and_before_the_second_loss_does_not_use_mt() {
    let mut v = views(&[(30, 10_000), (30, 10_000)]);
    assert_eq!(
        nmcc_ssthresh(&v, 0, 2.0, 1, (0, 0)),
        15,
        "first loss of the group: m_t = 1"
    );
    v[0].interval = 100;
    v[1].interval = 100;
    // Equal paths: m_t = 2, so the subflow gives its whole window (the group's halves).
    assert_eq!(nmcc_ssthresh(&v, 0, 2.0, 2, (0, 0)), 2, "the floor");
    assert_eq!(
        nmcc_ssthresh(&v, 0, 2.0, 2, (2, 0)),
        15,
        "loss_time_factor = false"
    );
    v[1].member = 0;
    assert_eq!(nmcc_ssthresh(&v, 0, 1.0, 5, (0, 0)), 15, "alone: cwnd/2");
}

fn group() -> impl Strategy<Value = Vec<(u32, u32)>> {
    prop::collection::vec((1u32..=4000, 100u32..=2_000_000), 1..=8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// On random groups (1–8 subflows, 1–4000 segments, 0.1 ms–2 s) the kernel's increases
    /// stay within 10⁻⁶ of the simulator's f64 values.
    #[test]
    fn random_groups_agree_with_the_simulator(spec in group(), pick in 0usize..8) {
        let i = pick % spec.len();
        let paths = sim_paths(&spec);
        let v = views(&spec);
        let mut lia = Lia::new(LiaConfig::default());
        prop_assert!(close(lia_increase(&v, i).0, sim_increase(&mut lia, &paths, i), 1e-6));
        prop_assert!(close(balia_increase(&v, i).0, sim_increase(&mut Balia, &paths, i), 1e-6));
        let mut olia = Olia::default();
        olia.on_paths_changed(&paths);
        // OLIA's increase is a difference (the rate term minus epsilon/w for the largest
        // window) that can cancel to near zero, where a relative error means nothing: its
        // error is measured against Reno's increase 1/w, the scale of both terms.
        let (kernel, sim) = (olia_increase(&v, i).0, sim_increase(&mut olia, &paths, i));
        let reno = 1.0 / f64::from(spec[i].0);
        prop_assert!((kernel - sim).abs() <= 1e-6 * reno, "OLIA {kernel} vs {sim}");
        let mut nmcc = Nmcc::new(NmccConfig::default());
        nmcc.on_paths_changed(&paths);
        let prev = nmcc.m2(&paths, i);
        prop_assert!(close(nmcc_m2(&v, prev, 0), nmcc.estimate_m2(&paths, i), 1e-6));
    }
}

/// The simulator's configuration with the same named choices.
fn sim_config(o: &crate::loader::NmccOptions) -> NmccConfig {
    NmccConfig {
        friendly_slow_start: o.friendly_slow_start,
        loss_time_factor: o.loss_time_factor,
        clamp_mt: o.clamp_mt,
        initial_m: if o.initial_m_is_n {
            pathpool_cc::NmccInitialM::MIsN
        } else {
            pathpool_cc::NmccInitialM::MSquaredIsN
        },
        window_floor: u64::from(o.window_floor),
        ..NmccConfig::default()
    }
}

#[test]
fn nmcc_named_choices_match_the_simulator_configured_the_same_way() {
    use crate::loader::NmccOptions;
    let spec = [(20, 5_000), (30, 10_000), (8, 20_000)];
    let mut paths = sim_paths(&spec);
    let mut v = views(&spec);
    for (p, view) in paths.iter_mut().zip(v.iter_mut()) {
        p.ssthresh = 100 * MSS;
        view.ssthresh = 100;
    }
    for text in [
        "friendly_slow_start=false",
        "loss_time_factor=false",
        "clamp_mt=false",
        "initial_m=m-is-n",
        "window_floor=5",
        "loss_time_factor=false,window_floor=3,friendly_slow_start=false",
    ] {
        let o = NmccOptions::parse(text).expect("valid options");
        let mut nmcc = Nmcc::new(sim_config(&o));
        nmcc.on_paths_changed(&paths);
        let prev = nmcc.m2(&paths, 0);
        assert!(
            close(prev, if text.contains("m-is-n") { 9.0 } else { 3.0 }, 0.0),
            "{text}"
        );
        let m2 = nmcc_m2(&v, prev, o.flags());
        assert!(
            close(m2, nmcc.estimate_m2(&paths, 0), 1e-8),
            "{text}: m² {m2}"
        );
        for (j, kb) in [(0usize, 300u64), (1, 100), (2, 50)] {
            nmcc.on_ack(&paths, j, kb * MSS);
            nmcc.on_loss(&paths, j, false);
            v[j].interval = kb;
        }
        let m2 = nmcc.m2(&paths, 0);
        let mt = nmcc_mt(&v, m2, o.flags());
        assert!(
            close(mt, nmcc.loss_time_factor(&paths, 0), 1e-7),
            "{text}: m_t {mt}"
        );
        for i in 0..3 {
            let sim = nmcc.ssthresh_after_loss(&paths, i, paths[i].cwnd) / MSS;
            let kernel = nmcc_ssthresh(&v, i, m2, 3, (o.flags(), o.window_floor));
            assert_eq!(kernel, sim, "{text}: ssthresh {i}");
        }
        for view in &mut v {
            view.interval = 0;
        }
    }
}

#[test]
fn nmcc_options_name_the_field_that_is_wrong() {
    use crate::loader::NmccOptions;
    let e = |t: &str| NmccOptions::parse(t).unwrap_err().to_string();
    assert!(e("loss_time_factor=maybe").contains("loss_time_factor: `maybe`"));
    assert!(e("shadow_update=per-rtt").contains("not available in the kernel"));
    assert!(e("speed=11").contains("unknown NMCC option `speed`"));
    assert!(e("window_floor=0").contains("window_floor"));
    assert!(e("initial_m").contains("KEY=VALUE"));
}
