//! `pathpool linux ...`: coupled congestion control for the kernel's own MPTCP, run by the
//! `pathpool-linux` program (crates/pathpool-linux), the only one that links libbpf (D330).

use std::env;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use crate::CliError;

const PROGRAM: &str = "pathpool-linux";

/// `pathpool-linux` beside this executable (a checkout's target directory, a wheel's
/// scripts directory), else on PATH.
fn program() -> Option<PathBuf> {
    let beside = env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(PROGRAM)))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        env::var_os("PATH").and_then(|paths| {
            env::split_paths(&paths)
                .map(|d| d.join(PROGRAM))
                .find(|p| p.is_file())
        })
    })
}

/// Runs `pathpool-linux ARGS` and returns its exit code.
///
/// # Errors
/// When the program is not installed or cannot be started.
pub fn linux(args: &[OsString]) -> Result<u8, CliError> {
    let Some(path) = program() else {
        return Err(CliError::Failed(format!(
            "`pathpool linux` needs the {PROGRAM} program beside pathpool or on PATH; build it \
             with `cargo build --release -p pathpool-linux` (it needs clang, libelf-dev and \
             zlib1g-dev; `make setup` installs them)"
        )));
    };
    let status = Command::new(&path)
        .args(args)
        .status()
        .map_err(|e| CliError::Failed(format!("running {}: {e}", path.display())))?;
    Ok(crate::python::exit_code(status))
}
