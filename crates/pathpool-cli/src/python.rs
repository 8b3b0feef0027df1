//! Reaching the Python package from the binary, for what is drawn with matplotlib.

use std::path::PathBuf;

/// The Python interpreter that has the `pathpool` package: `PATHPOOL_PYTHON`, else the
/// interpreter beside this binary (a virtualenv's `bin/`, where the package installs the
/// command), else `python3` on PATH.
#[must_use]
pub(crate) fn interpreter() -> PathBuf {
    if let Some(p) = std::env::var_os("PATHPOOL_PYTHON") {
        return PathBuf::from(p);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            let dir = exe.parent()?.to_path_buf();
            ["python3", "python"]
                .iter()
                .map(|n| dir.join(n))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("python3"))
}
