//! Python bindings: the scenario goes in as data, is compiled and run entirely in Rust with
//! the GIL released, and results come back as columns.
//!
//! This is the only crate that depends on PyO3. The Python façade (`python/pathpool`) owns the
//! user-facing API and documentation; the stubs are in `_pathpool.pyi`.

use std::path::PathBuf;
use std::sync::Arc;

use pathpool_lab::output::{self, Provenance};
use pathpool_lab::sweep::def::{
    read_sweep_file, Param, ParamValue, ScenarioText, SweepDef, SweepError, SweepOptions,
};
use pathpool_lab::sweep::plan::{Plan, RunError, RunTask};
use pathpool_lab::sweep::{gather, pool, replicates};
use pathpool_sim::{Column, LoadedScenario, Results, ScenarioError as SimScenarioError};
use pyo3::create_exception;
use pyo3::exceptions::{
    PyFileExistsError, PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    _pathpool,
    ScenarioError,
    PyValueError,
    "A scenario is invalid: the message names the file, line, field and what is allowed."
);

/// The Python exception for a scenario's problems: the message has one line per problem,
/// and `errors` lists them.
fn scenario_error(e: &SimScenarioError) -> PyErr {
    // A scenario built in code: name the builders' keywords that take plain numbers.
    let hint = " (the builders take numbers through keywords naming their unit: \
                pp.link(..., rate_bps=10e6, delay_s=0.005), pp.flow(..., start_s=1, \
                size_bytes=1e6, rate_bps=1e6))";
    let lines: Vec<String> = e
        .all()
        .map(|one| {
            let mut single = one.clone();
            single.also = Box::default();
            let mut text = single.to_string();
            if one.source.starts_with('<') && text.contains(" has no unit") {
                text.push_str(hint);
            }
            text
        })
        .collect();
    scenario_error_of(lines)
}

/// A `ScenarioError` for `lines`, one problem each.
fn scenario_error_of(lines: Vec<String>) -> PyErr {
    let err = ScenarioError::new_err(lines.join("\n"));
    Python::attach(|py| {
        let _ = err.value(py).setattr("errors", lines);
    });
    err
}

fn load(
    text: &str,
    format: &str,
    source_name: &str,
    overrides: &[(String, String)],
) -> PyResult<LoadedScenario> {
    match format {
        "toml" => LoadedScenario::from_toml(text, source_name, overrides),
        "json" => LoadedScenario::from_json(text, source_name, overrides),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown scenario format {other:?}; use \"toml\" or \"json\""
            )))
        }
    }
    .map_err(|e| scenario_error(&e))
}

/// The results of one run, held in Rust until Python asks for them.
#[pyclass(frozen, name = "RunHandle", module = "pathpool._pathpool")]
struct RunHandle {
    results: Results,
    wall_time_s: f64,
    provenance: Provenance,
}

fn column_to_py<'py>(
    py: Python<'py>,
    col: &Column,
) -> PyResult<(String, Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    fn le_bytes<'py, T: Copy>(
        py: Python<'py>,
        v: &[T],
        f: impl Fn(T) -> [u8; 8],
    ) -> Bound<'py, PyAny> {
        let mut buf = Vec::with_capacity(v.len() * 8);
        for &x in v {
            buf.extend_from_slice(&f(x));
        }
        PyBytes::new(py, &buf).into_any()
    }
    fn mask<'py, T>(py: Python<'py>, v: &[Option<T>]) -> Bound<'py, PyAny> {
        let m: Vec<u8> = v.iter().map(|x| u8::from(x.is_some())).collect();
        PyBytes::new(py, &m).into_any()
    }
    Ok(match col {
        Column::F64(v) => ("f64".into(), le_bytes(py, v, f64::to_le_bytes), None),
        Column::OptF64(v) => {
            let vals: Vec<f64> = v.iter().map(|x| x.unwrap_or(f64::NAN)).collect();
            (
                "f64".into(),
                le_bytes(py, &vals, f64::to_le_bytes),
                Some(mask(py, v)),
            )
        }
        Column::U64(v) => ("u64".into(), le_bytes(py, v, u64::to_le_bytes), None),
        Column::OptU64(v) => {
            let vals: Vec<u64> = v.iter().map(|x| x.unwrap_or(0)).collect();
            (
                "u64".into(),
                le_bytes(py, &vals, u64::to_le_bytes),
                Some(mask(py, v)),
            )
        }
        Column::Str(v) => ("str".into(), PyList::new(py, v)?.into_any(), None),
        Column::OptStr(v) => (
            "str".into(),
            PyList::new(py, v)?.into_any(),
            Some(mask(py, v)),
        ),
        Column::Bool(v) => {
            let b: Vec<u8> = v.iter().map(|&x| u8::from(x)).collect();
            ("bool".into(), PyBytes::new(py, &b).into_any(), None)
        }
        Column::OptBool(v) => {
            let b: Vec<u8> = v.iter().map(|x| u8::from(x.unwrap_or(false))).collect();
            (
                "bool".into(),
                PyBytes::new(py, &b).into_any(),
                Some(mask(py, v)),
            )
        }
    })
}

#[pymethods]
impl RunHandle {
    /// `{table: [(column, kind, data, mask or None), ...]}` with kind in f64, u64, bool
    /// (little-endian bytes) or str (a list).
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for table in self.results.tables() {
            let cols = PyList::empty(py);
            for (name, col) in &table.columns {
                let (kind, data, mask) = column_to_py(py, col)?;
                cols.append((name, kind, data, mask))?;
            }
            out.set_item(&table.name, cols)?;
        }
        Ok(out)
    }

    /// The run's `summary.json` as a string.
    fn summary_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.results.summary(self.wall_time_s))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// The text summary the CLI prints.
    fn summary_text(&self) -> String {
        pathpool_lab::report::summary_text(&self.results, self.wall_time_s)
    }

    /// Writes the result files (Parquet tables, summary.json, provenance.json) into `dir`,
    /// replacing only files pathpool wrote there; a directory of other files is refused
    /// (`FileExistsError`) unless `force`.
    #[pyo3(signature = (dir, force=false))]
    fn save(&self, py: Python<'_>, dir: PathBuf, force: bool) -> PyResult<()> {
        py.detach(|| {
            output::write_results(
                &self.results,
                self.wall_time_s,
                &self.provenance,
                &dir,
                force,
            )
        })
        .map_err(|e| match e {
            output::OutDirError::Refused(m) => PyFileExistsError::new_err(m.replace(
                output::results_dir::FORCE_HINT,
                "pass force=True to write them beside these files (only files named like a \
                 result file are replaced)",
            )),
            output::OutDirError::Io(m) => PyOSError::new_err(m),
        })
    }

    /// Wall-clock seconds the simulation took.
    #[getter]
    fn wall_time_s(&self) -> f64 {
        self.wall_time_s
    }

    /// The seed of the run.
    #[getter]
    fn seed(&self) -> u64 {
        self.results.seed
    }
}

/// Compiles and runs a scenario, releasing the GIL while it runs.
#[pyfunction]
#[pyo3(signature = (text, format, source_name, overrides, seed=None, progress=false))]
fn run(
    py: Python<'_>,
    text: &str,
    format: &str,
    source_name: &str,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    progress: bool,
) -> PyResult<RunHandle> {
    let loaded = load(text, format, source_name, &overrides)?;
    let seed = seed.unwrap_or_else(|| loaded.default_seed());
    let mut sim = loaded.compile(Some(seed)).map_err(|e| scenario_error(&e))?;
    if sim.name().is_none() && !source_name.starts_with('<') {
        let stem = std::path::Path::new(source_name).file_stem();
        sim.set_name(stem.map(|s| s.to_string_lossy().into_owned()));
    }
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let label = sim.name().unwrap_or("run").to_string();
    // Step through the run without the GIL, and check for Ctrl-C between steps.
    let wall = pathpool_lab::run_stepwise(&mut sim, progress, &label, |s, until| {
        py.detach(|| s.run_until(until));
        py.check_signals()
    })?;
    let provenance = Provenance {
        schema: "pathpool.provenance/1",
        scenario_source: source_name.to_string(),
        scenario: serde_json::to_value(&loaded.scenario)
            .map_err(|e| PyValueError::new_err(e.to_string()))?,
        overrides: overrides.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        seed,
        version: env!("CARGO_PKG_VERSION"),
        git_commit: output::git_commit(),
        wall_time_s: wall,
        started_unix_s,
        command: vec!["python".into()],
        files: Vec::new(),
    };
    Ok(RunHandle {
        results: sim.results(),
        wall_time_s: wall,
        provenance,
    })
}

/// Validates a scenario; returns (flows, directed links, duration in seconds).
#[pyfunction]
#[pyo3(signature = (text, format, source_name, overrides))]
fn check(
    text: &str,
    format: &str,
    source_name: &str,
    overrides: Vec<(String, String)>,
) -> PyResult<(usize, usize, f64)> {
    let loaded = load(text, format, source_name, &overrides)?;
    let sim = loaded.compile(None).map_err(|e| scenario_error(&e))?;
    Ok((sim.flow_count(), sim.link_count(), sim.end().as_secs_f64()))
}

/// The scenario document as JSON after overrides (what a run would use).
#[pyfunction]
#[pyo3(signature = (text, format, source_name, overrides))]
fn normalize(
    text: &str,
    format: &str,
    source_name: &str,
    overrides: Vec<(String, String)>,
) -> PyResult<String> {
    let loaded = load(text, format, source_name, &overrides)?;
    serde_json::to_string(&loaded.scenario).map_err(|e| PyValueError::new_err(e.to_string()))
}

fn sweep_error(e: &SweepError) -> PyErr {
    scenario_error_of(e.to_string().lines().map(str::to_string).collect())
}

/// A validated sweep with its directory, shared with the Python façade
/// (`pathpool.sweep`).
#[pyclass(frozen, name = "SweepPlan", module = "pathpool._pathpool")]
struct SweepPlan {
    plan: Arc<Plan>,
}

/// Adds Python's keyword arguments to a sweep and validates it.
#[allow(clippy::too_many_arguments)]
fn finish_plan(
    py: Python<'_>,
    mut def: SweepDef,
    grid: Vec<(String, Vec<String>)>,
    set: Vec<String>,
    reps: Option<u64>,
    seed: Option<u64>,
    table: Option<String>,
    metrics: Option<Vec<String>>,
    out: PathBuf,
) -> PyResult<SweepPlan> {
    for (key, values) in grid {
        let origin = format!("grid[{key:?}]");
        def.grid.push(Param {
            values: values
                .into_iter()
                .map(|text| ParamValue {
                    text,
                    origin: origin.clone(),
                })
                .collect(),
            key,
            origin,
        });
    }
    let opts = SweepOptions {
        grid: Vec::new(),
        set,
        reps,
        seed,
        table,
        metrics: metrics.map(|m| m.join(",")),
    };
    def.apply_options(&opts).map_err(|e| sweep_error(&e))?;
    let plan = py
        .detach(|| Plan::new(def, out))
        .map_err(|e| sweep_error(&e))?;
    Ok(SweepPlan {
        plan: Arc::new(plan),
    })
}

/// A sweep of a scenario given as text (see `run`); `overrides` apply to every run.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (text, format, source_name, overrides, grid, reps, seed, table, metrics, out))]
fn sweep_plan(
    py: Python<'_>,
    text: String,
    format: String,
    source_name: String,
    overrides: Vec<(String, String)>,
    grid: Vec<(String, Vec<String>)>,
    reps: Option<u64>,
    seed: Option<u64>,
    table: Option<String>,
    metrics: Option<Vec<String>>,
    out: PathBuf,
) -> PyResult<SweepPlan> {
    let mut def = SweepDef::new(ScenarioText {
        text,
        format,
        source: source_name,
    });
    def.set = overrides;
    finish_plan(py, def, grid, Vec::new(), reps, seed, table, metrics, out)
}

/// A sweep read from a sweep file, with keyword arguments on top (`set` as `KEY=VALUE`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (path, grid, set, reps, seed, table, metrics, out))]
fn sweep_plan_file(
    py: Python<'_>,
    path: PathBuf,
    grid: Vec<(String, Vec<String>)>,
    set: Vec<String>,
    reps: Option<u64>,
    seed: Option<u64>,
    table: Option<String>,
    metrics: Option<Vec<String>>,
    out: PathBuf,
) -> PyResult<SweepPlan> {
    let def = read_sweep_file(&path).map_err(|e| sweep_error(&e))?;
    finish_plan(py, def, grid, set, reps, seed, table, metrics, out)
}

/// The sweep `Plan::prepare` prepared in `dir`, read back from its manifest; what
/// `python -m pathpool._cluster` runs for `pathpool sweep --cluster`.
#[pyfunction]
fn sweep_plan_open(py: Python<'_>, dir: PathBuf) -> PyResult<SweepPlan> {
    let plan = py
        .detach(|| Plan::open(&dir))
        .map_err(|e| sweep_error(&e))?;
    Ok(SweepPlan {
        plan: Arc::new(plan),
    })
}

/// Whether `text` is a sweep file (a TOML document with a top-level `scenario` key).
#[pyfunction]
fn is_sweep_file(text: &str) -> bool {
    pathpool_lab::sweep::def::is_sweep_file(text)
}

/// Runs one run described by `task` (JSON from `SweepPlan.task`) without the GIL and returns
/// its result files; what a Dask worker calls.
#[pyfunction]
fn sweep_run_task<'py>(
    py: Python<'py>,
    task: &str,
) -> PyResult<Vec<(String, Bound<'py, PyBytes>)>> {
    let task: RunTask = serde_json::from_str(task)
        .map_err(|e| PyValueError::new_err(format!("not a sweep task: {e}")))?;
    let files = py.detach(|| task.run(&|| false)).map_err(|e| match e {
        RunError::Stopped => PyKeyboardInterrupt::new_err("stopped"),
        RunError::Failed(m) => PyRuntimeError::new_err(m),
    })?;
    Ok(files
        .into_iter()
        .map(|(name, bytes)| (name, PyBytes::new(py, &bytes)))
        .collect())
}

impl SweepPlan {
    /// An error unless `i` is the index of one of the plan's runs.
    fn check_run(&self, i: usize) -> PyResult<()> {
        if i < self.plan.runs.len() {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!(
                "no run {i}: the sweep has {} runs",
                self.plan.runs.len()
            )))
        }
    }
}

#[pymethods]
impl SweepPlan {
    /// The sweep directory.
    #[getter]
    fn out(&self) -> String {
        self.plan.out.display().to_string()
    }

    /// Number of runs.
    fn __len__(&self) -> usize {
        self.plan.runs.len()
    }

    /// Number of grid points.
    #[getter]
    fn points(&self) -> usize {
        self.plan.points()
    }

    /// Creates the directory and writes the manifest (refused if the directory holds a
    /// sweep of another scenario).
    fn prepare(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.plan.prepare())
            .map_err(|e| sweep_error(&e))
    }

    /// Indices of the runs not finished yet.
    fn pending(&self, py: Python<'_>) -> Vec<usize> {
        py.detach(|| self.plan.pending())
    }

    /// The id of run `i`.
    fn run_id(&self, i: usize) -> PyResult<String> {
        self.check_run(i)?;
        Ok(self.plan.runs[i].id.clone())
    }

    /// Run `i` as a self-contained task (JSON) for `sweep_run_task`.
    fn task(&self, i: usize) -> PyResult<String> {
        self.check_run(i)?;
        serde_json::to_string(&self.plan.task(i)).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Stores the result files of run `i` and marks it done.
    fn store(&self, py: Python<'_>, i: usize, files: Vec<(String, Vec<u8>)>) -> PyResult<()> {
        self.check_run(i)?;
        py.detach(|| self.plan.store(i, &files))
            .map_err(PyOSError::new_err)
    }

    /// Runs the pending runs on `jobs` threads (default: every core) without the GIL;
    /// returns how many ran. Ctrl-C stops the sweep (finished runs stay done) and raises
    /// `KeyboardInterrupt`.
    #[pyo3(signature = (jobs=None, progress=false))]
    fn run_local(&self, py: Python<'_>, jobs: Option<usize>, progress: bool) -> PyResult<usize> {
        if jobs == Some(0) {
            return Err(PyValueError::new_err("jobs must be at least 1"));
        }
        let jobs = jobs.unwrap_or_else(pool::default_jobs);
        let mut caught: Option<PyErr> = None;
        let report = py.detach(|| {
            let pending = self.plan.pending();
            pool::run_local(&self.plan, &pending, jobs, progress, || {
                Python::attach(|py| match py.check_signals() {
                    Ok(()) => false,
                    Err(e) => {
                        caught = Some(e);
                        true
                    }
                })
            })
        });
        if let Some(e) = caught {
            return Err(e);
        }
        if !report.failed.is_empty() {
            let msgs: Vec<String> = report.failed.into_iter().map(|(_, m)| m).collect();
            return Err(PyRuntimeError::new_err(format!(
                "{} runs failed (the others are kept; run the sweep again to retry): {}",
                msgs.len(),
                msgs.join("; ")
            )));
        }
        Ok(report.ran.len())
    }

    /// Gathers every run into `sweep.parquet` and `sweep.csv` and returns the table as
    /// `[(column, kind, data, mask or None), ...]` (see `RunHandle.tables`).
    fn gather<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let (table, _) = py
            .detach(|| gather::gather_and_write(&self.plan))
            .map_err(PyOSError::new_err)?;
        let cols = PyList::empty(py);
        for (name, col) in &table.columns {
            let (kind, data, mask) = column_to_py(py, col)?;
            cols.append((name, kind, data, mask))?;
        }
        Ok(cols)
    }

    /// The warning when the replicates of some grid point are identical (nothing in the
    /// scenario draws from the seed), or `None`.
    fn identical_replicates(&self, py: Python<'_>) -> PyResult<Option<String>> {
        py.detach(|| replicates::identical_replicates(&self.plan))
            .map(|same| same.map(|s| s.message()))
            .map_err(PyOSError::new_err)
    }
}

/// pathpool's Rust core.
#[pymodule]
fn _pathpool(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_class::<RunHandle>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_class::<SweepPlan>()?;
    m.add_function(wrap_pyfunction!(sweep_plan, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan_file, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan_open, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run_task, m)?)?;
    m.add_function(wrap_pyfunction!(is_sweep_file, m)?)?;
    Ok(())
}
