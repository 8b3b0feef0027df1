//! `pathpool reproduce`: the command line of the lab's reproductions
//! (`pathpool_lab::reproduce`; `docs/reproductions.md`).

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Args;
use pathpool_lab::reproduce::{
    check_convergence_linux_only, check_e8_settings, scoreboard, select, text_report,
    write_outputs, Ctx, Experiment, Runner, Score, EXPERIMENTS, KERNEL_EXPERIMENTS,
};

use crate::CliError;

/// Options of `pathpool reproduce`.
#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Experiment id (see --list), or `all`.
    pub id: Option<String>,
    /// List the experiments and exit.
    #[arg(long)]
    pub list: bool,
    /// A reduced version: fewer repetitions, shorter runs, same conclusions.
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object per compared figure on standard output (nothing else there).
    #[arg(long)]
    pub json: bool,
    /// After the experiments, print the fidelity scoreboard: per experiment, the figures
    /// whose 95% interval lies in the tolerance band, meets it, or misses it. With --json,
    /// print only the scoreboard's rows, one JSON object each.
    #[arg(long)]
    pub summary: bool,
    /// Repetitions (seeds) per configuration; default: the experiment's (fewer with --quick).
    #[arg(long)]
    pub seeds: Option<u32>,
    /// Worker threads (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Where figures and per-run tables go (default results/reproduce/<id>).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// No progress on standard error.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Override a field in every run (repeatable), e.g. `tcp.min_rto=1s`: a what-if on top
    /// of the experiment; the published values stay those of the documents.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// domain-scale: a directory of Topology Zoo GML files (NAME.gml) to use instead of the
    /// topohub package's JSON files.
    #[arg(long, value_name = "DIR")]
    pub zoo_dir: Option<PathBuf>,
    /// convergence-linux: the server acknowledges every segment at once (its routes carry
    /// `quickack 1`), removing the kernel MPTCP receiver's delayed-ACK effect on the subflows
    /// (docs/linux.md); the published values stay the thesis's.
    #[arg(long)]
    pub server_quickack: bool,
    /// convergence-linux: run only this E8 setting (repeatable; names as in
    /// docs/reproductions.md, e.g. `rtt-200ms`): the full run in parts, or one setting at
    /// the --quick length.
    #[arg(long, value_name = "NAME")]
    pub setting: Vec<String>,
    /// Also write an HTML report into DIR: one self-contained page per experiment (measured
    /// next to published, the explanation of each miss, the figures), and index.html for
    /// several. Drawn by the Python package (`python -m pathpool.report_html`).
    #[arg(long, value_name = "DIR")]
    pub html: Option<PathBuf>,
}

/// `pathpool reproduce`.
///
/// # Errors
/// An unknown id or bad option (bad input), or an experiment that could not run or write
/// its outputs (failure; the other experiments still run).
pub fn main(args: &ReproduceArgs) -> Result<(), CliError> {
    if args.list || args.id.is_none() {
        for e in EXPERIMENTS.iter().chain(KERNEL_EXPERIMENTS) {
            println!("{:<26} {}  [{}]", e.id, e.title, e.source);
        }
        if args.id.is_none() && !args.list {
            return Err(CliError::BadInput(
                "give an experiment id (listed above) or `all`: pathpool reproduce ID [--quick] [--json]".into(),
            ));
        }
        return Ok(());
    }
    let id = args.id.as_deref().unwrap_or_default();
    let selected: Vec<&Experiment> = select(id)?;
    if args.server_quickack {
        check_convergence_linux_only(&selected, "--server-quickack")?;
    }
    if !args.setting.is_empty() {
        check_convergence_linux_only(&selected, "--setting")?;
        check_e8_settings(&args.setting)?;
    }
    if args.seeds == Some(0) {
        return Err(CliError::BadInput("--seeds must be at least 1".into()));
    }
    if args.html.is_some() {
        // Before the experiments run, not after: the report is drawn by the Python package.
        crate::python::require(
            &crate::python::interpreter(),
            &["pathpool", "matplotlib"],
            "`--html`",
            "install it (pip install pathpool, or `make setup` in a checkout)",
        )?;
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let progress = !args.quiet && !args.json && std::io::stderr().is_terminal();
    let extra = crate::parse_overrides(&args.set)?;
    let runner = Runner::new(jobs, progress, extra.clone());
    let stop = crate::sweep::signal_flag()?;
    let mut failed = Vec::new();
    let mut scores = Vec::new();
    let mut rows = String::new();
    // The experiments whose outputs were written: each gets an HTML page, with comparisons
    // or (the documents giving no numbers) with its measured figures only.
    let mut written: Vec<&str> = Vec::new();
    for e in selected {
        let out = args
            .out
            .clone()
            .map(|o| if id == "all" { o.join(e.id) } else { o })
            .unwrap_or_else(|| PathBuf::from("results/reproduce").join(e.id));
        let ctx = Ctx {
            quick: args.quick,
            seeds: args.seeds,
            runner: &runner,
            out: out.clone(),
            zoo_dir: args.zoo_dir.clone(),
            jobs,
            progress: !args.quiet && !args.json,
            extra: extra.clone(),
            server_quickack: args.server_quickack,
            e8_settings: args.setting.clone(),
            stop: std::sync::Arc::clone(&stop),
        };
        if !args.json {
            println!(
                "== {} — {} [{}]{}",
                e.id,
                e.title,
                e.source,
                if args.quick { " (quick)" } else { "" }
            );
        }
        let started = std::time::Instant::now();
        let report = match (e.run)(&ctx) {
            Ok(r) => r,
            Err(msg) => {
                eprintln!("error: {}: {msg}", e.id);
                failed.push(e.id);
                continue;
            }
        };
        if let Err(msg) = write_outputs(e, &report, &out) {
            eprintln!("error: {}: {msg}", e.id);
            failed.push(e.id);
        } else {
            written.push(e.id);
        }
        scores.push(Score::of(e.id, args.quick, &report.comparisons));
        for c in &report.comparisons {
            rows += &serde_json::to_string(c).unwrap_or_default();
            rows.push('\n');
        }
        if args.json {
            if args.summary {
                // Only the scoreboard's rows, after the experiments.
                continue;
            }
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            for c in &report.comparisons {
                let _ = writeln!(lock, "{}", serde_json::to_string(c).unwrap_or_default());
            }
        } else {
            print!("{}", text_report(&report));
            let score = scores.last().expect("pushed above");
            println!(
                "{} of {} figures within tolerance by their 95% interval ({} by the mean alone); {:.1} s; figure and tables in {}\n",
                score.within,
                score.total,
                score.mean_within,
                started.elapsed().as_secs_f64(),
                out.display()
            );
        }
    }
    if args.summary {
        if args.json {
            for s in &scores {
                println!("{}", serde_json::to_string(s).unwrap_or_default());
            }
        } else {
            println!(
                "== scoreboard (within: the 95% interval of the mean lies in the tolerance band)"
            );
            print!("{}", scoreboard::table(&scores));
        }
    }
    if let Some(dir) = &args.html {
        let results = match &args.out {
            Some(o) => o.clone(),
            None if id == "all" => PathBuf::from("results/reproduce"),
            None => PathBuf::from("results/reproduce").join(id),
        };
        if written.is_empty() {
            failed.push("html (no reproduction wrote its outputs)");
        } else if let Err(msg) = write_html(&rows, &written, &results, dir, args.quick) {
            eprintln!("error: --html: {msg}");
            failed.push("html");
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(format!("failed: {}", failed.join(", "))))
    }
}

/// Writes the HTML report of `rows` (JSON lines) and of the `experiments` that ran through
/// the Python package, which prints the pages it wrote (on standard error here: standard
/// output may be `--json`'s).
fn write_html(
    rows: &str,
    experiments: &[&str],
    results: &Path,
    dir: &Path,
    quick: bool,
) -> Result<(), String> {
    let python = crate::python::interpreter();
    let command: Vec<String> = std::env::args().collect();
    let mut child = Command::new(&python)
        .args(["-m", "pathpool.report_html", "--json", "-", "--results"])
        .arg(results)
        .args(experiments.iter().flat_map(|e| ["--experiment", e]))
        .arg("-o")
        .arg(dir)
        .arg(if quick { "--quick" } else { "--full" })
        .arg("--command")
        .arg(command.join(" "))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "{}: {e}; the HTML report is drawn by the Python package (pip install \
                 pathpool; PATHPOOL_PYTHON names its interpreter)",
                python.display()
            )
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(rows.as_bytes())
            .map_err(|e| format!("writing the rows to {}: {e}", python.display()))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    for page in String::from_utf8_lossy(&out.stdout).lines() {
        eprintln!("report: {page}");
    }
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} -m pathpool.report_html failed ({}); is the Python package installed for \
             this interpreter? (PATHPOOL_PYTHON names another)",
            python.display(),
            out.status
        ))
    }
}
