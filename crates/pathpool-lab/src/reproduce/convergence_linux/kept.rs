//! `convergence-linux`'s kernel runs one by one: each bed as a `pathpool-linux e8` process
//! that a stop ends cleanly, and each finished run kept on disk so that the full run resumes
//! (D349).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::ProgressBar;
use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use super::{KernelRun, PROGRAM};

/// The folder of the experiment's output directory where each kernel run is kept as it
/// finishes, so that a stopped (or failed) full run resumes where it was (D349).
pub(super) const KEPT_DIR: &str = "kernel-runs";

/// One finished kernel run as kept on disk: the configuration it ran with and what
/// `pathpool-linux e8` printed.
#[derive(Serialize, Deserialize)]
struct KeptRun {
    config: serde_json::Value,
    report: serde_json::Value,
}

/// Where the run `repetition` (from 0) of `algorithm`'s simulator id `cc` in setting
/// `setting` is kept.
pub(super) fn kept_path(out: &Path, setting: &str, cc: &str, repetition: u32) -> PathBuf {
    out.join(KEPT_DIR)
        .join(format!("{setting}-{cc}-{}.json", repetition + 1))
}

/// The run kept at `path`, if one is there and ran with `config` (a file of another run
/// length, or with the server's delayed ACKs in another state, is run again and replaced).
pub(super) fn kept_run(path: &Path, config: &serde_json::Value) -> Option<KernelRun> {
    let kept: KeptRun = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
    if kept.config != *config {
        return None;
    }
    serde_json::from_value(kept.report).ok()
}

/// Keeps a finished run at `path` (written to a temporary name and renamed, so that a
/// stop while writing never leaves half a file).
pub(super) fn keep_run(
    path: &Path,
    config: &serde_json::Value,
    report: &[u8],
) -> Result<(), String> {
    let report: serde_json::Value =
        serde_json::from_slice(report).map_err(|e| format!("{PROGRAM} e8's report: {e}"))?;
    let text = serde_json::to_vec(&KeptRun {
        config: config.clone(),
        report,
    })
    .map_err(|e| e.to_string())?;
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let partial = path.with_extension("json.partial");
    fs::write(&partial, text)
        .and_then(|()| fs::rename(&partial, path))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs `pathpool-linux e8` with `config`; `Ok(None)` when `is_stopped` said to stop
/// first (the run is sent SIGTERM, on which it deletes its bed, and is waited for).
pub(super) fn run_bed(
    program: &Path,
    tag: &str,
    config: &serde_json::Value,
    is_stopped: &dyn Fn() -> bool,
) -> Result<Option<Vec<u8>>, String> {
    let child = Command::new(program)
        .args(["e8", "--tag", tag, "--config"])
        .arg(config.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running {}: {e}", program.display()))?;
    let pid = Pid::from_raw(i32::try_from(child.id()).map_err(|e| e.to_string())?);
    let finished = AtomicBool::new(false);
    let mut signalled = false;
    let output = std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let output = child.wait_with_output();
            finished.store(true, Ordering::Relaxed);
            output
        });
        while !finished.load(Ordering::Relaxed) {
            if !signalled && is_stopped() {
                // The child may have ended a moment ago: a failed signal changes nothing.
                let _ = signal::kill(pid, Signal::SIGTERM);
                signalled = true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        waiter.join().expect("waiting for the bed does not panic")
    })
    .map_err(|e| format!("running {}: {e}", program.display()))?;
    if signalled || is_stopped() {
        return Ok(None);
    }
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
    }
    Ok(Some(output.stdout))
}

/// Prints `line` above the progress bar, or on standard error when there is no bar to draw
/// (a log file: the per-run lines and stall warnings must reach it too).
pub(super) fn above(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::convergence::settings;
    use crate::reproduce::convergence_linux::config;

    /// A stand-in for `pathpool-linux` in `dir`: a shell script with `body`.
    fn fake_program(dir: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("fake-pathpool-linux");
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_kept_run_is_reused_only_with_the_same_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(false);
        let cfg = config(s[0], "NMCC", 1800, false);
        let path = kept_path(dir.path(), s[0].name, "nmcc", 0);
        assert!(kept_run(&path, &cfg).is_none(), "nothing kept yet");
        let report = br#"{"mp_bytes":[3,4],"sp_bytes":[1,4],"subflows":8,"stalls":[],
            "data":[{"delivered":1,"queue_drops":2,"lost":3,"late_over_1ms":4,
            "late_max_ns":5,"late_max_at_ms":6,"realtime":true},{"delivered":1,
            "queue_drops":2,"lost":3,"late_over_1ms":4,"late_max_ns":5,
            "late_max_at_ms":6,"realtime":false}]}"#;
        keep_run(&path, &cfg, report).unwrap();
        assert!(path.ends_with("kernel-runs/default-nmcc-1.json"));
        let run = kept_run(&path, &cfg).expect("kept with this configuration");
        assert_eq!(run.mp_bytes, [3, 4]);
        assert!(!run.data[1].realtime);
        // Another run length or the server's delayed ACKs off: run again.
        assert!(kept_run(&path, &config(s[0], "NMCC", 240, false)).is_none());
        assert!(kept_run(&path, &config(s[0], "NMCC", 1800, true)).is_none());
        // Nothing half-written is left beside it, and a damaged file is run again.
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["default-nmcc-1.json"]);
        fs::write(&path, b"{\"config\":").unwrap();
        assert!(kept_run(&path, &cfg).is_none());
        // A report that is not JSON is not kept.
        let err = keep_run(&path, &cfg, b"not json").unwrap_err();
        assert!(err.contains("e8's report"), "{err}");
    }

    #[test]
    fn a_bed_reports_its_output_its_failure_or_stops_on_request() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = serde_json::json!({"seconds": 1});
        let never = || false;
        let ok = fake_program(
            dir.path(),
            r#"[ "$1 $2 $4" = "e8 --tag --config" ] && echo '{"a":1}'"#,
        );
        let out = run_bed(&ok, "t", &cfg, &never).unwrap().unwrap();
        assert_eq!(String::from_utf8(out).unwrap().trim(), r#"{"a":1}"#);
        let failing = fake_program(dir.path(), "echo 'no MPTCP here' >&2; exit 3");
        let err = run_bed(&failing, "t", &cfg, &never).unwrap_err();
        assert_eq!(err, "no MPTCP here");
        // Stopped: the bed gets SIGTERM (and, as `e8` does, cleans up before it ends).
        let marker = dir.path().join("terminated");
        let slow = fake_program(
            dir.path(),
            &format!(
                "trap 'touch {}; kill $!; exit 1' TERM\nsleep 60 & wait",
                marker.display()
            ),
        );
        let asked = std::sync::atomic::AtomicU32::new(0);
        let stop_soon = || asked.fetch_add(1, Ordering::Relaxed) >= 3;
        assert!(run_bed(&slow, "t", &cfg, &stop_soon).unwrap().is_none());
        assert!(marker.exists(), "the bed was not sent SIGTERM");
    }
}
