//! `pathpool run --out DIR` never deletes a file pathpool did not write (issue 16, defect 1).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pathpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pathpool"))
        .args(args)
        .output()
        .expect("runs")
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn tmp(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("pathpool-outdir-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

const SCENARIO: &str = r#"
name = "tiny"
duration = "5s"
[nodes]
hosts = ["a", "b"]
[[links]]
between = ["a", "b"]
rate = "5Mbps"
delay = "10ms"
[[flows]]
from = "a"
to = "b"
"#;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The reported case: the scenario and a paper in the output directory.
#[test]
fn the_users_files_in_the_output_directory_survive() {
    let s = tmp("survive");
    let exp = s.0.join("exp");
    fs::create_dir_all(&exp).unwrap();
    let scenario = exp.join("my.toml");
    fs::write(&scenario, SCENARIO).unwrap();
    fs::write(exp.join("paper.tex"), "x\n").unwrap();
    let (sc, out) = (scenario.to_str().unwrap(), exp.to_str().unwrap());

    let o = pathpool(&["run", sc, "--out", out, "-q"]);
    assert_eq!(o.status.code(), Some(2), "refused: {}", stderr(&o));
    let msg = stderr(&o);
    assert!(
        msg.contains("my.toml, paper.tex") && msg.contains("--force"),
        "{msg}"
    );
    assert!(!msg.contains("simulated"), "refused before running: {msg}");
    assert_eq!(names(&exp), ["my.toml", "paper.tex"], "nothing touched");

    let o = pathpool(&["run", sc, "--out", out, "-q", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(exp.join("paper.tex")).unwrap(), "x\n");
    assert_eq!(fs::read_to_string(&scenario).unwrap(), SCENARIO);
    assert!(exp.join("flows.parquet").is_file() && exp.join("provenance.json").is_file());

    // Now a results directory: a second run replaces its own files, keeps the others,
    // without --force.
    fs::write(exp.join("notes.md"), "later\n").unwrap();
    let before = names(&exp);
    let o = pathpool(&["run", sc, "--out", out, "-q", "--seed", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(names(&exp), before);
    assert_eq!(fs::read_to_string(exp.join("notes.md")).unwrap(), "later\n");
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(exp.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["seed"], 2, "the new result replaced the old");
}

#[test]
fn provenance_lists_the_files_pathpool_wrote() {
    let s = tmp("listed");
    let sc = s.0.join("sc.toml");
    fs::write(&sc, SCENARIO).unwrap();
    let out = s.0.join("out");
    let o = pathpool(&[
        "run",
        sc.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let prov: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("provenance.json")).unwrap()).unwrap();
    let mut listed: Vec<String> = prov["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, names(&out));
}

#[test]
fn an_output_path_that_is_a_file_is_refused() {
    let s = tmp("file");
    let sc = s.0.join("sc.toml");
    fs::write(&sc, SCENARIO).unwrap();
    let o = pathpool(&[
        "run",
        sc.to_str().unwrap(),
        "--out",
        sc.to_str().unwrap(),
        "-q",
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a directory"), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&sc).unwrap(), SCENARIO);
}
