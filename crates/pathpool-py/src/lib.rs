//! Python bindings: the scenario goes in as data and is parsed once ([`scenario`]), each
//! run is compiled and run entirely in Rust with the GIL released, and result tables come
//! back as Parquet bytes that pyarrow reads (D205).
//!
//! This is the only crate that depends on PyO3. The Python façade (`python/pathpool`) owns the
//! user-facing API and documentation; the stubs are in `_pathpool.pyi`.

mod reproduce;

use std::path::PathBuf;
use std::sync::Arc;

use pathpool_lab::output::{self, Provenance};
use pathpool_lab::sweep::def::{
    read_sweep_file, Param, ParamValue, SweepDef, SweepError, SweepOptions,
};
use pathpool_lab::sweep::plan::{Plan, RunError, RunTask};
use pathpool_lab::sweep::{gather, pool, replicates};
use pathpool_sim::{Results, ScenarioError as SimScenarioError, Table};
use pyo3::create_exception;
use pyo3::exceptions::{
    PyFileExistsError, PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

mod scenario;

create_exception!(
    _pathpool,
    ScenarioError,
    PyValueError,
    "A scenario is invalid: the message names the file, line, field and what is allowed."
);

/// The Python exception for a scenario's problems: the message has one line per problem,
/// and `errors` lists them.
pub(crate) fn scenario_error(e: &SimScenarioError) -> PyErr {
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

/// The results of one run, held in Rust until Python asks for them.
#[pyclass(frozen, name = "RunHandle", module = "pathpool._pathpool")]
pub(crate) struct RunHandle {
    pub(crate) results: Results,
    pub(crate) wall_time_s: f64,
    pub(crate) provenance: Provenance,
}

/// A table as Parquet bytes: the encoding of the result files, which pyarrow reads into
/// Arrow with each column's type and nullability (`pathpool._tables`).
fn table_bytes<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = py
        .detach(|| output::parquet_bytes(table))
        .map_err(PyRuntimeError::new_err)?;
    Ok(PyBytes::new(py, &bytes))
}

#[pymethods]
impl RunHandle {
    /// `{table: Parquet bytes}` for every result table.
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for table in self.results.tables() {
            out.set_item(&table.name, table_bytes(py, &table)?)?;
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

fn sweep_error(e: &SweepError) -> PyErr {
    scenario_error_of(e.to_string().lines().map(str::to_string).collect())
}

/// A validated sweep with its directory, shared with the Python façade
/// (`pathpool.sweep`).
#[pyclass(frozen, name = "SweepPlan", module = "pathpool._pathpool")]
pub(crate) struct SweepPlan {
    plan: Arc<Plan>,
}

/// Adds Python's keyword arguments to a sweep and validates it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish_plan(
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
    /// Parquet bytes (see `RunHandle.tables`).
    fn gather<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (table, _) = py
            .detach(|| gather::gather_and_write(&self.plan))
            .map_err(PyOSError::new_err)?;
        table_bytes(py, &table)
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
    m.add_class::<scenario::Compiled>()?;
    m.add_function(wrap_pyfunction!(scenario::parse_count, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::reproductions, m)?)?;
    m.add_class::<SweepPlan>()?;
    m.add_function(wrap_pyfunction!(sweep_plan_file, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan_open, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run_task, m)?)?;
    m.add_function(wrap_pyfunction!(is_sweep_file, m)?)?;
    Ok(())
}
