//! A validated sweep: every run with its parameters, repetition, seed and stable id; the
//! sweep directory (manifest, one directory per run with a completion marker last).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

#[cfg(test)]
use pathpool_sim::Column;
use pathpool_sim::{LoadedScenario, ScenarioError};
use serde::{Deserialize, Serialize};

use super::def::{GatherTable, SweepDef, SweepError};
use crate::output;
use crate::run::RunOneError;

/// The completion marker of a run, written last.
pub const DONE_MARKER: &str = "done.json";

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunSpec {
    /// Index of the grid point (grid order, the first parameter varying slowest).
    pub point: usize,
    /// Repetition, 0-based.
    pub rep: u64,
    /// Seed: the base seed plus `rep`.
    pub seed: u64,
    /// `(key, override text)` of every grid parameter, in grid order.
    pub params: Vec<(String, String)>,
    /// Stable id (see [`run_id`]).
    pub id: String,
}

/// The seed of repetition `rep`: `base + rep` (wrapping). Every grid point uses the same
/// seeds, so points are compared on the same random numbers.
#[must_use]
pub fn derive_seed(base: u64, rep: u64) -> u64 {
    base.wrapping_add(rep)
}

/// 64-bit FNV-1a: a hash that is the same on every machine and every release.
#[must_use]
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64's finaliser: spreads a hash's bits so that ids of similar runs look unlike.
#[must_use]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The id of the run with grid parameters `params` and `seed`: 16 hex digits of the FNV-1a
/// hash, passed through [`mix64`], of `pathpool.sweep.run/1`, then `key=text` for every
/// parameter sorted by key, then `seed=N`, each on its own line. It depends on nothing else (not on the grid's order, the
/// other points, the repetition number or the machine), so a grown grid keeps the ids of its
/// old points.
#[must_use]
pub fn run_id(params: &[(String, String)], seed: u64) -> String {
    let mut sorted: Vec<&(String, String)> = params.iter().collect();
    sorted.sort();
    let mut canon = String::from("pathpool.sweep.run/1\n");
    for (k, v) in sorted {
        canon.push_str(k);
        canon.push('=');
        canon.push_str(v);
        canon.push('\n');
    }
    canon.push_str(&format!("seed={seed}\n"));
    format!("{:016x}", mix64(fnv1a64(canon.as_bytes())))
}

/// Every grid point: the cartesian product of the parameters' values, the first parameter
/// varying slowest. A sweep without parameters has one point.
#[must_use]
pub fn grid_points(def: &SweepDef) -> Vec<Vec<(String, String)>> {
    let mut points: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for p in &def.grid {
        points = points
            .into_iter()
            .flat_map(|pt| {
                p.values.iter().map(move |v| {
                    let mut q = pt.clone();
                    q.push((p.key.clone(), v.text.clone()));
                    q
                })
            })
            .collect();
    }
    points
}

/// One run, self-contained: what a worker (a thread here, or a Dask worker) needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunTask {
    /// The scenario.
    pub scenario: super::def::ScenarioText,
    /// Fixed overrides, then the run's grid parameters.
    pub overrides: Vec<(String, String)>,
    /// Seed.
    pub seed: u64,
    /// The run's id.
    pub id: String,
}

/// Why a run did not finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// It was asked to stop.
    Stopped,
    /// It failed (scenario or encoding error).
    Failed(String),
}

/// Loads a scenario text with overrides.
fn load(
    s: &super::def::ScenarioText,
    overrides: &[(String, String)],
) -> Result<LoadedScenario, ScenarioError> {
    if s.format == "json" {
        LoadedScenario::from_json(&s.text, &s.source, overrides)
    } else {
        LoadedScenario::from_toml(&s.text, &s.source, overrides)
    }
}

impl RunTask {
    /// Runs the simulation and returns its result files (as `pathpool run` writes them).
    /// `stop` is asked between steps of the simulation.
    ///
    /// # Errors
    /// [`RunError::Stopped`] when `stop` said so; a scenario or encoding error.
    pub fn run(&self, stop: &dyn Fn() -> bool) -> Result<Vec<(String, Vec<u8>)>, RunError> {
        let failed = |e: String| RunError::Failed(format!("run {}: {e}", self.id));
        let loaded = load(&self.scenario, &self.overrides).map_err(|e| failed(e.to_string()))?;
        let mut command = vec![
            "pathpool".to_string(),
            "run".into(),
            self.scenario.source.clone(),
            "--seed".into(),
            self.seed.to_string(),
        ];
        for (k, v) in &self.overrides {
            command.push("--set".into());
            command.push(format!("{k}={v}"));
        }
        let spec = crate::run::RunSpec {
            scenario: &loaded,
            source: &self.scenario.source,
            overrides: &self.overrides,
            seed: self.seed,
            command,
            label: &self.id,
            progress: false,
        };
        let sim = crate::run::compile(&spec).map_err(|e| failed(e.to_string()))?;
        let record = crate::run_one(&spec, sim, |s, until| {
            if stop() {
                return Err(RunError::Stopped);
            }
            s.run_until(until);
            Ok(())
        })
        .map_err(|e| match e {
            RunOneError::Step(e) => e,
            RunOneError::Record(e) => failed(e),
        })?;
        output::result_files(&record.results, record.wall_time_s, &record.provenance)
            .map_err(failed)
    }
}

/// A validated sweep and its directory.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The definition.
    pub def: SweepDef,
    /// The sweep directory.
    pub out: PathBuf,
    /// The base seed (repetition 0).
    pub base_seed: u64,
    /// Every run: grid point by grid point, repetitions innermost.
    pub runs: Vec<RunSpec>,
    /// Columns the gathered table keeps from the results (key columns first).
    pub columns: Vec<String>,
    digest: String,
    scenario_json: serde_json::Value,
}

/// The sweep manifest (`manifest.json`).
#[derive(Serialize)]
struct Manifest<'a> {
    schema: &'static str,
    version: &'static str,
    git_commit: &'static str,
    /// Digest of the scenario after the fixed overrides; a directory holds one.
    scenario_digest: &'a str,
    /// The scenario after the fixed overrides.
    scenario: &'a serde_json::Value,
    definition: &'a SweepDef,
    base_seed: u64,
    runs: Vec<ManifestRun<'a>>,
}

#[derive(Serialize)]
struct ManifestRun<'a> {
    id: &'a str,
    point: usize,
    rep: u64,
    seed: u64,
    params: BTreeMap<&'a str, &'a str>,
}

#[derive(Serialize)]
struct DoneMarker<'a> {
    schema: &'static str,
    id: &'a str,
    seed: u64,
    params: BTreeMap<&'a str, &'a str>,
    finished_unix_s: f64,
}

impl Plan {
    /// Validates `def` and lists its runs: every grid value is compiled on its own, then
    /// every grid point, so a bad parameter stops the sweep before anything runs, with the
    /// parameter and where it was given.
    ///
    /// # Errors
    /// Repetitions of 0, an empty or duplicated parameter, a duplicated value, a parameter
    /// that is also a fixed override or is `seed`, a value or a point that does not compile,
    /// an unknown metric.
    pub fn new(def: SweepDef, out: PathBuf) -> Result<Plan, SweepError> {
        check_shape(&def)?;
        let base = load(&def.scenario, &def.set).map_err(|e| SweepError::at("", e.to_string()))?;
        let base_seed = def.seed.unwrap_or_else(|| base.default_seed());
        let base_sim = base
            .compile(Some(base_seed))
            .map_err(|e| SweepError::at("", e.to_string()))?;
        let compile = |extra: &[(String, String)]| -> Result<(), String> {
            let overrides: Vec<(String, String)> = def.set.iter().chain(extra).cloned().collect();
            load(&def.scenario, &overrides)
                .and_then(|l| l.compile(Some(base_seed)).map(drop))
                .map_err(|e| {
                    // The sweep's message names the parameter and value already: a problem
                    // reported against its `--set` form would name it twice.
                    e.to_string()
                        .lines()
                        .map(|line| {
                            extra
                                .iter()
                                .find_map(|(k, v)| line.strip_prefix(&format!("--set {k}={v}: ")))
                                .unwrap_or(line)
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                })
        };
        for p in &def.grid {
            for v in &p.values {
                compile(&[(p.key.clone(), v.text.clone())]).map_err(|e| {
                    SweepError::at(&v.origin, format!("{} = {}: {e}", p.key, v.text))
                })?;
            }
        }
        let points = grid_points(&def);
        if def.grid.len() > 1 {
            for pt in &points {
                compile(pt).map_err(|e| {
                    let named: Vec<String> = pt.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    SweepError::at("", format!("grid point {}: {e}", named.join(", ")))
                })?;
            }
        }
        let columns = gathered_columns(&def, &base_sim.results())?;
        check_column_names(&def, &columns)?;
        let scenario_json =
            serde_json::to_value(&base.scenario).map_err(|e| SweepError::at("", e.to_string()))?;
        let digest = format!("{:016x}", fnv1a64(scenario_json.to_string().as_bytes()));
        let mut runs = Vec::with_capacity(points.len() * def.reps as usize);
        for (point, params) in points.into_iter().enumerate() {
            for rep in 0..def.reps {
                let seed = derive_seed(base_seed, rep);
                runs.push(RunSpec {
                    point,
                    rep,
                    seed,
                    id: run_id(&params, seed),
                    params: params.clone(),
                });
            }
        }
        let mut ids = HashSet::new();
        if let Some(dup) = runs.iter().find(|r| !ids.insert(&r.id)) {
            return Err(SweepError::at(
                "",
                format!("two runs have the same parameters and seed ({})", dup.id),
            ));
        }
        Ok(Plan {
            def,
            out,
            base_seed,
            runs,
            columns,
            digest,
            scenario_json,
        })
    }

    /// Number of grid points.
    #[must_use]
    pub fn points(&self) -> usize {
        self.runs.last().map_or(0, |r| r.point + 1)
    }

    /// The directory of run `i`.
    #[must_use]
    pub fn run_dir(&self, i: usize) -> PathBuf {
        self.out.join("runs").join(&self.runs[i].id)
    }

    /// Whether run `i` finished (its completion marker exists).
    #[must_use]
    pub fn is_done(&self, i: usize) -> bool {
        self.run_dir(i).join(DONE_MARKER).is_file()
    }

    /// The runs not finished yet, in order.
    #[must_use]
    pub fn pending(&self) -> Vec<usize> {
        (0..self.runs.len()).filter(|&i| !self.is_done(i)).collect()
    }

    /// Creates the sweep directory, checks that it holds (if anything) a sweep of the same
    /// scenario, writes the manifest and removes what interrupted runs left behind.
    ///
    /// # Errors
    /// The directory holds a sweep of another scenario; I/O errors.
    pub fn prepare(&self) -> Result<(), SweepError> {
        let io =
            |p: &Path, e: std::io::Error| SweepError::at(p.display().to_string(), e.to_string());
        let runs = self.out.join("runs");
        fs::create_dir_all(&runs).map_err(|e| io(&runs, e))?;
        let manifest_path = self.out.join("manifest.json");
        if let Ok(text) = fs::read_to_string(&manifest_path) {
            let old: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| SweepError::at(manifest_path.display().to_string(), e.to_string()))?;
            let old_digest = old.get("scenario_digest").and_then(|d| d.as_str());
            if old_digest != Some(self.digest.as_str()) {
                return Err(SweepError::at(
                    manifest_path.display().to_string(),
                    "this directory holds a sweep of a different scenario (after fixed \
                     overrides); its runs would be mixed with these. Use another output \
                     directory, or delete this one",
                ));
            }
        }
        let manifest = Manifest {
            schema: "pathpool.sweep/1",
            version: env!("CARGO_PKG_VERSION"),
            git_commit: output::git_commit(),
            scenario_digest: &self.digest,
            scenario: &self.scenario_json,
            definition: &self.def,
            base_seed: self.base_seed,
            runs: self
                .runs
                .iter()
                .map(|r| ManifestRun {
                    id: &r.id,
                    point: r.point,
                    rep: r.rep,
                    seed: r.seed,
                    params: params_map(&r.params),
                })
                .collect(),
        };
        let bytes = output::json_bytes(&manifest).map_err(|e| SweepError::at("", e))?;
        write_file_atomically(&manifest_path, &bytes)
            .map_err(|e| SweepError::at(manifest_path.display().to_string(), e))?;
        for entry in fs::read_dir(&runs).map_err(|e| io(&runs, e))? {
            let entry = entry.map_err(|e| io(&runs, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') && name.contains(".partial-") {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
        Ok(())
    }

    /// The sweep that [`Plan::prepare`] prepared in `dir`, read back from its manifest and
    /// validated again: what another process (the Dask runner of `pathpool sweep --cluster`)
    /// needs to run and store the pending runs of a sweep the command prepared.
    ///
    /// # Errors
    /// No readable manifest; a definition that no longer validates; a scenario other than
    /// the one the manifest names (its digest).
    pub fn open(dir: &Path) -> Result<Plan, SweepError> {
        /// The parts of the manifest that define the sweep.
        #[derive(Deserialize)]
        struct Stored {
            scenario_digest: String,
            definition: SweepDef,
        }
        let path = dir.join("manifest.json");
        let at = |e: String| SweepError::at(path.display().to_string(), e);
        let text = fs::read_to_string(&path).map_err(|e| at(e.to_string()))?;
        let stored: Stored = serde_json::from_str(&text).map_err(|e| at(e.to_string()))?;
        let plan = Plan::new(stored.definition, dir.to_path_buf())?;
        if plan.digest != stored.scenario_digest {
            return Err(at(format!(
                "the sweep's scenario now has digest {} where the manifest says {}: the \
                 scenario changed since the sweep was prepared",
                plan.digest, stored.scenario_digest
            )));
        }
        Ok(plan)
    }

    /// The self-contained task of run `i`.
    #[must_use]
    pub fn task(&self, i: usize) -> RunTask {
        let r = &self.runs[i];
        RunTask {
            scenario: self.def.scenario.clone(),
            overrides: self.def.set.iter().chain(&r.params).cloned().collect(),
            seed: r.seed,
            id: r.id.clone(),
        }
    }

    /// Stores the result files of run `i`: the run's directory is replaced atomically, then
    /// the completion marker is written (to a temporary name, renamed last).
    ///
    /// # Errors
    /// Files that are not a result set; I/O errors.
    pub fn store(&self, i: usize, files: &[(String, Vec<u8>)]) -> Result<(), String> {
        let r = &self.runs[i];
        for needed in [
            "summary.json",
            "flows.parquet",
            "links.parquet",
            "subflows.parquet",
        ] {
            if !files.iter().any(|(n, _)| n == needed) {
                return Err(format!("run {}: the result files lack {needed}", r.id));
            }
        }
        if files.iter().any(|(n, _)| n == DONE_MARKER) {
            return Err(format!(
                "run {}: a result file is named {DONE_MARKER}",
                r.id
            ));
        }
        let dir = self.run_dir(i);
        output::write_dir_atomically(&dir, files)?;
        let marker = DoneMarker {
            schema: "pathpool.sweep.done/1",
            id: &r.id,
            seed: r.seed,
            params: params_map(&r.params),
            finished_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
        };
        write_file_atomically(&dir.join(DONE_MARKER), &output::json_bytes(&marker)?)
    }

    /// Runs run `i` and stores it; `Ok(false)` if `stop` stopped it (nothing is stored).
    ///
    /// # Errors
    /// The run failed or could not be stored.
    pub fn run_and_store(&self, i: usize, stop: &dyn Fn() -> bool) -> Result<bool, String> {
        match self.task(i).run(stop) {
            Ok(files) => self.store(i, &files).map(|()| true),
            Err(RunError::Stopped) => Ok(false),
            Err(RunError::Failed(e)) => Err(e),
        }
    }
}

fn params_map(params: &[(String, String)]) -> BTreeMap<&str, &str> {
    params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// Writes a file under a temporary name beside it, then renames it into place.
pub(crate) fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    fs::write(&tmp, bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        format!("{}: {e}", path.display())
    })
}

/// Checks what needs no compilation: repetitions, keys, values.
fn check_shape(def: &SweepDef) -> Result<(), SweepError> {
    if def.reps == 0 {
        return Err(SweepError::at(
            "reps",
            "must be at least 1 (the number of seeds per grid point)",
        ));
    }
    let mut keys = HashSet::new();
    for p in &def.grid {
        if p.key.trim().is_empty() {
            return Err(SweepError::at(
                &p.origin,
                "a grid parameter with an empty key",
            ));
        }
        if p.key == "seed" {
            return Err(SweepError::at(
                &p.origin,
                "seed: seeds are not a grid parameter; use reps (seeds base, base+1, ...) and \
                 the base seed",
            ));
        }
        if !keys.insert(p.key.as_str()) {
            return Err(SweepError::at(
                &p.origin,
                format!("{}: the grid has this parameter twice", p.key),
            ));
        }
        if def.set.iter().any(|(k, _)| k == &p.key) {
            return Err(SweepError::at(
                &p.origin,
                format!("{}: both a grid parameter and a fixed override", p.key),
            ));
        }
        if p.values.is_empty() {
            return Err(SweepError::at(
                &p.origin,
                format!("{}: empty list of values", p.key),
            ));
        }
        let mut seen = HashSet::new();
        for v in &p.values {
            if !seen.insert(v.text.as_str()) {
                return Err(SweepError::at(
                    &v.origin,
                    format!("{}: the value {} is listed twice", p.key, v.text),
                ));
            }
        }
    }
    Ok(())
}

/// The result columns the sweep keeps, checked against the table's real columns.
fn gathered_columns(
    def: &SweepDef,
    sample: &pathpool_sim::Results,
) -> Result<Vec<String>, SweepError> {
    let available: Vec<String> = match def.table {
        GatherTable::Flows => column_names(&sample.flows_table()),
        GatherTable::Links => column_names(&sample.links_table()),
        GatherTable::Subflows => column_names(&sample.subflows_table()),
        GatherTable::Caches => column_names(&sample.caches_table()),
        GatherTable::Summary => super::gather::SUMMARY_COLUMNS
            .iter()
            .map(|s| (*s).to_string())
            .collect(),
    };
    if def.metrics.is_empty() {
        return Ok(available);
    }
    let mut cols: Vec<String> = def
        .table
        .key_columns()
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    for m in &def.metrics {
        if !available.contains(m) {
            return Err(SweepError::at(
                "metrics",
                format!(
                    "{m:?} is not a column of the {} table; its columns are {}",
                    def.table.name(),
                    available.join(", ")
                ),
            ));
        }
        if !cols.contains(m) {
            cols.push(m.clone());
        }
    }
    Ok(cols)
}

/// Parameter columns may not take the name of another column of the gathered table.
fn check_column_names(def: &SweepDef, columns: &[String]) -> Result<(), SweepError> {
    for p in &def.grid {
        if super::gather::RUN_COLUMNS.contains(&p.key.as_str()) || columns.contains(&p.key) {
            return Err(SweepError::at(
                &p.origin,
                format!(
                    "{}: the gathered table already has a column of this name",
                    p.key
                ),
            ));
        }
    }
    Ok(())
}

fn column_names(t: &pathpool_sim::Table) -> Vec<String> {
    t.columns.iter().map(|(n, _)| n.clone()).collect()
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
