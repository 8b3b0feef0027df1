//! The documents' experiments, run and compared with their published
//! figures.
//!
//! Each experiment has a scenario file in `scenarios/reproductions/` (embedded in the binary
//! at build time, so the command works from any directory) and a module here that varies it
//! with overrides, runs the variants over several seeds on every core, and compares summary
//! figures with the published ones, which are data files beside the scenarios
//! (`scenarios/reproductions/<id>.published.toml`, read by [`published`]). Every comparison
//! states its tolerance; `--json` prints one object per comparison (`docs/reproductions.md`
//! documents the interface).

mod convergence;
mod convergence_linux;
mod domain_scale;
mod inrpp_census;
mod inrpp_dumbbell;
mod inrpp_global_fairness;
mod inrpp_multihomed;
mod inrpp_transit_stub;
mod ip_assistance;
mod mmtp_multisource;
mod partial_congestion;
mod ptp_cache;
mod ptp_diamond;
mod ptp_fairness;
mod ptp_mesh;
mod ptp_pi_bias;
mod ptp_solutions;
mod ptp_tree;
mod ptp_utilization;
pub mod published;
mod runner;
pub mod scoreboard;
mod shared_bottleneck;
mod short_transfers;
mod sqrt_n;
mod stats;
mod svg;
mod tm_assistance;
mod tse;
mod wischik;

use std::fs;
use std::path::{Path, PathBuf};

use crate::LabError;
use serde::Serialize;

pub use convergence_linux::{linux_program, missing_program};
pub use runner::{Job, Runner};
pub use scoreboard::{Bound, Score, Verdict};
pub use stats::Estimate;

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
    /// Largest |measured − published| counted as agreement (on `bound`'s side).
    pub tolerance: f64,
    /// Which side of `published` agrees: absent for `published ± tolerance`, `at-most` or
    /// `at-least` for a one-sided criterion.
    #[serde(skip_serializing_if = "is_two_sided")]
    pub bound: Bound,
    /// Whether the mean alone lies in the band of agreement (|measured − published| ≤
    /// tolerance when two-sided).
    pub within: bool,
    /// Where the 95% interval of `measured` lies against the tolerance band
    /// ([`scoreboard`]'s rule).
    pub verdict: Verdict,
    /// Where the published value comes from.
    pub source: &'static str,
}

/// Whether a comparison is two-sided (its `bound` is then left out of the JSON line, as
/// before one-sided criteria existed).
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_two_sided(b: &Bound) -> bool {
    *b == Bound::TwoSided
}

impl Comparison {
    #[allow(clippy::too_many_arguments)]
    fn new(
        experiment: &'static str,
        source: &'static str,
        metric: impl Into<String>,
        unit: &'static str,
        published: f64,
        measured: Estimate,
        tolerance: f64,
        bound: Bound,
    ) -> Self {
        let (lo, hi) = bound.band(published, tolerance);
        Comparison {
            experiment,
            metric: metric.into(),
            unit,
            published,
            measured: measured.mean,
            ci95: measured.ci95,
            runs: measured.n,
            tolerance,
            bound,
            within: measured.mean >= lo - 1e-9 && measured.mean <= hi + 1e-9,
            verdict: Verdict::judge_bound(
                bound,
                published,
                tolerance,
                measured.mean,
                measured.ci95,
            ),
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
    /// `convergence-linux` only: the E8 server acknowledges every segment at once (D347).
    pub server_quickack: bool,
    /// `convergence-linux` only: the E8 settings to run, by name (empty: every one, or the
    /// default setting with `quick`).
    pub e8_settings: Vec<String>,
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
    /// The metrics (and their units) it compares with published figures, in the full run
    /// (`false`) or the `--quick` one (`true`), without running anything: what its
    /// [`published`] file must hold.
    pub compared: fn(bool) -> Vec<(String, &'static str)>,
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
    ip_assistance::EXPERIMENT,
    tse::borrowing::EXPERIMENT,
    tse::shared::EXPERIMENT,
    tse::empty::EXPERIMENT,
    tse::competition::EXPERIMENT,
    tse::hetero::BANDWIDTH,
    tse::hetero::DELAY,
    tse::hetero::LOSS,
    tse::bilevel_placement::EXPERIMENT,
    tse::placement::EXPERIMENT,
    tse::wraparound::EXPERIMENT,
    inrpp_census::EXPERIMENT,
    inrpp_global_fairness::EXPERIMENT,
    inrpp_dumbbell::EXPERIMENT,
    inrpp_multihomed::EXPERIMENT,
    inrpp_transit_stub::EXPERIMENT,
    ptp_tree::EXPERIMENT,
    ptp_diamond::EXPERIMENT,
    ptp_fairness::EXPERIMENT,
    ptp_cache::EXPERIMENT,
    ptp_mesh::EXPERIMENT,
    ptp_pi_bias::EXPERIMENT,
];

/// Experiments on this machine's kernel (root, `pathpool-linux`, MPTCP and BPF): run by id,
/// never by `all`.
pub const KERNEL_EXPERIMENTS: &[Experiment] = &[convergence_linux::EXPERIMENT];

/// The experiment `id` (of [`EXPERIMENTS`] or [`KERNEL_EXPERIMENTS`]), or every experiment
/// of [`EXPERIMENTS`] for `all`.
///
/// # Errors
/// An unknown id, with the known ones.
pub fn select(id: &str) -> Result<Vec<&'static Experiment>, LabError> {
    if id == "all" {
        return Ok(EXPERIMENTS.iter().collect());
    }
    EXPERIMENTS
        .iter()
        .chain(KERNEL_EXPERIMENTS)
        .find(|e| e.id == id)
        .map(|e| vec![e])
        .ok_or_else(|| {
            let ids: Vec<&str> = EXPERIMENTS
                .iter()
                .chain(KERNEL_EXPERIMENTS)
                .map(|e| e.id)
                .collect();
            LabError::BadInput(format!(
                "unknown experiment {id:?}; known: {}, all",
                ids.join(", ")
            ))
        })
}

/// Checks that every name in `names` is an E8 setting of `convergence-linux`
/// ([`Ctx::e8_settings`]), before anything runs.
///
/// # Errors
/// The first unknown name, with the names allowed.
pub fn check_e8_settings(names: &[String]) -> Result<(), LabError> {
    convergence_linux::check_settings(names).map_err(LabError::BadInput)
}

/// Checks that an option of `convergence-linux` alone ([`Ctx::server_quickack`],
/// [`Ctx::e8_settings`]), given as `option` (`--server-quickack`, `settings=`), is asked
/// only of that experiment.
///
/// # Errors
/// Any other experiment among `selected`.
pub fn check_convergence_linux_only(
    selected: &[&Experiment],
    option: &str,
) -> Result<(), LabError> {
    match selected
        .iter()
        .find(|e| e.id != convergence_linux::EXPERIMENT.id)
    {
        None => Ok(()),
        Some(e) => Err(LabError::BadInput(format!(
            "{option} applies to {} only, not to {}",
            convergence_linux::EXPERIMENT.id,
            e.id
        ))),
    }
}

/// The report as text tables: the comparisons, then the figures measured only.
#[must_use]
pub fn text_report(r: &Report) -> String {
    let mut rows: Vec<Vec<String>> = r
        .comparisons
        .iter()
        .map(|c| {
            // As many decimals as the published figure and its tolerance are given with
            // (at least one, at most four): a fairness of 0.9945 ± 0.01 needs four.
            let d = decimals(c.published).max(decimals(c.tolerance));
            // A ratio judged against a bound near 1 needs its hundredths (1.06 ≤ 1.1).
            let d = if c.unit == "ratio" { d.max(2) } else { d };
            vec![
                c.metric.clone(),
                format!(
                    "{}{:.d$}{}",
                    match c.bound {
                        Bound::TwoSided => "",
                        Bound::AtMost => "≤ ",
                        Bound::AtLeast => "≥ ",
                    },
                    c.published,
                    c.unit
                ),
                format!("{:.d$}{} ± {:.d$}", c.measured, c.unit, c.ci95),
                format!("±{:.d$}", c.tolerance),
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
                // Three decimals for indices and seconds, fewer as figures grow.
                let d = match o.measured.abs() {
                    x if x < 10.0 => 3,
                    x if x < 100.0 => 2,
                    _ => 1,
                };
                vec![
                    o.metric.clone(),
                    format!("{:.d$}{} ± {:.d$}", o.measured, o.unit, o.ci95),
                    o.runs.to_string(),
                ]
            })
            .collect();
        out.push_str("\nmeasured only (no published value):\n");
        out += &crate::report::table(&["metric", "measured (95% CI)", "runs"], &rows);
    }
    out
}

/// The decimals `x` is written with, from one to four.
fn decimals(x: f64) -> usize {
    (1..=4)
        .find(|&d| {
            let k = 10f64.powi(d as i32);
            ((x * k).round() / k - x).abs() < 1e-9
        })
        .unwrap_or(4)
}

/// Writes `comparisons.jsonl`, `observations.json`, the comparison chart and the
/// experiment's own files into `dir`.
///
/// # Errors
/// A file that cannot be written.
pub fn write_outputs(e: &Experiment, r: &Report, dir: &Path) -> Result<(), String> {
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
    // An experiment the documents give no numbers for has no comparison chart.
    if !r.comparisons.is_empty() {
        write(
            &format!("{}.svg", e.id),
            &svg::comparison_chart(e.id, e.title, &r.comparisons),
        )?;
    }
    for (name, text) in &r.files {
        write(name, text)?;
    }
    Ok(())
}
