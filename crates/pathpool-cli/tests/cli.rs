//! The `pathpool` command end to end: results on disk, determinism, and bad input.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pathpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pathpool"))
        .args(args)
        .output()
        .expect("runs")
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn tmp(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("pathpool-cli-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

const SCENARIO: &str = r#"
name = "tiny"
duration = "20s"
[nodes]
hosts = ["a", "b", "c"]
routers = ["r"]
[[links]]
id = "bottleneck"
between = ["r", "b"]
rate = "5Mbps"
delay = "10ms"
queue = { type = "droptail", size = "40pkts" }
loss = 0.001
[[links]]
between = ["a", "r"]
rate = "50Mbps"
delay = "5ms"
[[links]]
between = ["c", "r"]
rate = "50Mbps"
delay = "20ms"
[[flows]]
id = "long"
from = "a"
to = "b"
start_spread = "1s"
[[flows]]
id = "finite"
from = "c"
to = "b"
size = "1MB"
start = "2s"
[[flows]]
id = "cbr"
kind = "udp-cbr"
from = "c"
to = "b"
rate = "1Mbps"
start = "5s"
stop = "15s"
"#;

fn write(dir: &Scratch, name: &str, text: &str) -> PathBuf {
    let p = dir.0.join(name);
    fs::write(&p, text).unwrap();
    p
}

#[test]
fn run_writes_tables_summary_and_provenance() {
    let dir = tmp("run");
    let sc = write(&dir, "tiny.toml", SCENARIO);
    let out = dir.join("out");
    let o = pathpool(&[
        "run",
        sc.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--seed",
        "3",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["flows", "links", "flow_timeseries", "link_timeseries"] {
        assert!(out.join(format!("{f}.parquet")).is_file(), "{f}.parquet");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["seed"], 3);
    assert_eq!(summary["sim_time_s"], 20.0);
    assert!(summary["wall_time_s"].as_f64().unwrap() > 0.0);
    assert!(summary["jain_index"].as_f64().unwrap() > 0.0);
    let flows = summary["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 3);
    let finite = flows.iter().find(|f| f["id"] == "finite").unwrap();
    assert!(
        finite["fct_s"].as_f64().unwrap() > 0.0,
        "the 1 MB flow completes: {finite}"
    );
    assert_eq!(finite["bytes_delivered"], 1_000_000);
    let long = flows.iter().find(|f| f["id"] == "long").unwrap();
    assert!(long.get("fct_s").is_none(), "fct_s only for finite flows");
    assert_eq!(
        flows.iter().find(|f| f["id"] == "cbr").unwrap()["kind"],
        "udp-cbr"
    );
    let links = summary["links"].as_array().unwrap();
    let b = links.iter().find(|l| l["id"] == "bottleneck:r->b").unwrap();
    assert!(b["utilization"].as_f64().unwrap() > 0.5);
    assert!(b["drops"].is_u64());
    let prov: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("provenance.json")).unwrap()).unwrap();
    assert_eq!(prov["seed"], 3);
    assert_eq!(prov["scenario"]["name"], "tiny");
    assert!(prov["git_commit"].is_string() && prov["version"].is_string());
    // The summary table goes to standard output.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("Jain index") && stdout.contains("bottleneck:r->b"),
        "{stdout}"
    );
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn summary_without_wall_time(dir: &Path) -> serde_json::Value {
    let mut s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    s.as_object_mut().unwrap().remove("wall_time_s");
    s
}

#[test]
fn same_seed_gives_identical_files_other_seed_differs() {
    let dir = tmp("determinism");
    let sc = write(&dir, "tiny.toml", SCENARIO);
    let run = |seed: &str, name: &str| {
        let out = dir.join(name);
        let o = pathpool(&[
            "run",
            sc.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--seed",
            seed,
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let (a, b, c) = (run("11", "a"), run("11", "b"), run("12", "c"));
    assert_eq!(files(&a).len(), 7, "seven tables");
    assert_eq!(
        files(&a),
        files(&b),
        "same seed: byte-identical Parquet files"
    );
    assert_eq!(summary_without_wall_time(&a), summary_without_wall_time(&b));
    assert_ne!(files(&a), files(&c), "another seed: different results");
}

#[test]
fn overrides_change_the_run() {
    let dir = tmp("overrides");
    let sc = write(&dir, "tiny.toml", SCENARIO);
    let o = pathpool(&[
        "run",
        sc.to_str().unwrap(),
        "--no-write",
        "--json",
        "--set",
        "links.bottleneck.rate=1Mbps",
        "--set",
        "duration=10s",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["sim_time_s"], 10.0);
    let long = s["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "long")
        .unwrap()
        .clone();
    assert!(long["throughput_bps"].as_f64().unwrap() < 1e6, "{long}");
}

/// 1-based number of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle present")
        + 1
}

/// Each malformed scenario must exit with code 2, name the problem and its line, and leave no
/// output directory.
#[test]
fn malformed_scenarios_fail_cleanly() {
    let dir = tmp("bad");
    let top =
        |extra: &str| SCENARIO.replacen("name = \"tiny\"", &format!("name = \"tiny\"\n{extra}"), 1);
    let cases: Vec<(&str, String, &str, Vec<&str>)> = vec![
        (
            "unknown field",
            top("colour = \"blue\""),
            "colour",
            vec!["colour", "unknown field"],
        ),
        (
            "bad unit",
            format!("{SCENARIO}[measure]\ninterval = \"5 furlongs\"\n"),
            "furlongs",
            vec!["measure.interval", "unknown unit", "ms"],
        ),
        (
            "negative rate",
            SCENARIO.replacen("rate = \"5Mbps\"", "rate = \"-5Mbps\"", 1),
            "-5Mbps",
            vec!["links[0].rate", "negative"],
        ),
        (
            "missing node",
            SCENARIO.replacen(
                "between = [\"a\", \"r\"]",
                "between = [\"a\", \"nowhere\"]",
                1,
            ),
            "nowhere",
            vec!["links[1].between[1]", "unknown node \"nowhere\""],
        ),
        (
            "bare number",
            format!("{SCENARIO}[tcp]\nmin_rto = 200\n"),
            "min_rto",
            vec!["tcp.min_rto", "no unit"],
        ),
        (
            "bad syntax",
            top("duration = "),
            "duration = ",
            vec!["expected"],
        ),
    ];
    for (what, text, needle, expect) in cases {
        let sc = write(&dir, "tiny.toml", &text);
        let out = dir.join(format!("out-{}", what.replace(' ', "-")));
        let o = pathpool(&["run", sc.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        let location = format!("tiny.toml:{}:", line_of(&text, needle));
        assert!(
            err.contains(&location),
            "{what}: error should point at {location}: {err}"
        );
        for e in expect {
            assert!(err.contains(e), "{what}: error should mention {e:?}: {err}");
        }
        assert!(!out.exists(), "{what}: no output directory");
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
}

#[test]
fn missing_file_and_bad_flags_exit_2() {
    let o = pathpool(&["run", "/nonexistent/scenario.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/scenario.toml"));
    let o = pathpool(&["run", "x.toml", "--set", "novalue"]);
    assert_eq!(o.status.code(), Some(2));
    let o = pathpool(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `pathpool bench --json --only CASE --repeat 1 --scale SCALE`: its one line of figures.
fn bench_json(case: &str, scale: &str) -> serde_json::Value {
    let o = pathpool(&[
        "bench", "--json", "--only", case, "--repeat", "1", "--scale", scale,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn bench_prints_json_figures() {
    let f = bench_json("dumbbell-n10", "0.02");
    assert_eq!(f["flows"], 10);
    assert!(f["packets_delivered"].as_u64().unwrap() > 0);
    assert!(f["packets_per_sec"].as_f64().unwrap() > 0.0);
    assert!(f["wall_time_s"].as_f64().unwrap() > 0.0);
    let f = bench_json("multipath-n100x4", "0.05");
    assert_eq!(f["case"], "multipath-n100x4");
    assert!(f["utilization"].as_f64().unwrap() > 0.5);
    // The multipath connections on the dumbbell deliver over its one link as its 100 flows do.
    let f = bench_json("multipath-dumbbell-n50x2", "0.05");
    assert_eq!(f["case"], "multipath-dumbbell-n50x2");
    assert_eq!(f["flows"], 50);
    assert!(f["utilization"].as_f64().unwrap() > 0.5);
    let o = pathpool(&["bench", "--only", "dumbbell-n7"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("multipath-n100x4"));
}

#[test]
fn reproduce_lists_runs_and_prints_the_json_interface() {
    let o = pathpool(&["reproduce", "--list"]);
    assert!(o.status.success());
    let list = String::from_utf8_lossy(&o.stdout);
    for id in [
        "nmcc-shared-bottleneck",
        "nmcc-short-transfers",
        "nmcc-partial-congestion",
    ] {
        assert!(list.contains(id), "{list}");
    }
    let dir = tmp("reproduce");
    let out = dir.join("partial");
    let o = pathpool(&[
        "reproduce",
        "nmcc-partial-congestion",
        "--quick",
        "--json",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is a JSON object"))
        .collect();
    assert_eq!(lines.len(), 4);
    for c in &lines {
        for key in [
            "metric",
            "published",
            "measured",
            "tolerance",
            "within",
            "unit",
            "ci95",
        ] {
            assert!(c.get(key).is_some(), "{key} missing in {c}");
        }
        let (p, m, t) = (
            c["published"].as_f64().unwrap(),
            c["measured"].as_f64().unwrap(),
            c["tolerance"].as_f64().unwrap(),
        );
        assert_eq!(c["within"].as_bool().unwrap(), (m - p).abs() <= t + 1e-9);
        let h = c["ci95"].as_f64().unwrap();
        let verdict = if m - h >= p - t - 1e-6 && m + h <= p + t + 1e-6 {
            "within"
        } else if m + h < p - t || m - h > p + t {
            "outside"
        } else {
            "overlaps"
        };
        assert_eq!(c["verdict"].as_str().unwrap(), verdict, "{c}");
    }
    for f in [
        "nmcc-partial-congestion.svg",
        "comparisons.jsonl",
        "observations.json",
        "runs.csv",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let o = pathpool(&["reproduce", "no-such-experiment"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nmcc-shared-bottleneck"));
    // A kernel-bed option on a simulated experiment: refused before anything runs.
    let o = pathpool(&["reproduce", "convergence", "--quick", "--server-quickack"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--server-quickack applies to convergence-linux only"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `convergence` takes its run length from `--set duration=`, the measurement window (the
/// last fifth) and the per-second series with it; it used to keep its own 600 s and refuse
/// the run, or, with `measure.start` set too, report every share as NaN.
#[test]
fn convergence_runs_for_the_length_set() {
    let dir = tmp("convergence-length");
    let out = dir.join("out");
    let o = pathpool(&[
        "reproduce",
        "convergence",
        "--quick",
        "--json",
        "--seeds",
        "1",
        "--set",
        "duration=60s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let shares: Vec<f64> = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
        .filter(|c| c["metric"].as_str().unwrap_or("").contains("final share"))
        .map(|c| c["measured"].as_f64().expect("a number"))
        .collect();
    assert!(!shares.is_empty(), "{stdout}");
    assert!(
        shares.iter().all(|s| (1.0..=99.0).contains(s)),
        "{shares:?}"
    );
    let per_second = std::fs::read_to_string(out.join("share_per_second.csv")).unwrap();
    let last = per_second
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(3).unwrap().parse::<u32>().unwrap())
        .max()
        .unwrap();
    assert_eq!(last, 59, "one share per second of the 60-s run");
    let o = pathpool(&[
        "reproduce",
        "convergence",
        "--quick",
        "--set",
        "duration=30s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--set duration=30s: give whole seconds from 60 s"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn reproduce_summary_prints_the_scoreboard() {
    let dir = tmp("scoreboard");
    let out = dir.join("partial");
    let args = [
        "reproduce",
        "nmcc-partial-congestion",
        "--quick",
        "--seeds",
        "2",
        "--summary",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = pathpool(&[&args[..], &["--json"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is a JSON object"))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "one scoreboard row, no comparisons: {lines:?}"
    );
    let row = &lines[0];
    assert_eq!(row["experiment"], "nmcc-partial-congestion");
    assert_eq!(row["quick"], true);
    let n = |k: &str| row[k].as_u64().unwrap();
    assert_eq!(n("total"), 4);
    assert_eq!(n("within") + n("overlaps") + n("outside"), n("total"));
    let o = pathpool(&args);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("== scoreboard") && text.contains("total"),
        "{text}"
    );
}
