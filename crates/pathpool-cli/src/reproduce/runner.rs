//! Runs many scenario variants over seeds, in parallel, in a deterministic order.

use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use pathpool_sim::{LoadedScenario, Results};

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

    /// Runs every job; results in job order. Each run is independent and deterministic, so
    /// the outcome does not depend on the number of workers.
    ///
    /// # Errors
    /// The first scenario error (with file, line and field).
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
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<Results, String>>>> =
            jobs.iter().map(|_| Mutex::new(None)).collect();
        let n = jobs.len();
        std::thread::scope(|s| {
            for _ in 0..self.workers.min(n.max(1)) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = loaded[i]
                        .compile(Some(jobs[i].seed))
                        .map_err(|e| e.to_string())
                        .map(|mut sim| {
                            sim.run();
                            sim.results()
                        });
                    *slots[i].lock().expect("no worker panics holding a slot") = Some(r);
                    let k = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if self.progress {
                        let mut e = std::io::stderr().lock();
                        let _ = write!(e, "\r  {k}/{n} runs");
                        if k == n {
                            let _ = write!(e, "\r{:20}\r", "");
                        }
                        let _ = e.flush();
                    }
                });
            }
        });
        slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .expect("no worker panics holding a slot")
                    .expect("every job ran")
            })
            .collect()
    }
}
