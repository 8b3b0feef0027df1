//! Writing results: Parquet tables, `summary.json`, `provenance.json`, into a directory that
//! reads as a result only once it is complete, without touching files pathpool did not write
//! ([`results_dir`]).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::basic::{Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::parser::parse_message_type;
use pathpool_sim::{Column, Results, Table};
use serde::Serialize;

pub mod results_dir;

pub use results_dir::{check_out_dir, OutDirError};

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
    /// The files pathpool wrote into the results directory (filled in when they are written):
    /// what a later run into the same directory may replace.
    pub files: Vec<String>,
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
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    encode_parquet(table, file).map_err(|e| format!("{}: {e}", path.display()))
}

/// Encodes one table as a Parquet file in memory.
///
/// # Errors
/// Encoding errors.
pub fn parquet_bytes(table: &Table) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    encode_parquet(table, &mut buf)?;
    Ok(buf)
}

/// Reads a Parquet file written by [`write_parquet`] back into a table.
///
/// # Errors
/// I/O errors, and files with columns of other types.
pub fn read_parquet(path: &Path) -> Result<Table, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = File::open(path).map_err(|e| at(&e))?;
    let reader = SerializedFileReader::new(file).map_err(|e| at(&e))?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let mut columns: Vec<(String, Column)> = Vec::new();
    for c in schema.columns() {
        let optional = c.self_type().get_basic_info().repetition() == Repetition::OPTIONAL;
        let col = match (c.physical_type(), optional) {
            (PhysicalType::DOUBLE, false) => Column::F64(Vec::new()),
            (PhysicalType::DOUBLE, true) => Column::OptF64(Vec::new()),
            (PhysicalType::INT64, false) => Column::U64(Vec::new()),
            (PhysicalType::INT64, true) => Column::OptU64(Vec::new()),
            (PhysicalType::BYTE_ARRAY, false) => Column::Str(Vec::new()),
            (PhysicalType::BYTE_ARRAY, true) => Column::OptStr(Vec::new()),
            (PhysicalType::BOOLEAN, false) => Column::Bool(Vec::new()),
            (PhysicalType::BOOLEAN, true) => Column::OptBool(Vec::new()),
            (other, _) => return Err(at(&format!("column {}: type {other}", c.name()))),
        };
        columns.push((c.name().to_string(), col));
    }
    for row in reader.get_row_iter(None).map_err(|e| at(&e))? {
        let row = row.map_err(|e| at(&e))?;
        for ((name, col), (_, field)) in columns.iter_mut().zip(row.get_column_iter()) {
            push_field(col, field).ok_or_else(|| at(&format!("column {name}: value {field}")))?;
        }
    }
    let name = schema.name().to_string();
    let mut table = Table::new(&name);
    for (n, c) in columns {
        table.push(&n, c);
    }
    Ok(table)
}

/// Appends a Parquet value to a column of the matching kind; `None` if it does not match.
fn push_field(col: &mut Column, field: &Field) -> Option<()> {
    let u64_of = |f: &Field| match *f {
        Field::ULong(v) => Some(v),
        Field::Long(v) => u64::try_from(v).ok(),
        _ => None,
    };
    match (col, field) {
        (Column::F64(v), Field::Double(x)) => v.push(*x),
        (Column::OptF64(v), Field::Double(x)) => v.push(Some(*x)),
        (Column::OptF64(v), Field::Null) => v.push(None),
        (Column::U64(v), f) => v.push(u64_of(f)?),
        (Column::OptU64(v), Field::Null) => v.push(None),
        (Column::OptU64(v), f) => v.push(Some(u64_of(f)?)),
        (Column::Str(v), Field::Str(x)) => v.push(x.clone()),
        (Column::OptStr(v), Field::Str(x)) => v.push(Some(x.clone())),
        (Column::OptStr(v), Field::Null) => v.push(None),
        (Column::Bool(v), Field::Bool(x)) => v.push(*x),
        (Column::OptBool(v), Field::Bool(x)) => v.push(Some(*x)),
        (Column::OptBool(v), Field::Null) => v.push(None),
        _ => return None,
    }
    Some(())
}

fn encode_parquet<W: Write + Send>(table: &Table, sink: W) -> Result<(), String> {
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
    let mut writer = SerializedFileWriter::new(sink, schema, props).map_err(|e| e.to_string())?;
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

/// Writes every result file into `dir` without touching files pathpool did not write: a
/// directory of other files is refused unless `force` ([`results_dir`]).
///
/// # Errors
/// A refused directory; I/O errors, with the path.
pub fn write_results(
    results: &Results,
    wall_time_s: f64,
    provenance: &Provenance,
    dir: &Path,
    force: bool,
) -> Result<(), OutDirError> {
    let files = result_files(results, wall_time_s, provenance).map_err(OutDirError::Io)?;
    results_dir::write_result_dir(dir, &files, force)
}

/// The result files of a run, in memory: `(file name, content)` for every Parquet table,
/// `summary.json` and `provenance.json`.
///
/// # Errors
/// Encoding errors.
pub fn result_files(
    results: &Results,
    wall_time_s: f64,
    provenance: &Provenance,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files = Vec::new();
    for table in results.tables() {
        files.push((format!("{}.parquet", table.name), parquet_bytes(&table)?));
    }
    files.push((
        "summary.json".into(),
        json_bytes(&results.summary(wall_time_s))?,
    ));
    let mut provenance = provenance.clone();
    provenance.files = files
        .iter()
        .map(|(n, _)| n.clone())
        .chain([results_dir::PROVENANCE_FILE.to_string()])
        .collect();
    files.push((
        results_dir::PROVENANCE_FILE.into(),
        json_bytes(&provenance)?,
    ));
    Ok(files)
}

/// Writes `files` (plain names, no directories) into `dir`, atomically: they go to a sibling
/// temporary directory which replaces `dir` (and everything in it) only when every file is
/// written. For directories pathpool owns whole (a sweep's run directories); a user's
/// `--out` goes through [`write_results`].
///
/// # Errors
/// I/O errors, with the path; a file name with a path separator.
pub fn write_dir_atomically(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
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
    let result = write_files(&tmp, files).and_then(|()| {
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

fn write_files(tmp: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    if tmp.exists() {
        fs::remove_dir_all(tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    }
    fs::create_dir_all(tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    for (name, bytes) in files {
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(format!("{name:?}: not a plain file name"));
        }
        let path = tmp.join(name);
        let mut f = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        f.write_all(bytes)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Pretty JSON with a final newline, as every JSON file pathpool writes.
///
/// # Errors
/// Serialisation errors.
pub fn json_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text.into_bytes())
}

/// The default output directory for a scenario file and seed: `results/<stem>-seed<N>`.
#[must_use]
pub fn default_out_dir(scenario: &Path, seed: u64) -> PathBuf {
    let stem = scenario
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from("results").join(format!("{stem}-seed{seed}"))
}
