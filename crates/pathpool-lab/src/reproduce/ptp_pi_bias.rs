//! `ptp-pi-bias`: the PTP paper's §2.C (spec 004 §1.3, Fig. 2): RFA balances pending
//! Interests, so with a long-fat and a short-thin path the long-fat one fills only once the
//! short-thin bottleneck queues q_st >= w_lf - w_st packets (eq. 1). The short-thin buffer is
//! swept with an ICP consumer, which lets the queue grow until it overflows (the paper's
//! "queue-tolerant controller"), and with RAAQM (OMCC-RF, the paper's case), which keeps it
//! short. Compared: the knee of the ICP sweep, the smallest buffer at which the long-fat path
//! runs at 95% or more, against eq. 1's 91 packets (±20%, the issue's). Observed: the
//! long-fat path's utilization at every buffer for both consumers, and the short-thin queue.

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/ptp-pi-bias.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/ptp-pi-bias.toml");

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "ptp-pi-bias",
    title: "RFA's pending-Interest bias: the short-thin buffer the long-fat path needs (§2.C)",
    source: "004-ptp-ndn.md §1.3 eq. (1)",
    run,
    compared,
};

/// The short-thin buffers swept, packets.
const BUFFERS: [u32; 12] = [20, 40, 60, 80, 100, 150, 200, 300, 400, 500, 600, 800];
const BUFFERS_QUICK: [u32; 6] = [20, 60, 100, 200, 400, 800];
/// Utilization of the long-fat path at which it counts as full.
const FULL: f64 = 0.95;
const CONSUMERS: [(&str, &str); 2] = [("ICP", "icp"), ("RAAQM", "raaqm")];

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    vec![("knee, RFA + ICP".into(), "pkts")]
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let targets = published::of(EXPERIMENT.id)?;
    let buffers: &[u32] = if ctx.quick { &BUFFERS_QUICK } else { &BUFFERS };
    let mut jobs = Vec::new();
    for (_, transport) in CONSUMERS {
        for q in buffers {
            let o = vec![
                (
                    "links.rst.queue",
                    format!("{{ type = \"droptail\", size = \"{q}pkts\" }}"),
                ),
                ("flows.consumer.transport", format!("\"{transport}\"")),
            ];
            jobs.push(Job::new(FILE, TEXT, &o, 1));
        }
    }
    let results = ctx.runner.run(&jobs)?;
    let mut report = Report::default();
    let mut csv =
        String::from("consumer,buffer_pkts,long_fat_utilization,short_thin_mean_queue_bytes\n");
    for ((name, _), runs) in CONSUMERS.iter().zip(results.chunks(buffers.len())) {
        let mut knee = f64::NAN;
        for (q, r) in buffers.iter().zip(runs) {
            let lf = r
                .link("rlf:lf->r")
                .and_then(|l| l.utilization)
                .ok_or("no link rlf:lf->r")?;
            let st = r.link("rst:st->r").ok_or("no link rst:st->r")?;
            csv += &format!("{name},{q},{lf:.4},{:.0}\n", st.mean_queue_bytes);
            if knee.is_nan() && lf >= FULL {
                knee = f64::from(*q);
            }
            report.observations.push(Observation::new(
                format!("RFA + {name}, short-thin buffer {q} pkts: long-fat utilization"),
                "%",
                Estimate::of(&[100.0 * lf]),
            ));
        }
        if *name == "ICP" {
            report.comparisons.push(targets.compare(
                "knee, RFA + ICP",
                "pkts",
                Estimate::of(&[knee]),
            )?);
        } else {
            report.observations.push(Observation::new(
                format!("knee, RFA + {name} (none in the sweep: NaN)"),
                "pkts",
                Estimate::of(&[knee]),
            ));
        }
    }
    report.files.push(("sweep.csv".into(), csv));
    Ok(report)
}
