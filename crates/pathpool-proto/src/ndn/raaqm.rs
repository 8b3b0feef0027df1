//! RAAQM's probabilistic window decrease (Carofiglio et al., ICNP 2013, as the ndnSIM port
//! the PTP paper compares against has it; spec 004 §5): per route, the last samples' least
//! and greatest RTT bound the current one, and each Data cuts the window with probability
//! p = p_min + Δp·(R − R_min)/(R_max − R_min).
//!
//! Two sets of constants ([`RaaqmVariant`]): the reading of the ndnSIM port (the
//! default: W ← W/2, Δp = 0.02, a 1 s lifetime) and Cisco's hicn/libtransport defaults
//! (`socket_options_default_values.h`: W ← 0.8·W, Δp = 0.2, p_min = 10⁻⁵, 30 samples, a
//! 1001 ms lifetime; no probabilistic cut before a route has its 30 samples).

use std::collections::VecDeque;

use pathpool_core::Dur;
use serde::{Deserialize, Serialize};

/// Which RAAQM constants a consumer runs with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RaaqmVariant {
    /// The ndnSIM port's, as the issue reads it (the PTP paper's baseline; default).
    #[default]
    Ndnsim,
    /// Cisco's hicn/libtransport defaults.
    Hicn,
}

/// RAAQM's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RaaqmParams {
    /// The window's factor at a cut: W ← max(β·W, 1).
    pub beta: f64,
    /// The probability at the least RTT seen.
    pub p_min: f64,
    /// The probability's rise from the least to the greatest RTT seen.
    pub delta_p: f64,
    /// RTT samples a route keeps.
    pub samples: usize,
    /// Whether a route cuts only once it holds `samples` samples.
    pub full_history_first: bool,
    /// An Interest's lifetime (its timeout).
    pub lifetime: Dur,
}

impl RaaqmVariant {
    /// The variant's constants.
    #[must_use]
    pub fn params(self) -> RaaqmParams {
        match self {
            RaaqmVariant::Ndnsim => RaaqmParams {
                beta: 0.5,
                p_min: RAAQM_P_MIN,
                delta_p: RAAQM_P_MAX - RAAQM_P_MIN,
                samples: RAAQM_SAMPLES,
                full_history_first: false,
                lifetime: Dur::from_secs(1),
            },
            RaaqmVariant::Hicn => RaaqmParams {
                beta: 0.8,
                p_min: 1e-5,
                delta_p: 0.2,
                samples: 30,
                full_history_first: true,
                lifetime: Dur::from_ms(1001),
            },
        }
    }
}

impl RaaqmParams {
    /// The decrease probability at RTT `rtt` on a route whose samples span [`min`, `max`]:
    /// p_min at or below `min`, p_min + Δp at or above `max`, linear between (p_min when
    /// they coincide).
    #[must_use]
    pub fn drop_probability(&self, rtt: Dur, min: Dur, max: Dur) -> f64 {
        if max <= min {
            return self.p_min;
        }
        let x = (rtt.as_secs_f64() - min.as_secs_f64()) / (max.as_secs_f64() - min.as_secs_f64());
        self.p_min + self.delta_p * x.clamp(0.0, 1.0)
    }
}

/// p_min: the probability at the least RTT seen.
pub const RAAQM_P_MIN: f64 = 1e-5;
/// p_min + Δp: the probability at the greatest RTT seen (Δp = 0.02).
pub const RAAQM_P_MAX: f64 = 1e-5 + 0.02;
/// RTT samples a route keeps.
pub const RAAQM_SAMPLES: usize = 30;

/// The ndnSIM variant's decrease probability (see [`RaaqmParams::drop_probability`]).
#[must_use]
pub fn raaqm_drop_probability(rtt: Dur, min: Dur, max: Dur) -> f64 {
    RaaqmVariant::Ndnsim
        .params()
        .drop_probability(rtt, min, max)
}

/// One route's last RTTs.
#[derive(Clone, Debug, Default)]
pub struct RouteRtts {
    samples: VecDeque<Dur>,
}

impl RouteRtts {
    /// Records `rtt`; returns the decrease probability it gives against the samples kept
    /// (itself included): 0 while the route's history is short and `params` wants it full.
    pub fn sample(&mut self, rtt: Dur, params: &RaaqmParams) -> f64 {
        if self.samples.len() >= params.samples {
            self.samples.pop_front();
        }
        self.samples.push_back(rtt);
        if params.full_history_first && self.samples.len() < params.samples {
            return 0.0;
        }
        let min = self.samples.iter().min().copied().unwrap_or(rtt);
        let max = self.samples.iter().max().copied().unwrap_or(rtt);
        params.drop_probability(rtt, min, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 22, acceptance 1: R_min 10, R_max 30, R 20 ms → p = 0.01001.
    #[test]
    fn halfway_between_the_extremes_is_half_of_delta_p() {
        let p = raaqm_drop_probability(Dur::from_ms(20), Dur::from_ms(10), Dur::from_ms(30));
        assert!((p - 0.01001).abs() < 1e-15, "{p}");
        let ms = Dur::from_ms;
        assert_eq!(raaqm_drop_probability(ms(5), ms(10), ms(30)), RAAQM_P_MIN);
        assert_eq!(raaqm_drop_probability(ms(40), ms(10), ms(30)), RAAQM_P_MAX);
        assert_eq!(raaqm_drop_probability(ms(10), ms(10), ms(10)), RAAQM_P_MIN);
    }

    #[test]
    fn a_route_keeps_its_last_thirty_samples() {
        let params = RaaqmVariant::Ndnsim.params();
        let mut r = RouteRtts::default();
        r.sample(Dur::from_ms(100), &params);
        for _ in 0..RAAQM_SAMPLES - 2 {
            r.sample(Dur::from_ms(10), &params);
        }
        // The 30th sample: 100 ms is still kept, and 20 ms is a ninth of the way from 10.
        let p = r.sample(Dur::from_ms(20), &params);
        assert!((p - (RAAQM_P_MIN + 0.02 / 9.0)).abs() < 1e-12, "{p}");
        // The 31st pushes 100 ms out: 30 ms is the greatest.
        let p = r.sample(Dur::from_ms(30), &params);
        assert!((p - RAAQM_P_MAX).abs() < 1e-15, "{p}");
    }

    /// hicn's constants: Δp = 0.2, so halfway is p_min + 0.1; no cut before 30 samples.
    #[test]
    fn hicn_cuts_ten_times_as_often_and_only_with_a_full_history() {
        let hicn = RaaqmVariant::Hicn.params();
        let ms = Dur::from_ms;
        let p = hicn.drop_probability(ms(20), ms(10), ms(30));
        assert!((p - (1e-5 + 0.1)).abs() < 1e-15, "{p}");
        let mut r = RouteRtts::default();
        for k in 0..29 {
            assert_eq!(r.sample(ms(10 + k), &hicn), 0.0, "sample {k}");
        }
        let p = r.sample(ms(38), &hicn);
        assert!((p - (1e-5 + 0.2)).abs() < 1e-15, "{p}");
        assert_eq!(hicn.beta, 0.8);
        assert_eq!(hicn.lifetime, ms(1001));
    }
}
