//! Tse (2006) chapter 4's experiments on the 16-path network of
//! `scenarios/reproductions/tse.toml` (003-tse-fairness.md §5): what they share.
//!
//! Every experiment varies the one scenario file with overrides: which NewReno flows run
//! (`flows.tcpN.count`), the multipath flow's scheme (`flows.mp.cc`) and its subflows' paths
//! (`flows.mp.paths`), and path 2's rate, delay or loss. Most of the thesis's results exist
//! only in figures; each is compared as its spec §5.10 criterion, one-sided where the
//! criterion is ("at or below the stringent line"), with the tolerance set before the first
//! run (`scenarios/reproductions/tse-*.published.toml`).

pub(super) mod bilevel_placement;
pub(super) mod borrowing;
pub(super) mod competition;
pub(super) mod empty;
pub(super) mod hetero;
pub(super) mod placement;
pub(super) mod shared;
pub(super) mod wraparound;

use super::{Ctx, Estimate, Job};
use pathpool_sim::Results;

const FILE: &str = "scenarios/reproductions/tse.toml";
const TEXT: &str = include_str!("../../../../../scenarios/reproductions/tse.toml");

/// Goodput one flow alone could get from a 5 Mb/s bottleneck: 960 of every 1000 bytes.
const PATH_GOODPUT_BPS: f64 = 5e6 * 0.96;

/// A multipath scheme of the thesis's chapter 4, or one of the extras it only analysed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scheme {
    /// Multi-Priority TCP: subflow `base` NewReno, the others TCP-LP, probes borrowed and
    /// returned (Tse §3.1, the default accounting).
    MultiPriority,
    /// Bilevel TFRC (Tse §3.2).
    BilevelTfrc,
    /// 1/N TFRC: each subflow at 1/N of its own TFRC rate.
    FractionalTfrc,
    /// The Hacker scheme: subflow 0 NewReno, the others 1/N of Reno's increase.
    Hacker,
    /// Independent NewReno subflows: mTCP's best case and "multiple independent TCPs".
    Uncoupled,
    /// Bilevel TCP (thesis eq. 2.2; analysed, not simulated, in the thesis).
    BilevelTcp,
}

/// TFRC's delivered bytes count whole packets; a TCP flow's only its 960-byte segments.
/// TFRC throughput is counted at the same 960 of every 1000 bytes, so that shares compare
/// payload with payload (D261).
const TFRC_PAYLOAD_FRACTION: f64 = 0.96;

impl Scheme {
    /// The name the metrics print.
    pub(super) fn label(self) -> &'static str {
        match self {
            Scheme::MultiPriority => "Multi-Priority TCP",
            Scheme::BilevelTfrc => "Bilevel TFRC",
            Scheme::FractionalTfrc => "1/N TFRC",
            Scheme::Hacker => "Hacker",
            Scheme::Uncoupled => "independent TCPs",
            Scheme::BilevelTcp => "Bilevel TCP",
        }
    }

    fn is_tfrc(self) -> bool {
        matches!(self, Scheme::BilevelTfrc | Scheme::FractionalTfrc)
    }

    /// The flow that runs the scheme.
    fn flow(self) -> &'static str {
        if self.is_tfrc() {
            "mptfrc"
        } else {
            "mp"
        }
    }

    /// The overrides that make the scenario's multipath flow run this scheme.
    fn overrides(self) -> Vec<(&'static str, String)> {
        let cc = match self {
            Scheme::MultiPriority => "multi-priority",
            Scheme::Hacker => "hacker",
            Scheme::Uncoupled => "uncoupled",
            Scheme::BilevelTcp => "bilevel-tcp",
            Scheme::BilevelTfrc => {
                return vec![
                    ("flows.mp.count", "0".into()),
                    ("flows.mptfrc.count", "1".into()),
                ]
            }
            Scheme::FractionalTfrc => {
                return vec![
                    ("flows.mp.count", "0".into()),
                    ("flows.mptfrc.count", "1".into()),
                    ("flows.mptfrc.tfrc", "{ multipath = \"fractional\" }".into()),
                ]
            }
        };
        vec![("flows.mp.cc", cc.to_string())]
    }

    /// The overrides that put the scheme's primary subflow (NewReno) on its `index`th
    /// subflow, for the schemes that have one.
    fn base(self, index: u32) -> Option<(&'static str, String)> {
        let table = match self {
            Scheme::MultiPriority => "multi_priority",
            Scheme::Hacker => "hacker",
            _ => return None,
        };
        Some((
            "flows.mp.tcp",
            format!("{{ {table} = {{ base = {index} }} }}"),
        ))
    }

    /// One subflow of the scheme's flow on each of `paths`.
    fn paths(self, paths: impl IntoIterator<Item = u32>) -> (&'static str, String) {
        let routes: Vec<String> = paths.into_iter().map(route).collect();
        let key = if self.is_tfrc() {
            "flows.mptfrc.paths"
        } else {
            "flows.mp.paths"
        };
        (key, format!("[{}]", routes.join(", ")))
    }

    /// The scheme's flow's throughput in a run, payload only.
    fn bps(self, r: &Results) -> f64 {
        let b = bps(r, self.flow());
        if self.is_tfrc() {
            b * TFRC_PAYLOAD_FRACTION
        } else {
            b
        }
    }
}

/// The route of path `p` (1-based) as a TOML array.
fn route(p: u32) -> String {
    format!("[\"s\", \"a{p}\", \"b{p}\", \"d\"]")
}

/// One NewReno flow on each of `paths` (`flows.tcpN.count = 1`); a path may appear more
/// than once for more flows on it.
fn tcps(paths: impl IntoIterator<Item = u32>) -> Vec<(&'static str, String)> {
    let mut counts = [0u32; 17];
    for p in paths {
        counts[p as usize] += 1;
    }
    (1..=16)
        .filter(|&p| counts[p] > 0)
        .map(|p| (TCP_COUNT[p - 1], counts[p].to_string()))
        .collect()
}

/// The `flows.tcpN.count` keys (overrides take `&'static str` keys).
const TCP_COUNT: [&str; 16] = [
    "flows.tcp1.count",
    "flows.tcp2.count",
    "flows.tcp3.count",
    "flows.tcp4.count",
    "flows.tcp5.count",
    "flows.tcp6.count",
    "flows.tcp7.count",
    "flows.tcp8.count",
    "flows.tcp9.count",
    "flows.tcp10.count",
    "flows.tcp11.count",
    "flows.tcp12.count",
    "flows.tcp13.count",
    "flows.tcp14.count",
    "flows.tcp15.count",
    "flows.tcp16.count",
];

/// Drop-tail of 50 packets on the bottlenecks of `paths` (the key points the thesis says
/// differ little from RED).
fn drop_tail(paths: impl IntoIterator<Item = u32>) -> Vec<(String, String)> {
    paths
        .into_iter()
        .map(|p| {
            (
                format!("links.p{p}.queue"),
                "{ type = \"drop-tail\", size = \"50pkts\" }".to_string(),
            )
        })
        .collect()
}

/// A configuration's overrides.
pub(super) struct Config {
    overrides: Vec<(String, String)>,
}

impl Config {
    fn new(o: Vec<(&'static str, String)>) -> Config {
        Config {
            overrides: o.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }
    fn with(mut self, more: Vec<(String, String)>) -> Config {
        self.overrides.extend(more);
        self
    }
}

/// Runs every configuration over `seeds` seeds; the results per configuration in order.
fn run_all(ctx: &Ctx<'_>, configs: &[Config], seeds: u32) -> Result<Vec<Vec<Results>>, String> {
    let mut jobs = Vec::new();
    for c in configs {
        let o: Vec<(&str, String)> = c
            .overrides
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        for seed in 1..=u64::from(seeds) {
            jobs.push(Job::new(FILE, TEXT, &o, seed));
        }
    }
    let mut results = ctx.runner.run(&jobs)?.into_iter();
    Ok(configs
        .iter()
        .map(|_| results.by_ref().take(seeds as usize).collect())
        .collect())
}

/// Flow `id`'s throughput in a run (0 if it did not run in the window).
fn bps(r: &Results, id: &str) -> f64 {
    r.flow(id).and_then(|f| f.throughput_bps).unwrap_or(0.0)
}

/// The summed throughput of every NewReno flow of a run (`tcpN`, and `tcpN.i` for the copies
/// of one with `count` above 1).
fn tcps_bps(r: &Results) -> f64 {
    r.flows
        .iter()
        .filter(|f| f.id.starts_with("tcp"))
        .filter_map(|f| f.throughput_bps)
        .sum()
}

/// `f` of each run, as an estimate over the seeds.
fn estimate(runs: &[Results], f: impl Fn(&Results) -> f64) -> Estimate {
    let v: Vec<f64> = runs.iter().map(f).collect();
    Estimate::of(&v)
}
