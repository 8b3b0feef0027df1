//! The documents' reproductions from Python (`pathpool.reproduce`): the lab runs them exactly
//! as `pathpool reproduce` does, with the GIL released, and writes the same output directory.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use pathpool_lab::reproduce::{
    check_convergence_linux_only, check_e8_settings, select, write_outputs, Ctx, Runner,
    EXPERIMENTS, KERNEL_EXPERIMENTS,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// Every reproduction: (id, title, source), in documentation order, then those on this
/// machine's kernel.
#[pyfunction]
pub(crate) fn reproductions() -> Vec<(&'static str, &'static str, &'static str)> {
    EXPERIMENTS
        .iter()
        .chain(KERNEL_EXPERIMENTS)
        .map(|e| (e.id, e.title, e.source))
        .collect()
}

/// Runs reproduction `id` and writes its output directory `out`; returns the comparisons as
/// JSON lines (the rows of `pathpool reproduce ID --json`) and the observations as a JSON list.
#[pyfunction]
#[pyo3(signature = (id, out, quick=true, seeds=None, jobs=None, overrides=Vec::new(), zoo_dir=None, server_quickack=false, settings=Vec::new(), progress=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn reproduce(
    py: Python<'_>,
    id: &str,
    out: PathBuf,
    quick: bool,
    seeds: Option<u32>,
    jobs: Option<usize>,
    overrides: Vec<(String, String)>,
    zoo_dir: Option<PathBuf>,
    server_quickack: bool,
    settings: Vec<String>,
    progress: bool,
) -> PyResult<(String, String)> {
    let experiment =
        match select(id) {
            Ok(list) if list.len() == 1 => list[0],
            Ok(_) => return Err(PyValueError::new_err(
                "reproduce() takes one experiment id; run them one by one (see reproductions())",
            )),
            Err(e) => return Err(PyValueError::new_err(e.to_string())),
        };
    if server_quickack {
        check_convergence_linux_only(&[experiment], "server_quickack=True")
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    if !settings.is_empty() {
        check_convergence_linux_only(&[experiment], "settings=")
            .and_then(|()| check_e8_settings(&settings))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    if seeds == Some(0) {
        return Err(PyValueError::new_err("seeds must be at least 1"));
    }
    if jobs == Some(0) {
        return Err(PyValueError::new_err("jobs must be at least 1"));
    }
    let jobs = jobs.unwrap_or_else(pathpool_lab::exec::default_jobs);
    py.detach(move || {
        let runner = Runner::new(jobs, progress, overrides.clone());
        let ctx = Ctx {
            quick,
            seeds,
            runner: &runner,
            out: out.clone(),
            zoo_dir,
            jobs,
            progress,
            extra: overrides,
            server_quickack,
            e8_settings: settings,
            stop: Arc::new(AtomicBool::new(false)),
        };
        let report = (experiment.run)(&ctx).map_err(|m| format!("{id}: {m}"))?;
        write_outputs(experiment, &report, &out).map_err(|m| format!("{id}: {m}"))?;
        let mut comparisons = String::new();
        for c in &report.comparisons {
            comparisons += &serde_json::to_string(c).map_err(|e| e.to_string())?;
            comparisons.push('\n');
        }
        let observations =
            serde_json::to_string(&report.observations).map_err(|e| e.to_string())?;
        Ok::<_, String>((comparisons, observations))
    })
    .map_err(PyRuntimeError::new_err)
}
