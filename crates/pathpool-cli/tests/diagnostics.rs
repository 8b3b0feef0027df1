//! Every problem of a scenario at once, each with a suggestion where one reading is likely,
//! `--set` problems against the `--set` argument, overlay files in the same format (issue 16,
//! item 6).

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

fn pathpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pathpool"))
        .args(args)
        .output()
        .expect("runs")
}

/// `text` as the file `name` in a directory of its own (tests run side by side), removed
/// when the returned guard is dropped.
fn scratch(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("pathpool-diag-")
        .tempdir()
        .unwrap();
    let p = dir.path().join(name);
    fs::write(&p, text).unwrap();
    (dir, p)
}

fn stderr_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Three mistakes (a misspelt key, a misspelt unit, a misspelt node): three messages in file
/// order, each naming its line and suggesting what was meant; exit 2.
#[test]
fn check_reports_three_mistakes_with_three_suggestions() {
    let text = r#"name = "three"
duration = "10s"
[nodes]
hosts = ["a", "b"]
routers = ["r1"]
[[links]]
between = ["a", "r1"]
rate = "10mbps"
delay = "5ms"
[[links]]
between = ["r1", "b"]
rate = "10Mbps"
delay = "5ms"
[[flows]]
form = "a"
to = "b"
[[flows]]
from = "a"
to = "r9"
"#;
    let (_sc_dir, sc) = scratch("three.toml", text);
    let o = pathpool(&["check", sc.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let lines = stderr_lines(&o);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    let name = sc.display().to_string();
    assert!(
        lines[0].starts_with(&format!(
            "error: {name}:8:8: links[0].rate: \"10mbps\": unknown unit \"mbps\" (did you mean \"10Mbps\"?)"
        )),
        "{lines:#?}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "error: {name}:15:8: flows[0].form: unknown field (did you mean `from`?)"
        )),
        "{lines:#?}"
    );
    assert!(
        lines[2].starts_with(&format!(
            "error: {name}:19:6: flows[1].to: unknown node \"r9\" (did you mean \"r1\"?)"
        )),
        "{lines:#?}"
    );
    // `run` refuses the same way, before anything runs.
    let o = pathpool(&["run", sc.to_str().unwrap(), "--no-write"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr_lines(&o).len(), 3);
}

const GOOD: &str = r#"duration = "10s"
[nodes]
hosts = ["a", "b"]
[[links]]
id = "bottleneck"
between = ["a", "b"]
rate = "10Mbps"
delay = "5ms"
[[flows]]
id = "f"
from = "a"
to = "b"
"#;

#[test]
fn a_bad_set_value_is_reported_against_the_set_argument() {
    let (_sc_dir, sc) = scratch("good.toml", GOOD);
    let o = pathpool(&[
        "check",
        sc.to_str().unwrap(),
        "--set",
        "links.bottleneck.rate=fast",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let lines = stderr_lines(&o);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].starts_with(
            "error: --set links.bottleneck.rate=fast: links[0].rate: \"fast\": no number found"
        ),
        "{lines:#?}"
    );
    assert!(!lines[0].contains("good.toml"), "not the file's line");
    let o = pathpool(&[
        "check",
        sc.to_str().unwrap(),
        "--set",
        "links.botleneck.rate=1Mbps",
    ]);
    let lines = stderr_lines(&o);
    assert_eq!(
        lines,
        ["error: --set links.botleneck.rate=1Mbps: links: no element \"botleneck\" (did you mean \
          \"bottleneck\"?); use an index 0..0 or an id: bottleneck"]
    );
}

#[test]
fn several_bad_flows_are_all_reported_and_a_good_file_is_still_ok() {
    let text = GOOD.to_string()
        + r#"[[flows]]
from = "a"
to = "zz"
[[flows]]
from = "a"
to = "b"
cc = "lia"
[[flows]]
id = "f"
from = "a"
to = "b"
"#;
    let (_sc_dir, sc) = scratch("flows.toml", &text);
    let o = pathpool(&["check", sc.to_str().unwrap()]);
    let lines = stderr_lines(&o);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(lines[0].contains("flows[1].to: unknown node \"zz\""));
    assert!(lines[1].contains("flows[2].cc: \"lia\" is a multipath controller"));
    assert!(lines[2].contains("flows[3].id: flow id \"f\" is used twice"));
    let (_sc_dir, sc) = scratch("good.toml", GOOD);
    let o = pathpool(&["check", sc.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", stderr_lines(&o));
}

#[test]
fn overlay_files_name_line_and_column_as_scenarios_do() {
    let (_ov_dir, ov) = scratch(
        "ov.toml",
        r#"rendezvous = "rv"
[[nodes]]
id = "rv"
addr = "127.0.0.1:1"
[[nodes]]
id = "f1"
[[links]]
between = ["rv", "f2"]
"#,
    );
    let o = pathpool(&["rv", ov.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let lines = stderr_lines(&o);
    assert_eq!(
        lines,
        [format!(
            "error: {}:8:18: links[0].between[1]: unknown node \"f2\" (did you mean \"f1\"?); \
             nodes are rv, f1",
            ov.display()
        )]
    );
}
