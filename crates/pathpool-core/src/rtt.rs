//! Round-trip time estimation and the retransmission timeout (RFC 6298).

use serde::{Deserialize, Serialize};

use crate::time::Dur;

/// Parameters of the retransmission timer (RFC 6298 §2 and §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RttConfig {
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    #[serde(default = "RttConfig::default_initial_rto")]
    pub initial_rto: Dur,
    /// Lower bound on the RTO. RFC 6298 §2.4 says 1 s; the default follows Linux's 200 ms
    /// (`TCP_RTO_MIN`), the value most simulation studies use (see docs/decisions.md).
    #[serde(default = "RttConfig::default_min_rto")]
    pub min_rto: Dur,
    /// Upper bound on the RTO, also capping exponential backoff (RFC 6298 §2.5: at least 60 s).
    #[serde(default = "RttConfig::default_max_rto")]
    pub max_rto: Dur,
    /// Clock granularity G in `RTO = SRTT + max(G, 4·RTTVAR)` (RFC 6298 §2.2–2.3).
    #[serde(default = "RttConfig::default_granularity")]
    pub granularity: Dur,
    /// Where the exponential backoff stops doubling, if sooner than `max_rto`: a backed-off
    /// RTO grows to this and no further, and never below the RTO without backoff (so a long
    /// path's estimate is not cut). `None` (TCP's, RFC 6298 §5.5): up to `max_rto`. mmTP
    /// bounds it (D117).
    #[serde(default)]
    pub backoff_limit: Option<Dur>,
}

impl RttConfig {
    fn default_initial_rto() -> Dur {
        Dur::from_secs(1)
    }
    fn default_min_rto() -> Dur {
        Dur::from_ms(200)
    }
    fn default_max_rto() -> Dur {
        Dur::from_secs(60)
    }
    fn default_granularity() -> Dur {
        Dur::from_ms(1)
    }
}

impl Default for RttConfig {
    fn default() -> Self {
        RttConfig {
            initial_rto: Self::default_initial_rto(),
            min_rto: Self::default_min_rto(),
            max_rto: Self::default_max_rto(),
            granularity: Self::default_granularity(),
            backoff_limit: None,
        }
    }
}

/// SRTT/RTTVAR/RTO state of one path, updated per RFC 6298 §2 with α = 1/8 and β = 1/4, in
/// integer picoseconds so every machine computes the same values.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    config: RttConfig,
    srtt: Option<Dur>,
    rttvar: Dur,
    min_rtt: Dur,
    latest: Dur,
    /// Exponential backoff shift applied to the RTO (RFC 6298 §5.5); reset by a new sample.
    backoff: u32,
    /// The RTO for the fields above. Senders read it on every ACK that restarts the timer,
    /// far more often than it changes, so it is recomputed only when they change.
    rto: Dur,
}

impl RttEstimator {
    /// A fresh estimator with no samples.
    #[must_use]
    pub fn new(config: RttConfig) -> Self {
        let mut e = RttEstimator {
            config,
            srtt: None,
            rttvar: Dur::ZERO,
            min_rtt: Dur::MAX,
            latest: Dur::ZERO,
            backoff: 0,
            rto: Dur::ZERO,
        };
        e.rto = e.compute_rto();
        e
    }

    /// Feeds one RTT measurement (RFC 6298 §2.2 for the first, §2.3 for later ones) and clears
    /// the backoff: a valid sample means the path delivers again (Karn's algorithm is satisfied
    /// by the timestamp echo, RFC 7323 §4).
    pub fn on_sample(&mut self, r: Dur) {
        self.latest = r;
        self.min_rtt = self.min_rtt.min(r);
        self.backoff = 0;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let diff = Dur(srtt.0.abs_diff(r.0));
                // RTTVAR <- (1 - 1/4)·RTTVAR + 1/4·|SRTT - R'| ; SRTT <- (1 - 1/8)·SRTT + 1/8·R'
                self.rttvar = Dur((3 * self.rttvar.0 + diff.0) / 4);
                self.srtt = Some(Dur((7 * srtt.0 + r.0) / 8));
            }
        }
        self.rto = self.compute_rto();
    }

    /// Doubles the RTO after a timeout (RFC 6298 §5.5), up to `max_rto` or the backoff
    /// limit; at the bound the backoff count stays.
    pub fn back_off(&mut self) {
        self.backoff += 1;
        let rto = self.compute_rto();
        if rto > self.rto {
            self.rto = rto;
        } else {
            self.backoff -= 1;
        }
    }

    /// The current retransmission timeout including backoff, clamped to [min_rto, max_rto].
    #[must_use]
    #[inline]
    pub fn rto(&self) -> Dur {
        self.rto
    }

    fn compute_rto(&self) -> Dur {
        let base = match self.srtt {
            None => self.config.initial_rto,
            Some(srtt) => srtt + self.config.granularity.max(self.rttvar * 4),
        };
        let base = base.max(self.config.min_rto).min(self.config.max_rto);
        let backed_off = base
            .saturating_mul(1u64 << self.backoff.min(32))
            .min(self.config.max_rto);
        match self.config.backoff_limit {
            Some(limit) => backed_off.min(limit.max(base)),
            None => backed_off,
        }
    }

    /// The smoothed RTT, if any sample has been taken.
    #[must_use]
    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }
    /// The RTT variation estimate.
    #[must_use]
    pub fn rttvar(&self) -> Dur {
        self.rttvar
    }
    /// The smallest sample seen so far ([`Dur::MAX`] before the first).
    #[must_use]
    pub fn min_rtt(&self) -> Dur {
        self.min_rtt
    }
    /// The most recent sample.
    #[must_use]
    pub fn latest(&self) -> Dur {
        self.latest
    }
    /// How many times the RTO has been doubled since the last sample.
    #[must_use]
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &RttConfig {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(RttConfig::default())
    }

    #[test]
    fn initial_rto_is_one_second() {
        assert_eq!(est().rto(), Dur::from_secs(1));
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = est();
        e.on_sample(Dur::from_ms(100));
        assert_eq!(e.srtt(), Some(Dur::from_ms(100)));
        assert_eq!(e.rttvar(), Dur::from_ms(50));
        // RTO = 100 + 4·50 = 300 ms.
        assert_eq!(e.rto(), Dur::from_ms(300));
    }

    #[test]
    fn later_samples_use_alpha_and_beta() {
        let mut e = est();
        e.on_sample(Dur::from_ms(100));
        e.on_sample(Dur::from_ms(180));
        // RTTVAR = 3/4·50 + 1/4·80 = 57.5 ms; SRTT = 7/8·100 + 1/8·180 = 110 ms.
        assert_eq!(e.rttvar(), Dur::from_us(57_500));
        assert_eq!(e.srtt(), Some(Dur::from_ms(110)));
        assert_eq!(e.rto(), Dur::from_ms(340));
        assert_eq!(e.min_rtt(), Dur::from_ms(100));
    }

    #[test]
    fn min_rto_and_backoff() {
        let mut e = est();
        e.on_sample(Dur::from_ms(10));
        for _ in 0..20 {
            e.on_sample(Dur::from_ms(10));
        }
        assert_eq!(e.rto(), Dur::from_ms(200), "clamped to min_rto");
        e.back_off();
        assert_eq!(e.rto(), Dur::from_ms(400));
        e.back_off();
        assert_eq!(e.rto(), Dur::from_ms(800));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Dur::from_secs(60), "capped at max_rto");
        e.on_sample(Dur::from_ms(10));
        assert_eq!(e.backoff(), 0, "a new sample clears the backoff");
    }

    #[test]
    fn a_backoff_limit_stops_the_doubling_but_never_cuts_the_estimate() {
        let limited = RttConfig {
            backoff_limit: Some(Dur::from_secs(2)),
            ..RttConfig::default()
        };
        let mut e = RttEstimator::new(limited);
        e.on_sample(Dur::from_ms(100));
        // SRTT 100 ms + 4 · RTTVAR 50 ms = 300 ms.
        assert_eq!(e.rto(), Dur::from_ms(300));
        let mut seen = Vec::new();
        for _ in 0..5 {
            e.back_off();
            seen.push(e.rto());
        }
        let ms = Dur::from_ms;
        assert_eq!(seen, vec![ms(600), ms(1200), ms(2000), ms(2000), ms(2000)]);
        assert_eq!(e.backoff(), 3, "the count stops with the RTO");
        // A path whose estimate is above the limit keeps its estimate, without backoff.
        let mut long = RttEstimator::new(limited);
        long.on_sample(Dur::from_ms(1500));
        assert_eq!(long.rto(), Dur::from_ms(4500));
        long.back_off();
        assert_eq!(long.rto(), Dur::from_ms(4500));
        assert_eq!(long.backoff(), 0);
    }
}
