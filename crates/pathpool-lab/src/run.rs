//! One scenario run with its provenance: what `pathpool run`, every run of a sweep and the
//! Python package's `run` share, so a run's record is assembled in one place.

use pathpool_core::Time;
use pathpool_sim::{LoadedScenario, Results, ScenarioError, Simulation};

use crate::output::{self, Provenance};

/// A finished run: its results, how long it took and where it came from.
#[derive(Debug)]
pub struct RunRecord {
    /// The simulation's results.
    pub results: Results,
    /// Wall-clock seconds the simulation took.
    pub wall_time_s: f64,
    /// The record written as `provenance.json` beside the result files.
    pub provenance: Provenance,
}

/// What to run and how to describe it.
pub struct RunSpec<'a> {
    /// The loaded (parsed, overridden) scenario.
    pub scenario: &'a LoadedScenario,
    /// Where the scenario came from: a file path, or `<python>`-like for one built in code.
    pub source: &'a str,
    /// The overrides applied, for the record.
    pub overrides: &'a [(String, String)],
    /// The seed.
    pub seed: u64,
    /// The command that asked for the run, for the record.
    pub command: Vec<String>,
    /// The progress bar's label.
    pub label: &'a str,
    /// Whether to draw a progress bar on runs longer than a second.
    pub progress: bool,
}

/// Why [`run_one`] returned no record.
#[derive(Debug)]
pub enum RunOneError<E> {
    /// A step of the run returned this (an interruption, say).
    Step(E),
    /// The scenario could not be recorded.
    Record(String),
}

/// Compiles `spec.scenario` with `spec.seed`.
///
/// # Errors
/// The scenario's problems, with file, line and field.
pub fn compile(spec: &RunSpec<'_>) -> Result<Simulation, ScenarioError> {
    spec.scenario.compile(Some(spec.seed))
}

/// Runs `sim` (compiled from `spec`, see [`compile`]) to the end in steps taken by
/// `step(sim, until)`, which may check for an interruption and stop the run with an error;
/// a scenario without a name is named after its file.
///
/// # Errors
/// The first error of `step`, or a scenario that cannot be serialised into the record.
pub fn run_one<E>(
    spec: &RunSpec<'_>,
    mut sim: Simulation,
    step: impl FnMut(&mut Simulation, Time) -> Result<(), E>,
) -> Result<RunRecord, RunOneError<E>> {
    if sim.name().is_none() && !spec.source.starts_with('<') {
        let stem = std::path::Path::new(spec.source).file_stem();
        sim.set_name(stem.map(|s| s.to_string_lossy().into_owned()));
    }
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let wall_time_s = crate::run_stepwise(&mut sim, spec.progress, spec.label, step)
        .map_err(RunOneError::Step)?;
    let provenance = Provenance {
        schema: "pathpool.provenance/1",
        scenario_source: spec.source.to_string(),
        scenario: serde_json::to_value(&spec.scenario.scenario)
            .map_err(|e| RunOneError::Record(e.to_string()))?,
        overrides: spec
            .overrides
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
        seed: spec.seed,
        version: env!("CARGO_PKG_VERSION"),
        git_commit: output::git_commit(),
        wall_time_s,
        started_unix_s,
        command: spec.command.clone(),
        files: Vec::new(),
    };
    let mut results = sim.results();
    // `measure.mp_fairness = "reference-runs"`: the runs that measure T_p and S_p (a no-op
    // otherwise), counted in the record's wall time.
    let started = std::time::Instant::now();
    sim.mp_fairness_reference_runs(spec.scenario, spec.seed, &mut results, |what| {
        if spec.progress {
            eprintln!("{}: reference run, {what}", spec.label);
        }
    })
    .map_err(|e| RunOneError::Record(e.to_string()))?;
    let wall_time_s = wall_time_s + started.elapsed().as_secs_f64();
    let provenance = Provenance {
        wall_time_s,
        ..provenance
    };
    Ok(RunRecord {
        results,
        wall_time_s,
        provenance,
    })
}
