//! Runs many scenario variants over seeds, in parallel (on the lab's executor), in a
//! deterministic order, and keeps their results in memory.

use pathpool_sim::{LoadedScenario, Results};

use crate::exec;

/// One run: a scenario text, overrides and a seed.
#[derive(Clone, Debug)]
pub struct Job {
    /// The scenario's file name (for error messages).
    pub file: &'static str,
    /// The scenario text.
    pub text: &'static str,
    /// `key=value` overrides (see `pathpool run --set`).
    pub overrides: Vec<(String, String)>,
    /// Seed.
    pub seed: u64,
}

impl Job {
    /// A run of `file`/`text` with `overrides` and `seed`.
    pub fn new(
        file: &'static str,
        text: &'static str,
        overrides: &[(&str, String)],
        seed: u64,
    ) -> Job {
        Job {
            file,
            text,
            overrides: overrides
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.clone()))
                .collect(),
            seed,
        }
    }
}

/// Runs jobs on worker threads.
pub struct Runner {
    workers: usize,
    progress: bool,
    /// Overrides applied to every job after its own (`pathpool reproduce --set`).
    extra: Vec<(String, String)>,
}

impl Runner {
    /// `workers` threads; `progress` draws a counter on standard error; `extra` overrides
    /// go on top of every job's own.
    #[must_use]
    pub fn new(workers: usize, progress: bool, extra: Vec<(String, String)>) -> Runner {
        Runner {
            workers,
            progress,
            extra,
        }
    }

    /// Runs every job on the lab's executor; results in job order. Each run is independent
    /// and deterministic, so the outcome does not depend on the number of workers.
    ///
    /// # Errors
    /// The first scenario error (with file, line and field), or the first run to fail.
    pub fn run(&self, jobs: &[Job]) -> Result<Vec<Results>, String> {
        // Check every variant before spending time on any.
        let loaded: Vec<LoadedScenario> = jobs
            .iter()
            .map(|j| {
                let overrides: Vec<(String, String)> =
                    j.overrides.iter().chain(&self.extra).cloned().collect();
                LoadedScenario::from_toml(j.text, j.file, &overrides).map_err(|e| e.to_string())
            })
            .collect::<Result<_, _>>()?;
        let bar = exec::runs_bar("  ", jobs.len(), self.progress);
        let outcome = exec::run_jobs(
            jobs.len(),
            self.workers,
            &bar,
            || false,
            |_, _| {},
            |i, _| {
                let mut sim = loaded[i]
                    .compile(Some(jobs[i].seed))
                    .map_err(|e| e.to_string())?;
                sim.run();
                Ok(Some(sim.results()))
            },
        );
        if let Some((_, e)) = outcome.failed.iter().min_by_key(|(i, _)| *i) {
            return Err(e.clone());
        }
        let mut slots: Vec<Option<Results>> = jobs.iter().map(|_| None).collect();
        for (i, r) in outcome.done {
            slots[i] = Some(r);
        }
        Ok(slots
            .into_iter()
            .map(|r| r.expect("every job ran: none failed, none was stopped"))
            .collect())
    }
}
