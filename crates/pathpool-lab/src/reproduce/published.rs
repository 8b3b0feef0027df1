//! The published figures every reproduction compares with, read from data files beside its
//! scenarios (`scenarios/reproductions/<id>.published.toml`), so that a reader sees the
//! targets (value, unit, tolerance, citation and why) without reading Rust.
//!
//! A file holds the experiment's id, an optional `note` on the whole experiment and one
//! `[[figure]]` table per compared figure:
//!
//! ```toml
//! experiment = "nmcc-short-transfers"
//!
//! [[figure]]
//! metric = "NMCC share, 1 Reno, unfriendly SS"   # exactly as the comparison prints it
//! published = 61.0
//! unit = "%"
//! tolerance = 4.0
//! source = "thesis E5d Fig. 4.13; paper §5.3 Fig. 8"
//! note = "why the value or the tolerance is what it is (optional)"
//! ```
//!
//! The files are built into the binary and parsed once, on first use. The code asks for a
//! figure by its metric and the unit it measures in; a figure the file lacks, or given in
//! another unit, is an error of the experiment. Each experiment lists the metrics it compares
//! ([`super::Experiment::compared`]); a unit test checks every file against that list, both
//! ways.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use pathpool_core::text::line_col;
use toml_edit::{ImDocument, Item, Table, Value};

use super::{Bound, Comparison, Estimate};

/// `(id, path, text)` of `scenarios/reproductions/<id>.published.toml`.
macro_rules! published_file {
    ($id:literal) => {
        (
            $id,
            concat!("scenarios/reproductions/", $id, ".published.toml"),
            include_str!(concat!(
                "../../../../scenarios/reproductions/",
                $id,
                ".published.toml"
            )),
        )
    };
}

/// The embedded files: experiment id, path in the repository, text.
const FILES: [(&str, &str, &str); 30] = [
    published_file!("nmcc-shared-bottleneck"),
    published_file!("wischik-nsdi11"),
    published_file!("nmcc-short-transfers"),
    published_file!("nmcc-partial-congestion"),
    published_file!("convergence"),
    published_file!("sqrt-n-check"),
    published_file!("tm-assistance-lan"),
    published_file!("mmtp-multisource"),
    published_file!("domain-scale"),
    published_file!("tse-probe-borrowing"),
    published_file!("tse-shared-bottleneck"),
    published_file!("tse-independent-empty"),
    published_file!("tse-independent-competition"),
    published_file!("tse-hetero-bandwidth"),
    published_file!("tse-hetero-delay"),
    published_file!("tse-hetero-loss"),
    published_file!("tse-bilevel-placement"),
    published_file!("tse-priority-placement"),
    published_file!("tse-tfrc-wraparound"),
    published_file!("inrpp-detour-census"),
    published_file!("inrpp-global-fairness"),
    published_file!("inrpp-dumbbell"),
    published_file!("inrpp-multihomed"),
    published_file!("inrpp-transit-stub"),
    published_file!("ptp-tree"),
    published_file!("ptp-diamond"),
    published_file!("ptp-fairness"),
    published_file!("ptp-cache"),
    published_file!("ptp-mesh"),
    published_file!("ptp-pi-bias"),
];

/// Keys of a file's top level.
const FILE_KEYS: [&str; 3] = ["experiment", "note", "figure"];
/// Keys of a `[[figure]]` table.
const FIGURE_KEYS: [&str; 7] = [
    "metric",
    "published",
    "unit",
    "tolerance",
    "bound",
    "source",
    "note",
];

/// One published figure and the agreement counted with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// What is compared, exactly as the comparison prints it.
    pub metric: String,
    /// The document's value.
    pub published: f64,
    /// Unit of `published` and `tolerance` (`""` for a ratio).
    pub unit: String,
    /// Largest |measured − published| counted as agreement.
    pub tolerance: f64,
    /// Which side agrees (`bound = "at-most"` or `"at-least"` in the file; two-sided when
    /// left out).
    pub bound: Bound,
    /// Where the value comes from (figure, table or section).
    pub source: String,
    /// How the value was read or why the tolerance is what it is.
    pub note: Option<String>,
}

/// The published figures of one experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    /// Experiment id.
    pub experiment: String,
    /// The file it was read from.
    pub file: &'static str,
    /// Remarks on the experiment's targets as a whole.
    pub note: Option<String>,
    /// The figures, in file order.
    pub figures: Vec<Target>,
}

impl Published {
    /// The figure for `metric`, which the code measures in `unit`.
    ///
    /// # Errors
    /// The file has no such figure, or gives it in another unit.
    pub fn target(&self, metric: &str, unit: &str) -> Result<&Target, String> {
        let t = self
            .figures
            .iter()
            .find(|t| t.metric == metric)
            .ok_or_else(|| {
                format!(
                    "{}: no published figure with metric {metric:?} (experiment {})",
                    self.file, self.experiment
                )
            })?;
        if t.unit != unit {
            return Err(format!(
                "{}: figure {metric:?} has unit {:?}, but the experiment measures it in {unit:?}",
                self.file, t.unit
            ));
        }
        Ok(t)
    }

    /// `measured` against the figure for `metric` (in `unit`).
    ///
    /// # Errors
    /// As [`Published::target`].
    pub(super) fn compare(
        &'static self,
        metric: &str,
        unit: &str,
        measured: Estimate,
    ) -> Result<Comparison, String> {
        let t = self.target(metric, unit)?;
        Ok(Comparison::new(
            &self.experiment,
            &t.source,
            metric,
            &t.unit,
            t.published,
            measured,
            t.tolerance,
            t.bound,
        ))
    }
}

/// The parsed files, in [`FILES`] order.
fn parsed() -> &'static [Result<Published, String>] {
    static PARSED: OnceLock<Vec<Result<Published, String>>> = OnceLock::new();
    PARSED.get_or_init(|| {
        FILES
            .iter()
            .map(|&(id, path, text)| {
                let p = parse(text, path)?;
                if p.experiment == id {
                    Ok(p)
                } else {
                    Err(format!(
                        "{path}: experiment = {:?}, but the file is that of {id:?}",
                        p.experiment
                    ))
                }
            })
            .collect()
    })
}

/// The published figures of experiment `id`.
///
/// # Errors
/// An id without a file, or a malformed file (with its line and field).
pub fn of(id: &str) -> Result<&'static Published, String> {
    let i = FILES
        .iter()
        .position(|(f, ..)| *f == id)
        .ok_or_else(|| format!("no published figures for experiment {id:?}"))?;
    parsed()[i].as_ref().map_err(Clone::clone)
}

/// Parses the text of a published-figures file named `name`.
///
/// # Errors
/// Bad TOML, an unknown or missing key, a value of the wrong type, a non-finite number, a
/// negative tolerance or a metric given twice: with the file, line, column and field.
pub fn parse(text: &str, name: &'static str) -> Result<Published, String> {
    let at = |span: Option<std::ops::Range<usize>>| -> String {
        span.map_or_else(
            || name.to_string(),
            |s| {
                let (l, c) = line_col(text, s.start);
                format!("{name}:{l}:{c}")
            },
        )
    };
    let doc = text.parse::<ImDocument<String>>().map_err(|e| {
        format!(
            "{}: {}",
            at(e.span()),
            e.message().trim().replace('\n', "; ")
        )
    })?;
    let root = doc.as_table();
    unknown_keys(root, &FILE_KEYS, "a published-figures file", &at)?;
    let experiment = string(root, "experiment", "", &at)?
        .ok_or_else(|| format!("{name}: missing key experiment (the experiment's id)"))?;
    let note = string(root, "note", "", &at)?;
    let tables = match root.get("figure") {
        Some(Item::ArrayOfTables(a)) => a,
        Some(other) => {
            return Err(format!(
                "{}: figure: expected [[figure]] tables",
                at(other.span())
            ))
        }
        None => return Err(format!("{name}: no [[figure]] tables")),
    };
    let mut figures: Vec<Target> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, t) in tables.iter().enumerate() {
        let field = format!("figure[{i}].");
        let missing = |k: &str| format!("{}: {field}{k}: missing", at(t.span()));
        unknown_keys(t, &FIGURE_KEYS, "a [[figure]] table", &at)?;
        let metric = string(t, "metric", &field, &at)?.ok_or_else(|| missing("metric"))?;
        if let Some(first) = seen.insert(metric.clone(), i) {
            return Err(format!(
                "{}: {field}metric: {metric:?} is given twice (also figure[{first}])",
                at(t.get("metric").and_then(Item::span))
            ));
        }
        let tolerance = number(t, "tolerance", &field, &at)?.ok_or_else(|| missing("tolerance"))?;
        if tolerance < 0.0 {
            return Err(format!(
                "{}: {field}tolerance: {tolerance} is negative; expected a number ≥ 0",
                at(t.get("tolerance").and_then(Item::span))
            ));
        }
        let bound = match string(t, "bound", &field, &at)?.as_deref() {
            None => Bound::TwoSided,
            Some("at-most") => Bound::AtMost,
            Some("at-least") => Bound::AtLeast,
            Some(other) => {
                return Err(format!(
                    "{}: {field}bound: {other:?}; expected \"at-most\" or \"at-least\" (or no \
                     bound for published ± tolerance)",
                    at(t.get("bound").and_then(Item::span))
                ))
            }
        };
        figures.push(Target {
            bound,
            published: number(t, "published", &field, &at)?.ok_or_else(|| missing("published"))?,
            unit: string(t, "unit", &field, &at)?.ok_or_else(|| missing("unit"))?,
            tolerance,
            source: string(t, "source", &field, &at)?.ok_or_else(|| missing("source"))?,
            note: string(t, "note", &field, &at)?,
            metric,
        });
    }
    Ok(Published {
        experiment,
        file: name,
        note,
        figures,
    })
}

/// Rejects a key of `t` outside `allowed`.
fn unknown_keys(
    t: &Table,
    allowed: &[&str],
    what: &str,
    at: &dyn Fn(Option<std::ops::Range<usize>>) -> String,
) -> Result<(), String> {
    for (k, item) in t.iter() {
        if !allowed.contains(&k) {
            let span = t.key(k).and_then(toml_edit::Key::span).or(item.span());
            return Err(format!(
                "{}: unknown key {k:?}; {what} has {}",
                at(span),
                allowed.join(", ")
            ));
        }
    }
    Ok(())
}

/// The string value of key `k` of `t`, if present (`field` prefixes the key in errors).
fn string(
    t: &Table,
    k: &str,
    field: &str,
    at: &dyn Fn(Option<std::ops::Range<usize>>) -> String,
) -> Result<Option<String>, String> {
    match t.get(k) {
        None => Ok(None),
        Some(item) => item
            .as_str()
            .map(|s| Some(s.to_string()))
            .ok_or_else(|| format!("{}: {field}{k}: expected a string", at(item.span()))),
    }
}

/// The finite number (float or integer) of key `k` of `t`, if present.
fn number(
    t: &Table,
    k: &str,
    field: &str,
    at: &dyn Fn(Option<std::ops::Range<usize>>) -> String,
) -> Result<Option<f64>, String> {
    let Some(item) = t.get(k) else {
        return Ok(None);
    };
    let v = match item.as_value() {
        Some(Value::Float(f)) => *f.value(),
        // Exact for the integers a published figure takes (|n| < 2^53).
        Some(Value::Integer(n)) => *n.value() as f64,
        _ => {
            return Err(format!(
                "{}: {field}{k}: expected a number",
                at(item.span())
            ))
        }
    };
    if v.is_finite() {
        Ok(Some(v))
    } else {
        Err(format!(
            "{}: {field}{k}: {v} is not a finite number",
            at(item.span())
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::super::EXPERIMENTS;
    use super::*;

    #[test]
    fn every_experiment_has_exactly_the_figures_it_compares() {
        // An experiment that compares nothing (the documents give no numbers) has no file.
        let comparing: Vec<_> = EXPERIMENTS
            .iter()
            .filter(|e| !(e.compared)(false).is_empty() || !(e.compared)(true).is_empty())
            .collect();
        assert_eq!(FILES.len(), comparing.len());
        for e in comparing {
            let p = of(e.id).unwrap_or_else(|err| panic!("{err}"));
            let in_file: BTreeSet<&str> = p.figures.iter().map(|t| t.metric.as_str()).collect();
            let mut compared = BTreeSet::new();
            for quick in [false, true] {
                for (metric, unit) in (e.compared)(quick) {
                    p.target(&metric, unit)
                        .unwrap_or_else(|err| panic!("{err}"));
                    compared.insert(metric);
                }
            }
            let unused: Vec<&&str> = in_file.iter().filter(|m| !compared.contains(**m)).collect();
            assert!(
                unused.is_empty(),
                "{}: figures no comparison uses: {unused:?}",
                p.file
            );
            assert!(!p.figures.is_empty(), "{}", p.file);
        }
    }

    #[test]
    fn the_quick_run_compares_a_subset_without_repeats() {
        for e in EXPERIMENTS {
            for quick in [false, true] {
                let list = (e.compared)(quick);
                let set: BTreeSet<&str> = list.iter().map(|(m, _)| m.as_str()).collect();
                assert_eq!(set.len(), list.len(), "{}: a metric twice", e.id);
            }
        }
    }

    const GOOD: &str = "experiment = \"x\"\nnote = \"all\"\n\n[[figure]]\nmetric = \"a\"\n\
        published = 53.0\nunit = \"%\"\ntolerance = 4\nsource = \"Fig. 1\"\n";

    #[test]
    fn a_good_file_parses() {
        let p = parse(GOOD, "x.toml").unwrap();
        assert_eq!(p.experiment, "x");
        assert_eq!(p.note.as_deref(), Some("all"));
        assert_eq!(p.figures.len(), 1);
        let t = p.target("a", "%").unwrap();
        assert_eq!((t.published, t.tolerance), (53.0, 4.0));
        assert_eq!(t.note, None);
        let wrong_unit = p.target("a", "s").unwrap_err();
        assert!(wrong_unit.contains("unit \"%\""), "{wrong_unit}");
        let missing = p.target("b", "%").unwrap_err();
        assert!(
            missing.contains("x.toml") && missing.contains("\"b\""),
            "{missing}"
        );
    }

    #[test]
    fn published_values_keep_their_bits() {
        let text = GOOD.replace("53.0", "58.5786437626905");
        let p = parse(&text, "x.toml").unwrap();
        let n = 2.0_f64;
        assert_eq!(
            p.figures[0].published.to_bits(),
            (100.0 * n.sqrt() / (1.0 + n.sqrt())).to_bits()
        );
    }

    #[test]
    fn malformed_files_name_the_line_and_field() {
        let cases = [
            (GOOD.replace("tolerance = 4", "tolerance = \"4\""), "x.toml:8:", "figure[0].tolerance: expected a number"),
            (GOOD.replace("tolerance = 4", "tolerance = -1.0"), "x.toml:8:", "is negative"),
            (GOOD.replace("tolerance = 4", "tolerence = 4"), "x.toml:8:", "unknown key \"tolerence\""),
            (GOOD.replace("unit = \"%\"\n", ""), "x.toml:4:", "figure[0].unit: missing"),
            (GOOD.replace("published = 53.0", "published = nan"), "x.toml:6:", "not a finite number"),
            (GOOD.replace("published = 53.0", "published = 53.0.1"), "x.toml:6:", ""),
            (GOOD.replace("experiment = \"x\"\n", ""), "x.toml", "missing key experiment"),
            (GOOD.replace("note = \"all\"", "notes = 1"), "x.toml:2:", "unknown key \"notes\""),
            (format!("{GOOD}\n[[figure]]\nmetric = \"a\"\npublished = 1.0\nunit = \"%\"\ntolerance = 1.0\nsource = \"s\"\n"), "x.toml:12:", "given twice"),
        ];
        for (text, place, what) in cases {
            let err = parse(&text, "x.toml").unwrap_err();
            assert!(err.starts_with(place) && err.contains(what), "{err}");
        }
    }
}
