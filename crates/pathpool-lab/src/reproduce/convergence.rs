//! `convergence`: thesis E8 (Ch. 5.2.2, Figs. 5.2-5.5), the Linux MPTCP convergence study, in
//! the packet simulator.
//!
//! Four two-subflow multipath connections and four Reno connections share two disjoint paths
//! (per path: four subflows and two Reno flows; fair multipath share 50%). The figures:
//! * the **share per second**: the multipath connections' part of the bytes delivered in
//!   each second;
//! * the **final share**: their part of the bytes delivered in the last fifth of the run;
//! * the **convergence time**: the earliest time T such that the share over every 60-s window
//!   [s, s + 60 s) with s ≥ T is within ±5 points of the final share (the run's length when
//!   even the last window is not). As in the thesis's figures, which plot the per-second
//!   share averaged over the repetitions, it is computed on the curve pooled over the seeds
//!   (bytes summed over the seeds); each run's own value is in `runs.csv`.

use pathpool_sim::Results;

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/mptcp-convergence.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/mptcp-convergence.toml");
const SOURCE: &str = "thesis E8 §5.2.2 Figs. 5.2-5.5";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "convergence",
    title: "4 two-subflow MPTCP vs 4 Reno over 2 disjoint paths: share per second, convergence",
    source: SOURCE,
    run,
    compared,
};

/// Run length of the full version (the thesis's 30 minutes) and of `--quick`, in seconds.
const DURATION_S: [u32; 2] = [1800, 600];
/// Length of the sliding window of the convergence test, in seconds.
const WINDOW_S: usize = 60;
/// Half-width of the band around the final share that counts as settled (points).
const BAND: f64 = 5.0;
/// The final share is measured over the last `1/FINAL_PART` of the run.
pub(super) const FINAL_PART: usize = 5;
/// The early share is measured over the first this many seconds.
const EARLY_S: usize = 300;
/// Payload part of a data packet on the wire (1460-byte segments, 40 bytes of headers).
pub(super) const PAYLOAD: f64 = 1460.0 / 1500.0;
/// Smallest drop-tail buffer, in bytes (20 packets): one BDP of the 10-ms setting would be
/// 6.7 packets, about one per flow.
pub(super) const MIN_BUFFER_BYTES: f64 = 30_000.0;

/// The algorithms of the thesis's figures (rows 1-5): name in the report and `cc`. NMCC and
/// Uncoupled come first (their convergence times are compared with each other).
pub(super) const ALGORITHMS: [(&str, &str); 5] = [
    ("NMCC", "nmcc"),
    ("Uncoupled", "uncoupled"),
    ("LIA", "lia"),
    ("OLIA", "olia"),
    ("BALIA", "balia"),
];

/// One path's parameters.
#[derive(Clone, Copy)]
pub(super) struct Path {
    /// Rate of the data direction, Mb/s.
    pub(super) rate_mbps: f64,
    /// Round-trip propagation delay, ms.
    pub(super) rtt_ms: f64,
    /// Random loss probability of the data direction.
    pub(super) loss: f64,
    /// Drop-tail buffer in packets; `None`: one bandwidth-delay product, at least 20 packets.
    pub(super) buffer_pkts: Option<u32>,
}

/// The thesis's defaults: 8 Mb/s, 100 ms, no netem loss.
const DEFAULT: Path = Path {
    rate_mbps: 8.0,
    rtt_ms: 100.0,
    loss: 0.0,
    buffer_pkts: None,
};

/// netem's default queue limit: 1000 packets.
const NETEM: Path = Path {
    buffer_pkts: Some(1000),
    ..DEFAULT
};

/// Which per-run figure a published value is about.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Figure {
    /// Final share, %.
    Share,
    /// Convergence time, s.
    Convergence,
    /// Goodput over the two paths' goodput capacity in the final part, %.
    Utilisation,
}

impl Figure {
    /// Every figure, in report order.
    pub(super) const ALL: [Figure; 3] = [Figure::Share, Figure::Convergence, Figure::Utilisation];

    /// Name in the report.
    pub(super) fn name(self) -> &'static str {
        match self {
            Figure::Share => "final share",
            Figure::Convergence => "convergence time",
            Figure::Utilisation => "utilisation",
        }
    }

    /// Unit in the report.
    pub(super) fn unit(self) -> &'static str {
        match self {
            Figure::Convergence => "s",
            Figure::Share | Figure::Utilisation => "%",
        }
    }
}

/// NMCC's final share: the thesis gives it for every setting.
const NMCC_SHARE: (&str, Figure) = ("NMCC", Figure::Share);
/// The convergence times the thesis reads off its figures for LIA, OLIA and BALIA.
const TIMES: [(&str, Figure); 3] = [
    ("LIA", Figure::Convergence),
    ("OLIA", Figure::Convergence),
    ("BALIA", Figure::Convergence),
];

/// One column of the thesis's figures.
pub(super) struct Setting {
    /// Name in the report and in the CSV files.
    pub(super) name: &'static str,
    /// Path 1 and path 2.
    pub(super) paths: [Path; 2],
    /// Part of `--quick`.
    pub(super) quick: bool,
    /// The (algorithm, figure) pairs the thesis gives a value for (in
    /// `convergence.published.toml`); the others are reported as measured only.
    pub(super) compared: &'static [(&'static str, Figure)],
}

pub(super) const SETTINGS: [Setting; 10] = [
    Setting {
        name: "default",
        paths: [DEFAULT, DEFAULT],
        quick: true,
        compared: &[NMCC_SHARE],
    },
    Setting {
        name: "rtt-10ms",
        paths: [
            Path {
                rtt_ms: 10.0,
                ..DEFAULT
            },
            Path {
                rtt_ms: 10.0,
                ..DEFAULT
            },
        ],
        quick: true,
        compared: &[NMCC_SHARE, TIMES[0], TIMES[1], TIMES[2]],
    },
    Setting {
        name: "rtt-200ms",
        paths: [
            Path {
                rtt_ms: 200.0,
                ..DEFAULT
            },
            Path {
                rtt_ms: 200.0,
                ..DEFAULT
            },
        ],
        quick: false,
        compared: &[NMCC_SHARE, TIMES[0], TIMES[1], TIMES[2]],
    },
    Setting {
        name: "rate-4Mbps",
        paths: [
            Path {
                rate_mbps: 4.0,
                ..DEFAULT
            },
            Path {
                rate_mbps: 4.0,
                ..DEFAULT
            },
        ],
        quick: false,
        compared: &[NMCC_SHARE, TIMES[0], TIMES[1], TIMES[2]],
    },
    Setting {
        name: "rate-16Mbps",
        paths: [
            Path {
                rate_mbps: 16.0,
                ..DEFAULT
            },
            Path {
                rate_mbps: 16.0,
                ..DEFAULT
            },
        ],
        quick: false,
        compared: &[
            NMCC_SHARE,
            TIMES[0],
            TIMES[1],
            TIMES[2],
            ("BALIA", Figure::Share),
        ],
    },
    Setting {
        name: "loss-1e-6",
        paths: [
            Path {
                loss: 1e-6,
                ..DEFAULT
            },
            Path {
                loss: 1e-6,
                ..DEFAULT
            },
        ],
        quick: false,
        compared: &[NMCC_SHARE],
    },
    Setting {
        name: "loss-1e-3",
        paths: [
            Path {
                loss: 1e-3,
                ..DEFAULT
            },
            Path {
                loss: 1e-3,
                ..DEFAULT
            },
        ],
        quick: true,
        compared: &[
            NMCC_SHARE,
            ("LIA", Figure::Share),
            ("OLIA", Figure::Share),
            ("BALIA", Figure::Share),
            TIMES[0],
            TIMES[1],
            TIMES[2],
        ],
    },
    Setting {
        name: "mismatch-loss",
        paths: [
            DEFAULT,
            Path {
                loss: 1e-3,
                ..DEFAULT
            },
        ],
        quick: true,
        compared: &[
            NMCC_SHARE,
            TIMES[0],
            TIMES[1],
            TIMES[2],
            ("BALIA", Figure::Share),
            ("OLIA", Figure::Share),
            ("LIA", Figure::Utilisation),
        ],
    },
    Setting {
        name: "mismatch-rtt",
        paths: [
            DEFAULT,
            Path {
                rtt_ms: 300.0,
                ..DEFAULT
            },
        ],
        quick: false,
        compared: &[NMCC_SHARE, TIMES[0], TIMES[1], TIMES[2]],
    },
    Setting {
        name: "buffer-1000pkts",
        paths: [NETEM, NETEM],
        quick: false,
        compared: &[NMCC_SHARE],
    },
];

/// The overrides of one setting: each path's rate, delays (half the RTT each way), random
/// loss and drop-tail buffer.
pub(super) fn setting_overrides(s: &Setting) -> Vec<(&'static str, String)> {
    const KEYS: [[&str; 5]; 2] = [
        [
            "links.p1.rate",
            "links.p1.delay",
            "links.p1-ack.delay",
            "links.p1.loss",
            "links.p1.queue",
        ],
        [
            "links.p2.rate",
            "links.p2.delay",
            "links.p2-ack.delay",
            "links.p2.loss",
            "links.p2.queue",
        ],
    ];
    let mut o = Vec::new();
    for (p, [rate, delay, ack_delay, loss, queue]) in s.paths.iter().zip(KEYS) {
        let buffer = match p.buffer_pkts {
            Some(n) => format!("{n}pkts"),
            None => format!(
                "{:.0}B",
                (p.rate_mbps * 1e6 * p.rtt_ms / 1e3 / 8.0).max(MIN_BUFFER_BYTES)
            ),
        };
        o.push((rate, format!("{}Mbps", p.rate_mbps)));
        o.push((delay, format!("{}ms", p.rtt_ms / 2.0)));
        o.push((ack_delay, format!("{}ms", p.rtt_ms / 2.0)));
        if p.loss > 0.0 {
            o.push((loss, format!("{:e}", p.loss)));
        }
        o.push((
            queue,
            format!(r#"{{ type = "droptail", size = "{buffer}" }}"#),
        ));
    }
    o
}

/// Bits delivered in each second of a run (or summed over runs): second k is (k, k + 1].
#[derive(Clone, Default)]
pub(super) struct Series {
    /// By the multipath connections.
    pub(super) mp: Vec<f64>,
    /// By every flow.
    pub(super) all: Vec<f64>,
}

impl Series {
    /// The multipath share (%) of the bytes delivered in seconds `from..to`.
    pub(super) fn share(&self, from: usize, to: usize) -> f64 {
        100.0 * self.mp[from..to].iter().sum::<f64>() / self.all[from..to].iter().sum::<f64>()
    }

    /// The share over the last fifth of the series.
    pub(super) fn final_share(&self) -> f64 {
        let n = self.all.len();
        self.share(n - n / FINAL_PART, n)
    }

    /// The convergence time in seconds and whether the share settled at all (the last 60-s
    /// window within the band); the series' length when it did not.
    pub(super) fn convergence(&self) -> (f64, bool) {
        let n = self.all.len();
        if n < WINDOW_S {
            return (n as f64, false);
        }
        let f = self.final_share();
        let within = |s: usize| (self.share(s, s + WINDOW_S) - f).abs() <= BAND;
        let last = n - WINDOW_S;
        match (0..=last).rev().find(|&s| !within(s)) {
            None => (0.0, true),
            Some(s) if s == last => (n as f64, false),
            Some(s) => ((s + 1) as f64, true),
        }
    }

    /// Adds another run's series, second by second.
    pub(super) fn add(&mut self, other: &Series) {
        if self.all.is_empty() {
            *self = other.clone();
            return;
        }
        for (a, b) in self.mp.iter_mut().zip(&other.mp) {
            *a += b;
        }
        for (a, b) in self.all.iter_mut().zip(&other.all) {
            *a += b;
        }
    }
}

/// One run's figures.
pub(super) struct RunFigures {
    /// Bits delivered per second.
    pub(super) series: Series,
    /// The multipath part of the bytes delivered in the last fifth of the run, %.
    pub(super) final_share: f64,
    /// This run's own convergence time (s) and whether it settled.
    convergence: (f64, bool),
    /// Goodput of every flow over the two paths' goodput capacity, last fifth of the run, %.
    utilisation: f64,
    /// The share over the first 300 s, %.
    early_share: f64,
    /// Retransmission timeouts per Reno flow over the run.
    reno_timeouts: f64,
    /// Retransmission timeouts per multipath subflow over the run.
    subflow_timeouts: f64,
}

/// Whether a flow id is one of the multipath connections (`mp.0` … `mp.3`).
fn is_multipath(id: &str) -> bool {
    id == "mp" || id.starts_with("mp.")
}

/// The figures of one run of `seconds` seconds; `capacity_bps` is the two paths' goodput
/// capacity.
fn analyse(r: &Results, seconds: usize, capacity_bps: f64) -> Result<RunFigures, String> {
    let t = &r.flow_timeseries;
    let (Some(time), Some(flow), Some(goodput)) =
        (t.f64s("time_s"), t.strs("flow"), t.f64s("goodput_bps"))
    else {
        return Err("the flow time series lacks time_s, flow or goodput_bps".into());
    };
    let mut series = Series {
        mp: vec![0.0; seconds],
        all: vec![0.0; seconds],
    };
    for ((&t, id), &g) in time.iter().zip(flow).zip(goodput) {
        let tick = t.round();
        if tick < 1.0 || tick > seconds as f64 {
            continue;
        }
        // The 1-s sample at k + 1 is second k.
        let k = tick as usize - 1;
        series.all[k] += g;
        if is_multipath(id) {
            series.mp[k] += g;
        }
    }
    let final_from = seconds - seconds / FINAL_PART;
    let final_bits: f64 = series.all[final_from..].iter().sum();
    let reno: Vec<u64> = r
        .flows
        .iter()
        .filter(|f| !is_multipath(&f.id))
        .map(|f| f.timeouts)
        .collect();
    let per = |total: u64, n: usize| total as f64 / n.max(1) as f64;
    Ok(RunFigures {
        final_share: series.final_share(),
        convergence: series.convergence(),
        utilisation: 100.0 * final_bits / ((seconds - final_from) as f64 * capacity_bps),
        early_share: series.share(0, EARLY_S.min(seconds)),
        reno_timeouts: per(reno.iter().sum(), reno.len()),
        subflow_timeouts: per(
            r.subflows.iter().map(|f| f.timeouts).sum(),
            r.subflows.len(),
        ),
        series,
    })
}

/// The settings of the full run or of `--quick`.
pub(super) fn settings(quick: bool) -> Vec<&'static Setting> {
    SETTINGS.iter().filter(|s| !quick || s.quick).collect()
}

/// The compared figure of `algorithm` in setting `setting`.
pub(super) fn figure_metric(algorithm: &str, figure: Figure, setting: &str) -> String {
    format!("{algorithm} {}, {setting}", figure.name())
}

/// NMCC's convergence time less Uncoupled's in setting `setting` (published: 0).
pub(super) fn same_time_metric(setting: &str) -> String {
    format!("NMCC - Uncoupled convergence time, {setting}")
}

/// The compared metrics, in report order.
fn compared(quick: bool) -> Vec<(String, &'static str)> {
    compared_in(&settings(quick))
}

/// The metrics compared in `settings`, in report order.
pub(super) fn compared_in(settings: &[&Setting]) -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for s in settings {
        for &(algorithm, figure) in s.compared {
            v.push((figure_metric(algorithm, figure, s.name), figure.unit()));
        }
        v.push((same_time_metric(s.name), "s"));
    }
    v
}

/// The figures of setting `s` the thesis gives no value for, each algorithm's, as
/// observations (`estimate(algorithm index, figure)`).
pub(super) fn uncompared(
    s: &Setting,
    estimate: impl Fn(usize, Figure) -> Estimate,
) -> Vec<Observation> {
    let mut out = Vec::new();
    for (a, (name, _)) in ALGORITHMS.iter().enumerate() {
        for figure in Figure::ALL {
            if !s.compared.contains(&(*name, figure)) {
                out.push(Observation::new(
                    format!("{name} {}, {}", figure.name(), s.name),
                    figure.unit(),
                    estimate(a, figure),
                ));
            }
        }
    }
    out
}

/// Simulates every setting of `settings` with every algorithm of [`ALGORITHMS`] over seeds
/// 1..=`seeds`, runs of `seconds`: per setting, per algorithm, each seed's figures.
///
/// # Errors
/// A run that fails, or results without the time series.
pub(super) fn simulate(
    ctx: &Ctx<'_>,
    settings: &[&Setting],
    seconds: u32,
    seeds: u32,
) -> Result<Vec<Vec<Vec<RunFigures>>>, String> {
    let mut jobs = Vec::new();
    for s in settings {
        for (_, cc) in ALGORITHMS {
            let mut o = setting_overrides(s);
            o.push(("flows.mp.cc", cc.to_string()));
            o.push(("duration", format!("{seconds}s")));
            o.push((
                "measure.start",
                format!("{}s", seconds - seconds / FINAL_PART as u32),
            ));
            for seed in 1..=u64::from(seeds) {
                jobs.push(Job::new(FILE, TEXT, &o, seed));
            }
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut chunks = results.chunks(seeds as usize);
    let mut out = Vec::new();
    for s in settings {
        let capacity = s.paths.iter().map(|p| p.rate_mbps * 1e6).sum::<f64>() * PAYLOAD;
        let mut per_algorithm = Vec::new();
        for _ in ALGORITHMS {
            let chunk = chunks.next().ok_or("missing runs")?;
            per_algorithm.push(
                chunk
                    .iter()
                    .map(|r| analyse(r, seconds as usize, capacity))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        out.push(per_algorithm);
    }
    Ok(out)
}

/// The run length: `default_s`, or `--set duration=...`, from which the measurement window
/// (the last fifth) and the per-second series follow; the simulated runs of
/// `convergence-linux` take the same override.
pub(super) fn run_seconds(ctx: &Ctx<'_>, default_s: u32) -> Result<u32, String> {
    let Some((_, value)) = ctx.extra.iter().rev().find(|(k, _)| k == "duration") else {
        return Ok(default_s);
    };
    let d: pathpool_core::Dur = value
        .parse()
        .map_err(|e| format!("--set duration={value}: {e}"))?;
    let seconds = d.as_secs_f64().round();
    if !(60.0..=86_400.0).contains(&seconds) {
        return Err(format!(
            "--set duration={value}: give whole seconds from 60 s (one convergence window) to 24 h"
        ));
    }
    Ok(seconds as u32)
}

/// Runs every setting with every algorithm over the seeds and compares.
fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let seconds = run_seconds(ctx, DURATION_S[usize::from(ctx.quick)])?;
    let settings = settings(ctx.quick);
    let targets = published::of(EXPERIMENT.id)?;
    let simulated = simulate(ctx, &settings, seconds, seeds)?;
    let mut report = Report::default();
    let mut per_second_csv = String::from("setting,cc,seed,second,share\n");
    let mut runs_csv = String::from(
        "setting,cc,seed,final_share,convergence_s,converged,utilisation,early_share,reno_timeouts,subflow_timeouts\n",
    );
    for (s, by_algorithm) in settings.iter().zip(simulated) {
        // Per algorithm: the runs' figures and the series pooled over the seeds.
        let mut figures: Vec<Vec<RunFigures>> = Vec::new();
        let mut pooled: Vec<Series> = Vec::new();
        for ((_, cc), chunk) in ALGORITHMS.iter().zip(by_algorithm) {
            let mut runs = Vec::new();
            let mut sum = Series::default();
            for (i, f) in chunk.into_iter().enumerate() {
                let seed = i + 1;
                for (k, (m, a)) in f.series.mp.iter().zip(&f.series.all).enumerate() {
                    let share = if *a > 0.0 { 100.0 * m / a } else { f64::NAN };
                    per_second_csv += &format!("{},{cc},{seed},{k},{share:.2}\n", s.name);
                }
                runs_csv += &format!(
                    "{},{cc},{seed},{:.3},{},{},{:.3},{:.3},{:.1},{:.1}\n",
                    s.name,
                    f.final_share,
                    f.convergence.0,
                    f.convergence.1,
                    f.utilisation,
                    f.early_share,
                    f.reno_timeouts,
                    f.subflow_timeouts
                );
                sum.add(&f.series);
                runs.push(f);
            }
            figures.push(runs);
            pooled.push(sum);
        }
        // The convergence time of the pooled curve: one value, no interval.
        let time_of = |a: usize| Estimate {
            mean: pooled[a].convergence().0,
            ci95: 0.0,
            n: seeds as usize,
        };
        let estimate = |a: usize, figure: Figure| match figure {
            Figure::Share => {
                Estimate::of(&figures[a].iter().map(|f| f.final_share).collect::<Vec<_>>())
            }
            Figure::Utilisation => {
                Estimate::of(&figures[a].iter().map(|f| f.utilisation).collect::<Vec<_>>())
            }
            Figure::Convergence => time_of(a),
        };
        for &(algorithm, figure) in s.compared {
            let a = ALGORITHMS
                .iter()
                .position(|(name, _)| *name == algorithm)
                .ok_or("unknown algorithm")?;
            report.comparisons.push(targets.compare(
                &figure_metric(algorithm, figure, s.name),
                figure.unit(),
                estimate(a, figure),
            )?);
        }
        report.comparisons.push(targets.compare(
            &same_time_metric(s.name),
            "s",
            Estimate {
                mean: time_of(0).mean - time_of(1).mean,
                ..time_of(0)
            },
        )?);
        report.observations.extend(uncompared(s, estimate));
    }
    report
        .files
        .push(("share_per_second.csv".into(), per_second_csv));
    report.files.push(("runs.csv".into(), runs_csv));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_size_the_buffer_to_one_bdp_with_a_floor() {
        let o = setting_overrides(&SETTINGS[0]);
        assert!(o.contains(&(
            "links.p1.queue",
            r#"{ type = "droptail", size = "100000B" }"#.into()
        )));
        assert!(o.contains(&("links.p2-ack.delay", "50ms".into())));
        assert!(!o.iter().any(|(k, _)| k.ends_with(".loss")));
        let ten = setting_overrides(&SETTINGS[1]);
        assert!(ten.contains(&(
            "links.p1.queue",
            r#"{ type = "droptail", size = "30000B" }"#.into()
        )));
        let mismatch = setting_overrides(&SETTINGS[7]);
        assert!(mismatch.contains(&("links.p2.loss", "1e-3".into())));
        assert!(!mismatch.iter().any(|(k, _)| *k == "links.p1.loss"));
        let netem = setting_overrides(&SETTINGS[9]);
        assert!(netem.contains(&(
            "links.p2.queue",
            r#"{ type = "droptail", size = "1000pkts" }"#.into()
        )));
    }

    #[test]
    fn convergence_is_the_start_of_the_settled_windows() {
        // 90% for the first 100 s, then 50%: the last 60-s window more than 5 points above
        // the final 50% is [92 s, 152 s) (8 s at 90%: 55.3%), so T = 93 s.
        let all = vec![1.0; 1000];
        let mp: Vec<f64> = (0..1000).map(|k| if k < 100 { 0.9 } else { 0.5 }).collect();
        let s = Series { mp, all };
        assert_eq!(s.final_share(), 50.0);
        assert_eq!(s.convergence(), (93.0, true));
        let flat = Series {
            mp: vec![0.5; 600],
            all: vec![1.0; 600],
        };
        assert_eq!(flat.convergence(), (0.0, true));
        let mut pooled = flat.clone();
        pooled.add(&flat);
        assert_eq!(pooled.all[0], 2.0);
    }
}
