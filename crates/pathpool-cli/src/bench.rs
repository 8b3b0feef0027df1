//! `pathpool bench`: speed and memory on dumbbell scenarios of long-lived NewReno flows, on
//! multipath scenarios of LIA and of Multi-Priority TCP connections with four subflows over
//! four parallel paths, on LIA connections with two subflows sharing the dumbbell's one
//! link, on the dumbbell with TFRC flows (`tfrc-n100`), and on the INRPP document's
//! multihomed network with Poisson Pareto traffic as NewReno and as INRPP flows
//! (`tcp-multihomed`, `inrpp-multihomed`).
//!
//! Each case runs in a fresh child process so its peak resident set size is its own. Figures
//! are printed, never asserted: speed depends on the machine.

use std::process::Command;
use std::time::Instant;

use clap::Args;
use pathpool_sim::{LoadedScenario, Results};
use serde::{Deserialize, Serialize};

use crate::CliError;

/// One benchmark scenario.
#[derive(Clone, Copy, Debug)]
pub struct BenchCase {
    /// Number of long-lived flows (connections).
    pub flows: u32,
    /// Parallel bottleneck paths (1: the dumbbell).
    pub paths: u32,
    /// With several paths: every connection is a LIA connection with one subflow on each
    /// (`true`), or `flows` NewReno flows are pinned to each path (`false`: the single-path
    /// reference on the same topology). On the dumbbell (`paths` 1): every connection is a
    /// LIA connection with `subflows` subflows on its one link.
    pub multipath: bool,
    /// Subflows per connection of a multipath case on the dumbbell (0 otherwise).
    pub subflows: u32,
    /// The multipath connections' controller (`"lia"`; `"multi-priority"`: Tse's one
    /// NewReno and TCP-LP subflows; unused by single-path cases).
    pub cc: &'static str,
    /// SACK loss recovery (`tcp.sack`) instead of NewReno.
    pub sack: bool,
    /// Bottleneck rate in bit/s.
    pub rate_bps: u64,
    /// Simulated seconds.
    pub duration_s: f64,
}

/// The dumbbell cases of issue 2 — (N=10, 100 Mb/s, 100 s), (N=100, 1 Gb/s, 20 s),
/// (N=1000, 10 Gb/s, 5 s) — the multipath case of issue 3: 100 connections × 4 subflows on
/// 4 paths of 250 Mb/s (1 Gb/s in all, as the N=100 dumbbell), 20 s — its single-path
/// reference: 4 × 100 NewReno flows on the same four paths (the same number of packet
/// streams and link hops, without the multipath machinery) — and 50 LIA connections × 2
/// subflows on the N=100 dumbbell itself (100 subflows where it has 100 flows: the
/// multipath machinery alone, on the same topology; thesis E5c runs NMCC's two subflows
/// through one shared bottleneck too) — and the N=100 dumbbell with SACK (issue 17: what
/// the scoreboard costs) — and 100 Multi-Priority TCP connections (1 NewReno + 3 TCP-LP
/// subflows, issue 20) on the four paths of the multipath case.
pub const CASES: [BenchCase; 8] = [
    BenchCase {
        flows: 10,
        paths: 1,
        multipath: false,
        subflows: 0,
        cc: "lia",
        sack: false,
        rate_bps: 100_000_000,
        duration_s: 100.0,
    },
    BenchCase {
        flows: 100,
        paths: 1,
        multipath: false,
        subflows: 0,
        cc: "lia",
        sack: false,
        rate_bps: 1_000_000_000,
        duration_s: 20.0,
    },
    BenchCase {
        flows: 1000,
        paths: 1,
        multipath: false,
        subflows: 0,
        cc: "lia",
        sack: false,
        rate_bps: 10_000_000_000,
        duration_s: 5.0,
    },
    BenchCase {
        flows: 100,
        paths: 4,
        multipath: true,
        subflows: 0,
        cc: "lia",
        sack: false,
        rate_bps: 1_000_000_000,
        duration_s: 20.0,
    },
    BenchCase {
        flows: 100,
        paths: 4,
        multipath: false,
        subflows: 0,
        cc: "lia",
        sack: false,
        rate_bps: 1_000_000_000,
        duration_s: 20.0,
    },
    BenchCase {
        flows: 50,
        paths: 1,
        multipath: true,
        subflows: 2,
        cc: "lia",
        sack: false,
        rate_bps: 1_000_000_000,
        duration_s: 20.0,
    },
    BenchCase {
        flows: 100,
        paths: 1,
        multipath: false,
        subflows: 0,
        cc: "lia",
        sack: true,
        rate_bps: 1_000_000_000,
        duration_s: 20.0,
    },
    BenchCase {
        flows: 100,
        paths: 4,
        multipath: true,
        subflows: 0,
        cc: "multi-priority",
        sack: false,
        rate_bps: 1_000_000_000,
        duration_s: 20.0,
    },
];

/// Round-trip propagation time of every case.
pub const RTT_S: f64 = 0.1;

/// The TFRC case (issue 20), numbered after [`CASES`]: `tfrc-n100` is dumbbell-n100 with
/// its 100 flows TFRC flows (RFC 3448) of 1500-byte packets.
pub const TFRC_CASE: &str = "tfrc-n100";

/// The multihomed cases (issue 21), numbered after [`TFRC_CASE`]: the `inrpp-multihomed`
/// reproduction's network and traffic (1000 Poisson Pareto flows of mean 30 segments,
/// offered load 0.9 of its 10 Mb/s link n0-n1, 150 s) with NewReno flows and with INRPP
/// flows and routers: what INRPP's routers, caches and detours cost per packet.
pub const MULTIHOMED_CASES: [(&str, &str); 2] =
    [("tcp-multihomed", "newreno"), ("inrpp-multihomed", "inrpp")];

/// The NDN case (issue 22), numbered after [`MULTIHOMED_CASES`]: the multipath cases' four
/// paths with 100 PTP consumers at `left`, each fetching a content of its own from one
/// producer at `right`, 20 s; its packets are the Interests and Data handed to NDN nodes
/// (each hop counts), the unit of the forwarders' work.
pub const NDN_CASE: &str = "ndn-ptp-n100x4";

/// The scenario of [`NDN_CASE`].
fn ndn_scenario(scale: f64) -> String {
    let case = &CASES[3];
    let duration_ms = (case.duration_s * scale * 1000.0).round().max(1.0) as u64;
    let topology = case.scenario(scale);
    let links = &topology[topology.find("[nodes]").expect("the case has nodes")
        ..topology.find("[[flows]]").expect("the case has flows")];
    format!(
        "name = \"bench-{NDN_CASE}\"\nduration = \"{duration_ms}ms\"\n{links}\
         [ndn]\n[[ndn.producers]]\nnode = \"right\"\nprefix = \"/c\"\n{}",
        (0..case.flows)
            .map(|i| {
                format!(
                    "[[flows]]\nkind = \"ndn\"\nto = \"left\"\ncontent = \"/c/f{i}\"\n\
                     size = \"100000pkts\"\nstart_spread = \"10ms\"\n"
                )
            })
            .collect::<String>()
    )
}

/// The multihomed network and traffic.
const MULTIHOMED: &str = include_str!("../../../scenarios/reproductions/inrpp-multihomed.toml");

/// The multihomed cases' simulated seconds (before `--scale`).
const MULTIHOMED_DURATION_S: f64 = 150.0;

/// Every case's name, [`CASES`], [`TFRC_CASE`], then [`MULTIHOMED_CASES`], in index order.
fn case_names() -> Vec<String> {
    let mut names: Vec<String> = CASES.iter().map(BenchCase::name).collect();
    names.push(TFRC_CASE.to_string());
    names.extend(MULTIHOMED_CASES.iter().map(|(n, _)| (*n).to_string()));
    names.push(NDN_CASE.to_string());
    names
}

/// The multihomed case `cc` ("newreno" or "inrpp"), its duration scaled.
fn multihomed_scenario(cc: &str, scale: f64) -> Result<LoadedScenario, CliError> {
    let duration_ms = (MULTIHOMED_DURATION_S * scale * 1000.0).round().max(1.0) as u64;
    let overrides = [
        ("traffic.0.cc".to_string(), format!("\"{cc}\"")),
        ("duration".to_string(), format!("\"{duration_ms}ms\"")),
    ];
    LoadedScenario::from_toml(MULTIHOMED, "<bench>", &overrides)
        .map_err(|e| CliError::Failed(e.to_string()))
}

/// The scenario of [`TFRC_CASE`]: dumbbell-n100's link and duration, its flows TFRC.
fn tfrc_scenario(scale: f64) -> String {
    let case = &CASES[1];
    let duration_ms = (case.duration_s * scale * 1000.0).round().max(1.0) as u64;
    format!(
        "name = \"bench-{TFRC_CASE}\"\nduration = \"{duration_ms}ms\"\n\
         [tfrc]\npacket_size = \"1500B\"\n{}kind = \"tfrc\"\n",
        dumbbell(case.rate_bps, case.flows)
    )
}

/// The dumbbell of the single-path cases: two hosts joined by one drop-tail link of one BDP,
/// and `flows` copies of the flow `f`, whose table comes last (a case adds its own fields).
fn dumbbell(rate_bps: u64, flows: u32) -> String {
    let bdp_bytes = (rate_bps as f64 * RTT_S / 8.0) as u64;
    format!(
        "[nodes]\nhosts = [\"left\", \"right\"]\n\
         [[links]]\nid = \"bottleneck\"\nbetween = [\"left\", \"right\"]\nrate = \"{rate_bps}bps\"\n\
         delay = \"50ms\"\nqueue = {{ type = \"droptail\", size = \"{bdp_bytes}B\" }}\n\
         [[flows]]\nid = \"f\"\nfrom = \"left\"\nto = \"right\"\ncount = {flows}\nstart_spread = \"10ms\"\n"
    )
}

impl BenchCase {
    /// The case's name: `dumbbell-n<flows>`, `multipath-n<flows>x<paths>`,
    /// `paths<paths>-n<flows per path>` or `multipath-dumbbell-n<flows>x<subflows>`, with
    /// `-sack` appended when it uses SACK.
    #[must_use]
    pub fn name(&self) -> String {
        let base = self.base_name();
        if self.sack {
            format!("{base}-sack")
        } else {
            base
        }
    }

    fn base_name(&self) -> String {
        if self.paths == 1 && self.multipath {
            format!("multipath-dumbbell-n{}x{}", self.flows, self.subflows)
        } else if self.paths == 1 {
            format!("dumbbell-n{}", self.flows)
        } else if self.multipath && self.cc == "multi-priority" {
            format!("multipriority-n{}x{}", self.flows, self.paths)
        } else if self.multipath {
            format!("multipath-n{}x{}", self.flows, self.paths)
        } else {
            format!("paths{}-n{}", self.paths, self.flows)
        }
    }

    /// The scenario. Dumbbell: two hosts joined by one duplex bottleneck link with 50 ms of
    /// delay each way and a drop-tail buffer of one bandwidth-delay product, `flows` NewReno
    /// flows with 1460-byte segments (1500-byte packets) starting within the first 10 ms.
    /// Multipath: the same, with `paths` parallel bottlenecks (through routers `r0`, `r1`,
    /// …) sharing the rate equally, each with its own one-BDP buffer, and `flows` LIA
    /// connections with one subflow on each path.
    #[must_use]
    pub fn scenario(&self, scale: f64) -> String {
        let duration_ms = (self.duration_s * scale * 1000.0).round().max(1.0) as u64;
        let mut s = format!(
            "name = \"bench-{name}\"\nduration = \"{duration_ms}ms\"\n\
             [tcp]\nmss = \"1460B\"\nheader = \"40B\"\nsack = {sack}\n",
            name = self.name(),
            sack = self.sack,
        );
        if self.paths == 1 {
            s += &dumbbell(self.rate_bps, self.flows);
            if self.multipath {
                let routes = vec!["[\"left\", \"right\"]"; self.subflows as usize];
                s += &format!("cc = \"{}\"\npaths = [{}]\n", self.cc, routes.join(", "));
            }
            return s;
        }
        let rate = self.rate_bps / u64::from(self.paths);
        let bdp_bytes = (rate as f64 * RTT_S / 8.0) as u64;
        let routers: Vec<String> = (0..self.paths).map(|k| format!("\"r{k}\"")).collect();
        s += &format!(
            "[nodes]\nhosts = [\"left\", \"right\"]\nrouters = [{}]\n",
            routers.join(", ")
        );
        let mut paths = Vec::new();
        for k in 0..self.paths {
            s += &format!(
                "[[links]]\nbetween = [\"left\", \"r{k}\"]\nrate = \"inf\"\ndelay = \"0ms\"\n\
                 [[links]]\nid = \"bottleneck{k}\"\nbetween = [\"r{k}\", \"right\"]\nrate = \"{rate}bps\"\n\
                 delay = \"50ms\"\nqueue = {{ type = \"droptail\", size = \"{bdp_bytes}B\" }}\n"
            );
            paths.push(format!("[\"left\", \"r{k}\", \"right\"]"));
        }
        if self.multipath {
            s += &format!(
                "[[flows]]\nid = \"f\"\nfrom = \"left\"\nto = \"right\"\ncount = {n}\n\
                 start_spread = \"10ms\"\ncc = \"{cc}\"\npaths = [{p}]\n",
                n = self.flows,
                cc = self.cc,
                p = paths.join(", ")
            );
        } else {
            for (k, p) in paths.iter().enumerate() {
                s += &format!(
                    "[[flows]]\nid = \"f{k}\"\nfrom = \"left\"\nto = \"right\"\ncount = {n}\n\
                     start_spread = \"10ms\"\nroute = {p}\n",
                    n = self.flows,
                );
            }
        }
        s
    }

    /// Mean utilisation of the bottleneck links' forward directions.
    fn utilization(&self, r: &Results) -> Option<f64> {
        let ids: Vec<String> = if self.paths == 1 {
            vec!["bottleneck:left->right".into()]
        } else {
            (0..self.paths)
                .map(|k| format!("bottleneck{k}:r{k}->right"))
                .collect()
        };
        let u: Vec<f64> = ids
            .iter()
            .filter_map(|id| r.link(id).and_then(|l| l.utilization))
            .collect();
        (u.len() == ids.len()).then(|| u.iter().sum::<f64>() / u.len() as f64)
    }
}

/// Options of `pathpool bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Print one JSON object per case instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Runs per case; the median wall time is reported.
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Run only this case (dumbbell-n10, dumbbell-n100, dumbbell-n1000, multipath-n100x4,
    /// paths4-n100, multipath-dumbbell-n50x2, dumbbell-n100-sack, multipriority-n100x4,
    /// tfrc-n100, tcp-multihomed, inrpp-multihomed, ndn-ptp-n100x4).
    #[arg(long)]
    pub only: Option<String>,
    /// Scale the simulated durations (e.g. 0.1 for a quick check).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
}

/// What one case measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchFigures {
    /// Case name.
    pub case: String,
    /// Flows.
    pub flows: u32,
    /// Bottleneck rate in bit/s.
    pub rate_bps: u64,
    /// Simulated seconds.
    pub sim_time_s: f64,
    /// Wall-clock seconds of the simulation (median over the repetitions).
    pub wall_time_s: f64,
    /// TCP data packets delivered to their sinks.
    pub packets_delivered: u64,
    /// `packets_delivered / wall_time_s`.
    pub packets_per_sec: f64,
    /// Events processed.
    pub events: u64,
    /// Peak resident set size of the process in bytes (Linux `VmHWM`), if known.
    pub peak_rss_bytes: Option<u64>,
    /// Bottleneck utilisation over the run.
    pub utilization: Option<f64>,
    /// Jain's index over the flows.
    pub jain_index: Option<f64>,
    /// Repetitions the figures summarise.
    pub repetitions: u32,
}

fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs one case in this process and prints its figures as one JSON line.
///
/// # Errors
/// An unknown case index.
pub fn bench_case_command(index: usize, scale: f64) -> Result<(), CliError> {
    if index == CASES.len() {
        return bench_tfrc(scale);
    }
    if let Some(&(name, cc)) = index
        .checked_sub(CASES.len() + 1)
        .and_then(|k| MULTIHOMED_CASES.get(k))
    {
        return run_case(
            name.to_string(),
            (1000, 10_000_000),
            multihomed_scenario(cc, scale)?,
            |r| r.stats.data_packets_delivered,
            |r| r.link("n0-n1:n0->n1").and_then(|l| l.utilization),
        );
    }
    if index == CASES.len() + 1 + MULTIHOMED_CASES.len() {
        let case = &CASES[3];
        return run_case(
            NDN_CASE.to_string(),
            (case.flows, case.rate_bps),
            load(&ndn_scenario(scale))?,
            |r| r.stats.packets_delivered,
            |r| {
                let u: Vec<f64> = (0..case.paths)
                    .filter_map(|k| {
                        r.link(&format!("bottleneck{k}:right->r{k}"))
                            .and_then(|l| l.utilization)
                    })
                    .collect();
                (u.len() == case.paths as usize).then(|| u.iter().sum::<f64>() / u.len() as f64)
            },
        );
    }
    let case = CASES
        .get(index)
        .ok_or_else(|| CliError::BadInput(format!("no benchmark case {index}")))?;
    run_case(
        case.name(),
        (case.flows, case.rate_bps),
        load(&case.scenario(scale))?,
        |r| r.stats.data_packets_delivered,
        |r| case.utilization(r),
    )
}

fn load(text: &str) -> Result<LoadedScenario, CliError> {
    LoadedScenario::from_toml(text, "<bench>", &[]).map_err(|e| CliError::Failed(e.to_string()))
}

/// Runs [`TFRC_CASE`] and prints its figures as one JSON line. TFRC packets are not TCP
/// data, so its packets delivered are the flows' delivered bytes in 1500-byte packets (the
/// receivers' data packets, feedback left out).
fn bench_tfrc(scale: f64) -> Result<(), CliError> {
    let case = &CASES[1];
    run_case(
        TFRC_CASE.to_string(),
        (case.flows, case.rate_bps),
        load(&tfrc_scenario(scale))?,
        |r| r.flows.iter().map(|f| f.bytes_delivered / 1500).sum(),
        |r| case.utilization(r),
    )
}

/// Runs the scenario `loaded` of the case `name` (with `flows` flows and a bottleneck of
/// `rate_bps`) and prints its figures as one JSON line, counting the packets delivered with
/// `packets` and reading the bottleneck's utilisation with `utilization`.
fn run_case(
    name: String,
    (flows, rate_bps): (u32, u64),
    loaded: LoadedScenario,
    packets: impl Fn(&Results) -> u64,
    utilization: impl Fn(&Results) -> Option<f64>,
) -> Result<(), CliError> {
    let mut sim = loaded
        .compile(Some(1))
        .map_err(|e| CliError::Failed(e.to_string()))?;
    let start = Instant::now();
    sim.run();
    let wall = start.elapsed().as_secs_f64();
    let r = sim.results();
    let packets = packets(&r);
    let figures = BenchFigures {
        case: name,
        flows,
        rate_bps,
        sim_time_s: r.sim_time_s,
        wall_time_s: wall,
        packets_delivered: packets,
        packets_per_sec: packets as f64 / wall,
        events: r.stats.events,
        peak_rss_bytes: peak_rss_bytes(),
        utilization: utilization(&r),
        jain_index: r.jain_index,
        repetitions: 1,
    };
    println!(
        "{}",
        serde_json::to_string(&figures).map_err(|e| CliError::Failed(e.to_string()))?
    );
    Ok(())
}

/// Runs the benchmark cases and prints their figures.
///
/// # Errors
/// A child process that fails or prints something unexpected.
pub fn bench_command(a: &BenchArgs) -> Result<(), CliError> {
    if a.repeat == 0 {
        return Err(CliError::BadInput("--repeat must be at least 1".into()));
    }
    if !(a.scale > 0.0 && a.scale.is_finite()) {
        return Err(CliError::BadInput(
            "--scale must be a positive number".into(),
        ));
    }
    let cmd = crate::self_command()?;
    let names = case_names();
    let indices: Vec<usize> = match &a.only {
        None => (0..names.len()).collect(),
        Some(name) => vec![names.iter().position(|c| c == name).ok_or_else(|| {
            CliError::BadInput(format!("--only {name}: the cases are {}", names.join(", ")))
        })?],
    };
    if !a.json {
        println!(
            "{:<24} {:>9} {:>8} {:>9} {:>12} {:>13} {:>10} {:>7}",
            "case", "rate", "sim s", "wall s", "packets", "packets/s", "peak RSS", "util %"
        );
    }
    let mut measured = Vec::new();
    for i in indices {
        let mut runs = Vec::new();
        for _ in 0..a.repeat {
            let out = Command::new(&cmd[0])
                .args(&cmd[1..])
                .args([
                    "bench-case",
                    &i.to_string(),
                    "--scale",
                    &a.scale.to_string(),
                ])
                .output()
                .map_err(|e| CliError::Failed(format!("cannot start {}: {e}", cmd[0])))?;
            if !out.status.success() {
                return Err(CliError::Failed(format!(
                    "benchmark case {i} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                )));
            }
            let line = String::from_utf8_lossy(&out.stdout);
            let f: BenchFigures = serde_json::from_str(line.trim())
                .map_err(|e| CliError::Failed(format!("benchmark case {i}: {e}: {line}")))?;
            runs.push(f);
        }
        runs.sort_by(|x, y| x.wall_time_s.total_cmp(&y.wall_time_s));
        let mut f = runs[runs.len() / 2].clone();
        f.peak_rss_bytes = runs.iter().filter_map(|r| r.peak_rss_bytes).max();
        f.repetitions = a.repeat;
        if a.json {
            println!(
                "{}",
                serde_json::to_string(&f).map_err(|e| CliError::Failed(e.to_string()))?
            );
        } else {
            println!(
                "{:<24} {:>9} {:>8.1} {:>9.3} {:>12} {:>13.0} {:>10} {:>7}",
                f.case,
                format!("{}Mbps", f.rate_bps / 1_000_000),
                f.sim_time_s,
                f.wall_time_s,
                f.packets_delivered,
                f.packets_per_sec,
                f.peak_rss_bytes
                    .map_or("-".into(), |b| format!("{:.1} MB", b as f64 / 1e6)),
                f.utilization
                    .map_or("-".into(), |u| format!("{:.1}", u * 100.0)),
            );
        }
        measured.push(f);
    }
    if !a.json {
        let ratios = ratios_to_reference(&measured);
        if !ratios.is_empty() {
            println!(
                "\npackets per wall-second as a multiple of {REFERENCE_CASE}'s (the target for \
                 multipath-n100x4 is 0.8x; docs/benchmarks.md):"
            );
            for (case, ratio) in ratios {
                println!("  {case:<24} {ratio:.2}x");
            }
        }
    }
    Ok(())
}

/// The single-path case the multipath cases are compared with.
const REFERENCE_CASE: &str = "dumbbell-n100";

/// Each multipath or four-path case's packets per wall-second as a multiple of the reference
/// dumbbell's, for the cases measured together with it (none without it).
fn ratios_to_reference(measured: &[BenchFigures]) -> Vec<(String, f64)> {
    let Some(reference) = measured.iter().find(|f| f.case == REFERENCE_CASE) else {
        return Vec::new();
    };
    measured
        .iter()
        .filter(|f| {
            ["multipath", "paths", "multipriority"]
                .iter()
                .any(|p| f.case.starts_with(p))
        })
        .map(|f| {
            (
                f.case.clone(),
                f.packets_per_sec / reference.packets_per_sec,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(case: &str, packets_per_sec: f64) -> BenchFigures {
        BenchFigures {
            case: case.into(),
            flows: 100,
            rate_bps: 1_000_000_000,
            sim_time_s: 20.0,
            wall_time_s: 0.1,
            packets_delivered: 1,
            packets_per_sec,
            events: 2,
            peak_rss_bytes: None,
            utilization: None,
            jain_index: None,
            repetitions: 1,
        }
    }

    #[test]
    fn multipath_cases_are_compared_with_the_n100_dumbbell_only_when_it_ran() {
        let all = [
            figures("dumbbell-n10", 17e6),
            figures("dumbbell-n100", 16e6),
            figures("multipath-n100x4", 8e6),
            figures("paths4-n100", 12e6),
        ];
        assert_eq!(
            ratios_to_reference(&all),
            vec![
                ("multipath-n100x4".to_string(), 0.5),
                ("paths4-n100".to_string(), 0.75)
            ]
        );
        assert!(ratios_to_reference(&all[2..]).is_empty());
    }

    #[test]
    fn the_ndn_case_has_100_ptp_consumers_on_the_four_paths() {
        assert_eq!(case_names().last().map(String::as_str), Some(NDN_CASE));
        let mut sim = load(&ndn_scenario(0.02)).unwrap().compile(Some(1)).unwrap();
        sim.run();
        let r = sim.results();
        assert_eq!(r.flows.len(), 100);
        assert!(r
            .flows
            .iter()
            .all(|f| f.kind == "ndn" && f.bytes_delivered > 0));
        assert_eq!(r.links.len(), 16);
    }

    #[test]
    fn the_tfrc_case_is_dumbbell_n100_with_tfrc_flows() {
        assert_eq!(case_names()[CASES.len()], TFRC_CASE);
        assert_eq!(case_names().len(), CASES.len() + 2 + MULTIHOMED_CASES.len());
        let loaded = LoadedScenario::from_toml(&tfrc_scenario(0.01), "<bench>", &[]).unwrap();
        let mut sim = loaded.compile(Some(1)).unwrap();
        sim.run();
        let r = sim.results();
        assert_eq!(r.flows.len(), 100);
        assert!(r.flows.iter().all(|f| f.kind == "tfrc"));
        assert!(r.link("bottleneck:left->right").is_some());
    }

    #[test]
    fn the_multihomed_cases_run_the_reproductions_network_with_each_transport() {
        for (name, cc) in MULTIHOMED_CASES {
            assert!(case_names().iter().any(|n| n == name));
            let mut sim = multihomed_scenario(cc, 0.01)
                .unwrap()
                .compile(Some(1))
                .unwrap();
            sim.run();
            let r = sim.results();
            assert!(!r.flows.is_empty(), "{name}");
            assert!(
                r.flows.iter().all(|f| f.cc.as_deref() == Some(cc)),
                "{name}"
            );
            assert!(!r.routers.is_empty(), "{name}: [inrpp] is in the file");
            assert!(r.link("n0-n1:n0->n1").is_some());
        }
    }
}
