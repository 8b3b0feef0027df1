//! Summary statistics (definitions in `docs/metrics.md`).

/// Jain's fairness index (Σx)² / (n·Σx²) of non-negative values; `None` for no values or all
/// zeros. It is 1 when all values are equal and 1/n when one value takes everything.
#[must_use]
pub fn jain_index(values: &[f64]) -> Option<f64> {
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    let sq: f64 = values.iter().map(|x| x * x).sum();
    (n > 0.0 && sq > 0.0).then(|| sum * sum / (n * sq))
}

/// Arithmetic mean; `None` for no values.
#[must_use]
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Jain's index sampled over time (spec 001 §5.1, INRPP D4.1's "Fairness"): one index per
/// sample over the throughputs of the flows active in it, averaged over the samples
/// (`docs/metrics.md`, decision D290). It accumulates online: O(1) memory, whatever the
/// number of samples or flows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampledJain {
    /// Σ over counted samples of each sample's index.
    sum: f64,
    /// Samples whose index counts in the mean.
    samples: u64,
    /// Samples left out: fewer than two active flows, or none of them delivered anything.
    skipped: u64,
}

impl SampledJain {
    /// Adds one sample from the count, sum and sum of squares of the active flows'
    /// throughputs (any unit: the index is scale-free). A sample with fewer than two active
    /// flows, or with every active flow at zero, has no index and is skipped.
    pub fn add(&mut self, n: u64, sum: f64, sum_sq: f64) {
        if n >= 2 && sum_sq > 0.0 {
            self.sum += sum * sum / (n as f64 * sum_sq);
            self.samples += 1;
        } else {
            self.skipped += 1;
        }
    }

    /// Adds one sample from the active flows' throughputs.
    pub fn add_values(&mut self, values: &[f64]) {
        let sum: f64 = values.iter().sum();
        let sq: f64 = values.iter().map(|x| x * x).sum();
        self.add(values.len() as u64, sum, sq);
    }

    /// The mean index over the counted samples; `None` if no sample counted.
    #[must_use]
    pub fn mean(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.sum / self.samples as f64)
    }

    /// Samples whose index counts in the mean.
    #[must_use]
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Samples skipped (fewer than two active flows, or all of them at zero).
    #[must_use]
    pub fn skipped(&self) -> u64 {
        self.skipped
    }
}

/// One logarithmic flow-size bin of the AFCT-by-size table (decision D291).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AfctBin {
    /// Lower edge in bytes (inclusive): 10^(k/b) for bin k with b bins per decade.
    pub lo_bytes: f64,
    /// Upper edge in bytes (exclusive): 10^((k+1)/b).
    pub hi_bytes: f64,
    /// Finite flows of this size that completed.
    pub completed: u64,
    /// Mean completion time of those flows in seconds (`None` if none completed).
    pub mean_fct_s: Option<f64>,
    /// Finite flows of this size that had not completed when the run ended.
    pub not_completed: u64,
}

/// The edge 10^(k/b) of logarithmic bins with `b` bins per decade, exact at the decades
/// (10^q from integer powers, times 10^(r/b) for the bins within the decade).
#[must_use]
pub fn log_bin_edge(k: i64, bins_per_decade: u32) -> f64 {
    let b = i64::from(bins_per_decade.max(1));
    let (q, r) = (k.div_euclid(b), k.rem_euclid(b));
    let decade = 10f64.powi(q as i32);
    if r == 0 {
        decade
    } else {
        decade * 10f64.powf(r as f64 / b as f64)
    }
}

/// The index k of the bin [10^(k/b), 10^((k+1)/b)) that holds `size` (> 0) bytes.
#[must_use]
pub fn log_bin_index(size: u64, bins_per_decade: u32) -> i64 {
    let x = size as f64;
    let mut k = (x.log10() * f64::from(bins_per_decade.max(1))).floor() as i64;
    // log10 may be off by an ulp next to an edge: settle on the edges themselves.
    while log_bin_edge(k + 1, bins_per_decade) <= x {
        k += 1;
    }
    while log_bin_edge(k, bins_per_decade) > x {
        k -= 1;
    }
    k
}

/// Average flow completion time per logarithmic size bin (spec 001 §5.1: AFCT "against flow
/// size", binning unspecified; decision D291). `flows` holds each finite flow's size in
/// bytes and its completion time (`None` if it did not complete). Returns the bins that
/// hold at least one flow, smallest first; a flow of size 0 belongs to no bin.
#[must_use]
pub fn afct_bins(flows: &[(u64, Option<f64>)], bins_per_decade: u32) -> Vec<AfctBin> {
    // (bin, Σ fct, completed, not completed), built in one pass over sorted keys.
    let mut keyed: Vec<(i64, Option<f64>)> = flows
        .iter()
        .filter(|(size, _)| *size > 0)
        .map(|&(size, fct)| (log_bin_index(size, bins_per_decade), fct))
        .collect();
    // Stable: within a bin the flows keep their order, so the sums are reproducible.
    keyed.sort_by_key(|&(k, _)| k);
    let mut out: Vec<AfctBin> = Vec::new();
    let mut sums: Vec<f64> = Vec::new();
    let mut last = None;
    for (k, fct) in keyed {
        if last != Some(k) {
            last = Some(k);
            out.push(AfctBin {
                lo_bytes: log_bin_edge(k, bins_per_decade),
                hi_bytes: log_bin_edge(k + 1, bins_per_decade),
                completed: 0,
                mean_fct_s: None,
                not_completed: 0,
            });
            sums.push(0.0);
        }
        let (bin, sum) = (out.last_mut().unwrap(), sums.last_mut().unwrap());
        match fct {
            Some(t) => {
                bin.completed += 1;
                *sum += t;
            }
            None => bin.not_completed += 1,
        }
    }
    for (bin, sum) in out.iter_mut().zip(sums) {
        bin.mean_fct_s = (bin.completed > 0).then(|| sum / bin.completed as f64);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_extremes() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]), Some(1.0));
        assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
        // Two flows at 1 and 3: 16 / (2·10) = 0.8.
        assert!((jain_index(&[1.0, 3.0]).unwrap() - 0.8).abs() < 1e-12);
    }

    #[test]
    fn jain_of_two_and_eight() {
        // 10² / (2 · 68) = 100 / 136 = 0.73529...
        let j = jain_index(&[2.0, 8.0]).unwrap();
        assert_eq!(format!("{j:.4}"), "0.7353");
        assert!((j - 100.0 / 136.0).abs() < 1e-15);
    }

    #[test]
    fn sampled_jain_averages_the_samples_with_two_flows() {
        let mut s = SampledJain::default();
        s.add_values(&[5.0, 5.0]); // 1
        s.add_values(&[2.0, 8.0]); // 100/136
        s.add_values(&[7.0]); // one flow: skipped
        s.add_values(&[0.0, 0.0]); // nothing delivered: skipped
        s.add_values(&[]); // no flow: skipped
        assert_eq!(s.samples(), 2);
        assert_eq!(s.skipped(), 3);
        assert_eq!(s.mean(), Some((1.0 + 100.0 / 136.0) / 2.0));
        assert_eq!(SampledJain::default().mean(), None);
    }

    #[test]
    fn log_bin_edges_are_exact_at_decades() {
        assert_eq!(log_bin_edge(12, 4), 1000.0);
        assert_eq!(log_bin_edge(16, 4), 10_000.0);
        assert_eq!(log_bin_edge(0, 4), 1.0);
        assert_eq!(log_bin_edge(-4, 4), 0.1);
        assert_eq!(log_bin_edge(13, 4), 1000.0 * 10f64.powf(0.25));
        assert_eq!(log_bin_edge(14, 4), 1000.0 * 10f64.powf(0.5));
        assert_eq!(log_bin_edge(3, 1), 1000.0);
        // Sizes on an edge go to the bin above it.
        assert_eq!(log_bin_index(1000, 4), 12);
        assert_eq!(log_bin_index(999, 4), 11);
        assert_eq!(log_bin_index(1778, 4), 12);
        assert_eq!(log_bin_index(1779, 4), 13);
        assert_eq!(log_bin_index(10_000_000, 4), 28);
        assert_eq!(log_bin_index(9_999_999, 4), 27);
        assert_eq!(log_bin_index(1, 4), 0);
        assert_eq!(log_bin_index(100, 1), 2);
    }

    #[test]
    fn afct_bins_by_hand() {
        // 4 bins per decade: [1000, 1778.28), [1778.28, 3162.28), ..., [10^4, 17782.8).
        let flows = [
            (1000, Some(0.5)),
            (1500, Some(1.5)),
            (1778, Some(2.5)), // still below 10^(13/4) = 1778.279...
            (1779, Some(4.0)),
            (3000, None),
            (10_000, Some(3.0)),
            (12_000, Some(5.0)),
            (15_000, None),
            (0, Some(9.0)), // no bin
        ];
        let bins = afct_bins(&flows, 4);
        let edge = |k: i32| 10f64.powi(k / 4) * 10f64.powf(f64::from(k % 4) / 4.0);
        assert_eq!(
            bins,
            vec![
                AfctBin {
                    lo_bytes: 1000.0,
                    hi_bytes: edge(13),
                    completed: 3,
                    mean_fct_s: Some(1.5),
                    not_completed: 0,
                },
                AfctBin {
                    lo_bytes: edge(13),
                    hi_bytes: edge(14),
                    completed: 1,
                    mean_fct_s: Some(4.0),
                    not_completed: 1,
                },
                AfctBin {
                    lo_bytes: 10_000.0,
                    hi_bytes: edge(17),
                    completed: 2,
                    mean_fct_s: Some(4.0),
                    not_completed: 1,
                },
            ]
        );
        assert!((bins[0].hi_bytes - 1_778.279_410_038_923).abs() < 1e-9);
        assert!((bins[1].hi_bytes - 3_162.277_660_168_379_5).abs() < 1e-9);
        // A bin holding only flows that did not complete has no mean.
        let only_open = afct_bins(&[(50, None)], 1);
        assert_eq!(only_open.len(), 1);
        assert_eq!(
            (only_open[0].lo_bytes, only_open[0].hi_bytes),
            (10.0, 100.0)
        );
        assert_eq!(only_open[0].mean_fct_s, None);
        assert!(afct_bins(&[], 4).is_empty());
    }

    #[test]
    fn mean_of_values() {
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(&[]), None);
    }
}
