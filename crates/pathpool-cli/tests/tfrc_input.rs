//! Bad TFRC input (issue 20, acceptance 6): `pathpool run` exits with status 2 before
//! running, writes nothing, and prints one message naming the field.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

fn pathpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pathpool"))
        .args(args)
        .output()
        .expect("runs")
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pathpool-tfrc-input-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two hosts through two routers; `flows` and `extra` appended.
fn scenario(flows: &str, extra: &str) -> String {
    format!(
        r#"duration = "10s"
[nodes]
hosts = ["a", "b"]
routers = ["r1", "r2"]
[[links]]
between = ["a", "r1"]
rate = "10Mbps"
delay = "5ms"
[[links]]
between = ["r1", "b"]
rate = "10Mbps"
delay = "5ms"
[[links]]
between = ["a", "r2"]
rate = "10Mbps"
delay = "5ms"
[[links]]
between = ["r2", "b"]
rate = "10Mbps"
delay = "5ms"
[[flows]]
from = "a"
to = "b"
{flows}
{extra}"#
    )
}

#[test]
fn bad_tfrc_fields_stop_the_run_with_one_message_naming_the_field() {
    let tfrc = "kind = \"tfrc\"\npaths = [[\"a\", \"r1\", \"b\"], [\"a\", \"r2\", \"b\"]]";
    let cases = [
        (
            scenario(tfrc, "[tfrc]\nloss_intervals = 7"),
            "tfrc.loss_intervals: 7: must be an even number of at least 2",
        ),
        (
            scenario(&format!("{tfrc}\ntfrc = {{ nack_expiry_rtts = -1.5 }}"), ""),
            "flows[0].tfrc.nack_expiry_rtts: -1.5: must be a number of RTTs, 0 or more",
        ),
        (
            scenario("tfrc = { multipath = \"bilevel\" }", ""),
            "flows[0].tfrc: not allowed in a kind = \"tcp\" flow (TFRC parameters are for TFRC flows)",
        ),
        (
            scenario("packet_size = \"1000B\"", ""),
            "flows[0].packet_size: not allowed in a kind = \"tcp\" flow",
        ),
    ];
    let dir = scratch_dir();
    for (i, (text, want)) in cases.iter().enumerate() {
        let file = dir.join(format!("bad{i}.toml"));
        fs::write(&file, text).unwrap();
        let out = dir.join(format!("out{i}"));
        let o = pathpool(&[
            "run",
            file.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "-q",
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{want}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(
            lines[0].contains(want),
            "{} does not contain {want}",
            lines[0]
        );
        assert!(!out.exists(), "{want}: {} was written", out.display());
    }
    fs::remove_dir_all(&dir).unwrap();
}
