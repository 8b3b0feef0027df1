//! `convergence-linux`: thesis E8 (Ch. 5.2.2, Figs. 5.2-5.5) on this machine's kernel: Linux
//! MPTCP with pathpool's BPF controllers (`pathpool linux`) against kernel Reno, over two
//! disjoint paths emulated by `pathpool emu`, in network namespaces (issue 23 part B).
//!
//! Each run is one `pathpool-linux e8` process (the bed, the emulators, eight kernel
//! connections, the bytes per second); this module runs them, computes the figures exactly as
//! the simulated [`convergence`](super::convergence) does (share per second, final share over
//! the last fifth, convergence time on the curve pooled over the repetitions), compares them
//! with the same published values, and runs the simulator on the same settings and run length
//! so that both stand side by side. It needs root, the `pathpool-linux` program and a kernel
//! with MPTCP and BPF `struct_ops` (unless every run is kept already, as the committed runs
//! of `data/e8-kernel-runs/` are); it is not part of `reproduce all`.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde::Deserialize;

use super::convergence::{
    compared_in, figure_metric, run_seconds, same_time_metric, settings, simulate, uncompared,
    Figure, Series, Setting, ALGORITHMS, FINAL_PART, MIN_BUFFER_BYTES, PAYLOAD,
};
use super::{published, svg, Ctx, Estimate, Experiment, Observation, Report};
use crate::exec;

mod kept;
use kept::{above, keep_run, kept_path, kept_run, run_bed, KEPT_DIR};

const SOURCE: &str = "thesis E8 §5.2.2 Figs. 5.2-5.5 (Linux)";
const PROGRAM: &str = "pathpool-linux";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "convergence-linux",
    title: "E8 on this machine's kernel (root; not in `all`): 4 MPTCP (BPF NMCC/LIA/OLIA/BALIA, or uncoupled) vs 4 Reno, 2 emulated paths",
    source: SOURCE,
    run,
    compared,
};

/// Run length of the full version (the thesis's 30 minutes) and of `--quick` (about four
/// minutes per algorithm, as the issue asks), seconds.
const DURATION_S: [u32; 2] = [1800, 240];

/// The kernel's name of each of [`ALGORITHMS`]' congestion controls on the multipath client:
/// pathpool's BPF programs, and the kernel's Reno on every subflow for Uncoupled.
fn kernel_cc(algorithm: &str) -> &'static str {
    match algorithm {
        "NMCC" => "pp_nmcc",
        "LIA" => "pp_lia",
        "OLIA" => "pp_olia",
        "BALIA" => "pp_balia",
        _ => "reno",
    }
}

/// Settings of the full run and of `--quick` (the default setting only, as the issue asks).
fn kernel_settings(quick: bool) -> Vec<&'static Setting> {
    settings(false)
        .into_iter()
        .filter(|s| !quick || s.name == "default")
        .collect()
}

/// The settings a run covers: those named in `chosen` (in the experiment's order), else
/// [`kernel_settings`].
///
/// # Errors
/// A name that is no setting, with the names allowed.
fn chosen_settings(chosen: &[String], quick: bool) -> Result<Vec<&'static Setting>, String> {
    if chosen.is_empty() {
        return Ok(kernel_settings(quick));
    }
    let all = settings(false);
    if let Some(unknown) = chosen.iter().find(|c| !all.iter().any(|s| s.name == *c)) {
        return Err(format!(
            "no E8 setting is named {unknown:?}; the settings are {}",
            all.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(all
        .into_iter()
        .filter(|s| chosen.iter().any(|c| c == s.name))
        .collect())
}

/// Checks the names of `--setting` (see [`chosen_settings`]).
pub(super) fn check_settings(names: &[String]) -> Result<(), String> {
    chosen_settings(names, false).map(|_| ())
}

/// The compared metrics, in report order: those of the simulated experiment for the same
/// settings.
fn compared(quick: bool) -> Vec<(String, &'static str)> {
    compared_in(&kernel_settings(quick))
}

/// `pathpool-linux` beside this executable (a checkout's target directory, a wheel's scripts
/// directory), else on PATH.
#[must_use]
pub fn linux_program() -> Option<PathBuf> {
    let beside = env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(PROGRAM)))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        env::var_os("PATH").and_then(|paths| {
            env::split_paths(&paths)
                .map(|d| d.join(PROGRAM))
                .find(|p| p.is_file())
        })
    })
}

/// The message for a missing `pathpool-linux`.
#[must_use]
pub fn missing_program() -> String {
    format!(
        "this needs the {PROGRAM} program beside pathpool or on PATH; build it with `cargo \
         build --release -p pathpool-linux` (it needs clang, libelf-dev and zlib1g-dev; `make \
         setup` installs them)"
    )
}

/// What `pathpool-linux e8` prints (the fields used here).
#[derive(Deserialize)]
struct KernelRun {
    mp_bytes: Vec<u64>,
    sp_bytes: Vec<u64>,
    subflows: usize,
    data: [EmuCounters; 2],
    /// Connections the kernel stopped moving for 5 s or more (docs/linux.md).
    #[serde(default)]
    stalls: Vec<String>,
}

/// The emulator's counters of one path's data direction (the fields used here).
#[derive(Deserialize, Clone, Copy)]
struct EmuCounters {
    delivered: u64,
    queue_drops: u64,
    lost: u64,
    late_over_1ms: u64,
    late_max_ns: u64,
    late_max_at_ms: u64,
    realtime: bool,
}

/// The `pathpool-linux e8` configuration of one setting and algorithm; `server_quickack`
/// turns the server's delayed ACKs off (D347).
fn config(s: &Setting, algorithm: &str, seconds: u32, server_quickack: bool) -> serde_json::Value {
    let paths: Vec<serde_json::Value> = s
        .paths
        .iter()
        .map(|p| {
            // As the simulated experiment: one bandwidth-delay product, at least 20 packets,
            // unless the setting gives packets.
            let bytes = (p.rate_mbps * 1e6 * p.rtt_ms / 1e3 / 8.0).max(MIN_BUFFER_BYTES);
            serde_json::json!({
                "rate_bps": (p.rate_mbps * 1e6).round() as u64,
                "rtt_ms": p.rtt_ms,
                "loss": p.loss,
                "queue_bytes": p.buffer_pkts.is_none().then_some(bytes.round() as u64),
                "queue_packets": p.buffer_pkts.map(u64::from),
            })
        })
        .collect();
    serde_json::json!({
        "paths": paths,
        "mp_cc": kernel_cc(algorithm),
        "sp_cc": "reno",
        "server_quickack": server_quickack,
        "seconds": seconds,
    })
}

/// Registers pathpool's programs unless they already are; true when this call loaded them
/// (and so should unload them at the end).
fn ensure_loaded(program: &Path) -> Result<bool, String> {
    let out = Command::new(program)
        .arg("load")
        .output()
        .map_err(|e| format!("running {}: {e}", program.display()))?;
    if out.status.success() {
        return Ok(true);
    }
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("already loaded") {
        Ok(false)
    } else {
        Err(format!(
            "`{} load` failed: {}",
            program.display(),
            err.trim()
        ))
    }
}

/// One kernel run's figures.
struct KernelFigures {
    series: Series,
    final_share: f64,
    convergence: (f64, bool),
    utilisation: f64,
    data: [EmuCounters; 2],
}

fn kernel_figures(r: &KernelRun, capacity_bps: f64) -> Result<KernelFigures, String> {
    let seconds = r.mp_bytes.len();
    if seconds == 0 || r.sp_bytes.len() != seconds {
        return Err("a run without its seconds".into());
    }
    let bits = |v: &[u64]| v.iter().map(|&b| b as f64 * 8.0).collect::<Vec<f64>>();
    let mp = bits(&r.mp_bytes);
    let all: Vec<f64> = mp
        .iter()
        .zip(bits(&r.sp_bytes))
        .map(|(m, s)| m + s)
        .collect();
    let series = Series { mp, all };
    let final_from = seconds - seconds / FINAL_PART;
    let final_bits: f64 = series.all[final_from..].iter().sum();
    Ok(KernelFigures {
        final_share: series.final_share(),
        convergence: series.convergence(),
        utilisation: 100.0 * final_bits / ((seconds - final_from) as f64 * capacity_bps),
        data: r.data,
        series,
    })
}

/// Runs every setting with every algorithm on the kernel and in the simulator, and compares.
fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let settings = chosen_settings(&ctx.e8_settings, ctx.quick)?;
    let repetitions = ctx.seeds(3, 1);
    let seconds = run_seconds(ctx, DURATION_S[usize::from(ctx.quick)])?;
    let kernel = run_kernel(ctx, &settings, seconds, repetitions)?;
    // The simulator on the same settings and run length, with its own number of seeds.
    let sim_seeds = ctx.seeds(10, 3).max(3);
    let simulated = simulate(ctx, &settings, seconds, sim_seeds)?;
    let targets = published::of("convergence")?;
    let mut report = Report::default();
    let mut per_second_csv = String::from("setting,cc,repetition,second,share\n");
    let mut runs_csv = String::from(
        "setting,cc,repetition,final_share,convergence_s,converged,utilisation,\
         data_frames,queue_drops,random_losses,late_over_1ms,late_max_us,late_max_at_s,realtime,\
         server_quickack\n",
    );
    for ((s, by_algorithm), sim) in settings.iter().zip(kernel).zip(simulated) {
        let mut pooled: Vec<Series> = Vec::new();
        let mut lines: Vec<(&str, Vec<(f64, f64)>)> = Vec::new();
        let mut estimates: Vec<[Estimate; 3]> = Vec::new();
        for ((name, cc), runs) in ALGORITHMS.iter().zip(&by_algorithm) {
            let mut sum = Series::default();
            for (i, f) in runs.iter().enumerate() {
                for (k, (m, a)) in f.series.mp.iter().zip(&f.series.all).enumerate() {
                    let share = if *a > 0.0 { 100.0 * m / a } else { f64::NAN };
                    let _ = writeln!(per_second_csv, "{},{cc},{},{k},{share:.2}", s.name, i + 1);
                }
                let drops: u64 = f.data.iter().map(|d| d.queue_drops).sum();
                let latest = f.data[usize::from(f.data[1].late_max_ns > f.data[0].late_max_ns)];
                let _ = writeln!(
                    runs_csv,
                    "{},{cc},{},{:.3},{},{},{:.3},{},{drops},{},{},{:.1},{:.3},{},{}",
                    s.name,
                    i + 1,
                    f.final_share,
                    f.convergence.0,
                    f.convergence.1,
                    f.utilisation,
                    f.data.iter().map(|d| d.delivered).sum::<u64>(),
                    f.data.iter().map(|d| d.lost).sum::<u64>(),
                    f.data.iter().map(|d| d.late_over_1ms).sum::<u64>(),
                    latest.late_max_ns as f64 / 1e3,
                    latest.late_max_at_ms as f64 / 1e3,
                    f.data.iter().all(|d| d.realtime),
                    ctx.server_quickack,
                );
                sum.add(&f.series);
            }
            lines.push((name, smoothed(&sum)));
            let of = |g: fn(&KernelFigures) -> f64| {
                Estimate::of(&runs.iter().map(g).collect::<Vec<_>>())
            };
            estimates.push([
                of(|f| f.final_share),
                Estimate {
                    mean: sum.convergence().0,
                    ci95: 0.0,
                    n: runs.len(),
                },
                of(|f| f.utilisation),
            ]);
            pooled.push(sum);
        }
        let estimate = |a: usize, figure: Figure| match figure {
            Figure::Share => estimates[a][0],
            Figure::Convergence => estimates[a][1],
            Figure::Utilisation => estimates[a][2],
        };
        for &(algorithm, figure) in s.compared {
            let a = ALGORITHMS
                .iter()
                .position(|(name, _)| *name == algorithm)
                .ok_or("unknown algorithm")?;
            let mut c = targets.compare(
                &figure_metric(algorithm, figure, s.name),
                figure.unit(),
                estimate(a, figure),
            )?;
            c.experiment = EXPERIMENT.id;
            report.comparisons.push(c);
        }
        let mut c = targets.compare(
            &same_time_metric(s.name),
            "s",
            Estimate {
                mean: estimates[0][1].mean - estimates[1][1].mean,
                ..estimates[0][1]
            },
        )?;
        c.experiment = EXPERIMENT.id;
        report.comparisons.push(c);
        // Every kernel figure not compared, then the simulator's beside it.
        report.observations.extend(uncompared(s, estimate));
        for ((name, _), runs) in ALGORITHMS.iter().zip(&sim) {
            let mut sum = Series::default();
            for f in runs {
                sum.add(&f.series);
            }
            report.observations.push(Observation::new(
                format!("simulated: {name} final share, {}", s.name),
                "%",
                Estimate::of(&runs.iter().map(|f| f.final_share).collect::<Vec<_>>()),
            ));
            report.observations.push(Observation::new(
                format!("simulated: {name} convergence time, {}", s.name),
                "s",
                Estimate {
                    mean: sum.convergence().0,
                    ci95: 0.0,
                    n: runs.len(),
                },
            ));
        }
        let end = f64::from(seconds);
        lines.push(("fair (50%)", vec![(0.0, 50.0), (end, 50.0)]));
        let mut sim_lines: Vec<(&str, Vec<(f64, f64)>)> = Vec::new();
        for ((name, _), runs) in ALGORITHMS.iter().zip(&sim) {
            let mut sum = Series::default();
            for f in runs {
                sum.add(&f.series);
            }
            sim_lines.push((name, smoothed(&sum)));
        }
        sim_lines.push(("fair (50%)", vec![(0.0, 50.0), (end, 50.0)]));
        report.files.push((
            format!("share-{}-simulated.svg", s.name),
            svg::line_chart(
                &format!(
                    "E8 in the simulator, {}: multipath share (10-s mean, pooled over {sim_seeds} seeds)",
                    s.name
                ),
                ("time (s)", "multipath share (%)"),
                &sim_lines,
            ),
        ));
        report.files.push((
            format!("share-{}.svg", s.name),
            svg::line_chart(
                &format!(
                    "E8 on Linux, {}{}: multipath share (10-s mean, pooled over {} run{})",
                    s.name,
                    if ctx.server_quickack {
                        ", server quickack"
                    } else {
                        ""
                    },
                    repetitions,
                    if repetitions == 1 { "" } else { "s" }
                ),
                ("time (s)", "multipath share (%)"),
                &lines,
            ),
        ));
    }
    report
        .files
        .push(("share_per_second.csv".into(), per_second_csv));
    report.files.push(("runs.csv".into(), runs_csv));
    Ok(report)
}

/// The pooled share as 10-s means, for the figure (per-second shares are too noisy to read).
fn smoothed(s: &Series) -> Vec<(f64, f64)> {
    const STEP: usize = 10;
    (0..s.all.len() / STEP)
        .map(|k| {
            let (from, to) = (k * STEP, (k + 1) * STEP);
            (to as f64, s.share(from, to))
        })
        .collect()
}

/// Runs every (setting, algorithm, repetition) on the kernel, `ctx.jobs` at a time (each in
/// its own namespaces), keeping each finished run in `ctx.out`'s [`KEPT_DIR`] and reusing
/// those an earlier invocation kept; per setting, per algorithm, the runs' figures. When
/// every run is kept, nothing touches the kernel: no program, root or BPF is needed, so the
/// kept runs (such as the committed ones, `docs/reproductions.md`) give the report anywhere.
fn run_kernel(
    ctx: &Ctx<'_>,
    settings: &[&Setting],
    seconds: u32,
    repetitions: u32,
) -> Result<Vec<Vec<Vec<KernelFigures>>>, String> {
    let capacity = |s: &Setting| s.paths.iter().map(|p| p.rate_mbps * 1e6).sum::<f64>() * PAYLOAD;
    let mut figures: Vec<(usize, usize, u32, Result<KernelFigures, String>)> = Vec::new();
    // Repetition by repetition, the five algorithms of one next to each other: with five
    // beds at a time each round is one repetition of every algorithm, so a busy stretch of
    // the host falls on all of them alike rather than on one algorithm's repetitions.
    let mut jobs = Vec::new();
    for (si, s) in settings.iter().enumerate() {
        for rep in 0..repetitions {
            for (ai, (name, cc)) in ALGORITHMS.iter().enumerate() {
                let cfg = config(s, name, seconds, ctx.server_quickack);
                let path = kept_path(&ctx.out, s.name, cc, rep);
                match kept_run(&path, &cfg) {
                    Some(run) => figures.push((si, ai, rep, kernel_figures(&run, capacity(s)))),
                    None => jobs.push((si, ai, rep, cfg, path)),
                }
            }
        }
    }
    let total = jobs.len();
    let parallel = ctx.jobs.clamp(1, total.max(1));
    if ctx.progress && total == 0 {
        eprintln!(
            "convergence-linux: every kernel run ({}) kept from an earlier invocation in {}",
            figures.len(),
            ctx.out.join(KEPT_DIR).display()
        );
    } else if ctx.progress {
        let rounds = total.div_ceil(parallel) as u32;
        let kept = if figures.is_empty() {
            String::new()
        } else {
            format!(
                " ({} kept from an earlier invocation in {})",
                figures.len(),
                ctx.out.join(KEPT_DIR).display()
            )
        };
        eprintln!(
            "convergence-linux: {total} kernel run{} of {seconds} s{}{kept}, {parallel} at a \
             time: about {} min (then the simulator's runs); Ctrl-C stops them, keeping the \
             finished ones",
            if total == 1 { "" } else { "s" },
            if ctx.server_quickack {
                " with the server's delayed ACKs off"
            } else {
                ""
            },
            (rounds * seconds).div_ceil(60)
        );
    }
    // With every run kept no bed runs, so the program is neither looked for nor loaded.
    let program = if total == 0 {
        PathBuf::new()
    } else {
        linux_program().ok_or_else(missing_program)?
    };
    let loaded_here = total > 0 && ensure_loaded(&program)?;
    let bar = exec::runs_bar("  kernel", total, ctx.progress);
    let started = Instant::now();
    let outcome = exec::run_jobs(
        total,
        parallel,
        &bar,
        || ctx.stop.load(Ordering::Relaxed),
        |_, _| {},
        |i, is_stopped| {
            let (si, ai, rep, cfg, path) = &jobs[i];
            let (s, algorithm) = (settings[*si], ALGORITHMS[*ai].0);
            let Some(stdout) = run_bed(&program, &format!("e8x{i}"), cfg, is_stopped)
                .map_err(|e| format!("{PROGRAM} e8 ({}, {algorithm}): {e}", s.name))?
            else {
                return Ok(None);
            };
            let run: KernelRun = serde_json::from_slice(&stdout)
                .map_err(|e| format!("{PROGRAM} e8's report: {e}"))?;
            for stall in &run.stalls {
                above(
                    &bar,
                    format!(
                        "convergence-linux: warning: {}, {algorithm} run {}: {stall}",
                        s.name,
                        rep + 1
                    ),
                );
            }
            if run.subflows < 8 {
                return Err(format!(
                    "{}, {algorithm}: only {} of the 8 MPTCP subflows came up",
                    s.name, run.subflows
                ));
            }
            let f = kernel_figures(&run, capacity(s))?;
            keep_run(path, cfg, &stdout)?;
            if ctx.progress {
                above(
                    &bar,
                    format!(
                        "convergence-linux: {} {algorithm} run {}: final share {:.1}%, {:.0} s \
                     elapsed",
                        s.name,
                        rep + 1,
                        f.final_share,
                        started.elapsed().as_secs_f64()
                    ),
                );
            }
            Ok(Some(f))
        },
    );
    if loaded_here {
        let _ = Command::new(&program)
            .args(["unload", "--wait", "5"])
            .output();
    }
    if outcome.interrupted {
        return Err(format!(
            "interrupted: {} of the {total} kernel runs left finished; every finished run is \
             kept in {}: run the same command again to resume",
            outcome.done.len(),
            ctx.out.join(KEPT_DIR).display()
        ));
    }
    if let Some((_, e)) = outcome.failed.first() {
        return Err(format!(
            "{} of the {total} kernel runs failed (the {} finished are kept in {}), the \
             first: {e}",
            outcome.failed.len(),
            outcome.done.len(),
            ctx.out.join(KEPT_DIR).display()
        ));
    }
    figures.extend(outcome.done.into_iter().map(|(i, f)| {
        let (si, ai, rep, ..) = jobs[i];
        (si, ai, rep, Ok(f))
    }));
    figures.sort_by_key(|(si, ai, rep, _)| (*si, *ai, *rep));
    let mut out: Vec<Vec<Vec<KernelFigures>>> = settings
        .iter()
        .map(|_| ALGORITHMS.iter().map(|_| Vec::new()).collect())
        .collect();
    for (si, ai, _, f) in figures {
        out[si][ai].push(f?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_run_is_the_default_setting_and_compares_what_convergence_does() {
        let quick = kernel_settings(true);
        assert_eq!(quick.len(), 1);
        assert_eq!(quick[0].name, "default");
        assert_eq!(kernel_settings(false).len(), 10);
        let targets = published::of("convergence").unwrap();
        for quick in [true, false] {
            for (metric, unit) in compared(quick) {
                targets.target(&metric, unit).unwrap();
            }
        }
    }

    #[test]
    fn settings_are_chosen_by_name_in_the_experiments_order() {
        let names = |v: Vec<&Setting>| v.iter().map(|s| s.name).collect::<Vec<_>>();
        assert_eq!(names(chosen_settings(&[], true).unwrap()), ["default"]);
        assert_eq!(chosen_settings(&[], false).unwrap().len(), 10);
        let chosen = ["rtt-200ms".to_string(), "rate-4Mbps".to_string()];
        assert_eq!(
            names(chosen_settings(&chosen, true).unwrap()),
            ["rtt-200ms", "rate-4Mbps"]
        );
        let Err(err) = chosen_settings(&["rtt-300ms".to_string()], false) else {
            panic!("an unknown setting was accepted");
        };
        assert!(
            err.contains("\"rtt-300ms\"") && err.contains("mismatch-rtt"),
            "{err}"
        );
    }

    #[test]
    fn configs_size_the_queue_as_the_simulator_does() {
        let s = settings(false);
        let c = config(s[0], "LIA", 240, false);
        assert_eq!(c["mp_cc"], "pp_lia");
        assert_eq!(c["server_quickack"], false);
        assert_eq!(c["paths"][0]["queue_bytes"], 100_000);
        assert_eq!(c["paths"][0]["rate_bps"], 8_000_000);
        assert!(c["paths"][0]["queue_packets"].is_null());
        let netem = s.iter().find(|s| s.name == "buffer-1000pkts").unwrap();
        let c = config(netem, "Uncoupled", 240, true);
        assert_eq!(c["mp_cc"], "reno");
        assert_eq!(c["server_quickack"], true);
        assert_eq!(c["paths"][1]["queue_packets"], 1000);
        assert!(c["paths"][1]["queue_bytes"].is_null());
    }

    #[test]
    fn kernel_figures_follow_the_bytes_per_second() {
        let r = KernelRun {
            mp_bytes: vec![1000; 100],
            sp_bytes: vec![1000; 100],
            subflows: 8,
            data: [EmuCounters {
                delivered: 0,
                queue_drops: 0,
                lost: 0,
                late_over_1ms: 0,
                late_max_ns: 0,
                late_max_at_ms: 0,
                realtime: true,
            }; 2],
            stalls: Vec::new(),
        };
        let f = kernel_figures(&r, 16_000.0).unwrap();
        assert!((f.final_share - 50.0).abs() < 1e-9);
        assert_eq!(f.convergence, (0.0, true));
        // 16 kb/s delivered of 16 kb/s.
        assert!((f.utilisation - 100.0).abs() < 1e-9);
    }
}
