//! The fidelity scoreboard (issue 17, item 7): per reproduction, how many compared figures
//! agree with the documents, judged on the confidence interval of the mean, not on the mean
//! alone.
//!
//! The rule: with m the mean over the runs, h the half-width of its 95% confidence interval,
//! p the published value and t the tolerance,
//! * **within**: the whole interval lies in the tolerance band, `[m − h, m + h] ⊆ [p − t,
//!   p + t]`: the runs show agreement;
//! * **overlaps**: the interval and the band intersect but the interval is not inside it:
//!   the runs neither show agreement nor rule it out (more seeds would tell);
//! * **outside**: they do not intersect: the runs show disagreement.
//!
//! A figure from one run has h = 0, so its verdict is the mean's. The older rule (the mean
//! alone in the band, `within` in the JSON) is kept beside it.

use serde::Serialize;

use super::Comparison;

/// Where a figure's confidence interval lies against its tolerance band.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The interval lies inside the band.
    Within,
    /// The interval meets the band but is not inside it.
    Overlaps,
    /// The interval misses the band.
    Outside,
}

/// Which side of a published figure counts as agreement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    /// `published ± tolerance` (a value read off a figure or the text).
    #[default]
    TwoSided,
    /// At most `published + tolerance` (a criterion such as "at or below the stringent
    /// line").
    AtMost,
    /// At least `published − tolerance` ("rises above 50%").
    AtLeast,
}

impl Bound {
    /// The band `[lo, hi]` of agreement with `published` ± `tolerance`.
    #[must_use]
    pub fn band(self, published: f64, tolerance: f64) -> (f64, f64) {
        let (lo, hi) = (published - tolerance, published + tolerance);
        match self {
            Bound::TwoSided => (lo, hi),
            Bound::AtMost => (f64::NEG_INFINITY, hi),
            Bound::AtLeast => (lo, f64::INFINITY),
        }
    }
}

impl Verdict {
    /// The verdict for mean `measured` ± `ci95` against `published` ± `tolerance`.
    #[must_use]
    pub fn judge(published: f64, tolerance: f64, measured: f64, ci95: f64) -> Verdict {
        Verdict::judge_bound(Bound::TwoSided, published, tolerance, measured, ci95)
    }

    /// The verdict for mean `measured` ± `ci95` against the band `bound` gives `published`
    /// and `tolerance`.
    #[must_use]
    pub fn judge_bound(
        bound: Bound,
        published: f64,
        tolerance: f64,
        measured: f64,
        ci95: f64,
    ) -> Verdict {
        // Nothing measured (every run gave NaN, e.g. a threshold never reached): a miss, not
        // an interval that might overlap.
        if measured.is_nan() {
            return Verdict::Outside;
        }
        // A little slack for values printed with their unit's rounding.
        let eps = 1e-9 * (1.0 + published.abs());
        let (lo, hi) = (measured - ci95, measured + ci95);
        let (band_lo, band_hi) = bound.band(published, tolerance);
        let (band_lo, band_hi) = (band_lo - eps, band_hi + eps);
        if lo >= band_lo && hi <= band_hi {
            Verdict::Within
        } else if hi < band_lo || lo > band_hi {
            Verdict::Outside
        } else {
            Verdict::Overlaps
        }
    }
}

/// One reproduction's row of the scoreboard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Score {
    /// Experiment id.
    pub experiment: String,
    /// Whether the reduced (`--quick`) version ran.
    pub quick: bool,
    /// Figures whose interval lies in the band.
    pub within: usize,
    /// Figures whose interval meets the band without lying in it.
    pub overlaps: usize,
    /// Figures whose interval misses the band.
    pub outside: usize,
    /// Figures compared.
    pub total: usize,
    /// Figures whose mean alone lies in the band (the older rule).
    pub mean_within: usize,
}

impl Score {
    /// The row for `comparisons` of `experiment`.
    #[must_use]
    pub fn of(experiment: &str, quick: bool, comparisons: &[Comparison]) -> Score {
        let count = |v: Verdict| comparisons.iter().filter(|c| c.verdict == v).count();
        Score {
            experiment: experiment.to_string(),
            quick,
            within: count(Verdict::Within),
            overlaps: count(Verdict::Overlaps),
            outside: count(Verdict::Outside),
            total: comparisons.len(),
            mean_within: comparisons.iter().filter(|c| c.within).count(),
        }
    }
}

/// The scoreboard as a text table with a total row.
#[must_use]
pub fn table(scores: &[Score]) -> String {
    let mut rows: Vec<Vec<String>> = scores
        .iter()
        .map(|s| {
            vec![
                s.experiment.clone(),
                if s.quick { "quick" } else { "full" }.to_string(),
                format!("{}/{}", s.within, s.total),
                s.overlaps.to_string(),
                s.outside.to_string(),
                format!("{}/{}", s.mean_within, s.total),
            ]
        })
        .collect();
    let sum = |f: fn(&Score) -> usize| scores.iter().map(f).sum::<usize>();
    let total = sum(|s| s.total);
    rows.push(vec![
        "total".to_string(),
        String::new(),
        format!("{}/{total}", sum(|s| s.within)),
        sum(|s| s.overlaps).to_string(),
        sum(|s| s.outside).to_string(),
        format!("{}/{total}", sum(|s| s.mean_within)),
    ]);
    crate::report::table(
        &[
            "reproduction",
            "run",
            "within (CI in band)",
            "overlaps",
            "outside",
            "mean in band",
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_decides() {
        // Band 50 ± 4 = [46, 54].
        assert_eq!(Verdict::judge(50.0, 4.0, 52.0, 1.0), Verdict::Within);
        assert_eq!(
            Verdict::judge(50.0, 4.0, 52.0, 3.0),
            Verdict::Overlaps,
            "up to 55"
        );
        assert_eq!(
            Verdict::judge(50.0, 4.0, 59.5, 13.1),
            Verdict::Overlaps,
            "a mean outside whose interval reaches the band is not a miss"
        );
        assert_eq!(Verdict::judge(50.0, 4.0, 60.0, 5.0), Verdict::Outside);
        // One-sided: anything below 54 is "at most 50 ± 4", anything above 46 "at least".
        assert_eq!(
            Verdict::judge_bound(Bound::AtMost, 50.0, 4.0, 10.0, 5.0),
            Verdict::Within
        );
        assert_eq!(
            Verdict::judge_bound(Bound::AtMost, 50.0, 4.0, 53.0, 2.0),
            Verdict::Overlaps
        );
        assert_eq!(
            Verdict::judge_bound(Bound::AtLeast, 50.0, 4.0, 90.0, 30.0),
            Verdict::Within
        );
        assert_eq!(
            Verdict::judge_bound(Bound::AtLeast, 50.0, 4.0, 40.0, 5.0),
            Verdict::Outside
        );
        assert_eq!(Verdict::judge(50.0, 4.0, 40.0, 5.9), Verdict::Outside);
        assert_eq!(
            Verdict::judge(50.0, 4.0, 54.0, 0.0),
            Verdict::Within,
            "edge"
        );
        // Nothing measured is a miss, whatever the interval (NaN) says.
        assert_eq!(
            Verdict::judge(50.0, 4.0, f64::NAN, f64::NAN),
            Verdict::Outside
        );
    }

    #[test]
    fn the_table_counts_and_totals() {
        let scores = [
            Score {
                experiment: "a".into(),
                quick: true,
                within: 1,
                overlaps: 2,
                outside: 3,
                total: 6,
                mean_within: 2,
            },
            Score {
                experiment: "b".into(),
                quick: true,
                within: 4,
                overlaps: 0,
                outside: 0,
                total: 4,
                mean_within: 4,
            },
        ];
        let t = table(&scores);
        assert!(t.contains("1/6") && t.contains("4/4"), "{t}");
        let last = t.lines().last().unwrap();
        assert!(
            last.contains("total") && last.contains("5/10") && last.contains("6/10"),
            "{t}"
        );
    }
}
