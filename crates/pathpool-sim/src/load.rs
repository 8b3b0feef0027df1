//! Reading scenarios: TOML files, JSON (from Python), `key=value` overrides, and errors that
//! say where the problem is.

use std::fmt;
use std::ops::Range;

use crate::build;
use crate::sim::Simulation;
use crate::spec::Scenario;
use pathpool_core::text::line_col;

/// One step of a path into the scenario document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSeg {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Formats a path the way users write it: `links[2].between[1]`.
#[must_use]
pub fn format_path(path: &[PathSeg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            PathSeg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            PathSeg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// A problem with a scenario: where (file, line, column, field) and what, including what
/// would have been allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// File name (or `<scenario>` for scenarios built in code).
    pub source: String,
    /// 1-based line, when the source is a file and the field could be located.
    pub line: Option<usize>,
    /// 1-based column.
    pub column: Option<usize>,
    /// The field, as `links[2].rate` (empty for the whole document).
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        f.write_str(": ")?;
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// An error found while compiling a valid document: a field path and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// Where.
    pub path: Vec<PathSeg>,
    /// What.
    pub message: String,
}

impl SpecError {
    /// An error at `path`.
    pub fn at(path: Vec<PathSeg>, message: impl Into<String>) -> Self {
        SpecError {
            path,
            message: message.into(),
        }
    }
}

/// A parsed scenario together with what is needed to point at lines in its source.
#[derive(Clone, Debug)]
pub struct LoadedScenario {
    /// The scenario.
    pub scenario: Scenario,
    source_name: String,
    /// The original TOML text, to locate fields by path.
    toml_text: Option<String>,
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

impl LoadedScenario {
    /// Parses TOML text; `source_name` (usually the file name) prefixes errors. `overrides`
    /// are `key=value` assignments applied before validation (see [`apply_override`]).
    ///
    /// # Errors
    /// Syntax errors, unknown fields, bad values and bad overrides, with line and field.
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
        for (k, v) in overrides {
            apply_override(&mut table, k, v).map_err(|message| ScenarioError {
                source: "--set".to_string(),
                line: None,
                column: None,
                path: k.clone(),
                message,
            })?;
        }
        let de = toml::Value::Table(table);
        let scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let mut path = serde_path(e.path());
            let message = e.inner().message().trim().to_string();
            // Point at the offending key itself for unknown fields.
            let mut located = path.clone();
            if let Some(field) = message
                .strip_prefix("unknown field `")
                .and_then(|m| m.split('`').next())
            {
                located.push(key(field));
            }
            if message.starts_with("missing field") {
                path.clear();
            }
            locate_error(
                source_name,
                toml_text.as_deref(),
                &located,
                format_path(&path),
                message,
            )
        })?;
        Ok(LoadedScenario {
            scenario,
            source_name: source_name.to_string(),
            toml_text,
        })
    }

    /// Compiles the scenario with `seed` (or the scenario's own seed, or 1).
    ///
    /// # Errors
    /// Semantic problems (unknown nodes, impossible values), located in the source.
    pub fn compile(&self, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
        let seed = seed.or(self.scenario.seed).unwrap_or(1);
        build::compile(&self.scenario, seed).map_err(|e| {
            let p = format_path(&e.path);
            self.error(&e.path, p, e.message)
        })
    }

    /// The seed a run uses when none is given explicitly.
    #[must_use]
    pub fn default_seed(&self) -> u64 {
        self.scenario.seed.unwrap_or(1)
    }

    fn error(&self, locate: &[PathSeg], path: String, message: String) -> ScenarioError {
        locate_error(
            &self.source_name,
            self.toml_text.as_deref(),
            locate,
            path,
            message,
        )
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

fn serde_path(p: &serde_path_to_error::Path) -> Vec<PathSeg> {
    use serde_path_to_error::Segment;
    p.iter()
        .filter_map(|s| match s {
            Segment::Seq { index } => Some(PathSeg::Index(*index)),
            Segment::Map { key } => Some(PathSeg::Key(key.clone())),
            Segment::Enum { .. } | Segment::Unknown => None,
        })
        .collect()
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
/// # Errors
/// A message naming the step that does not exist.
pub fn apply_override(table: &mut toml::Table, key: &str, value: &str) -> Result<(), String> {
    let steps: Vec<&str> = key.split('.').map(str::trim).collect();
    if steps.iter().any(|s| s.is_empty()) {
        return Err(format!(
            "bad key {key:?}: expected a dotted path such as links.bottleneck.rate"
        ));
    }
    set_in_table(table, &steps, 0, parse_value(value))
}

fn set_in_table(
    t: &mut toml::Table,
    steps: &[&str],
    i: usize,
    v: toml::Value,
) -> Result<(), String> {
    if i + 1 == steps.len() {
        t.insert(steps[i].to_string(), v);
        return Ok(());
    }
    let child = t
        .entry(steps[i].to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_in_value(child, steps, i + 1, v)
}

/// Sets `steps[i..]` inside `cur`, the value that `steps[..i]` leads to.
fn set_in_value(
    cur: &mut toml::Value,
    steps: &[&str],
    i: usize,
    v: toml::Value,
) -> Result<(), String> {
    match cur {
        toml::Value::Table(t) => set_in_table(t, steps, i, v),
        toml::Value::Array(items) => {
            let step = steps[i];
            let idx = step
                .parse::<usize>()
                .ok()
                .filter(|&k| k < items.len())
                .or_else(|| {
                    items
                        .iter()
                        .position(|it| it.get("id").and_then(toml::Value::as_str) == Some(step))
                });
            let Some(idx) = idx else {
                return Err(format!(
                    "{}: no element {step:?} (use an index 0..{} or the id of an element)",
                    steps[..i].join("."),
                    items.len().saturating_sub(1)
                ));
            };
            if i + 1 == steps.len() {
                items[idx] = v;
                Ok(())
            } else {
                set_in_value(&mut items[idx], steps, i + 1, v)
            }
        }
        _ => Err(format!("{} is a value, not a table", steps[..i].join("."))),
    }
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
        let e = apply_override(&mut t, "duration.x", "1").unwrap_err();
        assert!(e.contains("not a table"), "{e}");
    }
}
