//! `tse-tfrc-wraparound`: Tse §3.2.3. ns-2's TFRC receiver keeps arrivals in a 100,000-slot
//! array indexed by sequence number modulo its size; once the sequence wraps, a lost packet
//! whose slot holds an old arrival counts as received, p falls towards 0 and TFRC takes
//! more and more of a link it shares with TCP. Published: the wrap after "20 s" at 5 Mb/s
//! with 1000-bit packets; with the bug, TFRC's share "keeps growing". Compared: TFRC's share
//! of what it and one NewReno carry in the last of four windows against the first, with
//! ns-2's `fixed-array` history and with the wrap-safe one.

use pathpool_sim::Results;

use super::super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

pub(in super::super) const EXPERIMENT: Experiment = Experiment {
    id: "tse-tfrc-wraparound",
    title: "TFRC against NewReno with 1000-bit packets: ns-2's arrival-history wrap",
    source: SOURCE,
    run,
    compared,
};

const SOURCE: &str = "Tse 2006 §3.2.3 (spec §4.3, 'TFRC wraparound')";
const FILE: &str = "scenarios/reproductions/tse-tfrc-wraparound.toml";
const TEXT: &str = include_str!("../../../../../scenarios/reproductions/tse-tfrc-wraparound.toml");

const HISTORIES: [&str; 2] = ["fixed-array", "wrap-safe"];

/// The four windows TFRC's share is measured over, seconds (after the 20 s warm-up).
const WINDOWS: [(f64, f64); 4] = [(20.0, 65.0), (65.0, 110.0), (110.0, 155.0), (155.0, 200.0)];

/// Bytes of the 100,000 packets that fill ns-2's history once (125-byte packets).
const WRAP_BYTES: u64 = 100_000 * 125;

fn rise_metric(history: &str) -> String {
    format!("{history}: rise of TFRC's share, 20-65 s to 155-200 s")
}

const GAP_METRIC: &str = "fixed-array less wrap-safe: TFRC's share in 155-200 s";

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    let mut v: Vec<(String, &'static str)> = HISTORIES
        .iter()
        .map(|h| (rise_metric(h), "points"))
        .collect();
    v.push((GAP_METRIC.to_string(), "points"));
    v
}

/// Each flow's delivered bytes at each sample: (time, tfrc, tcp).
fn delivered(r: &Results) -> Vec<(f64, u64, u64)> {
    let t = &r.flow_timeseries;
    let (Some(time), Some(flow), Some(bytes)) =
        (t.f64s("time_s"), t.strs("flow"), t.u64s("delivered_bytes"))
    else {
        return Vec::new();
    };
    let mut out: Vec<(f64, u64, u64)> = Vec::new();
    for ((&at, f), &b) in time.iter().zip(flow).zip(bytes) {
        if out.last().is_none_or(|l| l.0 != at) {
            out.push((at, 0, 0));
        }
        let last = out.last_mut().expect("pushed above");
        if f == "tfrc" {
            last.1 = b;
        } else {
            last.2 = b;
        }
    }
    out
}

/// TFRC's share (%) of the bytes the two flows delivered in `[a, b]`.
fn share(d: &[(f64, u64, u64)], (a, b): (f64, f64)) -> f64 {
    let at = |t: f64| d.iter().find(|s| s.0 >= t).copied().unwrap_or((t, 0, 0));
    let (s0, s1) = (at(a), at(b));
    let tfrc = (s1.1 - s0.1) as f64;
    let tcp = (s1.2 - s0.2) as f64;
    100.0 * tfrc / (tfrc + tcp)
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let targets = published::of(EXPERIMENT.id)?;
    let mut jobs = Vec::new();
    for h in HISTORIES {
        for seed in 1..=u64::from(seeds) {
            jobs.push(Job::new(
                FILE,
                TEXT,
                &[("tfrc.history", h.to_string())],
                seed,
            ));
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let per = |i: usize| &results[i * seeds as usize..(i + 1) * seeds as usize];
    let mut report = Report::default();
    let mut csv = String::from("history,seed,window_start_s,window_end_s,tfrc_share_pct\n");
    let mut last = Vec::new();
    for (i, h) in HISTORIES.iter().enumerate() {
        let series: Vec<_> = per(i).iter().map(delivered).collect();
        for (w, &win) in WINDOWS.iter().enumerate() {
            let shares: Vec<f64> = series.iter().map(|d| share(d, win)).collect();
            for (seed, s) in shares.iter().enumerate() {
                csv += &format!("{h},{},{},{},{s:.3}\n", seed + 1, win.0, win.1);
            }
            report.observations.push(Observation::new(
                format!("{h}: TFRC's share, {}-{} s", win.0, win.1),
                "%",
                Estimate::of(&shares),
            ));
            if w == WINDOWS.len() - 1 {
                last.push(shares);
            }
        }
        let rise: Vec<f64> = series
            .iter()
            .map(|d| share(d, WINDOWS[3]) - share(d, WINDOWS[0]))
            .collect();
        report
            .comparisons
            .push(targets.compare(&rise_metric(h), "points", Estimate::of(&rise))?);
        // When TFRC's receiver had seen the 100,000 packets that fill the history once.
        let wrap: Vec<f64> = series
            .iter()
            .filter_map(|d| d.iter().find(|s| s.1 >= WRAP_BYTES).map(|s| s.0))
            .collect();
        report.observations.push(Observation::new(
            format!("{h}: first wrap of the history (100,000 packets received), s"),
            "s",
            Estimate::of(&wrap),
        ));
    }
    let gap: Vec<f64> = last[0].iter().zip(&last[1]).map(|(f, w)| f - w).collect();
    report
        .comparisons
        .push(targets.compare(GAP_METRIC, "points", Estimate::of(&gap))?);
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
