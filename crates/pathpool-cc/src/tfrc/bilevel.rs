//! The rate rules of multipath TFRC (Tse 2006): Bilevel TFRC's master (§3.2, eqs. 3.1 and
//! 3.3) and 1/N ("fractional") TFRC.
//!
//! Each subflow runs its own TFRC sender; its allowed rate X_i is its "nominal" rate R_i,
//! used only as a weight (spec §4.3: the already-scaled rate would freeze the ratios). The
//! master combines the subflows' loss event rates and RTTs, computes one total rate R_M with
//! the sender's update rule, and splits it in proportion to the nominal rates.

use pathpool_core::{Dur, Time};

use super::sender::{update_allowed_rate, RateInputs};

/// Which single RTT the master uses (Tse does not say, spec §4.3; decision D235).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MasterRtt {
    /// Σ RTT_i·R_i / Σ R_i (the spec's recommendation).
    #[default]
    RateWeightedMean,
    /// The largest subflow RTT.
    Max,
    /// The smallest subflow RTT.
    Min,
}

/// How the master combines the subflows' loss event rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LossCombination {
    /// f^M = Σ f_i·R_i / Σ R_f (Tse eq. 3.3) from the subflows' own histories.
    RateWeighted,
    /// f^M = Σ f_i (Tse §3.2, rejected: it overestimates loss); kept for comparison.
    Sum,
    /// f^M from one loss-interval history over the connection's packets, kept by the
    /// receiver (decision D264); eq. 3.3 until the first report of it. The default.
    #[default]
    ConnectionHistory,
}

/// Which receive rate caps a Bilevel subflow's nominal rate at twice it (RFC 3448 §4.3's
/// 2·X_recv; decision D263).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NominalCap {
    /// The connection's, Σ X_recv,f (the master's own cap): the nominal rate is only a
    /// weight in eq. 3.1, and what is sent is capped through R_M.
    #[default]
    Connection,
    /// The subflow's own X_recv,i, as a single RFC 3448 sender: a subflow receiving its
    /// share R'_i holds its weight near 2·R'_i, so the shares barely move.
    Subflow,
}

/// The Bilevel master's options.
#[derive(Debug, Clone, PartialEq)]
pub struct BilevelConfig {
    /// Packet size s in bytes.
    pub segment_bytes: u64,
    /// The master's RTT.
    pub master_rtt: MasterRtt,
    /// How subflow loss event rates combine.
    pub loss_combination: LossCombination,
    /// t_mbi of the master's rate floor s/t_mbi (RFC 3448 §4.3: 64 s).
    pub t_mbi: Dur,
    /// Which receive rate caps the subflows' nominal rates.
    pub nominal_cap: NominalCap,
}

impl Default for BilevelConfig {
    fn default() -> Self {
        BilevelConfig {
            segment_bytes: 1000,
            master_rtt: MasterRtt::default(),
            loss_combination: LossCombination::default(),
            t_mbi: Dur::from_secs(64),
            nominal_cap: NominalCap::default(),
        }
    }
}

/// What the master reads from subflow i.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubflowState {
    /// The subflow's own TFRC rate R_i (its sender's X), bytes/s.
    pub nominal_rate_bytes_per_s: f64,
    /// Its loss event rate f_i.
    pub loss_event_rate: f64,
    /// Its RTT estimate.
    pub rtt: Dur,
    /// Its receive rate X_recv,i, bytes/s.
    pub x_recv_bytes_per_s: f64,
}

fn total_nominal(subflows: &[SubflowState]) -> f64 {
    subflows.iter().map(|s| s.nominal_rate_bytes_per_s).sum()
}

/// The master's loss event rate f^M: eq. 3.3 (rate-weighted) or the rejected sum. With no
/// nominal rate at all the rate-weighted form falls back to the plain mean.
#[must_use]
pub fn combined_loss_event_rate(subflows: &[SubflowState], how: LossCombination) -> f64 {
    match how {
        LossCombination::Sum => subflows.iter().map(|s| s.loss_event_rate).sum(),
        LossCombination::RateWeighted | LossCombination::ConnectionHistory => {
            let total = total_nominal(subflows);
            if total > 0.0 {
                subflows
                    .iter()
                    .map(|s| s.loss_event_rate * s.nominal_rate_bytes_per_s)
                    .sum::<f64>()
                    / total
            } else if subflows.is_empty() {
                0.0
            } else {
                subflows.iter().map(|s| s.loss_event_rate).sum::<f64>() / subflows.len() as f64
            }
        }
    }
}

/// The master's single RTT; zero for no subflows. The rate-weighted mean falls back to the
/// plain mean when every nominal rate is zero.
#[must_use]
pub fn master_rtt(subflows: &[SubflowState], how: MasterRtt) -> Dur {
    let rtts = subflows.iter().map(|s| s.rtt);
    match how {
        MasterRtt::Max => rtts.max().unwrap_or(Dur::ZERO),
        MasterRtt::Min => rtts.min().unwrap_or(Dur::ZERO),
        MasterRtt::RateWeightedMean => {
            if subflows.is_empty() {
                return Dur::ZERO;
            }
            let total = total_nominal(subflows);
            let mean_s = if total > 0.0 {
                subflows
                    .iter()
                    .map(|s| s.rtt.as_secs_f64() * s.nominal_rate_bytes_per_s)
                    .sum::<f64>()
                    / total
            } else {
                subflows.iter().map(|s| s.rtt.as_secs_f64()).sum::<f64>() / subflows.len() as f64
            };
            Dur::from_secs_f64(mean_s)
        }
    }
}

/// Subflow i's share of the master rate: R'_i = R_M·R_i / Σ R_f (Tse eq. 3.1); equal shares
/// when every nominal rate is zero.
#[must_use]
pub fn allocate(master_rate_bytes_per_s: f64, subflows: &[SubflowState]) -> Vec<f64> {
    let total = total_nominal(subflows);
    subflows
        .iter()
        .map(|s| {
            if total > 0.0 {
                master_rate_bytes_per_s * s.nominal_rate_bytes_per_s / total
            } else {
                master_rate_bytes_per_s / subflows.len() as f64
            }
        })
        .collect()
}

/// The Bilevel TFRC master: the total rate R_M and its last-doubling time.
#[derive(Debug, Clone)]
pub struct BilevelMaster {
    cfg: BilevelConfig,
    rate_bytes_per_s: f64,
    tld: Option<Time>,
}

impl BilevelMaster {
    /// A master starting at `initial_rate_bytes_per_s` (the sum of the subflows' initial
    /// rates is the natural choice).
    #[must_use]
    pub fn new(cfg: BilevelConfig, initial_rate_bytes_per_s: f64) -> BilevelMaster {
        BilevelMaster {
            cfg,
            rate_bytes_per_s: initial_rate_bytes_per_s,
            tld: None,
        }
    }

    /// The master rate R_M, bytes/s.
    #[must_use]
    pub fn rate_bytes_per_s(&self) -> f64 {
        self.rate_bytes_per_s
    }

    /// Feedback reached one subflow at `now`: recompute R_M from f^M, the master RTT and
    /// Σ X_recv,i with RFC 3448 §4.3's rule (the equation with t_RTO = 4·RTT_M, capped at
    /// 2·Σ X_recv,i; slow start while f^M = 0), and return each subflow's paced rate R'_i.
    pub fn on_feedback(&mut self, now: Time, subflows: &[SubflowState]) -> Vec<f64> {
        let f_m = combined_loss_event_rate(subflows, self.cfg.loss_combination);
        self.on_feedback_at_loss(now, subflows, f_m)
    }

    /// [`BilevelMaster::on_feedback`] with f^M given (a connection-wide loss history's).
    pub fn on_feedback_at_loss(
        &mut self,
        now: Time,
        subflows: &[SubflowState],
        master_loss_event_rate: f64,
    ) -> Vec<f64> {
        let inputs = RateInputs {
            segment_bytes: self.cfg.segment_bytes,
            rtt: master_rtt(subflows, self.cfg.master_rtt),
            loss_event_rate: master_loss_event_rate,
            x_recv_bytes_per_s: subflows.iter().map(|s| s.x_recv_bytes_per_s).sum(),
            t_mbi: self.cfg.t_mbi,
            cap_by_receive_rate: true,
        };
        self.rate_bytes_per_s =
            update_allowed_rate(self.rate_bytes_per_s, &mut self.tld, now, &inputs);
        allocate(self.rate_bytes_per_s, subflows)
    }
}

/// Where 1/N TFRC applies the 2·X_recv cap (decision D236).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecvCap {
    /// On what is sent: send min(X/N, 2·X_recv); the nominal X runs uncapped (its sender has
    /// `cap_by_receive_rate = false`), so it can reach ≈ N× the path, as Tse reports.
    #[default]
    Sent,
    /// On the nominal rate, as plain RFC 3448 (its sender keeps the cap); send X/N.
    Nominal,
}

/// 1/N TFRC: the rate subflow i sends at, from its nominal TFRC rate, the subflow count
/// `n` (≥ 1; 0 is read as 1) and its receive rate.
#[must_use]
pub fn fractional_rate_bytes_per_s(
    nominal_bytes_per_s: f64,
    n: usize,
    x_recv_bytes_per_s: f64,
    cap: RecvCap,
) -> f64 {
    let share = nominal_bytes_per_s / n.max(1) as f64;
    match cap {
        RecvCap::Sent => share.min(2.0 * x_recv_bytes_per_s),
        RecvCap::Nominal => share,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfrc::equation::tfrc_rate_bytes_per_s;
    use proptest::prelude::*;

    const MBPS: f64 = 1e6 / 8.0;

    fn sub(rate_mbps: f64, f: f64, rtt_ms: u64) -> SubflowState {
        SubflowState {
            nominal_rate_bytes_per_s: rate_mbps * MBPS,
            loss_event_rate: f,
            rtt: Dur::from_ms(rtt_ms),
            x_recv_bytes_per_s: rate_mbps * MBPS,
        }
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs().max(1e-300)
    }

    /// Issue 20, acceptance 1: R 3, 1 Mb/s, f 0.01, 0.05 → f^M 0.02 (Σ 0.06); R_M 2 Mb/s →
    /// 1.5, 0.5 Mb/s.
    #[test]
    fn acceptance_vector() {
        let subs = [sub(3.0, 0.01, 50), sub(1.0, 0.05, 50)];
        assert!(close(
            combined_loss_event_rate(&subs, LossCombination::RateWeighted),
            0.02
        ));
        assert!(close(
            combined_loss_event_rate(&subs, LossCombination::Sum),
            0.06
        ));
        let shares = allocate(2.0 * MBPS, &subs);
        assert!(
            close(shares[0], 1.5 * MBPS) && close(shares[1], 0.5 * MBPS),
            "{shares:?}"
        );
    }

    #[test]
    fn master_rtt_choices() {
        let subs = [sub(3.0, 0.01, 20), sub(1.0, 0.05, 100)];
        // (3·20 + 1·100)/4 = 40 ms.
        assert_eq!(
            master_rtt(&subs, MasterRtt::RateWeightedMean),
            Dur::from_ms(40)
        );
        assert_eq!(master_rtt(&subs, MasterRtt::Max), Dur::from_ms(100));
        assert_eq!(master_rtt(&subs, MasterRtt::Min), Dur::from_ms(20));
    }

    #[test]
    fn master_rate_is_the_equation_at_f_m_capped_by_twice_the_receive_rate() {
        let subs = [sub(3.0, 0.01, 100), sub(1.0, 0.05, 100)];
        let mut m = BilevelMaster::new(BilevelConfig::default(), 1000.0);
        let shares = m.on_feedback(Time::from_ms(0), &subs);
        let want = tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), 0.02);
        assert!(close(m.rate_bytes_per_s(), want));
        assert!(close(shares[0], 0.75 * want) && close(shares[1], 0.25 * want));
        // Σ X_recv = 20 kB/s: the cap 40 kB/s binds.
        let low: Vec<SubflowState> = subs
            .iter()
            .map(|s| SubflowState {
                x_recv_bytes_per_s: 10_000.0,
                ..*s
            })
            .collect();
        m.on_feedback(Time::from_ms(10), &low);
        assert!(close(m.rate_bytes_per_s(), 40_000.0));
        // With the rejected sum the master sees p = 0.06.
        let cfg = BilevelConfig {
            loss_combination: LossCombination::Sum,
            ..BilevelConfig::default()
        };
        let mut m = BilevelMaster::new(cfg, 1000.0);
        m.on_feedback(Time::from_ms(0), &subs);
        assert!(close(
            m.rate_bytes_per_s(),
            tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), 0.06)
        ));
    }

    #[test]
    fn master_slow_starts_without_loss() {
        let subs = [sub(1.0, 0.0, 100), sub(1.0, 0.0, 100)];
        let mut m = BilevelMaster::new(BilevelConfig::default(), 5000.0);
        m.on_feedback(Time::from_ms(0), &subs);
        assert!(close(m.rate_bytes_per_s(), 10_000.0));
        m.on_feedback(Time::from_ms(50), &subs);
        assert!(
            close(m.rate_bytes_per_s(), 10_000.0),
            "at most one doubling per RTT"
        );
        m.on_feedback(Time::from_ms(100), &subs);
        assert!(close(m.rate_bytes_per_s(), 20_000.0));
    }

    #[test]
    fn fractional_rule() {
        // Nominal 300 kB/s over 3 subflows: 100 kB/s, capped at 2·X_recv = 80 kB/s.
        assert_eq!(
            fractional_rate_bytes_per_s(300_000.0, 3, 40_000.0, RecvCap::Sent),
            80_000.0
        );
        assert_eq!(
            fractional_rate_bytes_per_s(300_000.0, 3, 60_000.0, RecvCap::Sent),
            100_000.0
        );
        assert_eq!(
            fractional_rate_bytes_per_s(300_000.0, 3, 40_000.0, RecvCap::Nominal),
            100_000.0
        );
        assert_eq!(
            fractional_rate_bytes_per_s(300_000.0, 0, 1e9, RecvCap::Sent),
            300_000.0
        );
    }

    fn arb_subflows() -> impl Strategy<Value = Vec<SubflowState>> {
        prop::collection::vec((1e2f64..1e8, 0.0f64..1.0, 1u64..1000), 1..16).prop_map(|v| {
            v.into_iter()
                .map(|(r, f, ms)| SubflowState {
                    nominal_rate_bytes_per_s: r,
                    loss_event_rate: f,
                    rtt: Dur::from_ms(ms),
                    x_recv_bytes_per_s: r,
                })
                .collect()
        })
    }

    proptest! {
        /// Σ R'_i = R_M (issue 20, acceptance 2).
        #[test]
        fn shares_sum_to_the_master_rate(subs in arb_subflows(), r_m in 1.0f64..1e9) {
            let total: f64 = allocate(r_m, &subs).iter().sum();
            prop_assert!((total - r_m).abs() <= 1e-9 * r_m);
        }

        /// min f_i ≤ f^M ≤ max f_i (issue 20, acceptance 2).
        #[test]
        fn combined_loss_lies_between_the_subflows(subs in arb_subflows()) {
            let f = combined_loss_event_rate(&subs, LossCombination::RateWeighted);
            let lo = subs.iter().map(|s| s.loss_event_rate).fold(f64::INFINITY, f64::min);
            let hi = subs.iter().map(|s| s.loss_event_rate).fold(0.0, f64::max);
            prop_assert!(lo - 1e-12 <= f && f <= hi + 1e-12, "{lo} <= {f} <= {hi}");
        }
    }
}
