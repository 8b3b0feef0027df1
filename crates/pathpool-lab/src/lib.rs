//! Experiments on the pathpool simulator, as a library: a scenario run with its provenance
//! and result files ([`output`], [`run_one`]), sweeps over grids of overrides and seeds
//! ([`sweep`]), and the documents' experiments run and compared with their published
//! figures ([`reproduce`]). Both shells use it: the `pathpool` command (which adds argument
//! parsing, printing and signals) and the Python package.

pub mod exec;
pub mod output;
mod progress;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod sweep;

pub use progress::{run_stepwise, run_with_progress};
pub use run::{run_one, RunRecord};

/// Why an experiment, a sweep or a run could not be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabError {
    /// A bad scenario, sweep or option: nothing was run or written.
    BadInput(String),
    /// A failure while running or writing.
    Failed(String),
    /// Stopped on request (Ctrl-C); what was finished is kept.
    Interrupted(String),
}

impl std::fmt::Display for LabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LabError::BadInput(m) | LabError::Failed(m) | LabError::Interrupted(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for LabError {}
