//! Writing results: Parquet tables, `summary.json`, `provenance.json`, all into a directory
//! that appears only once it is complete.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use pathpool_sim::{Column, Results, Table};
use serde::Serialize;

/// Where a result set came from: enough to run it again.
#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    /// Schema identifier, `pathpool.provenance/1`.
    pub schema: &'static str,
    /// The scenario file (or `<python>` for scenarios built in code).
    pub scenario_source: String,
    /// The scenario document as run (after overrides), as JSON.
    pub scenario: serde_json::Value,
    /// Overrides given with `--set`.
    pub overrides: Vec<String>,
    /// Seed of the run.
    pub seed: u64,
    /// pathpool version.
    pub version: &'static str,
    /// Git commit pathpool was built from (`unknown` outside a checkout).
    pub git_commit: &'static str,
    /// Wall-clock seconds the simulation took.
    pub wall_time_s: f64,
    /// Wall-clock time the run started, seconds since the Unix epoch.
    pub started_unix_s: f64,
    /// The command line.
    pub command: Vec<String>,
}

/// The git commit this binary was built from.
#[must_use]
pub fn git_commit() -> &'static str {
    option_env!("PATHPOOL_GIT_COMMIT").unwrap_or("unknown")
}

/// Writes one table as a Parquet file.
///
/// # Errors
/// I/O or encoding errors.
pub fn write_parquet(table: &Table, path: &Path) -> Result<(), String> {
    let fields: Vec<String> = table
        .columns
        .iter()
        .map(|(name, col)| {
            let ty = match col {
                Column::F64(_) => "REQUIRED DOUBLE",
                Column::OptF64(_) => "OPTIONAL DOUBLE",
                Column::U64(_) => "REQUIRED INT64",
                Column::OptU64(_) => "OPTIONAL INT64",
                Column::Str(_) => "REQUIRED BYTE_ARRAY",
                Column::OptStr(_) => "OPTIONAL BYTE_ARRAY",
                Column::Bool(_) => "REQUIRED BOOLEAN",
                Column::OptBool(_) => "OPTIONAL BOOLEAN",
            };
            let annotation = match col {
                Column::U64(_) | Column::OptU64(_) => " (INTEGER(64,false))",
                Column::Str(_) | Column::OptStr(_) => " (UTF8)",
                _ => "",
            };
            format!("{ty} {name}{annotation};")
        })
        .collect();
    let message = format!("message {} {{ {} }}", table.name, fields.join(" "));
    let schema = Arc::new(parse_message_type(&message).map_err(|e| e.to_string())?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build(),
    );
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut writer = SerializedFileWriter::new(file, schema, props).map_err(|e| e.to_string())?;
    let mut rg = writer.next_row_group().map_err(|e| e.to_string())?;
    let mut columns = table.columns.iter();
    while let Some(mut cw) = rg.next_column().map_err(|e| e.to_string())? {
        let (_, col) = columns.next().expect("one writer per column");
        write_column(&mut cw, col).map_err(|e| e.to_string())?;
        cw.close().map_err(|e| e.to_string())?;
    }
    rg.close().map_err(|e| e.to_string())?;
    writer.close().map_err(|e| e.to_string())?;
    Ok(())
}

fn defs<T>(v: &[Option<T>]) -> Vec<i16> {
    v.iter().map(|x| i16::from(x.is_some())).collect()
}

fn write_column(
    cw: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    col: &Column,
) -> parquet::errors::Result<()> {
    let bytes = |s: &str| ByteArray::from(s.as_bytes().to_vec());
    match col {
        Column::F64(v) => cw
            .typed::<DoubleType>()
            .write_batch(v, None, None)
            .map(|_| ()),
        Column::OptF64(v) => {
            let vals: Vec<f64> = v.iter().flatten().copied().collect();
            cw.typed::<DoubleType>()
                .write_batch(&vals, Some(&defs(v)), None)
                .map(|_| ())
        }
        Column::U64(v) => {
            let vals: Vec<i64> = v.iter().map(|&x| x as i64).collect();
            cw.typed::<Int64Type>()
                .write_batch(&vals, None, None)
                .map(|_| ())
        }
        Column::OptU64(v) => {
            let vals: Vec<i64> = v.iter().flatten().map(|&x| x as i64).collect();
            cw.typed::<Int64Type>()
                .write_batch(&vals, Some(&defs(v)), None)
                .map(|_| ())
        }
        Column::Str(v) => {
            let vals: Vec<ByteArray> = v.iter().map(|s| bytes(s)).collect();
            cw.typed::<ByteArrayType>()
                .write_batch(&vals, None, None)
                .map(|_| ())
        }
        Column::OptStr(v) => {
            let vals: Vec<ByteArray> = v.iter().flatten().map(|s| bytes(s)).collect();
            cw.typed::<ByteArrayType>()
                .write_batch(&vals, Some(&defs(v)), None)
                .map(|_| ())
        }
        Column::Bool(v) => cw
            .typed::<BoolType>()
            .write_batch(v, None, None)
            .map(|_| ()),
        Column::OptBool(v) => {
            let vals: Vec<bool> = v.iter().flatten().copied().collect();
            cw.typed::<BoolType>()
                .write_batch(&vals, Some(&defs(v)), None)
                .map(|_| ())
        }
    }
}

/// Writes every result file into `dir`, atomically: files go to a sibling temporary
/// directory which replaces `dir` only when everything is written, so `dir` never holds a
/// partial result set.
///
/// # Errors
/// I/O errors, with the path.
pub fn write_results(
    results: &Results,
    wall_time_s: f64,
    provenance: &Provenance,
    dir: &Path,
) -> Result<(), String> {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let name = dir
        .file_name()
        .ok_or_else(|| format!("{}: not a directory name", dir.display()))?;
    let tmp = parent.join(format!(
        ".{}.partial-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = write_all(results, wall_time_s, provenance, &tmp).and_then(|()| {
        if dir.exists() {
            fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::rename(&tmp, dir).map_err(|e| format!("{}: {e}", dir.display()))
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result
}

fn write_all(
    results: &Results,
    wall: f64,
    provenance: &Provenance,
    tmp: &Path,
) -> Result<(), String> {
    if tmp.exists() {
        fs::remove_dir_all(tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    }
    fs::create_dir_all(tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    for table in results.tables() {
        write_parquet(&table, &tmp.join(format!("{}.parquet", table.name)))?;
    }
    write_json(&tmp.join("summary.json"), &results.summary(wall))?;
    write_json(&tmp.join("provenance.json"), provenance)?;
    Ok(())
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    text.push('\n');
    let mut f = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The default output directory for a scenario file and seed: `results/<stem>-seed<N>`.
#[must_use]
pub fn default_out_dir(scenario: &Path, seed: u64) -> PathBuf {
    let stem = scenario
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from("results").join(format!("{stem}-seed{seed}"))
}
