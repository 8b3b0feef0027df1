//! Gathering a sweep: every finished run's table, read back from its directory, with the
//! run's id, grid point, repetition, seed and parameters in front; written as
//! `sweep.parquet` and `sweep.csv`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pathpool_sim::{Column, Table};

use super::def::GatherTable;
use super::plan::Plan;
use crate::output;

/// The columns every gathered row starts with, before the parameters.
pub const RUN_COLUMNS: [&str; 4] = ["run_id", "point", "rep", "seed"];

/// Columns of the `summary` table: the figures of `summary.json` that do not depend on the
/// machine (the wall time is left out, so local and cluster sweeps gather the same table).
pub const SUMMARY_COLUMNS: [&str; 8] = [
    "scenario",
    "sim_time_s",
    "window_start_s",
    "window_end_s",
    "jain_index",
    "afct_s",
    "events",
    "data_packets_delivered",
];

/// A grid value read as the type it has in a scenario: `--set` reads a value as TOML when
/// it is one.
#[derive(Clone, Debug, PartialEq)]
enum Typed {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

fn typed(text: &str) -> Typed {
    match format!("v = {text}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
    {
        Some(toml::Value::Integer(i)) => Typed::Int(i),
        Some(toml::Value::Float(f)) => Typed::Float(f),
        Some(toml::Value::Boolean(b)) => Typed::Bool(b),
        Some(toml::Value::String(s)) => Typed::Text(s),
        _ => Typed::Text(text.trim().to_string()),
    }
}

/// The column of a parameter, typed from all its values: unsigned integers when every value
/// is a non-negative integer, floats when every value is a number, booleans when every value
/// is one, text otherwise.
fn param_column(all_values: &[&str], rows: &[&str]) -> Column {
    let all: Vec<Typed> = all_values.iter().map(|v| typed(v)).collect();
    let row_vals: Vec<Typed> = rows.iter().map(|v| typed(v)).collect();
    if all.iter().all(|t| matches!(t, Typed::Int(i) if *i >= 0)) {
        return Column::U64(
            row_vals
                .iter()
                .map(|t| match t {
                    Typed::Int(i) => i.unsigned_abs(),
                    _ => unreachable!("checked above"),
                })
                .collect(),
        );
    }
    if all
        .iter()
        .all(|t| matches!(t, Typed::Int(_) | Typed::Float(_)))
    {
        return Column::F64(
            row_vals
                .iter()
                .map(|t| match t {
                    #[allow(clippy::cast_precision_loss)]
                    Typed::Int(i) => *i as f64,
                    Typed::Float(f) => *f,
                    _ => unreachable!("checked above"),
                })
                .collect(),
        );
    }
    if all.iter().all(|t| matches!(t, Typed::Bool(_))) {
        return Column::Bool(row_vals.iter().map(|t| t == &Typed::Bool(true)).collect());
    }
    Column::Str(
        row_vals
            .iter()
            .zip(rows)
            .map(|(t, raw)| match t {
                Typed::Text(s) => s.clone(),
                _ => (*raw).to_string(),
            })
            .collect(),
    )
}

/// The one-row summary table of a run, from its `summary.json`.
fn summary_table(path: &Path) -> Result<Table, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| at(&e))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| at(&e))?;
    let f64_of = |k: &str| v.get(k).and_then(serde_json::Value::as_f64);
    let need_f64 = |x: Option<f64>, k: &str| x.ok_or_else(|| at(&format!("no number {k}")));
    let need_u64 = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| at(&format!("no integer {k}")))
    };
    let window = v.get("window_s").and_then(serde_json::Value::as_array);
    let w = |i: usize| {
        window
            .and_then(|w| w.get(i))
            .and_then(serde_json::Value::as_f64)
    };
    let mut t = Table::new("summary");
    t.push(
        "scenario",
        Column::OptStr(vec![v
            .get("scenario")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)]),
    );
    t.push(
        "sim_time_s",
        Column::F64(vec![need_f64(f64_of("sim_time_s"), "sim_time_s")?]),
    );
    t.push(
        "window_start_s",
        Column::F64(vec![need_f64(w(0), "window_s[0]")?]),
    );
    t.push(
        "window_end_s",
        Column::F64(vec![need_f64(w(1), "window_s[1]")?]),
    );
    t.push("jain_index", Column::OptF64(vec![f64_of("jain_index")]));
    t.push("afct_s", Column::OptF64(vec![f64_of("afct_s")]));
    t.push("events", Column::U64(vec![need_u64("events")?]));
    t.push(
        "data_packets_delivered",
        Column::U64(vec![need_u64("data_packets_delivered")?]),
    );
    Ok(t)
}

/// The table of one finished run, as gathered.
fn run_table(dir: &Path, table: GatherTable) -> Result<Table, String> {
    match table {
        GatherTable::Summary => summary_table(&dir.join("summary.json")),
        t => output::read_parquet(&dir.join(format!("{}.parquet", t.name()))),
    }
}

/// Appends `src` to `dst`; an optional and a plain column of the same kind give an optional
/// one. `None` if the kinds differ.
fn append(dst: &mut Column, src: Column) -> Option<()> {
    fn opt<T>(v: Vec<T>) -> Vec<Option<T>> {
        v.into_iter().map(Some).collect()
    }
    let taken = std::mem::replace(dst, Column::Bool(Vec::new()));
    *dst = match (taken, src) {
        (Column::F64(mut a), Column::F64(b)) => {
            a.extend(b);
            Column::F64(a)
        }
        (Column::U64(mut a), Column::U64(b)) => {
            a.extend(b);
            Column::U64(a)
        }
        (Column::Str(mut a), Column::Str(b)) => {
            a.extend(b);
            Column::Str(a)
        }
        (Column::Bool(mut a), Column::Bool(b)) => {
            a.extend(b);
            Column::Bool(a)
        }
        (a @ (Column::F64(_) | Column::OptF64(_)), b @ (Column::F64(_) | Column::OptF64(_))) => {
            let to_opt = |c| match c {
                Column::F64(v) => opt(v),
                Column::OptF64(v) => v,
                _ => unreachable!("matched above"),
            };
            let mut a = to_opt(a);
            a.extend(to_opt(b));
            Column::OptF64(a)
        }
        (a @ (Column::U64(_) | Column::OptU64(_)), b @ (Column::U64(_) | Column::OptU64(_))) => {
            let to_opt = |c| match c {
                Column::U64(v) => opt(v),
                Column::OptU64(v) => v,
                _ => unreachable!("matched above"),
            };
            let mut a = to_opt(a);
            a.extend(to_opt(b));
            Column::OptU64(a)
        }
        (a @ (Column::Str(_) | Column::OptStr(_)), b @ (Column::Str(_) | Column::OptStr(_))) => {
            let to_opt = |c| match c {
                Column::Str(v) => opt(v),
                Column::OptStr(v) => v,
                _ => unreachable!("matched above"),
            };
            let mut a = to_opt(a);
            a.extend(to_opt(b));
            Column::OptStr(a)
        }
        (
            a @ (Column::Bool(_) | Column::OptBool(_)),
            b @ (Column::Bool(_) | Column::OptBool(_)),
        ) => {
            let to_opt = |c| match c {
                Column::Bool(v) => opt(v),
                Column::OptBool(v) => v,
                _ => unreachable!("matched above"),
            };
            let mut a = to_opt(a);
            a.extend(to_opt(b));
            Column::OptBool(a)
        }
        _ => return None,
    };
    Some(())
}

/// Gathers every run of `plan` (all must be finished) into one table named `sweep`: the
/// run columns, one column per grid parameter, then the kept result columns; runs in plan
/// order, each run's rows in the order of its table.
///
/// # Errors
/// A run not finished; unreadable or inconsistent result files.
pub fn gather(plan: &Plan) -> Result<Table, String> {
    let mut run_ids = Vec::new();
    let mut points = Vec::new();
    let mut reps = Vec::new();
    let mut seeds = Vec::new();
    let mut param_rows: Vec<Vec<&str>> = vec![Vec::new(); plan.def.grid.len()];
    let mut results: Vec<(String, Column)> = Vec::new();
    for (i, r) in plan.runs.iter().enumerate() {
        if !plan.is_done(i) {
            return Err(format!("run {} has not finished", r.id));
        }
        let dir = plan.run_dir(i);
        let t = run_table(&dir, plan.def.table)?;
        let n = t.rows();
        for want in &plan.columns {
            let col = t
                .column(want)
                .cloned()
                .ok_or_else(|| format!("{}: no column {want}", dir.display()))?;
            match results.iter_mut().find(|(name, _)| name == want) {
                Some((_, dst)) => append(dst, col)
                    .ok_or_else(|| format!("{}: column {want} has another type", dir.display()))?,
                None => results.push((want.clone(), col)),
            }
        }
        run_ids.extend(std::iter::repeat_n(r.id.clone(), n));
        points.extend(std::iter::repeat_n(r.point as u64, n));
        reps.extend(std::iter::repeat_n(r.rep, n));
        seeds.extend(std::iter::repeat_n(r.seed, n));
        for (rows, (_, text)) in param_rows.iter_mut().zip(&r.params) {
            rows.extend(std::iter::repeat_n(text.as_str(), n));
        }
    }
    let mut table = Table::new("sweep");
    table.push("run_id", Column::Str(run_ids));
    table.push("point", Column::U64(points));
    table.push("rep", Column::U64(reps));
    table.push("seed", Column::U64(seeds));
    for (p, rows) in plan.def.grid.iter().zip(&param_rows) {
        let all: Vec<&str> = p.values.iter().map(|v| v.text.as_str()).collect();
        table.push(&p.key, param_column(&all, rows));
    }
    for (name, col) in results {
        table.push(&name, col);
    }
    Ok(table)
}

/// The table as CSV (RFC 4180): a header, one line per row, empty fields for missing values.
#[must_use]
pub fn to_csv(table: &Table) -> String {
    fn field(out: &mut String, s: &str) {
        if s.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&s.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(s);
        }
    }
    let mut out = String::new();
    for (i, (name, _)) in table.columns.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        field(&mut out, name);
    }
    out.push('\n');
    for row in 0..table.rows() {
        for (i, (_, col)) in table.columns.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match col {
                Column::F64(v) => write!(out, "{}", v[row]).expect("writes to a string"),
                Column::OptF64(v) => {
                    if let Some(x) = v[row] {
                        write!(out, "{x}").expect("writes to a string");
                    }
                }
                Column::U64(v) => write!(out, "{}", v[row]).expect("writes to a string"),
                Column::OptU64(v) => {
                    if let Some(x) = v[row] {
                        write!(out, "{x}").expect("writes to a string");
                    }
                }
                Column::Str(v) => field(&mut out, &v[row]),
                Column::OptStr(v) => {
                    if let Some(x) = &v[row] {
                        field(&mut out, x);
                    }
                }
                Column::Bool(v) => out.push_str(if v[row] { "true" } else { "false" }),
                Column::OptBool(v) => {
                    if let Some(x) = v[row] {
                        out.push_str(if x { "true" } else { "false" });
                    }
                }
            }
        }
        out.push('\n');
    }
    out
}

/// Gathers the sweep and writes `sweep.parquet` and `sweep.csv` into its directory (each
/// replaced atomically). Returns the table and the two paths.
///
/// # Errors
/// As [`gather`]; I/O errors.
pub fn gather_and_write(plan: &Plan) -> Result<(Table, [PathBuf; 2]), String> {
    let table = gather(plan)?;
    let parquet = plan.out.join("sweep.parquet");
    let csv = plan.out.join("sweep.csv");
    super::plan::write_file_atomically(&parquet, &output::parquet_bytes(&table)?)?;
    super::plan::write_file_atomically(&csv, to_csv(&table).as_bytes())?;
    Ok((table, [parquet, csv]))
}
