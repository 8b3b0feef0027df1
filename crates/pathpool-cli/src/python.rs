//! The two commands that are Python: `pathpool plot` (matplotlib) and the Dask half of
//! `pathpool sweep --cluster`. The binary runs them in the Python package's interpreter
//! (decision D226): `PATHPOOL_PYTHON`, else the interpreter beside this binary (the
//! virtualenv the wheel installed both into), else `python3` on `PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::Arc;
use std::time::Duration;

use pathpool_lab::sweep::plan::Plan;
use pathpool_lab::sweep::{ClusterRunner, ExecError};

use crate::CliError;

/// The interpreter of the Python package (see the module's documentation).
#[must_use]
pub fn interpreter() -> PathBuf {
    if let Some(p) = std::env::var_os("PATHPOOL_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let beside = std::env::current_exe().ok().and_then(|exe| {
        let dir = exe.parent()?.to_path_buf();
        ["python", "python3"]
            .into_iter()
            .map(|name| dir.join(name))
            .find(|p| p.is_file())
    });
    beside.unwrap_or_else(|| PathBuf::from("python3"))
}

/// Checks that `python` runs and can import every one of `modules`, without importing them
/// (`importlib.util.find_spec`: a fraction of a second, where importing pathpool loads
/// pandas). `why` says what they are needed for; `install` how to get them.
///
/// # Errors
/// The interpreter does not start, or lacks a module (the message names both).
pub fn require(python: &Path, modules: &[&str], why: &str, install: &str) -> Result<(), CliError> {
    let code = format!(
        "import importlib.util, sys\n\
         missing = [m for m in {modules:?} if importlib.util.find_spec(m) is None]\n\
         print(' '.join(missing))\n"
    );
    let out = Command::new(python)
        .args(["-c", &code])
        .output()
        .map_err(|e| {
            CliError::BadInput(format!(
                "{why} needs the pathpool Python package, but its interpreter {} does not \
                 start ({e}); {install}, or set PATHPOOL_PYTHON to the Python that has it",
                python.display()
            ))
        })?;
    let missing = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !missing.is_empty() {
        let what = if missing.is_empty() {
            format!("fails ({})", String::from_utf8_lossy(&out.stderr).trim())
        } else {
            format!("cannot import {missing}")
        };
        return Err(CliError::BadInput(format!(
            "{why} needs the pathpool Python package, but {} {what}; {install}, or set \
             PATHPOOL_PYTHON to the Python that has it",
            python.display()
        )));
    }
    Ok(())
}

/// `pathpool plot ARGS`: runs `python -m pathpool plot ARGS` and returns its exit status.
///
/// # Errors
/// No interpreter with the package.
pub fn plot(args: &[OsString]) -> Result<u8, CliError> {
    let python = interpreter();
    require(
        &python,
        &["pathpool"],
        "`pathpool plot`",
        "install it (pip install pathpool, or `make setup` in a checkout)",
    )?;
    let status = Command::new(&python)
        .args(["-m", "pathpool", "plot"])
        .args(args)
        .status()
        .map_err(|e| CliError::Failed(format!("running {}: {e}", python.display())))?;
    Ok(exit_code(status))
}

/// A child's exit status as this command's (a child killed by a signal: 128 + the signal,
/// as a shell reports it).
pub(crate) fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .and_then(|c| u8::try_from(c).ok())
        .unwrap_or(crate::EXIT_FAILURE)
}

/// Runs a sweep's pending runs on Dask: `python -m pathpool._cluster DIR ADDRESS`, which opens
/// the prepared sweep from its directory, runs the pending runs on the cluster, stores each
/// as it finishes, and exits.
pub struct DaskRunner<'a> {
    /// The interpreter (checked with [`require`]).
    pub python: PathBuf,
    /// Whether the user asked to stop: the child then gets SIGINT (once) and stops as
    /// `pp.sweep` does on Ctrl-C, keeping what finished.
    pub interrupted: &'a dyn Fn() -> bool,
}

impl ClusterRunner for DaskRunner<'_> {
    fn run(
        &self,
        plan: &Arc<Plan>,
        _pending: &[usize],
        address: &str,
        progress: bool,
    ) -> Result<(), ExecError> {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(&self.python);
        cmd.args(["-m", "pathpool._cluster"])
            .arg(&plan.out)
            .arg(address);
        if progress {
            cmd.arg("--progress");
        }
        // Its own process group: a Ctrl-C at the terminal reaches this process only, which
        // passes it on exactly once (a second SIGINT would break Python's clean stop).
        cmd.process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| ExecError::Failed(format!("starting {}: {e}", self.python.display())))?;
        let status = wait_passing_interrupt(&mut child, self.interrupted)
            .map_err(|e| ExecError::Failed(format!("waiting for the Dask runner: {e}")))?;
        match exit_code(status) {
            0 => Ok(()),
            crate::EXIT_INTERRUPTED => Err(ExecError::Interrupted),
            code => Err(ExecError::Failed(format!(
                "the Dask runner ({} -m pathpool._cluster) failed with status {code}: its \
                 message is above; the runs it finished are kept",
                self.python.display()
            ))),
        }
    }
}

/// Waits for `child`, sending it SIGINT once when `interrupted` says so.
fn wait_passing_interrupt(
    child: &mut Child,
    interrupted: &dyn Fn() -> bool,
) -> std::io::Result<ExitStatus> {
    let mut passed = false;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if !passed && interrupted() {
            passed = true;
            let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
            // The child may have just exited: then there is nothing to interrupt.
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
