//! Sweeps: a scenario run over a grid of overrides × repetitions, in parallel on the local
//! cores (or on a Dask cluster through the Python package), resumable, gathered into one
//! table. The format and the rules are in `docs/sweeps.md`.
//!
//! The pieces: [`def`] reads a sweep (command line or sweep file), [`plan`] validates it and
//! lists its runs (stable ids, seeds) and owns the sweep directory, [`pool`] runs pending
//! runs on threads, [`gather`] builds `sweep.parquet` and `sweep.csv`; [`execute`] does all
//! of it.

pub mod def;
pub mod gather;
pub mod plan;
pub mod pool;
pub mod replicates;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::LabError;
use def::{is_sweep_file, read_sweep_file, ScenarioText, SweepDef, SweepError, SweepOptions};
use plan::Plan;

/// Why runs handed to a cluster did not all finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecError {
    /// The user interrupted (Ctrl-C).
    Interrupted,
    /// Something failed; the message says what.
    Failed(String),
}

/// Runs a sweep's pending runs elsewhere (a Dask cluster) and stores each finished one with
/// [`Plan::store`]. The Python package provides one.
pub trait ClusterRunner {
    /// Runs `pending` (indices into `plan.runs`) on the cluster at `address`.
    ///
    /// # Errors
    /// Interrupted, or a failure (the runs already stored stay stored).
    fn run(
        &self,
        plan: &Arc<Plan>,
        pending: &[usize],
        address: &str,
        progress: bool,
    ) -> Result<(), ExecError>;
}

/// The sweep a command line describes: a sweep file, or a scenario file with options; and
/// whether `input` is a sweep file.
///
/// # Errors
/// Unreadable files and everything [`SweepDef::apply_options`] rejects.
pub fn definition(input: &Path, opts: &SweepOptions) -> Result<(SweepDef, bool), SweepError> {
    let text = std::fs::read_to_string(input)
        .map_err(|e| SweepError::at(input.display().to_string(), e.to_string()))?;
    let sweep_file = is_sweep_file(&text);
    let mut def = if sweep_file {
        read_sweep_file(input)?
    } else {
        SweepDef::new(ScenarioText {
            text,
            format: "toml".into(),
            source: input.display().to_string(),
        })
    };
    def.apply_options(opts)?;
    Ok((def, sweep_file))
}

/// The default sweep directory: `results/<stem>` for a sweep file, `results/<stem>-sweep`
/// for a scenario file.
#[must_use]
pub fn default_out_dir(input: &Path, sweep_file: bool) -> PathBuf {
    let stem = input
        .file_stem()
        .map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
    let name = if sweep_file {
        stem
    } else {
        format!("{stem}-sweep")
    };
    PathBuf::from("results").join(name)
}

/// Where a sweep's pending runs go.
#[derive(Clone, Copy)]
pub enum Executor<'a> {
    /// On this many local worker threads.
    Local {
        /// Worker threads.
        jobs: usize,
    },
    /// On a cluster.
    Cluster {
        /// Runs them.
        runner: &'a dyn ClusterRunner,
        /// The cluster's scheduler address.
        address: &'a str,
    },
}

/// What a finished sweep left.
#[derive(Debug)]
pub struct Executed {
    /// Runs of the sweep.
    pub total: usize,
    /// Runs done by this call.
    pub ran_now: usize,
    /// Rows of the gathered table.
    pub rows: usize,
    /// `sweep.parquet`.
    pub parquet: PathBuf,
    /// `sweep.csv`.
    pub csv: PathBuf,
    /// Replicates whose results are byte-identical (a seed that changes nothing).
    pub identical: Option<replicates::Identical>,
}

/// Runs the pending runs of a prepared sweep ([`Plan::prepare`]) on `executor`, each stored
/// as it finishes so that an interrupted sweep resumes, then gathers the table.
/// `interrupted` is asked about ten times a second.
///
/// # Errors
/// An interruption (what finished is kept); failed runs or I/O errors.
pub fn execute(
    plan: Plan,
    executor: Executor<'_>,
    progress: bool,
    interrupted: &dyn Fn() -> bool,
) -> Result<Executed, LabError> {
    let pending = plan.pending();
    let plan = Arc::new(plan);
    match executor {
        Executor::Cluster { runner, address } => {
            match runner.run(&plan, &pending, address, progress) {
                Ok(()) => {}
                Err(ExecError::Interrupted) => return Err(interrupted_error(&plan, pending.len())),
                Err(ExecError::Failed(e)) => return Err(LabError::Failed(e)),
            }
        }
        Executor::Local { jobs } => {
            let report = pool::run_local(&plan, &pending, jobs, progress, interrupted);
            if report.interrupted {
                return Err(interrupted_error(&plan, pending.len()));
            }
            if !report.failed.is_empty() {
                return Err(LabError::Failed(format!(
                    "{} of {} runs failed (above); the {} finished ones are kept: run the \
                     same command again to retry the others",
                    report.failed.len(),
                    pending.len(),
                    report.ran.len()
                )));
            }
        }
    }
    let left = plan.pending().len();
    if left > 0 {
        return Err(LabError::Failed(format!(
            "{left} runs did not finish; run the same command again to retry them"
        )));
    }
    let (table, [parquet, csv]) = gather::gather_and_write(&plan).map_err(LabError::Failed)?;
    let identical = replicates::identical_replicates(&plan).map_err(LabError::Failed)?;
    Ok(Executed {
        total: plan.runs.len(),
        ran_now: pending.len(),
        rows: table.rows(),
        parquet,
        csv,
        identical,
    })
}

fn interrupted_error(plan: &Plan, pending: usize) -> LabError {
    let left = plan.pending().len();
    LabError::Interrupted(format!(
        "interrupted: {} of {pending} runs finished and are kept, {left} left unfinished; run \
         the same command again to resume",
        pending - left.min(pending)
    ))
}
