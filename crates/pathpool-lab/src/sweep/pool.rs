//! Running a sweep's pending runs on local worker threads (each simulation is
//! single-threaded), with a progress bar and a clean stop, through the lab's executor.

use super::plan::Plan;
use crate::exec;

pub use crate::exec::default_jobs;

/// What a local sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LocalReport {
    /// Runs that finished and were stored (marked done), in the order they finished.
    pub ran: Vec<usize>,
    /// Runs that failed, with the reason (not marked done).
    pub failed: Vec<(usize, String)>,
    /// Whether the sweep was stopped by `interrupted` before every run finished.
    pub interrupted: bool,
}

/// A progress bar of a sweep's runs on standard error (drawn only on a terminal), or a
/// hidden one.
#[must_use]
pub fn runs_bar(total: usize, show: bool) -> indicatif::ProgressBar {
    exec::runs_bar("sweep", total, show)
}

/// Runs `pending` (indices into `plan.runs`) on `jobs` threads; each finished run is stored
/// with its completion marker. `interrupted` is asked about ten times a second (on the
/// calling thread); once it says yes, the workers stop at their next step and the runs they
/// were doing are left unfinished (no files, no marker). A failing run does not stop the
/// others.
pub fn run_local(
    plan: &Plan,
    pending: &[usize],
    jobs: usize,
    progress: bool,
    interrupted: impl FnMut() -> bool,
) -> LocalReport {
    let bar = runs_bar(pending.len(), progress);
    // A panic's reason does not name the run; a failure's does.
    let name = |k: usize, e: &str| {
        if e.starts_with("panicked") {
            format!("run {} {e}", plan.runs[pending[k]].id)
        } else {
            e.to_string()
        }
    };
    let outcome = exec::run_jobs(
        pending.len(),
        jobs,
        &bar,
        interrupted,
        |k, e| bar.suspend(|| eprintln!("error: {}", name(k, e))),
        |k, is_stopped| {
            plan.run_and_store(pending[k], is_stopped)
                .map(|stored| stored.then_some(()))
        },
    );
    LocalReport {
        ran: outcome.done.iter().map(|&(k, ())| pending[k]).collect(),
        failed: outcome
            .failed
            .into_iter()
            .map(|(k, e)| (pending[k], name(k, &e)))
            .collect(),
        interrupted: outcome.interrupted,
    }
}
