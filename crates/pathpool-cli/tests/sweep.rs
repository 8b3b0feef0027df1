//! `pathpool sweep` end to end on a tiny scenario: the gathered table, resuming, sweep
//! files, bad input before any run, --cluster without the Python package, Ctrl-C.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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
    fn s(&self, p: &str) -> String {
        self.join(p).display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn tmp(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("pathpool-sweep-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

const SCENARIO: &str = r#"name = "tiny"
duration = "3s"
[nodes]
hosts = ["a", "b"]
routers = ["r"]
[[links]]
id = "bottleneck"
between = ["r", "b"]
rate = "5Mbps"
delay = "10ms"
queue = { type = "droptail", size = "30pkts" }
[[links]]
between = ["a", "r"]
rate = "50Mbps"
delay = "5ms"
[[flows]]
id = "f"
from = "a"
to = "b"
count = 2
# One-subflow connections, so that the grid can give them a multipath controller.
paths = [["a", "r", "b"]]
"#;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn markers(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path().join("done.json"))
        .filter(|p| p.exists())
        .collect();
    v.sort();
    v
}

#[test]
fn a_sweep_gathers_one_table_and_resumes() {
    let d = tmp("gather");
    fs::write(d.join("tiny.toml"), SCENARIO).unwrap();
    let out = d.s("out");
    let args = [
        "sweep",
        &d.s("tiny.toml"),
        "--grid",
        "links.bottleneck.rate=5Mbps,10Mbps",
        "--grid",
        "flows.f.cc=newreno,lia",
        "--reps",
        "2",
        "--jobs",
        "2",
        "--out",
        &out,
    ];
    let o = pathpool(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("8 runs (4 points x 2 reps), 0 already done, 8 to run"));
    let csv = fs::read_to_string(d.join("out/sweep.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("run_id,point,rep,seed,links.bottleneck.rate,flows.f.cc,id,kind,"),
        "{header}"
    );
    assert_eq!(csv.lines().count(), 1 + 8 * 2, "one row per run per flow");
    assert!(d.join("out/sweep.parquet").is_file());
    assert!(d.join("out/manifest.json").is_file());
    assert_eq!(markers(&d.join("out")).len(), 8);
    let some_run = markers(&d.join("out"))[0].parent().unwrap().to_path_buf();
    for f in ["flows.parquet", "summary.json", "provenance.json"] {
        assert!(some_run.join(f).is_file(), "{f}");
    }

    // Again: nothing runs, the same table.
    let o = pathpool(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("8 already done, 0 to run"),
        "{}",
        text(&o)
    );
    assert_eq!(fs::read_to_string(d.join("out/sweep.csv")).unwrap(), csv);

    // Two runs lose their markers (as if interrupted): only they run again.
    let m = markers(&d.join("out"));
    fs::remove_file(&m[2]).unwrap();
    fs::remove_file(&m[5]).unwrap();
    let o = pathpool(&args);
    assert!(
        text(&o).contains("6 already done, 2 to run"),
        "{}",
        text(&o)
    );
    assert_eq!(fs::read_to_string(d.join("out/sweep.csv")).unwrap(), csv);

    // One more repetition: 4 new runs.
    let mut more = args.to_vec();
    more[7] = "3";
    let o = pathpool(&more);
    assert!(text(&o).contains("12 runs (4 points x 3 reps), 8 already done, 4 to run"));

    // Same runs from another number of workers: identical table.
    let o = pathpool(&[
        "sweep",
        &d.s("tiny.toml"),
        "--grid",
        "links.bottleneck.rate=5Mbps,10Mbps",
        "--grid",
        "flows.f.cc=newreno,lia",
        "--reps",
        "2",
        "--jobs",
        "1",
        "-q",
        "--out",
        &d.s("out1"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(fs::read_to_string(d.join("out1/sweep.csv")).unwrap(), csv);
}

#[test]
fn sweep_files_and_dry_runs() {
    let d = tmp("file");
    fs::write(d.join("tiny.toml"), SCENARIO).unwrap();
    fs::write(
        d.join("rates.toml"),
        r#"scenario = "tiny.toml"
reps = 2
seed = 10
table = "summary"

[grid]
"links.bottleneck.rate" = ["5Mbps", "20Mbps"]
"#,
    )
    .unwrap();
    let o = pathpool(&["sweep", &d.s("rates.toml"), "--dry-run", "--out", &d.s("o")]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("ok: 4 runs (2 points x 2 reps), 0 done"), "{t}");
    assert!(t.contains("links.bottleneck.rate"), "{t}");
    assert!(t.contains(" 11 "), "seeds 10 and 11: {t}");
    assert!(!d.join("o").exists(), "a dry run writes nothing");
    let o = pathpool(&["sweep", &d.s("rates.toml"), "-q", "--out", &d.s("o")]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = fs::read_to_string(d.join("o/sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4, "one row per run");
    assert!(csv.lines().next().unwrap().contains("jain_index"));
    assert!(csv.lines().nth(1).unwrap().contains(",0,0,10,5Mbps,"));
}

#[test]
fn bad_sweeps_stop_before_any_run() {
    let d = tmp("bad");
    fs::write(d.join("tiny.toml"), SCENARIO).unwrap();
    let out = d.s("o");
    let check = |args: &[&str], want: &str| {
        let o = pathpool(args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(want), "{} lacks {want}", text(&o));
        assert!(!Path::new(&out).exists(), "nothing written");
    };
    let sc = d.s("tiny.toml");
    check(
        &[
            "sweep",
            &sc,
            "--grid",
            "links.bottleneck.rat=1Mbps",
            "--out",
            &out,
        ],
        "error: --grid: links.bottleneck.rat = 1Mbps:",
    );
    check(
        &[
            "sweep",
            &sc,
            "--grid",
            "links.bottleneck.rate=1Mbps,fast",
            "--out",
            &out,
        ],
        "links.bottleneck.rate = fast: ",
    );
    check(
        &["sweep", &sc, "--grid", "flows.f.cc=", "--out", &out],
        "flows.f.cc: empty list of values",
    );
    check(
        &["sweep", &sc, "--reps", "0", "--out", &out],
        "reps: must be at least 1",
    );
    fs::write(
        d.join("bad.toml"),
        "scenario = \"tiny.toml\"\n[grid]\n\"flows.f.count\" = [1, \"many\"]\n",
    )
    .unwrap();
    check(
        &["sweep", &d.s("bad.toml"), "--out", &out],
        "bad.toml:3:23: flows.f.count = many:",
    );
    // --cluster with no interpreter that has the package: refused before anything is written.
    let o = Command::new(env!("CARGO_BIN_EXE_pathpool"))
        .args([
            "sweep",
            &sc,
            "--cluster",
            "tcp://127.0.0.1:8786",
            "--out",
            &out,
        ])
        .env("PATHPOOL_PYTHON", d.join("no-such-python"))
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--cluster needs the pathpool Python package"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("no-such-python"), "{}", text(&o));
    assert!(!Path::new(&out).exists(), "nothing written");
}

#[test]
fn ctrl_c_keeps_finished_runs_and_marks_no_other() {
    let d = tmp("ctrlc");
    fs::write(d.join("tiny.toml"), SCENARIO).unwrap();
    let out = d.join("o");
    let child = Command::new(env!("CARGO_BIN_EXE_pathpool"))
        .args([
            "sweep",
            &d.s("tiny.toml"),
            "--set",
            "duration=100000s",
            "--grid",
            "flows.f.count=1,2,3,4",
            "--jobs",
            "1",
            "-q",
            "--out",
            &out.display().to_string(),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !out.join("manifest.json").exists() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(text(&o).contains("run the same command again to resume"));
    assert!(markers(&out).len() < 4);
    assert!(!out.join("sweep.parquet").exists());
}
