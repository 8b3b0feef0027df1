//! The loss-interval history and the average loss interval (RFC 3448 §5.4; Tse eq. 3.2).

use std::collections::VecDeque;

/// RFC 3448 §5.4's recommended history length: n = 8.
pub const DEFAULT_LOSS_INTERVALS: usize = 8;

/// An invalid history length: n must be even (its weights split it in halves) and at least 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadIntervalCount(pub usize);

impl std::fmt::Display for BadIntervalCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "loss_intervals = {}: must be an even number of at least 2",
            self.0
        )
    }
}

impl std::error::Error for BadIntervalCount {}

/// The weights w_1..w_n: 1 for i ≤ n/2, then 1 − (i − n/2)/(n/2 + 1) (RFC 3448 §5.4; Tse
/// eq. 3.2); for n = 8: 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2.
pub fn weights(n: usize) -> Result<Vec<f64>, BadIntervalCount> {
    if n < 2 || n % 2 != 0 {
        return Err(BadIntervalCount(n));
    }
    let half = (n / 2) as f64;
    Ok((1..=n)
        .map(|i| {
            if i as f64 <= half {
                1.0
            } else {
                1.0 - (i as f64 - half) / (half + 1.0)
            }
        })
        .collect())
}

/// The last n closed loss intervals (in packets, newest first) and the open one, I_0.
#[derive(Debug, Clone)]
pub struct LossIntervals {
    weights: Vec<f64>,
    closed_pkts: VecDeque<f64>,
    open_pkts: f64,
}

impl LossIntervals {
    /// An empty history of `n` intervals (n even, ≥ 2).
    pub fn new(n: usize) -> Result<LossIntervals, BadIntervalCount> {
        let weights = weights(n)?;
        Ok(LossIntervals {
            closed_pkts: VecDeque::with_capacity(n + 1),
            weights,
            open_pkts: 0.0,
        })
    }

    /// Closes the open interval at `closed_pkts` packets and starts a new, empty open one
    /// (a new loss event began); the oldest interval beyond n is forgotten.
    pub fn close_interval(&mut self, closed_pkts: f64) {
        self.closed_pkts.push_front(closed_pkts);
        self.closed_pkts.truncate(self.weights.len());
        self.open_pkts = 0.0;
    }

    /// Sets the open interval I_0 (packets since the start of the latest loss event).
    pub fn set_open(&mut self, open_pkts: f64) {
        self.open_pkts = open_pkts;
    }

    /// Closed intervals held (at most n), newest first.
    pub fn closed(&self) -> impl Iterator<Item = f64> + '_ {
        self.closed_pkts.iter().copied()
    }

    /// I_mean = max(I_tot0, I_tot1)/W_tot (RFC 3448 §5.4): I_tot0 weighs I_0..I_(k−1) by
    /// w_1..w_k, I_tot1 weighs I_1..I_k by w_1..w_k, W_tot = w_1 + … + w_k, with k the closed
    /// intervals held (k = n once the history is full; fewer before, decision D231). `None`
    /// before the first loss event.
    #[must_use]
    pub fn mean_interval_pkts(&self) -> Option<f64> {
        let k = self.closed_pkts.len();
        if k == 0 {
            return None;
        }
        let w = &self.weights[..k];
        let w_tot: f64 = w.iter().sum();
        let i_tot1: f64 = self.closed_pkts.iter().zip(w).map(|(i, w)| i * w).sum();
        let i_tot0: f64 = std::iter::once(self.open_pkts)
            .chain(self.closed_pkts.iter().copied())
            .zip(w)
            .map(|(i, w)| i * w)
            .sum();
        Some(i_tot0.max(i_tot1) / w_tot)
    }

    /// The loss event rate p = 1/I_mean; 0 before the first loss event.
    #[must_use]
    pub fn loss_event_rate(&self) -> f64 {
        match self.mean_interval_pkts() {
            Some(mean) if mean > 0.0 => 1.0 / mean,
            Some(_) => 1.0,
            None => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, abs: f64) -> bool {
        (got - want).abs() <= abs
    }

    #[test]
    fn weights_of_eight() {
        let w = weights(8).unwrap();
        let want = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
        for (g, w) in w.iter().zip(want) {
            assert!(close(*g, w, 1e-12), "{g} vs {w}");
        }
        assert!(close(w.iter().sum::<f64>(), 6.0, 1e-12));
        assert_eq!(weights(7), Err(BadIntervalCount(7)));
        assert_eq!(weights(0), Err(BadIntervalCount(0)));
    }

    /// Issue 20, acceptance 1, checked against RFC 3448 §5.4 by hand:
    /// I_tot1 = 10+20+30+40 + 0.8·50+0.6·60+0.4·70+0.2·80 = 220 → 220/6 = 36.667;
    /// I_tot0 = 5+10+20+30 + 0.8·40+0.6·50+0.4·60+0.2·70 = 165 → 27.5; the max is I_tot1.
    /// With I_0 = 200, I_tot0 = 200+10+20+30 + 32+30+24+14 = 360 → 60.
    #[test]
    fn acceptance_vector() {
        let mut h = LossIntervals::new(8).unwrap();
        for i in (1..=8).rev() {
            h.close_interval(10.0 * f64::from(i));
        }
        assert_eq!(
            h.closed().collect::<Vec<_>>(),
            vec![10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]
        );
        h.set_open(5.0);
        assert!(close(
            h.mean_interval_pkts().unwrap(),
            36.666_666_666_7,
            1e-9
        ));
        assert!(close(h.loss_event_rate(), 0.027_272_727, 1e-9));
        h.set_open(200.0);
        assert!(close(h.mean_interval_pkts().unwrap(), 60.0, 1e-9));
    }

    #[test]
    fn history_keeps_n_and_starts_empty() {
        let mut h = LossIntervals::new(4).unwrap();
        assert_eq!(h.loss_event_rate(), 0.0);
        h.close_interval(100.0);
        // k = 1: I_tot1 = 100, I_tot0 = I_0 = 0; W_tot = 1.
        assert!(close(h.loss_event_rate(), 0.01, 1e-15));
        for i in 0..10 {
            h.close_interval(f64::from(i));
        }
        assert_eq!(h.closed().collect::<Vec<_>>(), vec![9.0, 8.0, 7.0, 6.0]);
    }
}
