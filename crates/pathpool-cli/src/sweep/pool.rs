//! Running a sweep's pending runs on local worker threads (each simulation is
//! single-threaded), with a progress bar and a clean stop.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::plan::Plan;

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

/// The number of worker threads when none is asked for: one per available core.
#[must_use]
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// A progress bar of runs on standard error (drawn only on a terminal), or a hidden one.
#[must_use]
pub fn runs_bar(total: usize, show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(total as u64);
    b.set_style(
        ProgressStyle::with_template(
            "sweep [{bar:30}] {pos}/{len} runs{msg}, {elapsed} elapsed, ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    b
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
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
    mut interrupted: impl FnMut() -> bool,
) -> LocalReport {
    let stop = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let running = AtomicUsize::new(0);
    let mut report = LocalReport::default();
    let bar = runs_bar(pending.len(), progress);
    // An interruption that came before the pool starts (Ctrl-C while the plan was written)
    // starts nothing.
    if interrupted() {
        report.interrupted = true;
        stop.store(true, Ordering::Relaxed);
    }
    let (tx, rx) = mpsc::channel::<(usize, Result<bool, String>)>();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, pending.len().max(1)) {
            let tx = tx.clone();
            let (stop, next, running) = (&stop, &next, &running);
            s.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = pending.get(k) else { break };
                running.fetch_add(1, Ordering::Relaxed);
                let is_stopped = || stop.load(Ordering::Relaxed);
                let r = catch_unwind(AssertUnwindSafe(|| plan.run_and_store(i, &is_stopped)))
                    .unwrap_or_else(|p| {
                        Err(format!(
                            "run {} panicked: {}",
                            plan.runs[i].id,
                            panic_text(&*p)
                        ))
                    });
                running.fetch_sub(1, Ordering::Relaxed);
                if tx.send((i, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok((i, Ok(true))) => {
                    report.ran.push(i);
                    bar.inc(1);
                }
                Ok((_, Ok(false))) => {}
                Ok((i, Err(e))) => {
                    bar.suspend(|| eprintln!("error: {e}"));
                    report.failed.push((i, e));
                    bar.inc(1);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if !report.interrupted && interrupted() {
                report.interrupted = true;
                stop.store(true, Ordering::Relaxed);
                bar.set_message(", stopping");
            } else if !report.interrupted {
                let n = running.load(Ordering::Relaxed);
                bar.set_message(format!(" ({n} running)"));
            }
        }
    });
    report.interrupted &= report.ran.len() + report.failed.len() < pending.len();
    bar.finish_and_clear();
    report
}
