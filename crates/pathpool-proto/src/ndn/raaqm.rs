//! RAAQM's probabilistic window decrease (Carofiglio et al., ICNP 2013, as the ndnSIM port
//! the PTP paper compares against has it; spec 004 §5): per route, the last samples' least
//! and greatest RTT bound the current one, and each Data halves the window with probability
//! p = p_min + Δp·(R − R_min)/(R_max − R_min).

use std::collections::VecDeque;

use pathpool_core::Dur;

/// p_min: the probability at the least RTT seen.
pub const RAAQM_P_MIN: f64 = 1e-5;
/// p_min + Δp: the probability at the greatest RTT seen (Δp = 0.02).
pub const RAAQM_P_MAX: f64 = 1e-5 + 0.02;
/// RTT samples a route keeps.
pub const RAAQM_SAMPLES: usize = 30;

/// The decrease probability at RTT `rtt` on a route whose samples span [`min`, `max`]:
/// p_min at or below `min`, p_max at or above `max`, linear between (p_min when they
/// coincide).
#[must_use]
pub fn raaqm_drop_probability(rtt: Dur, min: Dur, max: Dur) -> f64 {
    if max <= min {
        return RAAQM_P_MIN;
    }
    let x = (rtt.as_secs_f64() - min.as_secs_f64()) / (max.as_secs_f64() - min.as_secs_f64());
    RAAQM_P_MIN + (RAAQM_P_MAX - RAAQM_P_MIN) * x.clamp(0.0, 1.0)
}

/// One route's last [`RAAQM_SAMPLES`] RTTs.
#[derive(Clone, Debug, Default)]
pub struct RouteRtts {
    samples: VecDeque<Dur>,
}

impl RouteRtts {
    /// Records `rtt`; returns the decrease probability it gives against the samples kept
    /// (itself included).
    pub fn sample(&mut self, rtt: Dur) -> f64 {
        if self.samples.len() == RAAQM_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back(rtt);
        let min = self.samples.iter().min().copied().unwrap_or(rtt);
        let max = self.samples.iter().max().copied().unwrap_or(rtt);
        raaqm_drop_probability(rtt, min, max)
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
        let mut r = RouteRtts::default();
        r.sample(Dur::from_ms(100));
        for _ in 0..RAAQM_SAMPLES - 2 {
            r.sample(Dur::from_ms(10));
        }
        // The 30th sample: 100 ms is still kept, and 20 ms is a ninth of the way from 10.
        let p = r.sample(Dur::from_ms(20));
        assert!((p - (RAAQM_P_MIN + 0.02 / 9.0)).abs() < 1e-12, "{p}");
        // The 31st pushes 100 ms out: 30 ms is the greatest.
        let p = r.sample(Dur::from_ms(30));
        assert!((p - RAAQM_P_MAX).abs() < 1e-15, "{p}");
    }
}
