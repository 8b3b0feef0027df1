//! The one executor of the lab: independent jobs on worker threads, with a progress bar, a
//! clean stop and panics turned into failures. Sweeps use it to run to a directory (each
//! finished run stored at once, so a stopped sweep resumes: `sweep::pool`), reproductions
//! to collect results in memory (`reproduce::Runner`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// What [`run_jobs`] did, jobs named by their index.
#[derive(Debug, Default)]
pub struct Outcome<T> {
    /// Jobs that finished, with their output, in the order they finished.
    pub done: Vec<(usize, T)>,
    /// Jobs that failed (or panicked), with the reason.
    pub failed: Vec<(usize, String)>,
    /// Whether `interrupted` stopped the pool before every job finished.
    pub interrupted: bool,
}

/// The number of worker threads when none is asked for: one per available core.
#[must_use]
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// A progress bar of `total` runs on standard error, labelled `label` (drawn only on a
/// terminal), or a hidden one.
#[must_use]
pub fn runs_bar(label: &str, total: usize, show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(total as u64);
    b.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} runs{msg}, {elapsed} elapsed, ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    b.set_prefix(label.to_string());
    b
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Runs jobs `0..n` on `workers` threads: `work(i, is_stopped)` returns the job's output,
/// `Ok(None)` when it saw `is_stopped()` and left the job unfinished, or an error. A
/// failing job does not stop the others; `on_failure(i, reason)` hears of it at once (on
/// the calling thread, to print it above the bar, say). `interrupted` is asked about ten times a second on
/// the calling thread; once it says yes, no job starts and running ones are told to stop.
/// Every job is independent and deterministic, so what a job produces does not depend on
/// the number of workers.
pub fn run_jobs<T: Send>(
    n: usize,
    workers: usize,
    bar: &ProgressBar,
    mut interrupted: impl FnMut() -> bool,
    on_failure: impl Fn(usize, &str),
    work: impl Fn(usize, &dyn Fn() -> bool) -> Result<Option<T>, String> + Sync,
) -> Outcome<T> {
    let stop = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let running = AtomicUsize::new(0);
    let mut outcome = Outcome {
        done: Vec::new(),
        failed: Vec::new(),
        interrupted: false,
    };
    // An interruption that came before the pool starts starts nothing.
    if interrupted() {
        outcome.interrupted = true;
        stop.store(true, Ordering::Relaxed);
    }
    let (tx, rx) = mpsc::channel::<(usize, Result<Option<T>, String>)>();
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, n.max(1)) {
            let tx = tx.clone();
            let (stop, next, running, work) = (&stop, &next, &running, &work);
            s.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                running.fetch_add(1, Ordering::Relaxed);
                let is_stopped = || stop.load(Ordering::Relaxed);
                let r = catch_unwind(AssertUnwindSafe(|| work(i, &is_stopped)))
                    .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(&*p))));
                running.fetch_sub(1, Ordering::Relaxed);
                if tx.send((i, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok((i, Ok(Some(t)))) => {
                    outcome.done.push((i, t));
                    bar.inc(1);
                }
                Ok((_, Ok(None))) => {}
                Ok((i, Err(e))) => {
                    on_failure(i, &e);
                    outcome.failed.push((i, e));
                    bar.inc(1);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if !outcome.interrupted && interrupted() {
                outcome.interrupted = true;
                stop.store(true, Ordering::Relaxed);
                bar.set_message(", stopping");
            } else if !outcome.interrupted {
                let k = running.load(Ordering::Relaxed);
                bar.set_message(format!(" ({k} running)"));
            }
        }
    });
    outcome.interrupted &= outcome.done.len() + outcome.failed.len() < n;
    bar.finish_and_clear();
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_once_and_failures_and_panics_are_reported() {
        let bar = ProgressBar::hidden();
        let out = run_jobs(
            50,
            4,
            &bar,
            || false,
            |_, _| {},
            |i, _| match i {
                7 => Err("seven".into()),
                9 => panic!("nine"),
                _ => Ok(Some(i * 2)),
            },
        );
        let mut done = out.done.clone();
        done.sort_unstable();
        assert_eq!(done.len(), 48);
        assert!(done.iter().all(|&(i, v)| v == i * 2 && i != 7 && i != 9));
        let mut failed = out.failed.clone();
        failed.sort();
        assert_eq!(failed[0], (7, "seven".to_string()));
        assert_eq!(failed[1].0, 9);
        assert!(failed[1].1.contains("nine"), "{}", failed[1].1);
        assert!(!out.interrupted);
    }

    #[test]
    fn an_interruption_before_the_start_runs_nothing() {
        let bar = ProgressBar::hidden();
        let out = run_jobs(10, 2, &bar, || true, |_, _| {}, |i, _| Ok(Some(i)));
        assert!(out.done.is_empty() && out.failed.is_empty());
        assert!(out.interrupted);
    }

    #[test]
    fn a_stop_reaches_running_jobs_which_leave_no_output() {
        let bar = ProgressBar::hidden();
        let started = AtomicUsize::new(0);
        let mut asks = 0;
        let out = run_jobs(
            100,
            2,
            &bar,
            || {
                asks += 1;
                started.load(Ordering::Relaxed) >= 2
            },
            |_, _| {},
            |_, is_stopped| {
                started.fetch_add(1, Ordering::Relaxed);
                while !is_stopped() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(None::<()>)
            },
        );
        assert!(out.interrupted && out.done.is_empty() && out.failed.is_empty());
        assert!(started.load(Ordering::Relaxed) <= 2);
        assert!(asks >= 1);
    }
}
