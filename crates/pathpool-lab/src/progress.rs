//! Running a simulation in steps with a progress bar that appears on runs longer than a
//! second.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use pathpool_core::Time;
use pathpool_sim::Simulation;

/// Runs `sim` to its end. When `show` is set and the run takes more than a second, a
/// progress bar (simulated seconds, speed, ETA) is drawn on standard error. Returns the wall
/// time in seconds.
pub fn run_with_progress(sim: &mut Simulation, show: bool, label: &str) -> f64 {
    let step = |s: &mut Simulation, t: Time| -> Result<(), std::convert::Infallible> {
        s.run_until(t);
        Ok(())
    };
    match run_stepwise(sim, show, label, step) {
        Ok(wall) => wall,
        Err(never) => match never {},
    }
}

/// Like [`run_with_progress`], but every step is taken by `step(sim, until)`, which may do
/// more (release a lock, check for an interrupt) and stop the run with an error.
///
/// # Errors
/// The first error `step` returns.
pub fn run_stepwise<E>(
    sim: &mut Simulation,
    show: bool,
    label: &str,
    mut step: impl FnMut(&mut Simulation, Time) -> Result<(), E>,
) -> Result<f64, E> {
    let start = Instant::now();
    let end = sim.end();
    let steps = 1000u64;
    let chunk = (end.as_ps() / steps).max(1);
    let mut bar: Option<ProgressBar> = None;
    while !sim.is_finished() {
        let next = Time(sim.now().as_ps().saturating_add(chunk).min(end.as_ps()));
        if let Err(e) = step(sim, next) {
            if let Some(b) = bar {
                b.abandon();
            }
            return Err(e);
        }
        if show && bar.is_none() && start.elapsed() > Duration::from_secs(1) {
            let b = ProgressBar::new(end.as_ps() / 1_000_000_000);
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{bar:30}] {msg} simulated, {elapsed} elapsed, ETA {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b.set_prefix(label.to_string());
            bar = Some(b);
        }
        if let Some(b) = &bar {
            let ms = sim.now().as_ps() / 1_000_000_000;
            b.set_position(ms);
            b.set_message(format!(
                "{:.1}/{:.1} s",
                sim.now().as_secs_f64(),
                end.as_secs_f64()
            ));
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(start.elapsed().as_secs_f64())
}
