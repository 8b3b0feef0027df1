//! Residual-bandwidth advertisements for shared detour links, the document's Algorithm 2
//! (spec 001 §3.8 and §3.10), and the residual of a detour.
//!
//! Rates are in bits per second as `f64`: the meters are moving averages, not counts.

/// What node p advertises to neighbour n about its interface i (Algorithm 2), when m
/// neighbours detour through i.
///
/// - `capacity_bps`: C_i; `traffic_bps`: T_i, everything i carries (its own and detoured);
/// - `detour_from_n_bps`: the detour traffic n sends through i; `detour_total_bps`: the
///   detour traffic all neighbours send through i;
/// - `in_push`: whether i is in P; an interface in any other state advertises 0 (§3.8: a
///   detour is used only while both its hops are in P).
///
/// R_i = C_i − T_i; if R_i > 0 the advertisement is n's own detour traffic plus an m-th of
/// R_i (l.7–8), else an m-th of all detour traffic through i (l.10). With nothing metered yet
/// the first value is R_i/m (§3.10, "an equal share of the unused bandwidth").
#[must_use]
pub fn advertised_residual_bps(
    capacity_bps: f64,
    traffic_bps: f64,
    detour_from_n_bps: f64,
    detour_total_bps: f64,
    m: usize,
    in_push: bool,
) -> f64 {
    if !in_push || m == 0 {
        return 0.0;
    }
    let m = m as f64;
    let residual = capacity_bps - traffic_bps;
    if residual > 0.0 {
        detour_from_n_bps + residual / m
    } else {
        detour_total_bps / m
    }
}

/// The residual of the detour r → d → n (§3.8): the smaller of r's own residual on its
/// interface towards d and what d advertises for its interface towards n.
#[must_use]
pub fn detour_residual_bps(own_first_hop_bps: f64, advertised_second_hop_bps: f64) -> f64 {
    own_first_hop_bps.min(advertised_second_hop_bps).max(0.0)
}

/// An exponentially weighted moving average of a rate, fed with the bytes seen over each
/// advertisement period (the document leaves the averaging open; D277 names the weight).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateMeter {
    weight: f64,
    rate_bps: Option<f64>,
}

impl RateMeter {
    /// A meter giving the newest period `weight` (0 < weight ≤ 1; 1 keeps only the last
    /// period).
    ///
    /// # Panics
    /// If `weight` is not in (0, 1].
    #[must_use]
    pub fn new(weight: f64) -> Self {
        assert!(weight > 0.0 && weight <= 1.0, "meter weight {weight}");
        RateMeter {
            weight,
            rate_bps: None,
        }
    }

    /// Adds a period of `secs` seconds in which `bytes` were seen; the first period sets
    /// the average.
    pub fn add_period(&mut self, bytes: u64, secs: f64) {
        if secs <= 0.0 {
            return;
        }
        let sample = bytes as f64 * 8.0 / secs;
        self.rate_bps = Some(match self.rate_bps {
            None => sample,
            Some(r) => r + self.weight * (sample - r),
        });
    }

    /// The average, 0 before the first period.
    #[must_use]
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps.unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MBPS: f64 = 1e6;

    /// Acceptance 1: C = 10, T = 6 Mb/s, m = 2, neighbours metered at 1 and 0 Mb/s get 3 and
    /// 2 Mb/s; before anything is metered each gets 2 (= R/m).
    #[test]
    fn residual_shared_by_actual_use_plus_an_equal_share() {
        let adv = |from_n: f64, total: f64| {
            advertised_residual_bps(10.0 * MBPS, 6.0 * MBPS, from_n, total, 2, true) / MBPS
        };
        assert_eq!(adv(1.0 * MBPS, 1.0 * MBPS), 3.0);
        assert_eq!(adv(0.0, 1.0 * MBPS), 2.0);
        assert_eq!(adv(0.0, 0.0), 2.0);
    }

    /// Acceptance 1: with T = C and neighbours metered at 2 and 1 Mb/s, each gets 1.5.
    #[test]
    fn no_residual_shares_the_detour_traffic_equally() {
        for from_n in [2.0 * MBPS, 1.0 * MBPS] {
            let a = advertised_residual_bps(10.0 * MBPS, 10.0 * MBPS, from_n, 3.0 * MBPS, 2, true);
            assert_eq!(a / MBPS, 1.5);
        }
        // Overloaded (T > C): the same rule.
        let a = advertised_residual_bps(10.0 * MBPS, 12.0 * MBPS, 0.0, 3.0 * MBPS, 2, true);
        assert_eq!(a / MBPS, 1.5);
    }

    #[test]
    fn an_interface_out_of_push_or_without_users_advertises_nothing() {
        assert_eq!(advertised_residual_bps(10.0, 0.0, 0.0, 0.0, 2, false), 0.0);
        assert_eq!(advertised_residual_bps(10.0, 0.0, 0.0, 0.0, 0, true), 0.0);
    }

    /// Acceptance 1: min(3, 5) = 3.
    #[test]
    fn a_detour_has_the_smaller_residual_of_its_hops() {
        assert_eq!(detour_residual_bps(3.0 * MBPS, 5.0 * MBPS) / MBPS, 3.0);
        assert_eq!(detour_residual_bps(5.0 * MBPS, 3.0 * MBPS) / MBPS, 3.0);
        assert_eq!(detour_residual_bps(-1.0, 3.0), 0.0);
    }

    #[test]
    fn the_meter_averages_periods() {
        let mut m = RateMeter::new(0.5);
        assert_eq!(m.rate_bps(), 0.0);
        // 1250 bytes in 1 ms = 10 Mb/s, then nothing: halfway down.
        m.add_period(1_250, 0.001);
        assert!((m.rate_bps() - 10.0 * MBPS).abs() < 1e-6);
        m.add_period(0, 0.001);
        assert!((m.rate_bps() - 5.0 * MBPS).abs() < 1e-6);
        m.add_period(0, 0.0);
        assert!((m.rate_bps() - 5.0 * MBPS).abs() < 1e-6);
    }
}
