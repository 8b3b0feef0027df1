//! `tm-assistance-lan`: thesis E5a (Table 4.1) and E5b (Fig. 4.11).
//!
//! An mmTP multisource download with NMCC, subscriber S1 pulling from publishers P1 and P2
//! over disjoint paths, its subflows and groups chosen by the topology manager: with
//! assistance each disjoint path is its own group, without it both are one NMCC group. Alone
//! and against one single-flow mmTP download on path 1 (S1 from P1) or one on each path (S2
//! from P2 as well), as on the thesis's Blackadder testbed; and the single-flow downloads
//! alone (the rest of Table 4.1). Metrics: rates alone (MB/s, E5a) and the multisource
//! download's share of all throughput in the last 60 s of 300 (E5b).
//!
//! The stand-in of before the simulator ran mmTP (one multipath TCP connection from a
//! virtual origin behind both publishers, `tm-assistance-lan-standin.toml`) runs beside it
//! and is reported as measured-only rows, labelled "stand-in", so that the two models can be
//! compared; only the mmTP rows are judged against the thesis.

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/tm-assistance-lan.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/tm-assistance-lan.toml");
const FILE_STANDIN: &str = "scenarios/reproductions/tm-assistance-lan-standin.toml";
const TEXT_STANDIN: &str =
    include_str!("../../../../scenarios/reproductions/tm-assistance-lan-standin.toml");
const SOURCE: &str = "thesis E5a Table 4.1, E5b Fig. 4.11";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "tm-assistance-lan",
    title: "mmTP/NMCC multisource over disjoint paths with and without TM assistance vs 0, 1, 2 single flows",
    source: SOURCE,
    run,
    compared,
};

/// One configuration of the experiment.
struct Case {
    /// The topology manager's assistance for the multisource download.
    assistance: &'static str,
    /// Whether the multisource download runs (not for the single-flow rows of Table 4.1).
    multisource: bool,
    /// Single-flow downloads: S1 from P1, and S2 from P2.
    singles: (bool, bool),
    /// The row's label (its published value is in `tm-assistance-lan.published.toml`).
    label: &'static str,
}

const CASES: [Case; 9] = [
    Case {
        assistance: "shared-link",
        multisource: true,
        singles: (false, false),
        label: "multisource rate alone, with TM",
    },
    Case {
        assistance: "none",
        multisource: true,
        singles: (false, false),
        label: "multisource rate alone, without TM",
    },
    Case {
        assistance: "shared-link",
        multisource: true,
        singles: (true, false),
        label: "multisource share, 1 single flow, with TM",
    },
    Case {
        assistance: "shared-link",
        multisource: true,
        singles: (true, true),
        label: "multisource share, 2 single flows, with TM",
    },
    Case {
        assistance: "none",
        multisource: true,
        singles: (true, false),
        label: "multisource share, 1 single flow, without TM",
    },
    Case {
        assistance: "none",
        multisource: true,
        singles: (true, true),
        label: "multisource share, 2 single flows, without TM",
    },
    Case {
        assistance: "shared-link",
        multisource: false,
        singles: (true, false),
        label: "single-flow rate, P1 to S1",
    },
    Case {
        assistance: "shared-link",
        multisource: false,
        singles: (false, true),
        label: "single-flow rate, P2 to S2",
    },
    Case {
        assistance: "shared-link",
        multisource: false,
        singles: (true, true),
        label: "single-flow rates on both paths",
    },
];

impl Case {
    /// Single-flow downloads beside it.
    fn singles(&self) -> u32 {
        u32::from(self.singles.0) + u32::from(self.singles.1)
    }

    /// The unit of its compared figure: the multisource download's share against single
    /// flows (%), else a rate alone (MB/s).
    fn unit(&self) -> &'static str {
        if self.multisource && self.singles() > 0 {
            "%"
        } else {
            "MB/s"
        }
    }
}

/// The compared metrics, in report order (the same in both runs).
fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    CASES
        .iter()
        .map(|c| (c.label.to_string(), c.unit()))
        .collect()
}

/// The overrides of one case (the same keys in both scenario files).
fn overrides(c: &Case) -> Vec<(&'static str, String)> {
    vec![
        ("flows.nmcc.tm.assistance", format!("\"{}\"", c.assistance)),
        ("flows.nmcc.count", u32::from(c.multisource).to_string()),
        ("flows.sp1.count", u32::from(c.singles.0).to_string()),
        ("flows.sp2.count", u32::from(c.singles.1).to_string()),
    ]
}

/// Rate of a flow over the window, in MB/s (NaN if it was not active).
fn rate_mbyte_s(r: &pathpool_sim::Results, id: &str) -> Result<f64, String> {
    let f = r.flow(id).ok_or_else(|| format!("no flow {id}"))?;
    Ok(f.throughput_bps.unwrap_or(f64::NAN) / 8e6)
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let targets = published::of(EXPERIMENT.id)?;
    // The stand-in models only the multisource download; its competitors are TCP Reno.
    let standin: Vec<&Case> = CASES.iter().filter(|c| c.multisource).collect();
    let mut jobs = Vec::new();
    for c in &CASES {
        for seed in 1..=u64::from(seeds) {
            jobs.push(Job::new(FILE, TEXT, &overrides(c), seed));
        }
    }
    for c in &standin {
        for seed in 1..=u64::from(seeds) {
            jobs.push(Job::new(FILE_STANDIN, TEXT_STANDIN, &overrides(c), seed));
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let (mmtp, stand) = results.split_at(CASES.len() * seeds as usize);
    let mut report = Report::default();
    let mut csv = String::from(
        "model,assistance,multisource,single_flows,seed,multisource_rate_mbyte_s,multisource_share,single_rate_mbyte_s,groups\n",
    );
    for (chunk, c) in mmtp.chunks(seeds as usize).zip(&CASES) {
        let (mut rates, mut shares, mut singles) = (Vec::new(), Vec::new(), Vec::new());
        for (seed, r) in chunk.iter().enumerate() {
            let mut single = 0.0;
            for (on, id) in [(c.singles.0, "sp1"), (c.singles.1, "sp2")] {
                if on {
                    single += rate_mbyte_s(r, id)?;
                }
            }
            let (mut rate, mut share, mut groups) = (f64::NAN, f64::NAN, Vec::new());
            if c.multisource {
                let f = r.flow("nmcc").ok_or("no flow nmcc")?;
                if f.kind != "mmtp" {
                    return Err(format!("flow nmcc is {}, not an mmTP download", f.kind));
                }
                rate = rate_mbyte_s(r, "nmcc")?;
                share = 100.0 * f.share.unwrap_or(f64::NAN);
                groups = r
                    .subflows
                    .iter()
                    .filter(|s| s.flow == "nmcc")
                    .map(|s| s.group)
                    .collect();
                // The topology manager's groups are the experiment: check them.
                let expected: &[u32] = if c.assistance == "none" {
                    &[0, 0]
                } else {
                    &[0, 1]
                };
                if groups != expected {
                    return Err(format!(
                        "assistance {}: the topology manager gave groups {groups:?}, expected {expected:?}",
                        c.assistance
                    ));
                }
            }
            rates.push(rate);
            shares.push(share);
            singles.push(single);
            let groups: Vec<String> = groups.iter().map(u32::to_string).collect();
            csv += &format!(
                "mmtp,{},{},{},{},{rate:.4},{share:.4},{single:.4},{}\n",
                c.assistance,
                c.multisource,
                u32::from(c.singles.0) + u32::from(c.singles.1),
                seed + 1,
                groups.join(" ")
            );
        }
        let n = c.singles();
        let values = match (c.multisource, n) {
            (true, 0) => &rates,
            (true, _) => &shares,
            (false, _) => &singles,
        };
        report
            .comparisons
            .push(targets.compare(c.label, c.unit(), Estimate::of(values))?);
        if c.multisource && n > 0 {
            let tm = if c.assistance == "none" {
                "without TM"
            } else {
                "with TM"
            };
            let singles_label = if n == 1 {
                "1 single flow"
            } else {
                "2 single flows"
            };
            report.observations.push(Observation::new(
                format!("multisource rate, {singles_label}, {tm}"),
                "MB/s",
                Estimate::of(&rates),
            ));
            report.observations.push(Observation::new(
                format!("single-flow rate (sum), {singles_label}, {tm}"),
                "MB/s",
                Estimate::of(&singles),
            ));
        }
    }
    for (chunk, c) in stand.chunks(seeds as usize).zip(&standin) {
        let (mut rates, mut shares) = (Vec::new(), Vec::new());
        for (seed, r) in chunk.iter().enumerate() {
            let f = r.flow("nmcc").ok_or("stand-in: no flow nmcc")?;
            let rate = rate_mbyte_s(r, "nmcc")?;
            let share = 100.0 * f.share.unwrap_or(f64::NAN);
            let groups: Vec<String> = r
                .subflows
                .iter()
                .filter(|s| s.flow == "nmcc")
                .map(|s| s.group.to_string())
                .collect();
            rates.push(rate);
            shares.push(share);
            csv += &format!(
                "standin-tcp,{},true,{},{},{rate:.4},{share:.4},,{}\n",
                c.assistance,
                u32::from(c.singles.0) + u32::from(c.singles.1),
                seed + 1,
                groups.join(" ")
            );
        }
        let alone = !c.singles.0 && !c.singles.1;
        report.observations.push(Observation::new(
            format!(
                "stand-in (multipath TCP from a virtual origin vs TCP Reno): {}",
                c.label
                    .replace("single flows", "Reno")
                    .replace("single flow", "Reno")
            ),
            if alone { "MB/s" } else { "%" },
            Estimate::of(if alone { &rates } else { &shares }),
        ));
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
