//! The `pathpool` command line (the binary; the wheel installs it as the `pathpool` command).
//! `pathpool plot` and the Dask half of `pathpool sweep --cluster` run in the Python package
//! ([`python`]).
//!
//! Exit codes: 0 success; 1 a failure while running or writing; 2 a bad command line or a bad
//! scenario (nothing is written); 130 a sweep stopped by Ctrl-C (finished runs are kept).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod bench;
pub mod detours;
pub mod emu;
pub mod keygen;
pub mod linux;
pub mod overlay;
pub mod python;
pub mod reproduce;
pub mod sweep;
pub mod testbed;

use pathpool_lab::run::RunOneError;
use pathpool_lab::{output, report, LabError};

/// Exit code for bad input (command line or scenario).
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for a failure while running or writing results.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for a sweep stopped by Ctrl-C (or SIGTERM).
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser, Debug)]
#[command(
    name = "pathpool",
    version,
    about = "Multipath and multisource transport: a deterministic packet-level simulator and tools",
    long_about = None,
    after_help = "Scenario reference: docs/scenario-reference.md. Run `pathpool <command> --help` for details."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario file and write its results.
    Run(RunArgs),
    /// Check a scenario file without running it.
    Check {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Override a scenario field (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Run a scenario over a grid of overrides and seeds, in parallel, resumably, and
    /// gather one table (docs/sweeps.md).
    Sweep(sweep::SweepArgs),
    /// Run an experiment of the documents and compare with the published figures.
    Reproduce(reproduce::ReproduceArgs),
    /// Measure the simulator's speed and memory on dumbbell scenarios.
    Bench(bench::BenchArgs),
    /// One-hop detours of Rocketfuel ISP maps, as the INRPP document's Table 1 counts them.
    Detours(detours::DetoursArgs),
    /// Overlay: the rendezvous and topology manager of an overlay file (docs/overlay.md).
    Rv(overlay::RvArgs),
    /// Overlay: a forwarding node (LIPSIN forwarding between UDP links, optional emulation).
    Fn(overlay::FnArgs),
    /// Overlay: serve a file to mmTP subscribers (stateless publisher).
    Publish(overlay::PublishArgs),
    /// Overlay: download a named content from its publishers over many paths.
    Get(overlay::GetArgs),
    /// Overlay: start (up), use (get) and stop (down) a whole overlay as local processes.
    Testbed(testbed::TestbedArgs),
    /// Overlay: create the overlay key and publishers' signing keys (docs/overlay.md, Keys).
    Keygen(keygen::KeygenArgs),
    /// Plot a results directory (drawn by the Python package, with matplotlib).
    #[command(disable_help_flag = true)]
    Plot {
        /// Arguments of `python -m pathpool plot` (see `pathpool plot --help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Coupled congestion control (NMCC, LIA, OLIA, BALIA) for Linux's own MPTCP, as BPF
    /// programs: load, unload, status, groups (docs/linux.md).
    #[command(disable_help_flag = true)]
    Linux {
        /// Arguments of `pathpool-linux` (see `pathpool linux --help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Emulate a link between two interfaces (rate, delay, random loss, drop-tail queue, per
    /// direction) for kernel traffic, where `tc netem` is missing (docs/emu.md).
    Emu(emu::EmuArgs),
    /// Internal: run one benchmark case in this process and print its figures as JSON.
    #[command(hide = true)]
    BenchCase {
        /// Case index.
        index: usize,
        /// Scale every case's duration by this factor.
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
    },
}

/// Runs the command line `args` (including the program name) and returns the exit code.
#[must_use]
pub fn main_with_args(args: Vec<OsString>) -> ExitCode {
    ExitCode::from(run_cli(args))
}

/// Runs the command line `args` (including the program name) and returns the exit status.
#[must_use]
pub fn run_cli(args: Vec<OsString>) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_BAD_INPUT } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Run(args) => run_command(&args),
        Command::Check { scenario, set } => check_command(&scenario, &set),
        Command::Sweep(args) => sweep::sweep_command(&args),
        Command::Reproduce(args) => reproduce::main(&args),
        Command::Bench(args) => bench::bench_command(&args),
        Command::Detours(args) => detours::detours_command(&args),
        Command::Rv(args) => overlay::rv_command(&args),
        Command::Fn(args) => overlay::fn_command(&args),
        Command::Publish(args) => overlay::publish_command(&args),
        Command::Get(args) => overlay::get_command(&args),
        Command::Testbed(args) => testbed::testbed_command(&args),
        Command::Keygen(args) => keygen::keygen_command(&args),
        Command::Emu(args) => emu::emu_command(&args),
        Command::BenchCase { index, scale } => bench::bench_case_command(index, scale),
        Command::Linux { args } => match linux::linux(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Plot { args } => match python::plot(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
    };
    // A message of several lines is several problems (a scenario's, for instance): each is
    // its own `error:` line.
    let print = |msg: &str| {
        for line in msg.lines() {
            eprintln!("error: {line}");
        }
    };
    match result {
        Ok(()) => 0,
        Err(CliError::BadInput(msg)) => {
            print(&msg);
            EXIT_BAD_INPUT
        }
        Err(CliError::Failed(msg)) => {
            print(&msg);
            EXIT_FAILURE
        }
        Err(CliError::Interrupted(msg)) => {
            eprintln!("{msg}");
            EXIT_INTERRUPTED
        }
    }
}

/// How to start this program again, for the commands that start copies of themselves
/// (`bench`, `testbed up`): the current executable (the `pathpool` command is this binary,
/// in a checkout and in the wheel alike).
///
/// # Errors
/// No current executable.
pub(crate) fn self_command() -> Result<Vec<String>, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Failed(format!("finding the pathpool binary: {e}")))?;
    Ok(vec![exe.display().to_string()])
}

/// A command's failure.
#[derive(Debug)]
pub enum CliError {
    /// Bad command line or scenario (exit 2).
    BadInput(String),
    /// Failure while running or writing (exit 1).
    Failed(String),
    /// Stopped by Ctrl-C; what was finished is kept (exit 130).
    Interrupted(String),
}

impl From<LabError> for CliError {
    fn from(e: LabError) -> Self {
        match e {
            LabError::BadInput(m) => CliError::BadInput(m),
            LabError::Failed(m) => CliError::Failed(m),
            LabError::Interrupted(m) => CliError::Interrupted(m),
        }
    }
}

/// Options of `pathpool run`.
#[derive(clap::Args, Debug)]
struct RunArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Random seed (default: the scenario's `seed`, or 1).
    #[arg(long)]
    seed: Option<u64>,
    /// Output directory (default: results/<scenario>-seed<N>). A new, empty or earlier
    /// results directory; pathpool replaces only the files it wrote there.
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Write the results into an --out directory that holds other files (files named like a
    /// result file are replaced; nothing else is touched).
    #[arg(long)]
    force: bool,
    /// Override a scenario field, e.g. --set links.bottleneck.rate=20Mbps (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Print the summary only; write no files.
    #[arg(long)]
    no_write: bool,
    /// No progress bar and no summary table.
    #[arg(long, short)]
    quiet: bool,
    /// Print summary.json to standard output instead of the table.
    #[arg(long)]
    json: bool,
}

/// Splits `KEY=VALUE` overrides.
///
/// # Errors
/// An override without `=`.
pub fn parse_overrides(set: &[String]) -> Result<Vec<(String, String)>, CliError> {
    set.iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| {
                    CliError::BadInput(format!(
                        "--set {s:?}: expected KEY=VALUE, e.g. links.bottleneck.rate=20Mbps"
                    ))
                })
        })
        .collect()
}

fn load(path: &PathBuf, set: &[String]) -> Result<pathpool_sim::LoadedScenario, CliError> {
    let overrides = parse_overrides(set)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::BadInput(format!("{}: {e}", path.display())))?;
    pathpool_sim::LoadedScenario::from_toml(&text, &path.display().to_string(), &overrides)
        .map_err(|e| CliError::BadInput(e.to_string()))
}

fn check_command(path: &PathBuf, set: &[String]) -> Result<(), CliError> {
    let loaded = load(path, set)?;
    let sim = loaded
        .compile(None)
        .map_err(|e| CliError::BadInput(e.to_string()))?;
    println!(
        "{}: ok ({} flows, {} directed links, {:.1} s)",
        path.display(),
        sim.flow_count(),
        sim.link_count(),
        sim.end().as_secs_f64()
    );
    Ok(())
}

fn out_dir_error(e: output::OutDirError) -> CliError {
    match e {
        output::OutDirError::Refused(m) => CliError::BadInput(m.replace(
            output::results_dir::FORCE_HINT,
            "add --force to write them beside these files (only files named like a result \
             file are replaced)",
        )),
        output::OutDirError::Io(m) => CliError::Failed(m),
    }
}

fn run_command(a: &RunArgs) -> Result<(), CliError> {
    let loaded = load(&a.scenario, &a.set)?;
    let seed = a.seed.unwrap_or_else(|| loaded.default_seed());
    let source = a.scenario.display().to_string();
    let overrides = parse_overrides(&a.set)?;
    let label = a
        .scenario
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().into_owned());
    let spec = pathpool_lab::run::RunSpec {
        scenario: &loaded,
        source: &source,
        overrides: &overrides,
        seed,
        command: std::env::args().collect(),
        label: &label,
        progress: !a.quiet,
    };
    let sim = pathpool_lab::run::compile(&spec).map_err(|e| CliError::BadInput(e.to_string()))?;
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| output::default_out_dir(&a.scenario, seed));
    if !a.no_write {
        // Before the run, not after it: a refused directory costs nothing.
        output::check_out_dir(&dir, a.force).map_err(out_dir_error)?;
    }
    let record = pathpool_lab::run_one(&spec, sim, |s, until| {
        s.run_until(until);
        Ok::<(), std::convert::Infallible>(())
    })
    .map_err(|e| match e {
        RunOneError::Record(e) => CliError::Failed(e),
        RunOneError::Step(never) => match never {},
    })?;
    let (results, wall) = (&record.results, record.wall_time_s);
    if !a.no_write {
        output::write_results(results, wall, &record.provenance, &dir, a.force)
            .map_err(out_dir_error)?;
        if !a.quiet && !a.json {
            eprintln!("results written to {}", dir.display());
        }
    }
    if a.json {
        let s = serde_json::to_string_pretty(&results.summary(wall))
            .map_err(|e| CliError::Failed(e.to_string()))?;
        println!("{s}");
    } else if !a.quiet {
        print!("{}", report::summary_text(results, wall));
    }
    Ok(())
}
