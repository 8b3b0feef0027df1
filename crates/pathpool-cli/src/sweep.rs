//! `pathpool sweep`: the command line of the lab's sweeps (`pathpool_lab::sweep`;
//! `docs/sweeps.md`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use pathpool_lab::sweep::def::{SweepError, SweepOptions};
use pathpool_lab::sweep::plan::Plan;
use pathpool_lab::sweep::{default_out_dir, definition, execute, pool, Executor};

use crate::python::{self, DaskRunner};
use crate::CliError;

/// Options of `pathpool sweep`.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// A scenario file (vary it with --grid), or a sweep file (a TOML file with a `scenario`
    /// key, see docs/sweeps.md).
    pub input: PathBuf,
    /// A grid parameter: a --set key and its values separated by commas, e.g.
    /// links.bottleneck.rate=10Mbps,100Mbps (repeatable; the first varies slowest).
    #[arg(long = "grid", value_name = "KEY=V1,V2,...")]
    pub grid: Vec<String>,
    /// Override a scenario field in every run (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Repetitions of every grid point, with seeds SEED, SEED+1, ... (default 1).
    #[arg(long)]
    pub reps: Option<u64>,
    /// Base seed (default: the scenario's `seed`, or 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads (default: every core).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// The sweep directory (default: results/<scenario>-sweep, or results/<sweep file>).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// The table gathered into sweep.parquet: flows, links, subflows or summary (default
    /// flows).
    #[arg(long)]
    pub table: Option<String>,
    /// Result columns to keep, separated by commas (default: all of the table's).
    #[arg(long, value_name = "COLUMNS")]
    pub metrics: Option<String>,
    /// Run on the Dask scheduler at ADDRESS (e.g. tcp://10.0.0.1:8786): needs the Python
    /// package with dask.distributed (pip install 'pathpool[dask]'), in PATHPOOL_PYTHON or
    /// the interpreter beside this binary.
    #[arg(long, value_name = "ADDRESS")]
    pub cluster: Option<String>,
    /// Check the sweep and list its runs (done or not); run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar and no summary line.
    #[arg(long, short)]
    pub quiet: bool,
}

fn bad(e: &SweepError) -> CliError {
    CliError::BadInput(e.to_string())
}

fn plan_from_args(a: &SweepArgs) -> Result<Plan, CliError> {
    let opts = SweepOptions {
        grid: a.grid.clone(),
        set: a.set.clone(),
        reps: a.reps,
        seed: a.seed,
        table: a.table.clone(),
        metrics: a.metrics.clone(),
    };
    let (def, is_file) = definition(&a.input, &opts).map_err(|e| bad(&e))?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(&a.input, is_file));
    Plan::new(def, out).map_err(|e| bad(&e))
}

fn print_runs(plan: &Plan) {
    let mut header = vec!["run_id".to_string(), "rep".into(), "seed".into()];
    header.extend(plan.def.grid.iter().map(|p| p.key.clone()));
    header.push("done".into());
    let rows: Vec<Vec<String>> = plan
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row = vec![r.id.clone(), r.rep.to_string(), r.seed.to_string()];
            row.extend(r.params.iter().map(|(_, v)| v.clone()));
            row.push(if plan.is_done(i) { "yes" } else { "no" }.into());
            row
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("  {}", parts.join("  ").trim_end());
    };
    line(&header);
    for r in &rows {
        line(r);
    }
}

/// A flag set by SIGINT and SIGTERM; when it is already set, the signal ends the process
/// with status 130.
pub(crate) fn signal_flag() -> Result<Arc<AtomicBool>, CliError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(
            sig,
            i32::from(crate::EXIT_INTERRUPTED),
            Arc::clone(&flag),
        )
        .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&flag)))
        .map_err(|e| CliError::Failed(format!("cannot handle Ctrl-C: {e}")))?;
    }
    Ok(flag)
}

/// `pathpool sweep`.
///
/// # Errors
/// Bad input (exit 2) before anything runs; interruption (exit 130); failed runs or I/O
/// errors (exit 1).
pub fn sweep_command(a: &SweepArgs) -> Result<(), CliError> {
    // The Dask half is Python's: check that it is there before anything is written.
    let cluster_python = match &a.cluster {
        Some(_) if !a.dry_run => {
            let py = python::interpreter();
            python::require(
                &py,
                &["pathpool", "distributed"],
                "--cluster",
                "install it with the dask extra (pip install 'pathpool[dask]')",
            )?;
            Some(py)
        }
        _ => None,
    };
    if a.jobs == Some(0) {
        return Err(CliError::BadInput("--jobs: must be at least 1".into()));
    }
    let plan = plan_from_args(a)?;
    let total = plan.runs.len();
    if a.dry_run {
        let done = total - plan.pending().len();
        println!(
            "{}: ok: {total} runs ({} points x {} reps), {done} done, in {}",
            a.input.display(),
            plan.points(),
            plan.def.reps,
            plan.out.display()
        );
        print_runs(&plan);
        return Ok(());
    }
    // Ctrl-C is handled from here on: a press stops the sweep cleanly.
    let flag = signal_flag()?;
    let check = || flag.load(Ordering::Relaxed);
    plan.prepare().map_err(|e| bad(&e))?;
    let pending = plan.pending().len();
    let jobs = a.jobs.unwrap_or_else(pool::default_jobs);
    if !a.quiet {
        let place = a.cluster.as_ref().map_or_else(
            || format!("on {} worker threads", jobs.min(pending.max(1))),
            |c| format!("on {c}"),
        );
        eprintln!(
            "sweep: {total} runs ({} points x {} reps), {} already done, {pending} to run \
             {place}; results in {}",
            plan.points(),
            plan.def.reps,
            total - pending,
            plan.out.display()
        );
    }
    let started = Instant::now();
    let runner = cluster_python.map(|python| DaskRunner {
        python,
        interrupted: &check,
    });
    let executor = match (&a.cluster, &runner) {
        (Some(address), Some(runner)) => Executor::Cluster { runner, address },
        _ => Executor::Local { jobs },
    };
    let done = execute(plan, executor, !a.quiet, &check)?;
    if !a.quiet {
        eprintln!(
            "sweep: {} runs done ({} now, in {:.1} s); {} rows gathered",
            done.total,
            done.ran_now,
            started.elapsed().as_secs_f64(),
            done.rows
        );
    }
    if let Some(same) = &done.identical {
        eprintln!("warning: {}", same.message());
    }
    println!("{}", done.parquet.display());
    println!("{}", done.csv.display());
    Ok(())
}
