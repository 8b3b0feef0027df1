//! Means and confidence intervals over repetitions.

use serde::Serialize;

/// A mean over runs and the half-width of its 95% confidence interval (Student's t).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Estimate {
    /// Mean.
    pub mean: f64,
    /// Half-width of the 95% confidence interval (0 for fewer than two values).
    pub ci95: f64,
    /// Number of values.
    pub n: usize,
}

/// Two-sided 97.5% quantiles of Student's t for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

impl Estimate {
    /// The estimate from `values` (NaNs are skipped).
    #[must_use]
    pub fn of(values: &[f64]) -> Estimate {
        let v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        let n = v.len();
        if n == 0 {
            return Estimate {
                mean: f64::NAN,
                ci95: f64::NAN,
                n: 0,
            };
        }
        let mean = v.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Estimate { mean, ci95: 0.0, n };
        }
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let t = T975.get(n - 2).copied().unwrap_or(1.96);
        Estimate {
            mean,
            ci95: t * (var / n as f64).sqrt(),
            n,
        }
    }

    /// The same estimate scaled (e.g. a fraction as a percentage).
    #[must_use]
    pub fn scaled(self, k: f64) -> Estimate {
        Estimate {
            mean: self.mean * k,
            ci95: self.ci95 * k,
            n: self.n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_t_interval() {
        let e = Estimate::of(&[1.0, 2.0, 3.0]);
        assert_eq!(e.mean, 2.0);
        // s = 1, t(2) = 4.303, half-width 4.303 / sqrt(3).
        assert!((e.ci95 - 4.303 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(Estimate::of(&[5.0]).ci95, 0.0);
        assert_eq!(Estimate::of(&[f64::NAN, 4.0, 6.0]).mean, 5.0);
        assert_eq!(Estimate::of(&[]).n, 0);
    }
}
