//! The TCP throughput equation of TFRC (RFC 3448 §3.1, after Padhye et al.), its inverse
//! (RFC 3448 §6.3.1) and the simple square-root bound (Tse eq. 1.1).

use pathpool_core::Dur;

/// Packets acknowledged by one TCP ACK: `b = 1` (RFC 3448 §3.1).
pub const PACKETS_PER_ACK: f64 = 1.0;
/// `t_RTO = 4·R` (RFC 3448 §3.1: "t_RTO = 4*R").
pub const RTO_RTTS: f64 = 4.0;

/// The loss event rates the inverse searches between: below `MIN_LOSS_EVENT_RATE` the
/// equation's rate exceeds any link this simulator models, and `p = 1` is the largest rate of
/// loss events there is.
const MIN_LOSS_EVENT_RATE: f64 = 1e-12;
const MAX_LOSS_EVENT_RATE: f64 = 1.0;

/// The allowed rate in bytes/s for packets of `segment_bytes`, round-trip time `rtt` and loss
/// event rate `p`:
/// X = s / (R·√(2bp/3) + t_RTO·3·√(3bp/8)·p·(1 + 32p²)) with b = 1, t_RTO = 4R
/// (RFC 3448 §3.1; Tse's printed eq. 2.1 is garbled, spec §4.3.3).
///
/// `p ≤ 0` (no loss seen) or a zero RTT gives infinity: the equation sets no limit there and
/// the sender's other caps (2·X_recv, slow start) apply.
#[must_use]
pub fn tfrc_rate_bytes_per_s(segment_bytes: u64, rtt: Dur, p: f64) -> f64 {
    let r_s = rtt.as_secs_f64();
    if p.is_nan() || p <= 0.0 || r_s <= 0.0 {
        return f64::INFINITY;
    }
    let b = PACKETS_PER_ACK;
    let t_rto_s = RTO_RTTS * r_s;
    let denom_s = r_s * libm::sqrt(2.0 * b * p / 3.0)
        + t_rto_s * 3.0 * libm::sqrt(3.0 * b * p / 8.0) * p * (1.0 + 32.0 * p * p);
    segment_bytes as f64 / denom_s
}

/// The loss event rate at which [`tfrc_rate_bytes_per_s`] gives `rate_bytes_per_s`: used to
/// seed the first loss interval as 1/p at the receive rate (RFC 3448 §6.3.1).
///
/// The equation falls strictly with p, so bisection (on log p, 200 steps) finds it; a rate
/// above the equation at p = 1e-12 gives 1e-12 and a rate below the equation at p = 1 gives
/// 1. A zero RTT or a rate that is not positive gives 1 (the most pessimistic answer).
#[must_use]
pub fn loss_event_rate_for_rate(segment_bytes: u64, rtt: Dur, rate_bytes_per_s: f64) -> f64 {
    if rtt == Dur::ZERO || rate_bytes_per_s.is_nan() || rate_bytes_per_s <= 0.0 {
        return MAX_LOSS_EVENT_RATE;
    }
    if rate_bytes_per_s >= tfrc_rate_bytes_per_s(segment_bytes, rtt, MIN_LOSS_EVENT_RATE) {
        return MIN_LOSS_EVENT_RATE;
    }
    if rate_bytes_per_s <= tfrc_rate_bytes_per_s(segment_bytes, rtt, MAX_LOSS_EVENT_RATE) {
        return MAX_LOSS_EVENT_RATE;
    }
    // Invariant: X(lo) > rate > X(hi).
    let mut lo = libm::log(MIN_LOSS_EVENT_RATE);
    let mut hi = libm::log(MAX_LOSS_EVENT_RATE);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if tfrc_rate_bytes_per_s(segment_bytes, rtt, libm::exp(mid)) > rate_bytes_per_s {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    libm::exp(0.5 * (lo + hi))
}

/// The simple TCP bound 1.5·√(2/3)·s/(R·√p) in bytes/s (Tse eq. 1.1, Floyd and Fall's
/// "TCP-friendly" bound); infinity for `p ≤ 0` or a zero RTT.
#[must_use]
pub fn simple_bound_bytes_per_s(segment_bytes: u64, rtt: Dur, p: f64) -> f64 {
    let r_s = rtt.as_secs_f64();
    if p.is_nan() || p <= 0.0 || r_s <= 0.0 {
        return f64::INFINITY;
    }
    1.5 * libm::sqrt(2.0 / 3.0) * segment_bytes as f64 / (r_s * libm::sqrt(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(got: f64, want: f64, rel: f64) -> bool {
        ((got - want) / want).abs() <= rel
    }

    /// Issue 20, acceptance 1: s = 1000 B, R = 100 ms (relative 1e-6).
    #[test]
    fn acceptance_vectors() {
        let rtt = Dur::from_ms(100);
        for (p, want) in [(0.01, 112_332.2), (0.001, 383_843.6), (1e-4, 1_223_643.6)] {
            let got = tfrc_rate_bytes_per_s(1000, rtt, p);
            assert!(close(got, want, 1e-6), "p = {p}: {got} vs {want}");
        }
    }

    #[test]
    fn no_loss_sets_no_limit() {
        assert!(tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), 0.0).is_infinite());
        assert!(tfrc_rate_bytes_per_s(1000, Dur::ZERO, 0.01).is_infinite());
    }

    #[test]
    fn inverse_recovers_p() {
        let rtt = Dur::from_ms(100);
        for p in [1e-6, 1e-4, 0.001, 0.01, 0.1, 0.5] {
            let x = tfrc_rate_bytes_per_s(1000, rtt, p);
            let back = loss_event_rate_for_rate(1000, rtt, x);
            assert!(close(back, p, 1e-9), "{p} -> {x} -> {back}");
        }
        assert_eq!(loss_event_rate_for_rate(1000, rtt, 0.0), 1.0);
        assert_eq!(
            loss_event_rate_for_rate(1000, rtt, 1e30),
            MIN_LOSS_EVENT_RATE
        );
        assert_eq!(loss_event_rate_for_rate(1000, rtt, 1.0), 1.0);
    }

    /// 1.5·√(2/3) = 1.2247; s = 1000 B, R = 0.1 s, p = 0.01 → 1000·1.2247/(0.1·0.1).
    #[test]
    fn simple_bound_vector() {
        let got = simple_bound_bytes_per_s(1000, Dur::from_ms(100), 0.01);
        assert!(close(got, 122_474.487_139_158_9, 1e-12), "{got}");
        // At small p the equation approaches the bound from below (its second term vanishes
        // faster): 1.5·√(2/3) = √(3/2) is exactly 1/√(2/3).
        let x = tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), 1e-8);
        let bound = simple_bound_bytes_per_s(1000, Dur::from_ms(100), 1e-8);
        assert!(x < bound && close(x, bound, 1e-3), "{x} vs {bound}");
    }

    proptest! {
        /// X falls with p and with R (issue 20, acceptance 2).
        #[test]
        fn rate_falls_with_p_and_rtt(
            p in 1e-7f64..0.9, dp in 1e-9f64..0.1,
            rtt_us in 100u64..2_000_000, drtt_us in 1u64..1_000_000,
        ) {
            let rtt = Dur::from_us(rtt_us);
            let x = tfrc_rate_bytes_per_s(1000, rtt, p);
            prop_assert!(tfrc_rate_bytes_per_s(1000, rtt, p + dp) < x);
            prop_assert!(tfrc_rate_bytes_per_s(1000, Dur::from_us(rtt_us + drtt_us), p) < x);
        }
    }
}
