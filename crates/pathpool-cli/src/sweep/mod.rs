//! `pathpool sweep`: a scenario run over a grid of overrides × repetitions, in parallel on
//! the local cores (or on a Dask cluster through the Python package), resumable, gathered
//! into one table. The format and the rules are in `docs/sweeps.md`.
//!
//! The pieces: [`def`] reads a sweep (command line or sweep file), [`plan`] validates it and
//! lists its runs (stable ids, seeds) and owns the sweep directory, [`pool`] runs pending
//! runs on threads, [`gather`] builds `sweep.parquet` and `sweep.csv`.

pub mod def;
pub mod gather;
pub mod plan;
pub mod pool;
pub mod replicates;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::CliError;
use def::{is_sweep_file, read_sweep_file, ScenarioText, SweepDef, SweepError, SweepOptions};
use plan::Plan;

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
    /// package's `pathpool` command and dask.distributed.
    #[arg(long, value_name = "ADDRESS")]
    pub cluster: Option<String>,
    /// Check the sweep and list its runs (done or not); run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar and no summary line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Why runs handed to a cluster did not all finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecError {
    /// The user interrupted (Ctrl-C).
    Interrupted,
    /// Something failed; the message says what.
    Failed(String),
}

/// Runs a sweep's pending runs elsewhere (a Dask cluster) and stores each finished one with
/// [`Plan::store`]. The Python package provides one.
pub trait ClusterRunner {
    /// Runs `pending` (indices into `plan.runs`) on the cluster at `address`.
    ///
    /// # Errors
    /// Interrupted, or a failure (the runs already stored stay stored).
    fn run(
        &self,
        plan: &Arc<Plan>,
        pending: &[usize],
        address: &str,
        progress: bool,
    ) -> Result<(), ExecError>;
}

/// What the program running the command line provides to `pathpool sweep`.
#[derive(Clone, Copy, Default)]
pub struct Host<'a> {
    /// Runs sweeps on a cluster (`--cluster`); `None` in the plain Rust binary.
    pub cluster: Option<&'a dyn ClusterRunner>,
    /// Says whether the user asked to stop (Ctrl-C); `None`: the command installs its own
    /// SIGINT/SIGTERM handler (a second Ctrl-C then ends the process at once).
    pub interrupted: Option<&'a dyn Fn() -> bool>,
}

fn bad(e: &SweepError) -> CliError {
    CliError::BadInput(e.to_string())
}

/// The sweep a command line describes: a sweep file, or a scenario file with options; and
/// whether `input` is a sweep file.
///
/// # Errors
/// Unreadable files and everything [`SweepDef::apply_options`] rejects.
pub fn definition(input: &Path, opts: &SweepOptions) -> Result<(SweepDef, bool), SweepError> {
    let text = std::fs::read_to_string(input)
        .map_err(|e| SweepError::at(input.display().to_string(), e.to_string()))?;
    let sweep_file = is_sweep_file(&text);
    let mut def = if sweep_file {
        read_sweep_file(input)?
    } else {
        SweepDef::new(ScenarioText {
            text,
            format: "toml".into(),
            source: input.display().to_string(),
        })
    };
    def.apply_options(opts)?;
    Ok((def, sweep_file))
}

/// The default sweep directory: `results/<stem>` for a sweep file, `results/<stem>-sweep`
/// for a scenario file.
#[must_use]
pub fn default_out_dir(input: &Path, sweep_file: bool) -> PathBuf {
    let stem = input
        .file_stem()
        .map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
    let name = if sweep_file {
        stem
    } else {
        format!("{stem}-sweep")
    };
    PathBuf::from("results").join(name)
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
pub fn sweep_command(a: &SweepArgs, host: &Host<'_>) -> Result<(), CliError> {
    if a.cluster.is_some() && host.cluster.is_none() {
        return Err(CliError::BadInput(
            "--cluster runs the sweep on Dask, which the Python package drives: install it \
             with the dask extra (pip install 'pathpool[dask]') and use the `pathpool` command \
             it installs (or python -m pathpool sweep ... --cluster ADDRESS). This binary runs \
             sweeps on the local cores only."
                .into(),
        ));
    }
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
    let own_flag;
    let check: &dyn Fn() -> bool = if let Some(f) = host.interrupted {
        f
    } else {
        own_flag = signal_flag()?;
        &|| own_flag.load(Ordering::Relaxed)
    };
    plan.prepare().map_err(|e| bad(&e))?;
    let pending = plan.pending();
    let jobs = a.jobs.unwrap_or_else(pool::default_jobs);
    if !a.quiet {
        let place = a.cluster.as_ref().map_or_else(
            || format!("on {} worker threads", jobs.min(pending.len().max(1))),
            |c| format!("on {c}"),
        );
        eprintln!(
            "sweep: {total} runs ({} points x {} reps), {} already done, {} to run {place}; \
             results in {}",
            plan.points(),
            plan.def.reps,
            total - pending.len(),
            pending.len(),
            plan.out.display()
        );
    }
    let started = Instant::now();
    let plan = Arc::new(plan);
    if let (Some(address), Some(cluster)) = (&a.cluster, host.cluster) {
        match cluster.run(&plan, &pending, address, !a.quiet) {
            Ok(()) => {}
            Err(ExecError::Interrupted) => return Err(interrupted(&plan, pending.len())),
            Err(ExecError::Failed(e)) => return Err(CliError::Failed(e)),
        }
    } else {
        let report = pool::run_local(&plan, &pending, jobs, !a.quiet, check);
        if report.interrupted {
            return Err(interrupted(&plan, pending.len()));
        }
        if !report.failed.is_empty() {
            return Err(CliError::Failed(format!(
                "{} of {} runs failed (above); the {} finished ones are kept: run the same \
                 command again to retry the others",
                report.failed.len(),
                pending.len(),
                report.ran.len()
            )));
        }
    }
    let left = plan.pending().len();
    if left > 0 {
        return Err(CliError::Failed(format!(
            "{left} runs did not finish; run the same command again to retry them"
        )));
    }
    let (table, [parquet, csv]) = gather::gather_and_write(&plan).map_err(CliError::Failed)?;
    if !a.quiet {
        eprintln!(
            "sweep: {} runs done ({} now, in {:.1} s); {} rows gathered",
            total,
            pending.len(),
            started.elapsed().as_secs_f64(),
            table.rows()
        );
    }
    if let Some(same) = replicates::identical_replicates(&plan).map_err(CliError::Failed)? {
        eprintln!("warning: {}", same.message());
    }
    println!("{}", parquet.display());
    println!("{}", csv.display());
    Ok(())
}

fn interrupted(plan: &Plan, pending: usize) -> CliError {
    let left = plan.pending().len();
    CliError::Interrupted(format!(
        "interrupted: {} of {pending} runs finished and are kept, {left} left unfinished; run \
         the same command again to resume",
        pending - left.min(pending)
    ))
}
