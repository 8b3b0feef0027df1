//! Errors of the `pathpool linux` commands: each says what is wrong and what to do.

use std::fmt;

/// Why a command could not do its work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinuxError {
    /// The user asked for something that does not exist or is malformed (exit 2).
    BadInput(String),
    /// The machine cannot run the programs: not root, no BTF, no BPF, no MPTCP (exit 1).
    Unsupported(String),
    /// A step failed on a machine that should support it (exit 1).
    Failed(String),
}

impl LinuxError {
    /// The process exit code for this error.
    #[must_use]
    pub fn exit_code(&self) -> i32 {
        match self {
            LinuxError::BadInput(_) => 2,
            LinuxError::Unsupported(_) | LinuxError::Failed(_) => 1,
        }
    }
}

impl fmt::Display for LinuxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinuxError::BadInput(m) | LinuxError::Unsupported(m) | LinuxError::Failed(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for LinuxError {}
