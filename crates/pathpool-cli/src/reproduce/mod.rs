//! `pathpool reproduce`: the documents' experiments, run and compared with their published
//! figures.
//!
//! Each experiment has a scenario file in `scenarios/reproductions/` (embedded in the binary
//! at build time, so the command works from any directory) and a module here that varies it
//! with overrides, runs the variants over several seeds on every core, and compares summary
//! figures with the published ones. Every comparison states its tolerance; `--json` prints
//! one object per comparison (`docs/reproductions.md` documents the interface).

mod convergence;
mod domain_scale;
mod mmtp_multisource;
mod partial_congestion;
mod runner;
mod scoreboard;
mod shared_bottleneck;
mod short_transfers;
mod sqrt_n;
mod stats;
mod svg;
mod tm_assistance;
mod wischik;

use std::fs;
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;

use clap::Args;

use crate::CliError;
use serde::Serialize;

pub use runner::{Job, Runner};
pub use scoreboard::{Score, Verdict};
pub use stats::Estimate;

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
}

/// One published figure next to what we measured.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Experiment id.
    pub experiment: &'static str,
    /// What is compared, e.g. `share, 4 competitors, drop-tail`.
    pub metric: String,
    /// Unit of `published`, `measured` and `tolerance` (e.g. `%`, `s`).
    pub unit: &'static str,
    /// The document's value.
    pub published: f64,
    /// Our mean over the runs.
    pub measured: f64,
    /// Half-width of the 95% confidence interval of `measured` (0 for one run).
    pub ci95: f64,
    /// Runs behind `measured`.
    pub runs: usize,
    /// Largest |measured − published| counted as agreement.
    pub tolerance: f64,
    /// Whether |measured − published| ≤ tolerance (the mean alone).
    pub within: bool,
    /// Where the 95% interval of `measured` lies against the tolerance band
    /// ([`scoreboard`]'s rule).
    pub verdict: Verdict,
    /// Where the published value comes from.
    pub source: &'static str,
}

impl Comparison {
    fn new(
        experiment: &'static str,
        source: &'static str,
        metric: impl Into<String>,
        unit: &'static str,
        published: f64,
        measured: Estimate,
        tolerance: f64,
    ) -> Self {
        Comparison {
            experiment,
            metric: metric.into(),
            unit,
            published,
            measured: measured.mean,
            ci95: measured.ci95,
            runs: measured.n,
            tolerance,
            within: (measured.mean - published).abs() <= tolerance + 1e-9,
            verdict: Verdict::judge(published, tolerance, measured.mean, measured.ci95),
            source,
        }
    }
}

/// A figure we measure that the documents give no number for (reported, not compared).
#[derive(Clone, Debug, Serialize)]
pub struct Observation {
    /// What was measured.
    pub metric: String,
    /// Unit.
    pub unit: &'static str,
    /// Mean over the runs.
    pub measured: f64,
    /// Half-width of the 95% confidence interval.
    pub ci95: f64,
    /// Runs.
    pub runs: usize,
}

impl Observation {
    fn new(metric: impl Into<String>, unit: &'static str, e: Estimate) -> Self {
        Observation {
            metric: metric.into(),
            unit,
            measured: e.mean,
            ci95: e.ci95,
            runs: e.n,
        }
    }
}

/// What an experiment produced.
#[derive(Default)]
pub struct Report {
    /// Measured against published.
    pub comparisons: Vec<Comparison>,
    /// Measured only.
    pub observations: Vec<Observation>,
    /// Extra files to write into the output directory (name, contents).
    pub files: Vec<(String, String)>,
}

/// How an experiment is run.
pub struct Ctx<'a> {
    /// Reduced version.
    pub quick: bool,
    /// Seeds per configuration, if the user chose.
    pub seeds: Option<u32>,
    /// Runs scenarios in parallel.
    pub runner: &'a Runner,
    /// The experiment's output directory (sweeps keep their runs there).
    pub out: PathBuf,
    /// Topology Zoo GML files (`--zoo-dir`).
    pub zoo_dir: Option<PathBuf>,
    /// Worker threads.
    pub jobs: usize,
    /// Whether to show progress on standard error.
    pub progress: bool,
    /// `--set` overrides for every run.
    pub extra: Vec<(String, String)>,
    /// Set by Ctrl-C (SIGINT) or SIGTERM: the sweeps of domain-scale stop between runs,
    /// keeping every finished run for the next invocation (a second Ctrl-C ends the process).
    pub stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Ctx<'_> {
    /// Seeds per configuration: the user's choice, or `full` (`quick` with --quick).
    fn seeds(&self, full: u32, quick: u32) -> u32 {
        self.seeds.unwrap_or(if self.quick { quick } else { full })
    }
}

/// A reproducible experiment.
pub struct Experiment {
    /// Id on the command line.
    pub id: &'static str,
    /// One line.
    pub title: &'static str,
    /// The documents' section and figure.
    pub source: &'static str,
    /// Runs it.
    pub run: fn(&Ctx<'_>) -> Result<Report, String>,
}

/// Every experiment, in documentation order.
pub const EXPERIMENTS: &[Experiment] = &[
    shared_bottleneck::EXPERIMENT,
    wischik::EXPERIMENT,
    short_transfers::EXPERIMENT,
    partial_congestion::EXPERIMENT,
    convergence::EXPERIMENT,
    sqrt_n::EXPERIMENT,
    tm_assistance::EXPERIMENT,
    mmtp_multisource::EXPERIMENT,
    domain_scale::EXPERIMENT,
];

/// `pathpool reproduce`.
///
/// # Errors
/// An unknown id or bad option (bad input), or an experiment that could not run or write
/// its outputs (failure; the other experiments still run).
pub fn main(args: &ReproduceArgs) -> Result<(), CliError> {
    if args.list || args.id.is_none() {
        for e in EXPERIMENTS {
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
    let selected: Vec<&Experiment> = if id == "all" {
        EXPERIMENTS.iter().collect()
    } else {
        match EXPERIMENTS.iter().find(|e| e.id == id) {
            Some(e) => vec![e],
            None => {
                let ids: Vec<&str> = EXPERIMENTS.iter().map(|e| e.id).collect();
                return Err(CliError::BadInput(format!(
                    "unknown experiment {id:?}; known: {}, all",
                    ids.join(", ")
                )));
            }
        }
    };
    if args.seeds == Some(0) {
        return Err(CliError::BadInput("--seeds must be at least 1".into()));
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
        }
        scores.push(Score::of(e.id, args.quick, &report.comparisons));
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
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(format!("failed: {}", failed.join(", "))))
    }
}

fn text_report(r: &Report) -> String {
    let mut rows: Vec<Vec<String>> = r
        .comparisons
        .iter()
        .map(|c| {
            vec![
                c.metric.clone(),
                format!("{:.1}{}", c.published, c.unit),
                format!("{:.1}{} ± {:.1}", c.measured, c.unit, c.ci95),
                format!("±{:.1}", c.tolerance),
                match c.verdict {
                    Verdict::Within => "yes",
                    Verdict::Overlaps => "maybe",
                    Verdict::Outside => "NO",
                }
                .to_string(),
                c.runs.to_string(),
            ]
        })
        .collect();
    let mut out = crate::report::table(
        &[
            "metric",
            "published",
            "measured (95% CI)",
            "tol",
            "within",
            "runs",
        ],
        &rows,
    );
    if !r.observations.is_empty() {
        rows = r
            .observations
            .iter()
            .map(|o| {
                vec![
                    o.metric.clone(),
                    format!("{:.1}{} ± {:.1}", o.measured, o.unit, o.ci95),
                    o.runs.to_string(),
                ]
            })
            .collect();
        out.push_str("\nmeasured only (no published value):\n");
        out += &crate::report::table(&["metric", "measured (95% CI)", "runs"], &rows);
    }
    out
}

fn write_outputs(e: &Experiment, r: &Report, dir: &PathBuf) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        fs::write(&p, text).map_err(|err| format!("{}: {err}", p.display()))
    };
    let mut jsonl = String::new();
    for c in &r.comparisons {
        jsonl += &serde_json::to_string(c).map_err(|err| err.to_string())?;
        jsonl.push('\n');
    }
    write("comparisons.jsonl", &jsonl)?;
    let obs = serde_json::to_string_pretty(&r.observations).map_err(|err| err.to_string())?;
    write("observations.json", &(obs + "\n"))?;
    write(
        &format!("{}.svg", e.id),
        &svg::comparison_chart(e.id, e.title, &r.comparisons),
    )?;
    for (name, text) in &r.files {
        write(name, text)?;
    }
    Ok(())
}
