//! `pathpool linux` runs the `pathpool-linux` program beside it or on PATH (D330); without
//! it, it says what to build and exits non-zero.

use std::process::Command;

#[test]
fn without_pathpool_linux_the_command_says_what_to_build() {
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
