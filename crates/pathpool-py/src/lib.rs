//! Python bindings: the scenario goes in as data, is compiled and run entirely in Rust with
//! the GIL released, and results come back as columns.
//!
//! This is the only crate that depends on PyO3. The Python façade (`python/pathpool`) owns the
//! user-facing API and documentation; the stubs are in `_pathpool.pyi`.

use std::ffi::OsString;
use std::path::PathBuf;

use pathpool_cli::output::{self, Provenance};
use pathpool_sim::{Column, LoadedScenario, Results, ScenarioError as SimScenarioError};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    _pathpool,
    ScenarioError,
    PyValueError,
    "A scenario is invalid: the message names the file, line, field and what is allowed."
);

fn scenario_error(e: &SimScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
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
        pathpool_cli::report::summary_text(&self.results, self.wall_time_s)
    }

    /// Writes the result files (Parquet tables, summary.json, provenance.json) into `dir`.
    fn save(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        py.detach(|| output::write_results(&self.results, self.wall_time_s, &self.provenance, &dir))
            .map_err(PyOSError::new_err)
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
    let wall = pathpool_cli::run_stepwise(&mut sim, progress, &label, |s, until| {
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

/// Runs the `pathpool` command line (argv includes the program name); returns the exit code.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> PyResult<u8> {
    let args: Vec<OsString> = argv.into_iter().map(OsString::from).collect();
    Ok(py.detach(|| pathpool_cli::run_cli(args)))
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
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    Ok(())
}
