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
    fn mean_of_values() {
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(&[]), None);
    }
}
