//! The testbed's node processes: starting them, knowing when each serves, telling a node that
//! runs from one that died (or from another process that took its pid), and stopping them.
//!
//! Each node is started as `pathpool <rv|fn|publish> ... --ready-file DIR/NODE.ready` in its
//! own process group; the node writes that file once its socket is bound, just before it
//! serves. `DIR/pids` lists `PID NODE ROLE START` per node, `START` being the process's start
//! time in clock ticks since boot (`/proc/PID/stat` field 22), so a pid the kernel gave to
//! another process since is not taken for the node.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::CliError;

/// The file listing the node processes.
pub(super) const PIDS: &str = "pids";

fn failed(what: &str, e: impl std::fmt::Display) -> CliError {
    CliError::Failed(format!("{what}: {e}"))
}

/// A node process `up` started and still holds.
pub(super) struct Started {
    /// The node's id.
    pub(super) id: String,
    /// `rv`, `fn` or `publish`.
    pub(super) role: &'static str,
    child: Child,
    start_ticks: u64,
    log: PathBuf,
    ready: PathBuf,
}

/// Where node `id`'s log goes.
pub(super) fn log_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.log"))
}

/// Starts `pathpool ROLE ARGS --ready-file DIR/ID.ready` (inside network namespace `netns`
/// if given) in its own process group, its output in `DIR/ID.log`.
///
/// # Errors
/// The program cannot be started.
pub(super) fn spawn(
    dir: &Path,
    id: &str,
    role: &'static str,
    args: &[String],
    netns: Option<&str>,
) -> Result<Started, CliError> {
    let program = crate::self_command()?;
    let log = log_path(dir, id);
    let ready = dir.join(format!("{id}.ready"));
    let _ = fs::remove_file(&ready);
    let out = fs::File::create(&log).map_err(|e| failed(&log.display().to_string(), e))?;
    let err = out
        .try_clone()
        .map_err(|e| failed(&log.display().to_string(), e))?;
    let mut command = match netns {
        // `ip netns exec` enters the namespace and executes the program in its own place, so
        // the pid is the node's.
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).args(&program);
            c
        }
        None => {
            let mut c = Command::new(&program[0]);
            c.args(&program[1..]);
            c
        }
    };
    let child = command
        .arg(role)
        .args(args)
        .arg("--ready-file")
        .arg(&ready)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| failed(&format!("starting node {id} ({})", program[0]), e))?;
    let start_ticks = start_ticks(child.id()).unwrap_or(0);
    Ok(Started {
        id: id.to_string(),
        role,
        child,
        start_ticks,
        log,
        ready,
    })
}

/// The last non-empty lines of a log, for an error message.
pub(super) fn log_tail(log: &Path, lines: usize) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .rev()
        .take(lines)
        .collect();
    if tail.is_empty() {
        "(empty)".into()
    } else {
        tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
    }
}

/// Writes `DIR/pids` for `nodes`.
///
/// # Errors
/// I/O errors.
pub(super) fn write_pids(dir: &Path, nodes: &[Started]) -> Result<(), CliError> {
    let text: String = nodes
        .iter()
        .map(|n| format!("{} {} {} {}\n", n.child.id(), n.id, n.role, n.start_ticks))
        .collect();
    fs::write(dir.join(PIDS), text).map_err(|e| failed("writing the pids", e))
}

/// Waits until every node has written its ready file, for at most `timeout`.
///
/// # Errors
/// The first node that exited (with its status and the end of its log), or the nodes not
/// ready in time.
pub(super) fn wait_ready(nodes: &mut [Started], timeout: Duration) -> Result<(), CliError> {
    let deadline = Instant::now() + timeout;
    loop {
        let mut waiting = Vec::new();
        for n in nodes.iter_mut() {
            if let Ok(Some(status)) = n.child.try_wait() {
                return Err(CliError::Failed(format!(
                    "node {} ({}) exited as it started ({status}); its log {} ends: {}",
                    n.id,
                    n.role,
                    n.log.display(),
                    log_tail(&n.log, 3)
                )));
            }
            if !n.ready.exists() {
                waiting.push(n);
            }
        }
        if waiting.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let names: Vec<String> = waiting
                .iter()
                .map(|n| format!("{} ({}; log {})", n.id, n.role, n.log.display()))
                .collect();
            return Err(CliError::Failed(format!(
                "not serving after {:.0} s: {}",
                timeout.as_secs_f64(),
                names.join(", ")
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops nodes `up` still holds (after a failed start): SIGTERM, then reaped.
pub(super) fn stop_started(nodes: &mut [Started]) {
    for n in nodes.iter() {
        terminate(n.child.id());
    }
    for n in nodes.iter_mut() {
        let deadline = Instant::now() + Duration::from_secs(2);
        while matches!(n.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if matches!(n.child.try_wait(), Ok(None)) {
            let _ = n.child.kill();
            let _ = n.child.wait();
        }
        let _ = fs::remove_file(&n.ready);
    }
}

/// Removes node `id`'s ready file (once it has stopped).
pub(super) fn forget_ready(dir: &Path, id: &str) {
    let _ = fs::remove_file(dir.join(format!("{id}.ready")));
}

fn terminate(pid: u32) -> bool {
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A process's state letter and start time (clock ticks since boot), from `/proc/PID/stat`.
fn stat(pid: u32) -> Option<(char, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields after it follow
    // the last ')'.
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    // Field 22 overall; fields[0] is field 3.
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

fn start_ticks(pid: u32) -> Option<u64> {
    stat(pid).map(|(_, s)| s)
}

/// One line of `DIR/pids`.
pub(super) struct Recorded {
    pid: u32,
    /// The node's id.
    pub(super) id: String,
    role: String,
    /// 0 when unknown (a testbed started by an older version).
    start_ticks: u64,
}

impl Recorded {
    /// Whether the node's process still runs: the pid is alive, not a zombie, and (when
    /// recorded) started when the node did.
    pub(super) fn is_running(&self) -> bool {
        stat(self.pid).is_some_and(|(state, start)| {
            state != 'Z' && (self.start_ticks == 0 || start == self.start_ticks)
        })
    }

    /// Sends SIGTERM; the node stops at its next wake-up and prints its counters to its log.
    pub(super) fn terminate(&self) -> bool {
        terminate(self.pid)
    }

    /// `NODE (ROLE)`.
    pub(super) fn label(&self) -> String {
        if self.role.is_empty() {
            self.id.clone()
        } else {
            format!("{} ({})", self.id, self.role)
        }
    }
}

/// Reads `DIR/pids`.
///
/// # Errors
/// No such file (no testbed is up there), or a line that is not `PID NODE [ROLE START]`.
pub(super) fn read_pids(dir: &Path) -> Result<Vec<Recorded>, CliError> {
    let path = dir.join(PIDS);
    let text = fs::read_to_string(&path).map_err(|e| {
        CliError::BadInput(format!("{}: {e} (no testbed is up there)", path.display()))
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let bad = || {
                CliError::Failed(format!(
                    "{}:{}: expected PID NODE ROLE START, found {l:?}",
                    path.display(),
                    i + 1
                ))
            };
            Ok(Recorded {
                pid: f.first().and_then(|p| p.parse().ok()).ok_or_else(bad)?,
                id: (*f.get(1).ok_or_else(bad)?).to_string(),
                role: f.get(2).map_or(String::new(), |r| (*r).to_string()),
                start_ticks: match f.get(3) {
                    Some(t) => t.parse().map_err(|_| bad())?,
                    None => 0,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_running_and_a_recycled_pid_is_not_taken_for_it() {
        let me = std::process::id();
        let start = start_ticks(me).expect("/proc/self/stat");
        let rec = |start_ticks| Recorded {
            pid: me,
            id: "x".into(),
            role: "fn".into(),
            start_ticks,
        };
        assert!(rec(start).is_running());
        assert!(rec(0).is_running(), "unknown start time: the pid decides");
        assert!(
            !rec(start + 1).is_running(),
            "same pid, another start: not ours"
        );
    }

    #[test]
    fn pid_files_of_this_and_older_versions_are_read() {
        let dir = std::env::temp_dir().join(format!("pathpool-pids-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(PIDS), "12 rv rv 345\n13 f1\n").unwrap();
        let r = read_pids(&dir).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].pid, r[0].label(), r[0].start_ticks),
            (12, "rv (rv)".into(), 345)
        );
        assert_eq!(
            (r[1].pid, r[1].label(), r[1].start_ticks),
            (13, "f1".into(), 0)
        );
        fs::write(dir.join(PIDS), "x rv\n").unwrap();
        assert!(read_pids(&dir).is_err());
        let _ = fs::remove_dir_all(&dir);
    }
}
