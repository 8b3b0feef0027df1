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
//!
//! [`RcpLink`] is one link direction's controller, sans-IO: its driver reports each packet
//! (size and the RTT it carries) and, when [`RcpLink::poll_timeout`] says, the bytes the
//! link has accepted so far and its queue. The paper gives the equation, not how d is
//! averaged or where R starts; those follow the RCP authors' simulator code, as the ns-3
//! port the INRPP document used does (D293).

use pathpool_core::{Dur, Time};

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
    /// R at the start, as a fraction of C (0.05: the RCP authors' `INIT_RATE_FACT`).
    pub initial_rate_fraction: f64,
    /// d at the start, before any packet has carried an RTT (0.2 s in the RCP authors'
    /// code).
    pub initial_rtt: Dur,
}

impl RcpParams {
    /// The RCP paper's α and β, the authors' code's period, start and floor (D293).
    pub const PAPER: RcpParams = RcpParams {
        alpha: 0.1,
        beta: 1.0,
        interval: Dur::from_ms(10),
        min_rate_bps: 128_000.0,
        initial_rate_fraction: 0.05,
        initial_rtt: Dur::from_ms(200),
    };
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

/// One link direction's RCP controller.
#[derive(Clone, Debug)]
pub struct RcpLink {
    params: RcpParams,
    capacity_bps: f64,
    rate_bps: f64,
    /// d, in seconds.
    avg_rtt_s: f64,
    /// The byte-weighted mean RTT of the latest period whose packets carried one, seconds
    /// (0 before any).
    period_rtt_s: f64,
    period_start: Time,
    period_end: Time,
    /// The driver's count of accepted bytes when the period started.
    input_mark: u64,
    /// Σ rtt·bytes and Σ bytes of this period's packets that carry an RTT.
    rtt_byte_s: f64,
    rtt_bytes: u64,
}

impl RcpLink {
    /// A link of capacity `capacity_bps` whose first period starts at `now`, when the
    /// link has accepted `input_bytes`.
    #[must_use]
    pub fn new(params: RcpParams, capacity_bps: f64, now: Time, input_bytes: u64) -> Self {
        let floor = params.min_rate_bps.min(capacity_bps);
        let avg_rtt_s = params.initial_rtt.as_secs_f64();
        let mut link = RcpLink {
            params,
            capacity_bps,
            rate_bps: (params.initial_rate_fraction * capacity_bps).clamp(floor, capacity_bps),
            avg_rtt_s,
            period_rtt_s: 0.0,
            period_start: now,
            period_end: now,
            input_mark: input_bytes,
            rtt_byte_s: 0.0,
            rtt_bytes: 0,
        };
        link.period_end = now + link.period();
        link
    }

    /// R, bits per second.
    #[must_use]
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// d, the mean RTT the link's packets carry.
    #[must_use]
    pub fn avg_rtt(&self) -> Dur {
        Dur::from_secs_f64(self.avg_rtt_s)
    }

    /// T = min(interval, d).
    fn period(&self) -> Dur {
        self.params.interval.min(self.avg_rtt())
    }

    /// A packet of `bytes` entered the link, carrying the sender's RTT estimate (`None` or
    /// zero: it carries none, and does not count in d).
    pub fn on_packet(&mut self, bytes: u32, rtt: Option<Dur>) {
        if let Some(r) = rtt.filter(|r| *r > Dur::ZERO) {
            self.rtt_byte_s += r.as_secs_f64() * f64::from(bytes);
            self.rtt_bytes += u64::from(bytes);
        }
    }

    /// The rate a packet leaves with: min(its field, R) (`None`: no link has set it yet).
    #[must_use]
    pub fn stamp(&self, field_bps: Option<f64>) -> f64 {
        field_bps.map_or(self.rate_bps, |f| f.min(self.rate_bps))
    }

    /// When the current period ends.
    #[must_use]
    pub fn poll_timeout(&self) -> Time {
        self.period_end
    }

    /// Ends the period at `now` (nothing before its end): `input_bytes` is the driver's
    /// count of bytes the link has accepted since it started, `queue_bytes` its queue now.
    /// Updates d, then R, and starts the next period.
    pub fn handle_timeout(&mut self, now: Time, input_bytes: u64, queue_bytes: u64) {
        if now < self.period_end {
            return;
        }
        let elapsed_s = now.saturating_since(self.period_start).as_secs_f64();
        let input_bps = if elapsed_s > 0.0 {
            input_bytes.saturating_sub(self.input_mark) as f64 * 8.0 / elapsed_s
        } else {
            0.0
        };
        if self.rtt_bytes > 0 {
            self.period_rtt_s = self.rtt_byte_s / self.rtt_bytes as f64;
        }
        let m = self.period_rtt_s;
        if m > 0.0 {
            // The authors' running average: a longer RTT is followed at once (gain T/d), a
            // shorter one in proportion to the share of the link a flow takes (R/C) and to
            // how much shorter it is, so a few short flows do not shorten every period.
            let t_over_d = self.period().as_secs_f64() / self.avg_rtt_s;
            let gain = if m >= self.avg_rtt_s {
                t_over_d
            } else {
                (self.rate_bps / self.capacity_bps) * (m / self.avg_rtt_s) * t_over_d
            };
            let gain = gain.min(1.0);
            self.avg_rtt_s = gain * m + (1.0 - gain) * self.avg_rtt_s;
        }
        self.rate_bps = rcp_update(
            &self.params,
            self.rate_bps,
            self.capacity_bps,
            self.avg_rtt(),
            input_bps,
            queue_bytes,
        );
        self.period_start = now;
        self.period_end = now + self.period();
        self.input_mark = input_bytes;
        self.rtt_byte_s = 0.0;
        self.rtt_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAPER: RcpParams = RcpParams {
        min_rate_bps: 0.0,
        ..RcpParams::PAPER
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

    #[test]
    fn a_link_starts_at_its_initial_fraction_and_period() {
        let l = RcpLink::new(RcpParams::PAPER, 10e6, Time::from_secs(1), 500);
        assert_eq!(l.rate_bps(), 0.5e6);
        assert_eq!(l.avg_rtt(), Dur::from_ms(200));
        // T = min(10 ms, 200 ms).
        assert_eq!(l.poll_timeout(), Time::from_ms(1010));
        assert_eq!(l.stamp(None), 0.5e6);
        assert_eq!(l.stamp(Some(0.2e6)), 0.2e6);
        assert_eq!(l.stamp(Some(9e6)), 0.5e6);
    }

    #[test]
    fn an_idle_link_climbs_by_alpha_per_rtt_and_stops_at_capacity() {
        let mut l = RcpLink::new(RcpParams::PAPER, 10e6, Time::ZERO, 0);
        // No input, no queue, d = 200 ms, T = 10 ms: R ← R·(1 + 0.05·0.1·10/10).
        l.handle_timeout(Time::from_ms(10), 0, 0);
        assert!(
            (l.rate_bps() - 0.5e6 * 1.005).abs() < 1e-6,
            "{}",
            l.rate_bps()
        );
        for _ in 0..5000 {
            l.handle_timeout(l.poll_timeout(), 0, 0);
        }
        assert_eq!(l.rate_bps(), 10e6);
    }

    #[test]
    fn the_input_rate_is_counted_over_the_period_and_a_full_link_falls_back() {
        let mut l = RcpLink::new(RcpParams::PAPER, 10e6, Time::ZERO, 1_000);
        // 25,000 bytes in 10 ms: y = 20 Mb/s, twice C, and 25,000 bytes queued:
        // R ← R·[1 + 0.05·(0.1·(10 − 20)·1e6 − 1·200,000/0.2)/1e7] = R·(1 − 0.01).
        l.handle_timeout(Time::from_ms(10), 26_000, 25_000);
        assert!(
            (l.rate_bps() - 0.5e6 * 0.99).abs() < 1e-6,
            "{}",
            l.rate_bps()
        );
    }

    #[test]
    fn d_follows_a_longer_rtt_at_once_and_a_shorter_one_slowly() {
        let mut l = RcpLink::new(RcpParams::PAPER, 10e6, Time::ZERO, 0);
        // Two packets carrying 400 ms, and one carrying no RTT (not counted).
        l.on_packet(1500, Some(Dur::from_ms(400)));
        l.on_packet(500, Some(Dur::from_ms(400)));
        l.on_packet(40, None);
        l.handle_timeout(Time::from_ms(10), 0, 0);
        // m = 0.4 ≥ d = 0.2: gain T/d = 0.05; d = 0.05·0.4 + 0.95·0.2 = 0.21.
        assert!((l.avg_rtt().as_secs_f64() - 0.21).abs() < 1e-9);
        // A shorter RTT, 0.105 s: gain = (R/C)·(m/d)·(T/d) with R/C ≈ 0.05.
        let r_over_c = l.rate_bps() / 10e6;
        l.on_packet(1500, Some(Dur::from_ms(105)));
        l.handle_timeout(Time::from_ms(20), 0, 0);
        let gain = r_over_c * 0.5 * (0.01 / 0.21);
        let want = gain * 0.105 + (1.0 - gain) * 0.21;
        assert!((l.avg_rtt().as_secs_f64() - want).abs() < 1e-9);
        // A period without RTTs repeats the last period's mean.
        l.handle_timeout(Time::from_ms(30), 0, 0);
        assert!(l.avg_rtt().as_secs_f64() < want);
    }
}
