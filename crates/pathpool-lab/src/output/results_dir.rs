//! Where a run's results go, without ever deleting a file pathpool did not write.
//!
//! A results directory is recognised by its `provenance.json` (schema `pathpool.provenance/…`),
//! whose `files` list names the files pathpool wrote there. Writing results into `DIR`:
//! - `DIR` does not exist: the files go to a hidden sibling directory renamed to `DIR` at the
//!   end, so `DIR` appears only complete;
//! - `DIR` is empty or holds an earlier result: the new files are written to a hidden directory
//!   inside `DIR`, the old `summary.json` and `provenance.json` are removed (the directory no
//!   longer reads as a result), the earlier result's other files that the new one does not
//!   replace are removed, the new files are renamed into place and `provenance.json` comes
//!   last. Every other file in `DIR` (a scenario, a paper, a plot) is left alone;
//! - `DIR` holds other files and no result: refused, unless forced, in which case the results
//!   are written beside those files as above (a file with the name of a result file is
//!   replaced; nothing else is touched).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Prefix of the hidden directory a write stages its files in, inside the results directory.
const STAGING_PREFIX: &str = ".pathpool-partial-";

/// The file whose presence (with a pathpool schema) makes a directory a results directory.
pub const PROVENANCE_FILE: &str = "provenance.json";

/// The files of a result set that readers look for first; they are removed first and
/// written last so that a directory being rewritten never reads as a complete result.
const MARKERS: [&str; 2] = ["summary.json", PROVENANCE_FILE];

/// The end of a refusal: front ends replace it with their own spelling of "force" (the CLI's
/// `--force`, Python's `force=True`).
pub const FORCE_HINT: &str =
    "force to write them beside these files (only files named like a result file are replaced)";

/// Why results cannot be written to a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutDirError {
    /// The directory holds files that are not pathpool results (or is not a directory): the
    /// user must choose another one or force. Bad input.
    Refused(String),
    /// An I/O failure, with the path.
    Io(String),
}

impl std::fmt::Display for OutDirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutDirError::Refused(m) | OutDirError::Io(m) => f.write_str(m),
        }
    }
}

fn io_at(path: &Path, e: impl std::fmt::Display) -> OutDirError {
    OutDirError::Io(format!("{}: {e}", path.display()))
}

/// What an output directory holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Nothing there yet.
    Absent,
    /// A directory with nothing but, possibly, a crashed write's staging directory.
    Empty,
    /// An earlier result; the files pathpool wrote there.
    Results(Vec<String>),
    /// A directory with files that are not a result (their names, sorted).
    Foreign(Vec<String>),
}

/// The names of the files a result directory written by `provenance` owns. Results written
/// before provenance listed its files own the result files of that version.
fn owned_files(provenance: &serde_json::Value) -> Vec<String> {
    match provenance
        .get("files")
        .and_then(serde_json::Value::as_array)
    {
        Some(list) => list
            .iter()
            .filter_map(serde_json::Value::as_str)
            .filter(|n| is_plain_name(n))
            .map(str::to_string)
            .collect(),
        None => [
            "flows.parquet",
            "links.parquet",
            "flow_timeseries.parquet",
            "link_timeseries.parquet",
            "subflows.parquet",
            "subflow_timeseries.parquet",
            "caches.parquet",
            "summary.json",
            PROVENANCE_FILE,
        ]
        .map(String::from)
        .to_vec(),
    }
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['/', '\\']) && !name.starts_with('.')
}

fn state(dir: &Path) -> Result<State, OutDirError> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::Absent),
        Err(e) => return Err(io_at(dir, e)),
    };
    if !meta.is_dir() && !fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Err(OutDirError::Refused(format!(
            "{}: exists and is not a directory; give a directory for the results",
            dir.display()
        )));
    }
    let provenance = dir.join(PROVENANCE_FILE);
    if let Ok(text) = fs::read_to_string(&provenance) {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
            let ours = value
                .get("schema")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|s| s.starts_with("pathpool.provenance/"));
            if ours {
                return Ok(State::Results(owned_files(&value)));
            }
        }
    }
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_at(dir, e))? {
        let entry = entry.map_err(|e| io_at(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(STAGING_PREFIX) {
            names.push(name);
        }
    }
    names.sort();
    Ok(if names.is_empty() {
        State::Empty
    } else {
        State::Foreign(names)
    })
}

fn refusal(dir: &Path, names: &[String]) -> OutDirError {
    const SHOWN: usize = 5;
    let mut listed = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        listed.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    OutDirError::Refused(format!(
        "{}: the directory holds files that are not pathpool results ({listed}), and pathpool \
         never deletes a file it did not write; choose a new or empty directory for the \
         results, or {FORCE_HINT}",
        dir.display()
    ))
}

/// Checks, before a run, that its results may be written to `dir`: it does not exist, is
/// empty, holds an earlier result, or `force` is set.
///
/// # Errors
/// [`OutDirError::Refused`] for a directory of other files (or a file), without `force`.
pub fn check_out_dir(dir: &Path, force: bool) -> Result<(), OutDirError> {
    match state(dir)? {
        State::Foreign(names) if !force => Err(refusal(dir, &names)),
        _ => Ok(()),
    }
}

/// Writes the result `files` (plain names; `provenance.json` among them) into `dir` as the
/// module documentation describes: atomically when `dir` is new, otherwise replacing only
/// what pathpool wrote there.
///
/// # Errors
/// [`OutDirError::Refused`] as [`check_out_dir`]; I/O errors, with the path. On an error
/// nothing outside pathpool's own files has been touched.
pub fn write_result_dir(
    dir: &Path,
    files: &[(String, Vec<u8>)],
    force: bool,
) -> Result<(), OutDirError> {
    if let Some((bad, _)) = files.iter().find(|(n, _)| !is_plain_name(n)) {
        return Err(OutDirError::Io(format!("{bad:?}: not a plain file name")));
    }
    match state(dir)? {
        State::Absent => write_new_dir(dir, files),
        State::Empty => replace_in_place(dir, files, &[]),
        State::Results(owned) => replace_in_place(dir, files, &owned),
        State::Foreign(names) if !force => Err(refusal(dir, &names)),
        State::Foreign(_) => replace_in_place(dir, files, &[]),
    }
}

/// Files into a sibling staging directory, renamed to `dir` when all are written.
fn write_new_dir(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), OutDirError> {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|e| io_at(parent, e))?;
    let name = dir
        .file_name()
        .ok_or_else(|| OutDirError::Refused(format!("{}: not a directory name", dir.display())))?;
    let staging = parent.join(format!(
        ".{}.partial-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result =
        stage(&staging, files).and_then(|()| fs::rename(&staging, dir).map_err(|e| io_at(dir, e)));
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result
}

/// Files into a staging directory inside `dir`, then renamed into place one by one, the
/// markers last; `previously_owned` files the new set does not contain are removed.
fn replace_in_place(
    dir: &Path,
    files: &[(String, Vec<u8>)],
    previously_owned: &[String],
) -> Result<(), OutDirError> {
    remove_stale_staging(dir)?;
    let staging = dir.join(format!("{STAGING_PREFIX}{}", std::process::id()));
    if let Err(e) = stage(&staging, files) {
        let _ = fs::remove_dir_all(&staging);
        return Err(e);
    }
    let result = (|| {
        for marker in MARKERS {
            remove_if_present(&dir.join(marker))?;
        }
        for old in previously_owned {
            if !files.iter().any(|(n, _)| n == old) {
                remove_if_present(&dir.join(old))?;
            }
        }
        let (markers, rest): (Vec<_>, Vec<_>) = files
            .iter()
            .partition(|(n, _)| MARKERS.contains(&n.as_str()));
        let mut markers = markers;
        markers.sort_by_key(|(n, _)| MARKERS.iter().position(|m| m == n));
        for (name, _) in rest.into_iter().chain(markers) {
            let to = dir.join(name);
            fs::rename(staging.join(name), &to).map_err(|e| io_at(&to, e))?;
        }
        Ok(())
    })();
    let _ = fs::remove_dir_all(&staging);
    result
}

/// Staging directories left inside `dir` by writes that crashed (they are pathpool's).
fn remove_stale_staging(dir: &Path) -> Result<(), OutDirError> {
    for entry in fs::read_dir(dir).map_err(|e| io_at(dir, e))? {
        let entry = entry.map_err(|e| io_at(dir, e))?;
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(STAGING_PREFIX)
        {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
    Ok(())
}

fn remove_if_present(path: &Path) -> Result<(), OutDirError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_at(path, e)),
        _ => Ok(()),
    }
}

fn stage(staging: &Path, files: &[(String, Vec<u8>)]) -> Result<(), OutDirError> {
    if staging.exists() {
        fs::remove_dir_all(staging).map_err(|e| io_at(staging, e))?;
    }
    fs::create_dir_all(staging).map_err(|e| io_at(staging, e))?;
    for (name, bytes) in files {
        let path: PathBuf = staging.join(name);
        let mut f = fs::File::create(&path).map_err(|e| io_at(&path, e))?;
        f.write_all(bytes).map_err(|e| io_at(&path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scratch(PathBuf);
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
    fn scratch(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!(
            "pathpool-results-dir-{}-{name}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    fn result(tag: &str, tables: &[&str]) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = tables
            .iter()
            .map(|t| (format!("{t}.parquet"), tag.as_bytes().to_vec()))
            .collect();
        let listed: Vec<String> = files
            .iter()
            .map(|(n, _)| n.clone())
            .chain(MARKERS.map(String::from))
            .collect();
        files.push(("summary.json".into(), tag.as_bytes().to_vec()));
        let provenance = serde_json::json!({"schema": "pathpool.provenance/1", "files": listed});
        files.push((PROVENANCE_FILE.into(), provenance.to_string().into_bytes()));
        files
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_directory_is_created_whole() {
        let s = scratch("new");
        let dir = s.0.join("a/b/out");
        write_result_dir(&dir, &result("1", &["flows"]), false).unwrap();
        assert_eq!(
            names(&dir),
            ["flows.parquet", "provenance.json", "summary.json"]
        );
        assert_eq!(
            names(&s.0.join("a/b")),
            ["out"],
            "no staging left beside it"
        );
    }

    #[test]
    fn a_directory_of_other_files_is_refused_and_left_alone() {
        let s = scratch("foreign");
        fs::write(s.0.join("paper.tex"), "x").unwrap();
        fs::write(s.0.join("my.toml"), "y").unwrap();
        let e = check_out_dir(&s.0, false).unwrap_err();
        let OutDirError::Refused(msg) = &e else {
            panic!("{e:?}")
        };
        assert!(msg.contains("my.toml, paper.tex"), "{msg}");
        assert!(msg.ends_with(FORCE_HINT), "{msg}");
        assert_eq!(
            write_result_dir(&s.0, &result("1", &["flows"]), false).unwrap_err(),
            e
        );
        assert_eq!(names(&s.0), ["my.toml", "paper.tex"]);
    }

    #[test]
    fn forced_results_go_beside_the_other_files() {
        let s = scratch("forced");
        fs::write(s.0.join("paper.tex"), "x").unwrap();
        write_result_dir(&s.0, &result("1", &["flows"]), true).unwrap();
        assert_eq!(
            names(&s.0),
            [
                "flows.parquet",
                "paper.tex",
                "provenance.json",
                "summary.json"
            ]
        );
        assert_eq!(fs::read_to_string(s.0.join("paper.tex")).unwrap(), "x");
    }

    #[test]
    fn rewriting_a_result_replaces_only_pathpools_files() {
        let s = scratch("rewrite");
        write_result_dir(&s.0, &result("old", &["flows", "caches"]), false).unwrap();
        fs::write(s.0.join("my.toml"), "mine").unwrap();
        fs::write(s.0.join("throughput.png"), "plot").unwrap();
        check_out_dir(&s.0, false).unwrap();
        write_result_dir(&s.0, &result("new", &["flows"]), false).unwrap();
        assert_eq!(
            names(&s.0),
            [
                "flows.parquet",
                "my.toml",
                "provenance.json",
                "summary.json",
                "throughput.png"
            ],
            "caches.parquet was the old result's and is not in the new one"
        );
        assert_eq!(
            fs::read_to_string(s.0.join("flows.parquet")).unwrap(),
            "new"
        );
        assert_eq!(fs::read_to_string(s.0.join("my.toml")).unwrap(), "mine");
    }

    #[test]
    fn a_result_from_before_the_file_list_owns_the_result_names_only() {
        let s = scratch("legacy");
        fs::write(s.0.join("flows.parquet"), "old").unwrap();
        fs::write(s.0.join("caches.parquet"), "old").unwrap();
        fs::write(s.0.join("notes.txt"), "mine").unwrap();
        fs::write(
            s.0.join(PROVENANCE_FILE),
            r#"{"schema": "pathpool.provenance/1"}"#,
        )
        .unwrap();
        write_result_dir(&s.0, &result("new", &["flows"]), false).unwrap();
        assert_eq!(
            names(&s.0),
            [
                "flows.parquet",
                "notes.txt",
                "provenance.json",
                "summary.json"
            ]
        );
    }

    #[test]
    fn a_provenance_file_of_another_program_does_not_make_a_result() {
        let s = scratch("other-provenance");
        fs::write(s.0.join(PROVENANCE_FILE), r#"{"schema": "other/1"}"#).unwrap();
        assert!(matches!(
            check_out_dir(&s.0, false),
            Err(OutDirError::Refused(_))
        ));
    }

    #[test]
    fn a_file_in_place_of_the_directory_is_refused_even_forced() {
        let s = scratch("file");
        let f = s.0.join("out");
        fs::write(&f, "x").unwrap();
        assert!(matches!(
            check_out_dir(&f, true),
            Err(OutDirError::Refused(_))
        ));
        assert_eq!(fs::read_to_string(&f).unwrap(), "x");
    }

    #[test]
    fn an_empty_directory_and_a_crashed_write_are_taken_over() {
        let s = scratch("empty");
        fs::create_dir_all(s.0.join(format!("{STAGING_PREFIX}1"))).unwrap();
        write_result_dir(&s.0, &result("1", &["flows"]), false).unwrap();
        assert_eq!(
            names(&s.0),
            ["flows.parquet", "provenance.json", "summary.json"]
        );
    }
}
