//! A scenario parsed once: `pathpool.Scenario` holds one [`Compiled`], and every check, run
//! and sweep of it starts from the parsed document instead of the text.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use pathpool_lab::run::{RunOneError, RunSpec};
use pathpool_lab::sweep::def::{ScenarioText, SweepDef};
use pathpool_sim::LoadedScenario;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{finish_plan, scenario_error, RunHandle, SweepPlan};

/// Scenario texts parsed by this module since it was loaded: what the tests count to see
/// that a scenario is parsed once however often it runs.
static PARSES: AtomicU64 = AtomicU64::new(0);

/// How many scenario texts the extension has parsed (for tests).
#[pyfunction]
pub(crate) fn parse_count() -> u64 {
    PARSES.load(Ordering::Relaxed)
}

fn load(
    text: &str,
    format: &str,
    source_name: &str,
    overrides: &[(String, String)],
) -> PyResult<LoadedScenario> {
    let loaded = match format {
        "toml" => LoadedScenario::from_toml(text, source_name, overrides),
        "json" => LoadedScenario::from_json(text, source_name, overrides),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown scenario format {other:?}; use \"toml\" or \"json\""
            )))
        }
    };
    PARSES.fetch_add(1, Ordering::Relaxed);
    loaded.map_err(|e| scenario_error(&e))
}

/// A parsed scenario (its fields known and well-formed; what depends on the seed and on
/// other fields is checked when it is compiled) with the text it came from, which sweeps
/// need: their runs are self-contained tasks that a Dask worker parses itself.
#[pyclass(frozen, name = "CompiledScenario", module = "pathpool._pathpool")]
pub(crate) struct Compiled {
    loaded: LoadedScenario,
    text: ScenarioText,
    overrides: Vec<(String, String)>,
}

#[pymethods]
impl Compiled {
    /// Parses `text` (`format` is `"toml"` or `"json"`) with `overrides` applied.
    #[new]
    #[pyo3(signature = (text, format, source_name, overrides))]
    fn new(
        text: String,
        format: String,
        source_name: String,
        overrides: Vec<(String, String)>,
    ) -> PyResult<Self> {
        let loaded = load(&text, &format, &source_name, &overrides)?;
        Ok(Compiled {
            loaded,
            text: ScenarioText {
                text,
                format,
                source: source_name,
            },
            overrides,
        })
    }

    /// Where the scenario came from (a file name, or `<scenario>`).
    #[getter]
    fn source(&self) -> &str {
        &self.text.source
    }

    /// Validates the whole scenario; returns (flows, directed links, duration in seconds).
    fn check(&self, py: Python<'_>) -> PyResult<(usize, usize, f64)> {
        let sim = py
            .detach(|| self.loaded.compile(None))
            .map_err(|e| scenario_error(&e))?;
        Ok((sim.flow_count(), sim.link_count(), sim.end().as_secs_f64()))
    }

    /// The scenario document as JSON after overrides (what a run uses).
    fn normalized_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.loaded.scenario)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Compiles and runs the scenario with `seed` (default: its own), releasing the GIL
    /// while it runs and checking for Ctrl-C between steps.
    #[pyo3(signature = (seed=None, progress=false))]
    fn run(&self, py: Python<'_>, seed: Option<u64>, progress: bool) -> PyResult<RunHandle> {
        let source_name = &self.text.source;
        let seed = seed.unwrap_or_else(|| self.loaded.default_seed());
        let mut sim = py
            .detach(|| self.loaded.compile(Some(seed)))
            .map_err(|e| scenario_error(&e))?;
        if sim.name().is_none() && !source_name.starts_with('<') {
            let stem = std::path::Path::new(source_name).file_stem();
            sim.set_name(stem.map(|s| s.to_string_lossy().into_owned()));
        }
        let label = sim.name().unwrap_or("run").to_string();
        let spec = RunSpec {
            scenario: &self.loaded,
            source: source_name,
            overrides: &self.overrides,
            seed,
            command: vec!["python".into()],
            label: &label,
            progress,
        };
        // Step through the run without the GIL, and check for Ctrl-C between steps.
        let record = pathpool_lab::run_one(&spec, sim, |s, until| {
            py.detach(|| s.run_until(until));
            py.check_signals()
        })
        .map_err(|e| match e {
            RunOneError::Step(e) => e,
            RunOneError::Record(m) => PyValueError::new_err(m),
        })?;
        Ok(RunHandle {
            results: record.results,
            wall_time_s: record.wall_time_s,
            provenance: record.provenance,
        })
    }

    /// A sweep of this scenario: `grid` over `set` and the scenario's own overrides
    /// (`set` as `(key, value)` pairs).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (grid, set, reps, seed, table, metrics, out))]
    fn sweep_plan(
        &self,
        py: Python<'_>,
        grid: Vec<(String, Vec<String>)>,
        set: Vec<(String, String)>,
        reps: Option<u64>,
        seed: Option<u64>,
        table: Option<String>,
        metrics: Option<Vec<String>>,
        out: PathBuf,
    ) -> PyResult<SweepPlan> {
        let mut def = SweepDef::new(self.text.clone());
        def.set = self.overrides.iter().cloned().chain(set).collect();
        finish_plan(py, def, grid, Vec::new(), reps, seed, table, metrics, out)
    }
}
