//! `pathpool linux` runs the `pathpool-linux` program beside it or on PATH (D330); without
//! it, it says what to build and exits non-zero.

use std::process::Command;
use std::sync::{Mutex, MutexGuard};

/// One test at a time: each copies `pathpool` and runs the copy, and a copy still open for
/// writing when the other test forks stays open in that child, so running it fails with
/// "Text file busy" (ETXTBSY).
fn serial() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn without_pathpool_linux_the_command_says_what_to_build() {
    let _one = serial();
    let dir = std::env::temp_dir().join(format!("pp-linux-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let alone = dir.join("pathpool");
    std::fs::copy(env!("CARGO_BIN_EXE_pathpool"), &alone).expect("copy pathpool");
    let out = Command::new(&alone)
        .args(["linux", "status"])
        .env("PATH", &dir)
        .output()
        .expect("run pathpool");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs the pathpool-linux program") && err.contains("-p pathpool-linux"),
        "{err}"
    );
}

/// One run of `convergence-linux`'s quick setting (8 Mb/s and 100 ms per path, one BDP of
/// queue) for `seconds`, as the experiment keeps it (`kernel-runs/`, D349): its bed
/// configuration and a report in which the multipath client carries 40% of every second.
fn kept_quick_run(mp_cc: &str, seconds: usize) -> String {
    let path = r#"{"rate_bps":8000000,"rtt_ms":100.0,"loss":0.0,"queue_bytes":100000,"queue_packets":null}"#;
    let config = format!(
        r#"{{"paths":[{path},{path}],"mp_cc":"{mp_cc}","sp_cc":"reno","server_quickack":false,"seconds":{seconds}}}"#
    );
    let per_second = |bytes: u64| format!("[{}]", vec![bytes.to_string(); seconds].join(","));
    let emulator = r#"{"delivered":1,"queue_drops":0,"lost":0,"late_over_1ms":0,"late_max_ns":0,"late_max_at_ms":0,"realtime":true}"#;
    format!(
        r#"{{"config":{config},"report":{{"mp_bytes":{},"sp_bytes":{},"subflows":8,"stalls":[],"data":[{emulator},{emulator}]}}}}"#,
        per_second(389_000),
        per_second(584_000)
    )
}

#[test]
fn kept_kernel_runs_give_the_e8_report_without_pathpool_linux_or_the_kernel() {
    let _one = serial();
    let dir = std::env::temp_dir().join(format!("pp-linux-kept-{}", std::process::id()));
    let runs = dir.join("out/kernel-runs");
    std::fs::create_dir_all(&runs).expect("a temporary directory");
    let alone = dir.join("pathpool");
    std::fs::copy(env!("CARGO_BIN_EXE_pathpool"), &alone).expect("copy pathpool");
    for (cc, mp_cc) in [
        ("nmcc", "pp_nmcc"),
        ("uncoupled", "reno"),
        ("lia", "pp_lia"),
        ("olia", "pp_olia"),
        ("balia", "pp_balia"),
    ] {
        let file = runs.join(format!("default-{cc}-1.json"));
        std::fs::write(file, kept_quick_run(mp_cc, 60)).expect("write a kept run");
    }
    let reproduce = || {
        Command::new(&alone)
            .args([
                "reproduce",
                "convergence-linux",
                "--quick",
                "--set",
                "duration=60s",
            ])
            .arg("-o")
            .arg(dir.join("out"))
            .env("PATH", &dir)
            .output()
            .expect("run pathpool")
    };
    let all_kept = reproduce();
    // One run missing: only then is the program (and with it root and BPF) needed.
    std::fs::remove_file(runs.join("default-olia-1.json")).expect("remove a kept run");
    let one_missing = reproduce();
    let _ = std::fs::remove_dir_all(&dir);
    let (out, err) = (
        String::from_utf8_lossy(&all_kept.stdout),
        String::from_utf8_lossy(&all_kept.stderr),
    );
    assert!(all_kept.status.success(), "{out}\n{err}");
    assert!(err.contains("every kernel run (5) kept"), "{err}");
    // The kept runs' share (389 of 973 bytes a second) on NMCC's compared row.
    let nmcc_share = out
        .lines()
        .find(|l| l.trim_start().starts_with("NMCC final share, default"))
        .unwrap_or_else(|| panic!("no NMCC share row in\n{out}"));
    assert!(nmcc_share.contains("40.0%"), "{nmcc_share}");
    assert_eq!(one_missing.status.code(), Some(1));
    let err = String::from_utf8_lossy(&one_missing.stderr);
    assert!(err.contains("needs the pathpool-linux program"), "{err}");
}
