//! The Rate Control Protocol's router side (N. Dukkipati, M. Kobayashi, R. Zhang-Shen,
//! N. McKeown, "Processor sharing flows in the Internet", IWQoS 2005; the INRPP document's
//! ref. [11] and its RCP baseline, spec 001 §4).
//!
//! Every link direction keeps one rate R, offered to every flow crossing it. Each control
//! period T = min(interval, d) it moves R by the spare capacity and the queue:
//!
//! R ← R · [1 + (T/d) · (α·(C − y) − β·q/d) / C]
//!
//! with C the capacity, y the input rate over the period, q the queue in bits and d the mean
//! round-trip time the packets carry; R stays within [min, C]. A packet's rate field becomes
//! min(field, R), the receiver echoes it and the sender paces at it.

use pathpool_core::Dur;

/// RCP's constants (`[rcp]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RcpParams {
    /// α, the weight of spare capacity (0.1 in the RCP paper).
    pub alpha: f64,
    /// β, the weight of the queue (1 in the RCP paper).
    pub beta: f64,
    /// The longest control period; the period is min(interval, d).
    pub interval: Dur,
    /// The smallest rate a link offers, bits per second.
    pub min_rate_bps: f64,
}

/// One RCP rate update (the equation above), clamped to [`RcpParams::min_rate_bps`, C].
///
/// `rate_bps`: R before the update; `capacity_bps`: C; `mean_rtt`: d; `input_bps`: y over
/// the period; `queue_bytes`: q. The period is min(interval, d).
#[must_use]
pub fn rcp_update(
    p: &RcpParams,
    rate_bps: f64,
    capacity_bps: f64,
    mean_rtt: Dur,
    input_bps: f64,
    queue_bytes: u64,
) -> f64 {
    let d = mean_rtt.as_secs_f64();
    if d <= 0.0 || capacity_bps <= 0.0 {
        return rate_bps.clamp(p.min_rate_bps.min(capacity_bps), capacity_bps);
    }
    let t = p.interval.min(mean_rtt).as_secs_f64();
    let queue_bits = queue_bytes as f64 * 8.0;
    let change =
        (t / d) * (p.alpha * (capacity_bps - input_bps) - p.beta * queue_bits / d) / capacity_bps;
    (rate_bps * (1.0 + change)).clamp(p.min_rate_bps.min(capacity_bps), capacity_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAPER: RcpParams = RcpParams {
        alpha: 0.1,
        beta: 1.0,
        interval: Dur::from_ms(10),
        min_rate_bps: 0.0,
    };

    /// Acceptance 1: C = 10 Mb/s, R = 5 Mb/s, T = 10 ms, d = 100 ms, y = 12 Mb/s, q = 25,000 B:
    /// 5 · [1 + 0.1 · (0.1 · (−2) − 2) / 10] = 4.89 Mb/s.
    #[test]
    fn the_worked_update() {
        let r = rcp_update(&PAPER, 5e6, 10e6, Dur::from_ms(100), 12e6, 25_000);
        assert!((r - 4.89e6).abs() < 1e-3, "{r}");
    }

    #[test]
    fn the_period_is_the_shorter_of_interval_and_rtt() {
        // d = 5 ms < interval: T/d = 1. Spare 5 Mb/s, empty queue: R · (1 + 0.1·5/10).
        let r = rcp_update(&PAPER, 4e6, 10e6, Dur::from_ms(5), 5e6, 0);
        assert!((r - 4.2e6).abs() < 1e-3, "{r}");
    }

    #[test]
    fn the_rate_stays_between_the_minimum_and_the_capacity() {
        let p = RcpParams {
            min_rate_bps: 1e5,
            ..PAPER
        };
        assert_eq!(rcp_update(&p, 9.9e6, 10e6, Dur::from_ms(10), 0.0, 0), 10e6);
        assert_eq!(
            rcp_update(&p, 2e5, 10e6, Dur::from_ms(10), 50e6, 10_000_000),
            1e5
        );
        // No RTT known yet: unchanged.
        assert_eq!(rcp_update(&p, 3e6, 10e6, Dur::ZERO, 0.0, 0), 3e6);
    }
}
