//! Reading scenarios: TOML files, JSON (from Python), `key=value` overrides, and errors that
//! say where the problem is.

use std::ops::Range;

use crate::build;
pub use crate::error::{format_path, PathSeg, ScenarioError, SpecError, MAX_ERRORS};
use crate::sim::Simulation;
use crate::spec::Scenario;
use pathpool_core::text::line_col;

/// A parsed scenario together with what is needed to point at lines in its source.
#[derive(Clone, Debug)]
pub struct LoadedScenario {
    /// The scenario.
    pub scenario: Scenario,
    source_name: String,
    /// The original TOML text, to locate fields by path.
    toml_text: Option<String>,
    /// The `--set` overrides applied, with the path each resolved to: a problem there is
    /// the override's, not the file's.
    overrides: Vec<(String, Vec<PathSeg>)>,
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// Where problems are reported: the source's name and text, and the overrides applied.
struct Place<'a> {
    source_name: &'a str,
    toml_text: Option<&'a str>,
    overrides: &'a [(String, Vec<PathSeg>)],
}

impl Place<'_> {
    /// A problem at `locate` (for the line and column), shown as `path`: against the `--set`
    /// argument that gave the value when one did, else against the file's line.
    fn error(&self, locate: &[PathSeg], path: String, message: String) -> ScenarioError {
        if let Some((arg, _)) = self
            .overrides
            .iter()
            .rev()
            .find(|(_, p)| !p.is_empty() && locate.starts_with(p))
        {
            return ScenarioError {
                source: format!("--set {arg}"),
                line: None,
                column: None,
                path,
                message,
                also: Box::default(),
            };
        }
        locate_error(self.source_name, self.toml_text, locate, path, message)
    }
}

impl LoadedScenario {
    /// Parses TOML text; `source_name` (usually the file name) prefixes errors. `overrides`
    /// are `key=value` assignments applied before validation (see [`apply_override`]).
    ///
    /// # Errors
    /// Syntax errors, unknown fields, bad values and bad overrides, with line and field:
    /// every problem found, up to [`MAX_ERRORS`] (see [`ScenarioError::all`]).
    pub fn from_toml(
        text: &str,
        source_name: &str,
        overrides: &[(String, String)],
    ) -> Result<Self, ScenarioError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map(|s| line_col(text, s.start)).unzip();
            ScenarioError {
                source: source_name.to_string(),
                line,
                column,
                path: String::new(),
                message: e.message().trim().to_string(),
                also: Box::default(),
            }
        })?;
        Self::from_table(table, source_name, Some(text.to_string()), overrides)
    }

    /// Parses a JSON document (what the Python API sends); `null` means "not set".
    ///
    /// # Errors
    /// As for [`from_toml`](Self::from_toml), without line numbers.
    pub fn from_json(
        text: &str,
        source_name: &str,
        overrides: &[(String, String)],
    ) -> Result<Self, ScenarioError> {
        let err = |path: String, message: String| ScenarioError {
            source: source_name.to_string(),
            line: None,
            column: None,
            path,
            message,
            also: Box::default(),
        };
        let mut json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| err(String::new(), e.to_string()))?;
        strip_nulls(&mut json);
        let value = toml::Value::try_from(&json).map_err(|e| err(String::new(), e.to_string()))?;
        let toml::Value::Table(table) = value else {
            return Err(err(
                String::new(),
                "a scenario must be a table (dict)".into(),
            ));
        };
        Self::from_table(table, source_name, None, overrides)
    }

    fn from_table(
        mut table: toml::Table,
        source_name: &str,
        toml_text: Option<String>,
        overrides: &[(String, String)],
    ) -> Result<Self, ScenarioError> {
        let mut applied = Vec::new();
        let mut bad = Vec::new();
        for (k, v) in overrides {
            match apply_override(&mut table, k, v) {
                Ok(path) => applied.push((format!("{k}={v}"), path)),
                Err(message) => bad.push(ScenarioError {
                    source: format!("--set {k}={v}"),
                    line: None,
                    column: None,
                    path: String::new(),
                    message,
                    also: Box::default(),
                }),
            }
        }
        if !bad.is_empty() {
            return Err(ScenarioError::combine(bad));
        }
        let place = Place {
            source_name,
            toml_text: toml_text.as_deref(),
            overrides: &applied,
        };
        match crate::diagnose::deserialize_all(table) {
            Ok(scenario) => Ok(LoadedScenario {
                scenario,
                source_name: source_name.to_string(),
                toml_text,
                overrides: applied,
            }),
            Err(checked) => {
                let mut errors: Vec<ScenarioError> = checked
                    .problems
                    .into_iter()
                    .map(|p| {
                        let mut shown = p.at.clone();
                        // A missing field is the containing table's problem.
                        if p.message.starts_with("missing field") {
                            shown.clear();
                        }
                        place.error(&p.at, format_path(&shown), p.message)
                    })
                    .collect();
                // What the repaired document's semantics say, when it says what was meant.
                if let Some(repaired) = checked.repaired.as_deref() {
                    let seed = repaired.seed.unwrap_or(1);
                    if let Err(more) = compile_all(repaired, seed, &place) {
                        errors.extend(more);
                    }
                }
                Err(ScenarioError::combine(errors))
            }
        }
    }

    /// Compiles the scenario with `seed` (or the scenario's own seed, or 1).
    ///
    /// # Errors
    /// Semantic problems (unknown nodes, impossible values), located in the source: every
    /// one found, up to [`MAX_ERRORS`].
    pub fn compile(&self, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
        let seed = seed.or(self.scenario.seed).unwrap_or(1);
        let place = Place {
            source_name: &self.source_name,
            toml_text: self.toml_text.as_deref(),
            overrides: &self.overrides,
        };
        compile_all(&self.scenario, seed, &place).map_err(ScenarioError::combine)
    }

    /// The seed a run uses when none is given explicitly.
    #[must_use]
    pub fn default_seed(&self) -> u64 {
        self.scenario.seed.unwrap_or(1)
    }
}

/// Compiles `sc`; on a problem in a flow, traffic generator or cache (elements nothing else
/// refers to), compiles again without that element to find the next, up to [`MAX_ERRORS`]. A
/// problem elsewhere (nodes, links, the whole document) ends the search, since what follows
/// would depend on it.
fn compile_all(
    sc: &Scenario,
    seed: u64,
    place: &Place<'_>,
) -> Result<Simulation, Vec<ScenarioError>> {
    let mut skip = build::Skip::default();
    let mut errors = Vec::new();
    loop {
        match build::compile_skipping(sc, seed, &skip) {
            Ok(sim) if errors.is_empty() => return Ok(sim),
            Ok(_) => return Err(errors),
            Err(e) => {
                let shown = format_path(&e.path);
                let more = skip.add(&e.path);
                errors.push(place.error(&e.path, shown, e.message));
                if !more || errors.len() >= MAX_ERRORS {
                    return Err(errors);
                }
            }
        }
    }
}

/// An error whose line and column are found by looking `locate` up in the TOML text.
fn locate_error(
    source_name: &str,
    toml_text: Option<&str>,
    locate: &[PathSeg],
    path: String,
    message: String,
) -> ScenarioError {
    let position = toml_text.and_then(|t| locate_path(t, locate).map(|s| line_col(t, s.start)));
    let (line, column) = position.unzip();
    ScenarioError {
        source: source_name.to_string(),
        line,
        column,
        path,
        message,
        also: Box::default(),
    }
}

fn strip_nulls(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(strip_nulls);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// The source span of the deepest element of `path` that exists in the TOML text.
fn locate_path(text: &str, path: &[PathSeg]) -> Option<Range<usize>> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut item = doc.as_item();
    let mut span = None;
    for seg in path {
        let next = match seg {
            PathSeg::Key(k) => item.get(k.as_str()),
            PathSeg::Index(i) => item.get(*i),
        };
        let Some(next) = next else { break };
        item = next;
        if let Some(s) = item_span(item) {
            span = Some(s);
        }
    }
    span
}

fn item_span(item: &toml_edit::Item) -> Option<Range<usize>> {
    match item {
        toml_edit::Item::Value(v) => v.span(),
        toml_edit::Item::Table(t) => t.span(),
        toml_edit::Item::ArrayOfTables(a) => a.span(),
        toml_edit::Item::None => None,
    }
}

/// Applies one `key=value` override to a scenario document.
///
/// `key` is a dotted path. A path step into an array is an index (`flows.0.start`) or, for
/// arrays of tables, the `id` of an element (`links.bottleneck.rate`). Missing tables on the
/// way are created. `value` is read as a TOML value when it is one (`20`, `true`, `0.01`,
/// `["a", "b"]`, `"text"`), otherwise as a string (`20Mbps`).
///
/// Returns the path the key resolved to (ids replaced by indices), so that a problem with
/// the value can be reported against the override.
///
/// # Errors
/// A message naming the step that does not exist and what would: the ids of a list's
/// elements, with the nearest one when the step looks like a misspelling.
pub fn apply_override(
    table: &mut toml::Table,
    key: &str,
    value: &str,
) -> Result<Vec<PathSeg>, String> {
    let steps: Vec<&str> = key.split('.').map(str::trim).collect();
    if steps.iter().any(|s| s.is_empty()) {
        return Err(format!(
            "bad key {key:?}: expected a dotted path such as links.bottleneck.rate"
        ));
    }
    let mut path = Vec::with_capacity(steps.len());
    set_in_table(table, &steps, 0, parse_value(value), &mut path)?;
    Ok(path)
}

fn set_in_table(
    t: &mut toml::Table,
    steps: &[&str],
    i: usize,
    v: toml::Value,
    path: &mut Vec<PathSeg>,
) -> Result<(), String> {
    path.push(key(steps[i]));
    if i + 1 == steps.len() {
        t.insert(steps[i].to_string(), v);
        return Ok(());
    }
    let child = t
        .entry(steps[i].to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_in_value(child, steps, i + 1, v, path)
}

/// Sets `steps[i..]` inside `cur`, the value that `steps[..i]` leads to.
fn set_in_value(
    cur: &mut toml::Value,
    steps: &[&str],
    i: usize,
    v: toml::Value,
    path: &mut Vec<PathSeg>,
) -> Result<(), String> {
    match cur {
        toml::Value::Table(t) => set_in_table(t, steps, i, v, path),
        toml::Value::Array(items) => {
            let step = steps[i];
            let idx = step
                .parse::<usize>()
                .ok()
                .filter(|&k| k < items.len())
                .or_else(|| items.iter().position(|it| id_of(it) == Some(step)));
            let Some(idx) = idx else {
                return Err(no_element(&steps[..i].join("."), step, items));
            };
            path.push(PathSeg::Index(idx));
            if i + 1 == steps.len() {
                items[idx] = v;
                Ok(())
            } else {
                set_in_value(&mut items[idx], steps, i + 1, v, path)
            }
        }
        _ => Err(format!("{} is a value, not a table", steps[..i].join("."))),
    }
}

/// The `id` of a list element, if it has one.
fn id_of(item: &toml::Value) -> Option<&str> {
    item.get("id").and_then(toml::Value::as_str)
}

/// "No element `step` in list `list`", with what the list has: indices, the ids, and the
/// nearest id.
fn no_element(list: &str, step: &str, items: &[toml::Value]) -> String {
    if items.is_empty() {
        return format!("{list}: no element {step:?}: the list is empty");
    }
    let ids: Vec<&str> = items.iter().filter_map(id_of).collect();
    let mut m = format!("{list}: no element {step:?}");
    if let Some(meant) = pathpool_core::text::closest(step, ids.iter().copied()) {
        m.push_str(&format!(" (did you mean {meant:?}?)"));
    }
    m.push_str(&format!("; use an index 0..{}", items.len() - 1));
    if ids.is_empty() {
        m.push_str(" (no element has an id)");
    } else {
        const SHOWN: usize = 12;
        let mut list = ids
            .iter()
            .take(SHOWN)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if ids.len() > SHOWN {
            list.push_str(&format!(" and {} more", ids.len() - SHOWN));
        }
        m.push_str(&format!(" or an id: {list}"));
    }
    m
}

fn parse_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(raw.to_string())),
        Err(_) => toml::Value::String(raw.trim().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_by_index_and_by_id() {
        let mut t: toml::Table = toml::from_str(
            r#"
            duration = "10s"
            [[links]]
            id = "bottleneck"
            rate = "10Mbps"
            [[flows]]
            from = "a"
            "#,
        )
        .unwrap();
        apply_override(&mut t, "links.bottleneck.rate", "20Mbps").unwrap();
        apply_override(&mut t, "flows.0.count", "4").unwrap();
        apply_override(&mut t, "duration", "30s").unwrap();
        apply_override(&mut t, "measure.trace_cwnd", "true").unwrap();
        assert_eq!(t["links"][0]["rate"].as_str(), Some("20Mbps"));
        assert_eq!(t["flows"][0]["count"].as_integer(), Some(4));
        assert_eq!(t["duration"].as_str(), Some("30s"));
        assert_eq!(t["measure"]["trace_cwnd"].as_bool(), Some(true));
        let e = apply_override(&mut t, "links.nope.rate", "1Mbps").unwrap_err();
        assert!(e.contains("no element \"nope\""), "{e}");
        assert!(e.ends_with("use an index 0..0 or an id: bottleneck"), "{e}");
        let e = apply_override(&mut t, "links.botleneck.rate", "1Mbps").unwrap_err();
        assert!(e.contains("(did you mean \"bottleneck\"?)"), "{e}");
        assert_eq!(
            apply_override(&mut t, "links.bottleneck.rate", "2Mbps").unwrap(),
            [key("links"), PathSeg::Index(0), key("rate")]
        );
        let e = apply_override(&mut t, "duration.x", "1").unwrap_err();
        assert!(e.contains("not a table"), "{e}");
    }
}
