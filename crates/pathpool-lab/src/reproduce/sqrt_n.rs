//! `sqrt-n-check`: the synchronised-loss assumption of NMCC's friendliness argument
//! (002-nmcc-paper.md §6.3), tested.
//!
//! One NMCC connection with N = 2, 4, 8 subflows, all on one bottleneck, against one Reno
//! flow, under drop-tail, RED and drop-tail with random loss. Each subflow adds 1/m² = 1/N
//! segment per RTT. If every flow loses in the same round (synchronised losses), windows are
//! proportional to the increase and the connection takes one Reno share: 50%. If losses are
//! independent, a window is √(2α/p): the connection takes √N Reno shares, √N/(1+√N). EWTCP
//! (a = 1/N² per subflow) is the control: 1/(N+1) under synchronised losses, 50% under
//! independent ones. Every measured share is compared with both predictions; one of the two
//! is expected to fail.

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/nmcc-sqrt-n.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/nmcc-sqrt-n.toml");

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "sqrt-n-check",
    title: "N-subflow NMCC vs 1 Reno on one bottleneck: synchronised or independent losses?",
    source: "002-nmcc-paper.md §6.3",
    run,
    compared,
};

const SUBFLOWS: [u32; 3] = [2, 4, 8];
/// Run length of the full version and of `--quick`; the measured window starts at 100 s.
const DURATION: [&str; 2] = ["600s", "300s"];

/// Bottleneck queues.
#[derive(Clone, Copy)]
enum Queue {
    /// Drop-tail, one BDP (the scenario's).
    DropTail,
    /// RED with thresholds at 1/6 and 1/2 of the BDP.
    Red,
    /// Drop-tail, one BDP, and random loss of 0.1% of the data packets.
    RandomLoss,
}

const QUEUES: [Queue; 3] = [Queue::DropTail, Queue::Red, Queue::RandomLoss];

impl Queue {
    /// Name in the report.
    fn name(self) -> &'static str {
        match self {
            Queue::DropTail => "drop-tail",
            Queue::Red => "RED",
            Queue::RandomLoss => "random loss 1e-3",
        }
    }

    /// The overrides that set it up.
    fn overrides(self) -> Vec<(&'static str, String)> {
        match self {
            Queue::DropTail => Vec::new(),
            Queue::Red => vec![(
                "links.bottleneck.queue",
                r#"{ type = "red", size = "250KB", min_th = "42KB", max_th = "125KB", max_p = 0.1, weight = 0.002 }"#
                    .to_string(),
            )],
            Queue::RandomLoss => vec![("links.bottleneck.loss", "1e-3".to_string())],
        }
    }
}

/// A multipath controller; its two predicted shares for N subflows (synchronised and
/// independent losses) are in `sqrt-n-check.published.toml`.
struct Algorithm {
    /// Name in the report.
    name: &'static str,
    /// `cc` of the connection.
    cc: &'static str,
    /// `tcp` table of the connection, if not the defaults.
    tcp: Option<&'static str>,
}

const ALGORITHMS: [Algorithm; 3] = [
    Algorithm {
        name: "NMCC (paper, no m_t)",
        cc: "nmcc",
        tcp: Some("{ nmcc = { loss_time_factor = false } }"),
    },
    Algorithm {
        name: "NMCC + m_t",
        cc: "nmcc",
        tcp: None,
    },
    Algorithm {
        name: "EWTCP",
        cc: "ewtcp",
        tcp: None,
    },
];

/// The share of `a` with `n` subflows behind `queue`, compared with the prediction for
/// `losses` (`synchronised` or `independent`).
fn share_metric(a: &Algorithm, n: u32, queue: Queue, losses: &str) -> String {
    format!("{} share, N = {n}, {} vs {losses}", a.name, queue.name())
}

/// The two predictions every share is compared with.
const LOSSES: [&str; 2] = ["synchronised", "independent"];

/// The compared metrics, in report order (the same in both runs).
fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for queue in QUEUES {
        for n in SUBFLOWS {
            for a in &ALGORITHMS {
                for losses in LOSSES {
                    v.push((share_metric(a, n, queue, losses), "%"));
                }
            }
        }
    }
    v
}

/// The first `n` of the scenario's eight routes into the bottleneck.
fn routes(n: u32) -> String {
    let r: Vec<String> = (1..=n)
        .map(|i| format!(r#"["mp", "a{i}", "r", "q", "d"]"#))
        .collect();
    format!("[{}]", r.join(", "))
}

/// One run's figures.
struct RunFigures {
    /// NMCC's (or EWTCP's) share, %.
    share: f64,
    /// Bottleneck utilisation, %.
    utilisation: f64,
    /// Timeouts among the Reno flow's congestion events (timeouts and fast recoveries), %.
    reno_timeouts: f64,
}

/// The figures of one run.
fn figures(r: &pathpool_sim::Results) -> Result<RunFigures, String> {
    let mp = r.flow("nmcc").ok_or("no flow nmcc")?;
    let sp = r.flow("sp").ok_or("no flow sp")?;
    let events = sp.timeouts + sp.fast_recoveries;
    Ok(RunFigures {
        share: 100.0 * mp.share.unwrap_or(f64::NAN),
        utilisation: 100.0
            * r.link("bottleneck:r->q")
                .and_then(|l| l.utilization)
                .unwrap_or(f64::NAN),
        reno_timeouts: if events > 0 {
            100.0 * sp.timeouts as f64 / events as f64
        } else {
            f64::NAN
        },
    })
}

/// Runs every queue, N and controller over the seeds and compares.
fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let targets = published::of(EXPERIMENT.id)?;
    let duration = DURATION[usize::from(ctx.quick)];
    let mut jobs = Vec::new();
    for queue in QUEUES {
        for n in SUBFLOWS {
            for a in &ALGORITHMS {
                let mut o = queue.overrides();
                o.push(("duration", duration.to_string()));
                o.push(("flows.nmcc.paths", routes(n)));
                o.push(("flows.nmcc.cc", a.cc.to_string()));
                if let Some(tcp) = a.tcp {
                    o.push(("flows.nmcc.tcp", tcp.to_string()));
                }
                for seed in 1..=u64::from(seeds) {
                    jobs.push(Job::new(FILE, TEXT, &o, seed));
                }
            }
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut chunks = results.chunks(seeds as usize);
    let mut report = Report::default();
    let mut csv = String::from("queue,subflows,algorithm,seed,share,utilisation,reno_timeouts\n");
    for queue in QUEUES {
        for n in SUBFLOWS {
            for a in &ALGORITHMS {
                let chunk = chunks.next().ok_or("missing runs")?;
                let runs = chunk.iter().map(figures).collect::<Result<Vec<_>, _>>()?;
                for (i, f) in runs.iter().enumerate() {
                    csv += &format!(
                        "{},{n},{},{},{:.3},{:.3},{:.3}\n",
                        queue.name(),
                        a.name,
                        i + 1,
                        f.share,
                        f.utilisation,
                        f.reno_timeouts
                    );
                }
                let of = |g: fn(&RunFigures) -> f64| {
                    Estimate::of(&runs.iter().map(g).collect::<Vec<_>>())
                };
                let share = of(|f| f.share);
                for losses in LOSSES {
                    report.comparisons.push(targets.compare(
                        &share_metric(a, n, queue, losses),
                        "%",
                        share,
                    )?);
                }
                report.observations.push(Observation::new(
                    format!(
                        "bottleneck utilisation, {} N = {n}, {}",
                        a.name,
                        queue.name()
                    ),
                    "%",
                    of(|f| f.utilisation),
                ));
                report.observations.push(Observation::new(
                    format!(
                        "Reno timeouts among its congestion events, {} N = {n}, {}",
                        a.name,
                        queue.name()
                    ),
                    "%",
                    of(|f| f.reno_timeouts),
                ));
            }
        }
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NMCC: increase 1/N per subflow, so N·(1/N) = one Reno flow's under synchronised losses.
    fn nmcc_synchronised(_n: f64) -> f64 {
        50.0
    }

    /// NMCC: N·√(1/N) = √N Reno flows under independent losses.
    fn nmcc_independent(n: f64) -> f64 {
        100.0 * n.sqrt() / (1.0 + n.sqrt())
    }

    /// EWTCP: increase 1/N² per subflow, N·(1/N²) = 1/N of a Reno flow under synchronised losses.
    fn ewtcp_synchronised(n: f64) -> f64 {
        100.0 / (n + 1.0)
    }

    /// EWTCP: N·√(1/N²) = one Reno flow under independent losses.
    fn ewtcp_independent(_n: f64) -> f64 {
        50.0
    }

    #[test]
    fn predictions_match_the_caveat() {
        assert!((nmcc_independent(2.0) - 58.58).abs() < 0.01);
        assert!((nmcc_independent(4.0) - 66.67).abs() < 0.01);
        assert!((nmcc_independent(8.0) - 73.88).abs() < 0.01);
        assert!((ewtcp_synchronised(2.0) - 33.33).abs() < 0.01);
        assert_eq!(
            routes(2),
            r#"[["mp", "a1", "r", "q", "d"], ["mp", "a2", "r", "q", "d"]]"#
        );
    }

    #[test]
    fn the_published_file_holds_the_predictions_to_the_bit() {
        type Prediction = fn(f64) -> f64;
        let targets = published::of(EXPERIMENT.id).unwrap();
        let predictions: [(&str, Prediction, Prediction); 3] = [
            ("NMCC (paper, no m_t)", nmcc_synchronised, nmcc_independent),
            ("NMCC + m_t", nmcc_synchronised, nmcc_independent),
            ("EWTCP", ewtcp_synchronised, ewtcp_independent),
        ];
        for queue in QUEUES {
            for n in SUBFLOWS {
                for (a, (name, sync, independent)) in ALGORITHMS.iter().zip(predictions) {
                    assert_eq!(a.name, name);
                    for (losses, predict) in LOSSES.into_iter().zip([sync, independent]) {
                        let t = targets
                            .target(&share_metric(a, n, queue, losses), "%")
                            .unwrap();
                        assert_eq!(
                            t.published.to_bits(),
                            predict(f64::from(n)).to_bits(),
                            "{}",
                            t.metric
                        );
                        assert_eq!(t.tolerance, 4.0);
                    }
                }
            }
        }
    }
}
