//! `pathpool linux ...`: coupled congestion control for the kernel's own MPTCP, run by the
//! `pathpool-linux` program (crates/pathpool-linux), the only one that links libbpf (D330).

use std::ffi::OsString;
use std::process::Command;

use pathpool_lab::reproduce::{linux_program, missing_program};

use crate::CliError;

/// Runs `pathpool-linux ARGS` and returns its exit code.
///
/// # Errors
/// When the program is not installed or cannot be started.
pub fn linux(args: &[OsString]) -> Result<u8, CliError> {
    let Some(path) = linux_program() else {
        return Err(CliError::Failed(format!(
            "`pathpool linux`: {}",
            missing_program()
        )));
    };
    let status = Command::new(&path)
        .args(args)
        .status()
        .map_err(|e| CliError::Failed(format!("running {}: {e}", path.display())))?;
    Ok(crate::python::exit_code(status))
}
