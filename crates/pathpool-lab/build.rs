//! Embeds the git commit the binary is built from, for provenance records.
use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]) {
        // `--no-optional-locks`: a plain `git status` refreshes and rewrites the index, whose
        // new mtime (this script watches it) then made the next cargo invocation run this
        // script again and recompile the lab and everything above it: in `make test`, the
        // extension's build and the tests' build each recompiled them (D350).
        let dirty = git(&[
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ])
        .is_some_and(|s| !s.is_empty());
        let suffix = if dirty { "-dirty" } else { "" };
        println!("cargo:rustc-env=PATHPOOL_GIT_COMMIT={commit}{suffix}");
    }
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
    }
}
