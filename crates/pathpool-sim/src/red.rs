//! Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1993), with the optional "gentle" extension (Floyd, 2000).

use pathpool_core::{Dur, Rng, Time};

/// RED parameters, in the unit the thresholds were given in (packets or bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RedParams {
    /// Thresholds count bytes (`true`) or packets (`false`).
    pub(crate) byte_mode: bool,
    /// Lower threshold on the average queue.
    pub(crate) min_th: f64,
    /// Upper threshold on the average queue.
    pub(crate) max_th: f64,
    /// Drop probability at `max_th`.
    pub(crate) max_p: f64,
    /// EWMA weight w_q of the average queue.
    pub(crate) weight: f64,
    /// Ramp the drop probability from `max_p` to 1 between `max_th` and `2·max_th` instead of
    /// dropping everything above `max_th`.
    pub(crate) gentle: bool,
    /// Typical packet size in bytes: sets the idle-time decay and, in byte mode, scales the
    /// drop probability by `size / mean_packet` (F&J §11).
    pub(crate) mean_packet_bytes: f64,
    /// Transmission time of a typical packet, `s` in F&J's idle-time rule.
    pub(crate) mean_tx_time: Dur,
}

/// RED state of one queue.
#[derive(Clone, Debug)]
pub(crate) struct Red {
    p: RedParams,
    avg: f64,
    /// Packets since the last drop while `min_th <= avg` (F&J's `count`; -1 when below).
    count: i64,
}

impl Red {
    pub(crate) fn new(p: RedParams) -> Self {
        Red {
            p,
            avg: 0.0,
            count: -1,
        }
    }

    /// The current average queue.
    #[cfg(test)]
    pub(crate) fn avg(&self) -> f64 {
        self.avg
    }

    /// Decides whether to drop an arriving packet of `size` bytes (F&J Fig. 2). `queue` is
    /// the instantaneous queue in the threshold unit; `idle_since` is when the queue became
    /// empty if it is empty now.
    pub(crate) fn should_drop(
        &mut self,
        now: Time,
        queue: f64,
        idle_since: Option<Time>,
        size: u32,
        rng: &mut Rng,
    ) -> bool {
        let w = self.p.weight;
        match idle_since {
            Some(t) => {
                // F&J: m = f(time - q_time): the packets that could have been sent while idle.
                let idle = now.saturating_since(t).as_ps() as f64;
                let m = idle / (self.p.mean_tx_time.as_ps().max(1) as f64);
                self.avg *= libm::pow(1.0 - w, m);
            }
            None => self.avg = (1.0 - w) * self.avg + w * queue,
        }
        let (min_th, max_th, max_p) = (self.p.min_th, self.p.max_th, self.p.max_p);
        let pb = if self.avg < min_th {
            self.count = -1;
            return false;
        } else if self.avg < max_th {
            max_p * (self.avg - min_th) / (max_th - min_th)
        } else if self.p.gentle && self.avg < 2.0 * max_th {
            max_p + (1.0 - max_p) * (self.avg - max_th) / max_th
        } else {
            self.count = 0;
            return true;
        };
        let pb = if self.p.byte_mode {
            (pb * f64::from(size) / self.p.mean_packet_bytes).min(1.0)
        } else {
            pb
        };
        self.count += 1;
        // Spread drops evenly: pa = pb / (1 - count·pb).
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 {
            1.0
        } else {
            (pb / denom).min(1.0)
        };
        if rng.uniform() < pa {
            self.count = 0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> RedParams {
        RedParams {
            byte_mode: false,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.002,
            gentle: false,
            mean_packet_bytes: 1500.0,
            mean_tx_time: Dur::from_us(12),
        }
    }

    #[test]
    fn average_follows_the_ewma() {
        let mut red = Red::new(params());
        let mut rng = Rng::seed_from_u64(1);
        assert!(!red.should_drop(Time::ZERO, 10.0, None, 1500, &mut rng));
        assert!((red.avg() - 0.02).abs() < 1e-12, "avg = w·q = 0.002·10");
        red.should_drop(Time::ZERO, 10.0, None, 1500, &mut rng);
        assert!((red.avg() - (0.998 * 0.02 + 0.02)).abs() < 1e-12);
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut red = Red::new(params());
        red.avg = 10.0;
        let mut rng = Rng::seed_from_u64(1);
        // 1000 packet times idle: avg · 0.998^1000 ≈ 1.35.
        red.should_drop(
            Time::from_ps(12_000_000_000),
            0.0,
            Some(Time::ZERO),
            1500,
            &mut rng,
        );
        let want = 10.0 * 0.998f64.powi(1000);
        assert!((red.avg() - want).abs() < 1e-9, "{} vs {want}", red.avg());
    }

    #[test]
    fn drop_rate_between_thresholds_matches_theory() {
        // With avg held at the midpoint, pb = 0.05. F&J Fig. 2 increments count before
        // computing pa = pb / (1 - count·pb), so the n-th packet after a drop is dropped with
        // probability q_n = pb / (1 - n·pb) (1 once n·pb >= 1). The mean gap E[X] follows.
        let pb = 0.05;
        let (mut survive, mut mean_gap) = (1.0, 0.0);
        for n in 1..=20 {
            let q = if 1.0 - n as f64 * pb <= 0.0 {
                1.0
            } else {
                (pb / (1.0 - n as f64 * pb)).min(1.0)
            };
            mean_gap += n as f64 * survive * q;
            survive *= 1.0 - q;
        }
        let mut red = Red::new(params());
        red.avg = 10.0;
        red.count = 0;
        let mut rng = Rng::seed_from_u64(7);
        let n = 200_000;
        let drops = (0..n)
            .filter(|_| {
                red.avg = 10.0;
                red.should_drop(Time::ZERO, 10.0, None, 1500, &mut rng)
            })
            .count();
        let rate = drops as f64 / n as f64;
        assert!(
            (rate - 1.0 / mean_gap).abs() < 0.003,
            "drop rate {rate} vs {}",
            1.0 / mean_gap
        );
    }

    #[test]
    fn above_max_th_drops_unless_gentle() {
        let mut red = Red::new(params());
        red.avg = 20.0;
        let mut rng = Rng::seed_from_u64(1);
        assert!(red.should_drop(Time::ZERO, 20.0, None, 1500, &mut rng));
        let mut gentle = Red::new(RedParams {
            gentle: true,
            ..params()
        });
        gentle.avg = 20.0;
        let n = 10_000;
        let drops = (0..n)
            .filter(|_| gentle.should_drop(Time::ZERO, 20.0, None, 1500, &mut rng))
            .count();
        assert!(
            drops > 0 && drops < n,
            "gentle drops probabilistically: {drops}"
        );
        gentle.avg = 31.0;
        assert!(
            gentle.should_drop(Time::ZERO, 31.0, None, 1500, &mut rng),
            "beyond 2·max_th"
        );
    }

    #[test]
    fn below_min_th_never_drops() {
        let mut red = Red::new(params());
        let mut rng = Rng::seed_from_u64(1);
        assert!((0..1000).all(|_| !red.should_drop(Time::ZERO, 4.0, None, 1500, &mut rng)));
    }
}
