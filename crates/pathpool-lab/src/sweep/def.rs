//! A sweep as data: the scenario, the grid of overrides, repetitions, seed and what to
//! gather; read from the command line or from a TOML sweep file.

use std::fmt;
use std::path::{Path, PathBuf};

use pathpool_core::text::line_col;
use serde::{Deserialize, Serialize};

/// A bad sweep definition: where (`sweep.toml:8:3`, `--grid`, ...) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepError {
    /// Where the problem is: a file with line and column, or a command-line option.
    pub origin: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl SweepError {
    /// An error at `origin`.
    pub fn at(origin: impl Into<String>, message: impl Into<String>) -> Self {
        SweepError {
            origin: origin.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for SweepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.origin.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.origin, self.message)
        }
    }
}

impl std::error::Error for SweepError {}

/// The scenario a sweep varies, as text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioText {
    /// The scenario document.
    pub text: String,
    /// `toml` or `json` (scenarios built in Python).
    pub format: String,
    /// File name (or `<scenario>`), for error messages and provenance.
    pub source: String,
}

impl ScenarioText {
    /// Reads a TOML scenario file.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn read(path: &Path) -> Result<Self, SweepError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SweepError::at(path.display().to_string(), e.to_string()))?;
        Ok(ScenarioText {
            text,
            format: "toml".into(),
            source: path.display().to_string(),
        })
    }
}

/// One value of a grid parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamValue {
    /// The override text, exactly as `--set KEY=TEXT` takes it.
    pub text: String,
    /// Where it was given (`sweep.toml:9:30`, or `--grid`).
    pub origin: String,
}

/// A grid parameter: a scenario field (a `--set` key) and the values it takes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    /// The dotted key, as for `--set`.
    pub key: String,
    /// The values, in the order given.
    pub values: Vec<ParamValue>,
    /// Where the parameter was given.
    pub origin: String,
}

/// The results table a sweep gathers into `sweep.parquet`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatherTable {
    /// One row per run per flow (the `flows` table).
    #[default]
    Flows,
    /// One row per run per link direction (the `links` table).
    Links,
    /// One row per run per subflow of each multipath flow (the `subflows` table).
    Subflows,
    /// One row per run per on-path cache (the `caches` table).
    Caches,
    /// One row per run: the figures of `summary.json` (without the wall time).
    Summary,
}

impl GatherTable {
    /// Every table, in the order listed in messages.
    pub const ALL: [GatherTable; 5] = [
        GatherTable::Flows,
        GatherTable::Links,
        GatherTable::Subflows,
        GatherTable::Caches,
        GatherTable::Summary,
    ];

    /// The table's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            GatherTable::Flows => "flows",
            GatherTable::Links => "links",
            GatherTable::Subflows => "subflows",
            GatherTable::Caches => "caches",
            GatherTable::Summary => "summary",
        }
    }

    /// The table named `name`.
    ///
    /// # Errors
    /// An unknown name, with the known ones.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| {
                format!("unknown table {name:?}; expected one of flows, links, subflows, summary")
            })
    }

    /// Columns that identify a row within a run; kept whatever `metrics` says.
    #[must_use]
    pub fn key_columns(self) -> &'static [&'static str] {
        match self {
            GatherTable::Flows | GatherTable::Links => &["id"],
            GatherTable::Subflows => &["flow", "subflow"],
            GatherTable::Caches => &["node"],
            GatherTable::Summary => &[],
        }
    }
}

/// A sweep: a scenario, fixed overrides, a grid of overrides, repetitions, a base seed and
/// what to gather.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepDef {
    /// The scenario.
    pub scenario: ScenarioText,
    /// Overrides applied to every run, before the grid's.
    pub set: Vec<(String, String)>,
    /// The grid; the first parameter varies slowest.
    pub grid: Vec<Param>,
    /// Repetitions of every grid point (seeds `seed`, `seed + 1`, ...).
    pub reps: u64,
    /// Base seed (default: the scenario's `seed`, or 1).
    pub seed: Option<u64>,
    /// The table gathered into `sweep.parquet`.
    pub table: GatherTable,
    /// Result columns to keep (empty: all); the table's key columns are always kept.
    pub metrics: Vec<String>,
}

impl SweepDef {
    /// A sweep of `scenario` with one repetition, no grid, gathering the flows table.
    #[must_use]
    pub fn new(scenario: ScenarioText) -> Self {
        SweepDef {
            scenario,
            set: Vec::new(),
            grid: Vec::new(),
            reps: 1,
            seed: None,
            table: GatherTable::Flows,
            metrics: Vec::new(),
        }
    }

    /// Adds command-line options on top: `--grid` parameters are appended (a key the sweep
    /// already varies is an error), the others replace the sweep file's values.
    ///
    /// # Errors
    /// A malformed `--grid`, `--set` or `--metrics`, or an unknown `--table`.
    pub fn apply_options(&mut self, opts: &SweepOptions) -> Result<(), SweepError> {
        for g in &opts.grid {
            let p = parse_grid_arg(g)?;
            if self.grid.iter().any(|q| q.key == p.key) {
                return Err(SweepError::at(
                    "--grid",
                    format!("{}: the sweep already varies this parameter", p.key),
                ));
            }
            self.grid.push(p);
        }
        for s in &opts.set {
            let (k, v) = s.split_once('=').ok_or_else(|| {
                SweepError::at(
                    "--set",
                    format!("{s:?}: expected KEY=VALUE, e.g. links.bottleneck.rate=20Mbps"),
                )
            })?;
            self.set.push((k.trim().to_string(), v.trim().to_string()));
        }
        if let Some(r) = opts.reps {
            self.reps = r;
        }
        if opts.seed.is_some() {
            self.seed = opts.seed;
        }
        if let Some(t) = &opts.table {
            self.table = GatherTable::parse(t).map_err(|m| SweepError::at("--table", m))?;
        }
        if let Some(m) = &opts.metrics {
            self.metrics = m
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            if self.metrics.is_empty() {
                return Err(SweepError::at(
                    "--metrics",
                    "empty list; give column names separated by commas, e.g. throughput_bps,share",
                ));
            }
        }
        Ok(())
    }
}

/// What the command line (or Python's keyword arguments) adds to a sweep.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// `KEY=V1,V2,...` grid parameters.
    pub grid: Vec<String>,
    /// `KEY=VALUE` fixed overrides.
    pub set: Vec<String>,
    /// Repetitions.
    pub reps: Option<u64>,
    /// Base seed.
    pub seed: Option<u64>,
    /// Table name.
    pub table: Option<String>,
    /// Comma-separated metric columns.
    pub metrics: Option<String>,
}

/// Parses `--grid KEY=V1,V2,...`. Values are split at commas outside brackets, braces and
/// quotes, so `flows.0.paths=[["a","b"]],[["a","c"]]` has two values.
///
/// # Errors
/// No `=`, an empty key or an empty value.
pub fn parse_grid_arg(arg: &str) -> Result<Param, SweepError> {
    let origin = format!("--grid {arg}");
    let (key, values) = arg.split_once('=').ok_or_else(|| {
        SweepError::at(
            &origin,
            "expected KEY=V1,V2,..., e.g. links.bottleneck.rate=10Mbps,100Mbps",
        )
    })?;
    let key = key.trim();
    if key.is_empty() {
        return Err(SweepError::at(&origin, "empty key"));
    }
    let values = split_top_level(values);
    if values.iter().all(|v| v.is_empty()) {
        return Err(SweepError::at(
            &origin,
            format!("{key}: empty list of values"),
        ));
    }
    if values.iter().any(String::is_empty) {
        return Err(SweepError::at(
            &origin,
            format!("{key}: an empty value (two commas in a row, or a trailing comma)"),
        ));
    }
    Ok(Param {
        key: key.to_string(),
        values: values
            .into_iter()
            .map(|text| ParamValue {
                text,
                origin: "--grid".into(),
            })
            .collect(),
        origin: "--grid".into(),
    })
}

/// Splits at commas that are not inside `[]`, `{}` or quotes; trims each piece.
fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if let Some(q) = quote {
            cur.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                cur.push(c);
            }
            '[' | '{' => {
                depth += 1;
                cur.push(c);
            }
            ']' | '}' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// Whether `text` (the contents of a `.toml` file) is a sweep file rather than a scenario:
/// a sweep file has a top-level `scenario` key, which scenarios never have.
#[must_use]
pub fn is_sweep_file(text: &str) -> bool {
    text.parse::<toml_edit::ImDocument<String>>()
        .is_ok_and(|d| d.as_table().contains_key("scenario"))
}

const FILE_KEYS: [&str; 7] = [
    "scenario", "reps", "seed", "table", "metrics", "set", "grid",
];

/// Reads a sweep file: `scenario` (relative to the file), `grid`, `reps`, `seed`, `table`,
/// `metrics` and `set` (see `docs/sweeps.md`). Returns the definition.
///
/// # Errors
/// Syntax errors, unknown keys, values of the wrong type and an unreadable scenario, each
/// with the file, line and column.
pub fn read_sweep_file(path: &Path) -> Result<SweepDef, SweepError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SweepError::at(&name, e.to_string()))?;
    parse_sweep_file(&text, &name, path.parent().unwrap_or(Path::new("")))
}

/// Parses the text of a sweep file named `name`; `dir` is where relative scenario paths
/// start.
///
/// # Errors
/// As [`read_sweep_file`].
pub fn parse_sweep_file(text: &str, name: &str, dir: &Path) -> Result<SweepDef, SweepError> {
    let at = |span: Option<std::ops::Range<usize>>| -> String {
        span.map_or_else(
            || name.to_string(),
            |s| {
                let (l, c) = line_col(text, s.start);
                format!("{name}:{l}:{c}")
            },
        )
    };
    let doc = text
        .parse::<toml_edit::ImDocument<String>>()
        .map_err(|e| SweepError::at(at(e.span()), e.message().trim().replace('\n', "; ")))?;
    let root = doc.as_table();
    for (k, item) in root.iter() {
        if !FILE_KEYS.contains(&k) {
            let span = root.key(k).and_then(toml_edit::Key::span).or(item.span());
            return Err(SweepError::at(
                at(span),
                format!(
                    "unknown key {k:?}; a sweep file has {}",
                    FILE_KEYS.join(", ")
                ),
            ));
        }
    }
    let value = |k: &str| root.get(k).and_then(toml_edit::Item::as_value);
    let wrong = |k: &str, what: &str| {
        let span = root.get(k).and_then(toml_edit::Item::span);
        SweepError::at(at(span), format!("{k}: expected {what}"))
    };

    let scenario_rel = value("scenario")
        .and_then(toml_edit::Value::as_str)
        .ok_or_else(|| wrong("scenario", "the scenario file's path (a string)"))?;
    let scenario_path: PathBuf = dir.join(scenario_rel);
    let scenario = ScenarioText::read(&scenario_path).map_err(|e| {
        let span = root.get("scenario").and_then(toml_edit::Item::span);
        SweepError::at(at(span), format!("scenario: {e}"))
    })?;
    let mut def = SweepDef::new(scenario);

    if root.contains_key("reps") {
        def.reps = value("reps")
            .and_then(toml_edit::Value::as_integer)
            .and_then(|r| u64::try_from(r).ok())
            .ok_or_else(|| wrong("reps", "a positive integer"))?;
    }
    if root.contains_key("seed") {
        def.seed = Some(
            value("seed")
                .and_then(toml_edit::Value::as_integer)
                .and_then(|r| u64::try_from(r).ok())
                .ok_or_else(|| wrong("seed", "a non-negative integer"))?,
        );
    }
    if root.contains_key("table") {
        let t = value("table")
            .and_then(toml_edit::Value::as_str)
            .ok_or_else(|| wrong("table", "flows, links, subflows or summary"))?;
        def.table = GatherTable::parse(t).map_err(|m| {
            SweepError::at(at(root.get("table").and_then(toml_edit::Item::span)), m)
        })?;
    }
    if root.contains_key("metrics") {
        let arr = value("metrics")
            .and_then(toml_edit::Value::as_array)
            .ok_or_else(|| wrong("metrics", "a list of column names"))?;
        for v in arr {
            let s = v.as_str().ok_or_else(|| {
                SweepError::at(at(v.span()), "metrics: expected column names (strings)")
            })?;
            def.metrics.push(s.to_string());
        }
        if def.metrics.is_empty() {
            return Err(wrong("metrics", "at least one column name"));
        }
    }
    if let Some(item) = root.get("set") {
        let t = item
            .as_table_like()
            .ok_or_else(|| wrong("set", "a table of KEY = VALUE overrides"))?;
        for (k, v) in t.iter() {
            let v = v.as_value().ok_or_else(|| {
                SweepError::at(at(v.span()), format!("set.{k}: expected a value"))
            })?;
            def.set.push((k.to_string(), override_text(v)));
        }
    }
    if let Some(item) = root.get("grid") {
        let t = item
            .as_table_like()
            .ok_or_else(|| wrong("grid", "a table of KEY = [values]"))?;
        for (k, v) in t.iter() {
            let key_span = t.get_key_value(k).and_then(|(key, _)| key.span());
            let origin = at(key_span.or(v.span()));
            let arr = v
                .as_value()
                .and_then(toml_edit::Value::as_array)
                .ok_or_else(|| {
                    SweepError::at(&origin, format!("grid.{k}: expected a list of values"))
                })?;
            if arr.is_empty() {
                return Err(SweepError::at(
                    &origin,
                    format!("grid.{k}: empty list of values"),
                ));
            }
            def.grid.push(Param {
                key: k.to_string(),
                values: arr
                    .iter()
                    .map(|v| ParamValue {
                        text: override_text(v),
                        origin: at(v.span()),
                    })
                    .collect(),
                origin,
            });
        }
    }
    Ok(def)
}

/// The `--set` text of a TOML value: strings as they are (quoted when they would read as
/// another type, so `"1"` stays a string), other values as TOML.
fn override_text(v: &toml_edit::Value) -> String {
    if let Some(s) = v.as_str() {
        let reads_as_toml = format!("v = {s}").parse::<toml::Table>().is_ok();
        return if reads_as_toml {
            serde_json::to_string(s).expect("a string serialises")
        } else {
            s.to_string()
        };
    }
    let mut v = v.clone();
    v.decor_mut().clear();
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_arguments_split_at_top_level_commas() {
        let p = parse_grid_arg("links.bottleneck.rate=10Mbps, 100Mbps").unwrap();
        assert_eq!(p.key, "links.bottleneck.rate");
        let texts: Vec<&str> = p.values.iter().map(|v| v.text.as_str()).collect();
        assert_eq!(texts, ["10Mbps", "100Mbps"]);
        let p = parse_grid_arg(r#"flows.0.paths=[["a","b"]],[["a","c"]],"x,y""#).unwrap();
        let texts: Vec<&str> = p.values.iter().map(|v| v.text.as_str()).collect();
        assert_eq!(texts, [r#"[["a","b"]]"#, r#"[["a","c"]]"#, r#""x,y""#]);
    }

    #[test]
    fn malformed_grid_arguments_are_named() {
        let e = parse_grid_arg("links.bottleneck.rate").unwrap_err();
        assert!(e
            .to_string()
            .contains("--grid links.bottleneck.rate: expected KEY=V1,V2"));
        let e = parse_grid_arg("flows.0.cc=").unwrap_err();
        assert!(
            e.to_string().contains("flows.0.cc: empty list of values"),
            "{e}"
        );
        let e = parse_grid_arg("flows.0.cc=lia,,nmcc").unwrap_err();
        assert!(e.to_string().contains("an empty value"), "{e}");
        let e = parse_grid_arg("=1,2").unwrap_err();
        assert!(e.to_string().contains("empty key"), "{e}");
    }

    /// A directory holding the scenario `sc.toml`, removed when the guard is dropped.
    fn dir_with_scenario() -> tempfile::TempDir {
        let d = tempfile::Builder::new()
            .prefix("pathpool-sweep-def-")
            .tempdir()
            .unwrap();
        std::fs::write(d.path().join("sc.toml"), "duration = \"1s\"\n").unwrap();
        d
    }

    #[test]
    fn sweep_files_keep_grid_order_types_and_lines() {
        let d = dir_with_scenario();
        let text = r#"scenario = "sc.toml"
reps = 3
seed = 7
table = "summary"
metrics = ["jain_index"]
set = { "measure.start" = "1s" }

[grid]
"links.l.rate" = ["10Mbps", "100Mbps"]
"flows.0.count" = [1, 4]
"tcp.delayed_ack" = [true, false]
"flows.0.id" = ["1", "x"]
"#;
        let def = parse_sweep_file(text, "s.toml", d.path()).unwrap();
        assert!(is_sweep_file(text));
        assert!(!is_sweep_file(&def.scenario.text));
        assert_eq!(def.reps, 3);
        assert_eq!(def.seed, Some(7));
        assert_eq!(def.table, GatherTable::Summary);
        assert_eq!(def.metrics, ["jain_index"]);
        assert_eq!(def.set, [("measure.start".to_string(), "1s".to_string())]);
        let keys: Vec<&str> = def.grid.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "links.l.rate",
                "flows.0.count",
                "tcp.delayed_ack",
                "flows.0.id"
            ]
        );
        let texts = |i: usize| -> Vec<String> {
            def.grid[i].values.iter().map(|v| v.text.clone()).collect()
        };
        assert_eq!(texts(1), ["1", "4"]);
        assert_eq!(texts(2), ["true", "false"]);
        // A string that would read as a number stays a string.
        assert_eq!(texts(3), ["\"1\"", "x"]);
        assert_eq!(def.grid[0].origin, "s.toml:9:1");
        assert_eq!(def.grid[1].values[1].origin, "s.toml:10:23");
    }

    #[test]
    fn bad_sweep_files_name_the_line() {
        let d = dir_with_scenario();
        let check = |text: &str, want: &str| {
            let e = parse_sweep_file(text, "s.toml", d.path())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e:?} does not contain {want:?}");
        };
        check(
            "scenario = \"sc.toml\"\nrepz = 3\n",
            "s.toml:2:1: unknown key \"repz\"",
        );
        check(
            "scenario = \"sc.toml\"\n[grid]\n\"flows.0.cc\" = []\n",
            "s.toml:3:1: grid.flows.0.cc: empty list of values",
        );
        check(
            "scenario = \"sc.toml\"\n[grid]\n\"flows.0.cc\" = \"lia\"\n",
            "s.toml:3:1: grid.flows.0.cc: expected a list of values",
        );
        check("scenario = \"nope.toml\"\n", "s.toml:1:12: scenario: ");
        check(
            "scenario = \"sc.toml\"\nreps = -1\n",
            "s.toml:2:8: reps: expected a positive",
        );
        check(
            "scenario = \"sc.toml\"\ntable = \"rows\"\n",
            "s.toml:2:9: unknown table \"rows\"",
        );
        check(
            "scenario = \"sc.toml\"\nreps = [\n",
            "s.toml:3:1: invalid array; expected `]`",
        );
    }

    #[test]
    fn options_add_to_a_definition() {
        let mut def = SweepDef::new(ScenarioText {
            text: String::new(),
            format: "toml".into(),
            source: "x.toml".into(),
        });
        let opts = SweepOptions {
            grid: vec!["flows.0.cc=lia,nmcc".into()],
            set: vec!["duration=2s".into()],
            reps: Some(2),
            seed: Some(5),
            table: Some("links".into()),
            metrics: Some("utilization, drops".into()),
        };
        def.apply_options(&opts).unwrap();
        assert_eq!(def.grid.len(), 1);
        assert_eq!(def.reps, 2);
        assert_eq!(def.seed, Some(5));
        assert_eq!(def.table, GatherTable::Links);
        assert_eq!(def.metrics, ["utilization", "drops"]);
        let again = def.apply_options(&SweepOptions {
            grid: vec!["flows.0.cc=olia".into()],
            ..SweepOptions::default()
        });
        assert!(again
            .unwrap_err()
            .to_string()
            .contains("already varies this parameter"));
        let bad_table = def.apply_options(&SweepOptions {
            table: Some("rows".into()),
            ..SweepOptions::default()
        });
        assert!(bad_table
            .unwrap_err()
            .to_string()
            .starts_with("--table: unknown table"));
    }
}
