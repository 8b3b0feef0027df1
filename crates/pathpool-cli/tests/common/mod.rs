//! What the CLI's bad-input tests share: run each scenario with `pathpool run` and check that
//! it is refused as users are promised (exit status 2 before running, nothing written, one
//! message naming the file, the line and the field).

#![allow(dead_code, unreachable_pub)]

use std::fs;
use std::process::Command;

/// Writes each `(scenario, expected message part)` of `cases` to a file in a scratch
/// directory named after `suite` and checks that `pathpool run FILE -o OUT -q` exits with
/// status 2, prints one line that contains the expected part and names the file
/// (`FILE:LINE:COLUMN: field: ...`), and creates no `OUT`.
pub fn each_is_refused(suite: &str, cases: &[(String, &str)]) {
    let dir = std::env::temp_dir().join(format!("pathpool-{suite}-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    for (i, (text, want)) in cases.iter().enumerate() {
        let file = dir.join(format!("bad{i}.toml"));
        fs::write(&file, text).unwrap();
        let out = dir.join(format!("out{i}"));
        let o = Command::new(env!("CARGO_BIN_EXE_pathpool"))
            .args([
                "run",
                file.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "-q",
            ])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{want}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(
            lines[0].contains(want),
            "{} does not contain {want}",
            lines[0]
        );
        let named = format!("{}:", file.display());
        assert!(lines[0].contains(&named), "{} names no file", lines[0]);
        assert!(!out.exists(), "{want}: {} was written", out.display());
    }
    fs::remove_dir_all(&dir).unwrap();
}
