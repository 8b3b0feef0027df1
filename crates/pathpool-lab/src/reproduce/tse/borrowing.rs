//! `tse-probe-borrowing`: Tse E0 (Figs 3-1, 3-2). One path shared by one NewReno flow and
//! Multi-Priority TCP with 1 NewReno and n − 1 = 0..15 TCP-LP subflows, all on it, at four
//! capacities, drop-tail and RED, with no accounting ("naive"), Packet Borrowing ("borrow")
//! and Borrowing with Returning ("borrow-return", the default). Published: with borrowing and
//! returning, 50% "regardless of path capacity or the number of TCP-LP subflows"; naive
//! aggregation takes "an ever increasing fraction" as subflows are added, under drop-tail
//! "especially at lower bandwidths", under RED "regardless of link speed".

use super::super::{published, Ctx, Estimate, Experiment, Observation, Report};
use super::{bps, drop_tail, estimate, run_all, tcps, Config, Scheme};
use pathpool_sim::Results;

pub(in super::super) const EXPERIMENT: Experiment = Experiment {
    id: "tse-probe-borrowing",
    title: "Multi-Priority TCP with 0..15 TCP-LP subflows on one path: naive vs packet borrowing",
    source: "Tse 2006 §3.1 E0, Figs 3-1/3-2 (spec §5 E0, §5.10 item 1)",
    run,
    compared,
};

const ACCOUNTINGS: [&str; 3] = ["naive", "borrow", "borrow-return"];
const QUEUES: [&str; 2] = ["drop-tail", "RED"];

fn capacities(quick: bool) -> &'static [f64] {
    if quick {
        &[1.5, 10.0]
    } else {
        &[1.5, 5.0, 10.0, 45.0]
    }
}

fn subflows(quick: bool) -> &'static [u32] {
    if quick {
        &[1, 4, 16]
    } else {
        &[1, 2, 4, 8, 16]
    }
}

fn share_metric(accounting: &str, n: u32, c: f64, queue: &str) -> String {
    format!("{accounting}: share, {n} subflows, {c} Mb/s, {queue}")
}

fn rise_metric(c: f64, queue: &str) -> String {
    format!("naive: rise of the share from 1 to 16 subflows, {c} Mb/s, {queue}")
}

/// Whether the naive rise is compared: under RED at every capacity, under drop-tail at the
/// lowest ("especially at lower bandwidths").
fn compares_rise(c: f64, queue: &str) -> bool {
    queue == "RED" || c == 1.5
}

fn compared(quick: bool) -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for queue in QUEUES {
        for &c in capacities(quick) {
            for &n in subflows(quick) {
                v.push((share_metric("borrow-return", n, c, queue), "%"));
            }
            if compares_rise(c, queue) {
                v.push((rise_metric(c, queue), "points"));
            }
        }
    }
    v
}

fn share(r: &Results) -> f64 {
    let mp = Scheme::MultiPriority.bps(r);
    100.0 * mp / (mp + bps(r, "tcp1"))
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(10, 3);
    let targets = published::of(EXPERIMENT.id)?;
    let (cs, ns) = (capacities(ctx.quick), subflows(ctx.quick));
    let s = Scheme::MultiPriority;
    let mut configs = Vec::new();
    let mut keys = Vec::new();
    for queue in QUEUES {
        for &c in cs {
            for accounting in ACCOUNTINGS {
                for &n in ns {
                    let mut o = s.overrides();
                    o.extend(tcps([1]));
                    o.push(s.paths(std::iter::repeat_n(1, n as usize)));
                    o.push((
                        "flows.mp.tcp",
                        format!("{{ multi_priority = {{ accounting = \"{accounting}\" }} }}"),
                    ));
                    let rate = format!("{c}Mbps");
                    let mut more = vec![
                        ("links.p1.rate".to_string(), rate.clone()),
                        ("links.p1r.rate".to_string(), rate),
                    ];
                    if queue == "drop-tail" {
                        more.extend(drop_tail([1]));
                    }
                    configs.push(Config::new(o).with(more));
                    keys.push((queue, c, accounting, n));
                }
            }
        }
    }
    let runs = run_all(ctx, &configs, seeds)?;
    let mut report = Report::default();
    let mut csv = String::from("queue,capacity_mbps,accounting,subflows,seed,mp_share_pct\n");
    let find = |key: (&str, f64, &str, u32)| {
        keys.iter()
            .position(|k| *k == key)
            .map(|i| &runs[i])
            .expect("every configuration ran")
    };
    for &(queue, c, accounting, n) in &keys {
        let rs = find((queue, c, accounting, n));
        for r in rs {
            csv += &format!("{queue},{c},{accounting},{n},{},{:.3}\n", r.seed, share(r));
        }
        let e = estimate(rs, share);
        let name = share_metric(accounting, n, c, queue);
        if accounting == "borrow-return" {
            report.comparisons.push(targets.compare(&name, "%", e)?);
        } else {
            report.observations.push(Observation::new(name, "%", e));
        }
    }
    for queue in QUEUES {
        for &c in cs {
            if !compares_rise(c, queue) {
                continue;
            }
            let (lo, hi) = (find((queue, c, "naive", 1)), find((queue, c, "naive", 16)));
            let rise: Vec<f64> = hi
                .iter()
                .zip(lo)
                .map(|(h, l)| share(h) - share(l))
                .collect();
            report.comparisons.push(targets.compare(
                &rise_metric(c, queue),
                "points",
                Estimate::of(&rise),
            )?);
        }
    }
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}
