//! `pathpool testbed up / get / down`: a whole overlay as local processes, for demos and
//! tests (issue 5). `up` starts the rendezvous, a forwarding node for every other transit node
//! and the publishers asked for, each a `pathpool` process in its own process group with its
//! log in the testbed directory; `down` stops them.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::{Args, Subcommand};

use crate::overlay::{get_command, GetArgs, NodeArgs};
use crate::CliError;

/// `pathpool testbed`.
#[derive(Args, Debug, Clone)]
pub struct TestbedArgs {
    #[command(subcommand)]
    command: TestbedCommand,
}

#[derive(Subcommand, Debug, Clone)]
enum TestbedCommand {
    /// Start every node of an overlay file (whose nodes all have addresses) as local
    /// processes.
    Up {
        /// The overlay file.
        overlay: PathBuf,
        /// Publish a file from a node: NODE=FILE=NAME (repeatable).
        #[arg(long = "publish", value_name = "NODE=FILE=NAME")]
        publish: Vec<String>,
        /// The testbed directory: a copy of the overlay file, the nodes' logs and pids.
        #[arg(long, default_value = "testbed")]
        dir: PathBuf,
    },
    /// Download from the testbed: `pathpool get` with the testbed's overlay file.
    Get {
        /// The content's name.
        name: String,
        /// Where to write it.
        #[arg(short, long)]
        out: PathBuf,
        /// The subscriber's node.
        #[arg(long)]
        node: String,
        /// Congestion controller.
        #[arg(long, default_value = "nmcc")]
        cc: String,
        /// Presume a request lost after this many later replies (D86).
        #[arg(long)]
        gap_threshold: Option<u32>,
        /// Write the download's progress to this CSV file (as `pathpool get --progress-log`).
        #[arg(long, value_name = "FILE")]
        progress_log: Option<PathBuf>,
        /// The testbed directory.
        #[arg(long, default_value = "testbed")]
        dir: PathBuf,
    },
    /// Stop every process the testbed started.
    Down {
        /// The testbed directory.
        #[arg(long, default_value = "testbed")]
        dir: PathBuf,
    },
}

const PIDS: &str = "pids";
const OVERLAY: &str = "overlay.toml";

fn failed(what: &str, e: impl std::fmt::Display) -> CliError {
    CliError::Failed(format!("{what}: {e}"))
}

/// Starts `pathpool ARGS` in its own process group, its output in `log`; returns its pid.
fn spawn(args: &[String], log: &Path) -> Result<u32, CliError> {
    let exe = std::env::current_exe().map_err(|e| failed("finding the pathpool binary", e))?;
    let out = fs::File::create(log).map_err(|e| failed(&log.display().to_string(), e))?;
    let err = out
        .try_clone()
        .map_err(|e| failed(&log.display().to_string(), e))?;
    let child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| failed("starting a node", e))?;
    Ok(child.id())
}

fn up(overlay_path: &Path, publish: &[String], dir: &Path) -> Result<(), CliError> {
    let text = fs::read_to_string(overlay_path)
        .map_err(|e| CliError::BadInput(format!("{}: {e}", overlay_path.display())))?;
    let overlay =
        pathpool_net::overlay::Overlay::from_toml(&text, &overlay_path.display().to_string())
            .map_err(|e| CliError::BadInput(e.to_string()))?;
    if let Some(n) = overlay.nodes().iter().find(|n| n.addr.is_none()) {
        return Err(CliError::BadInput(format!(
            "{}: node {:?} has no addr; a testbed needs every node's address",
            overlay_path.display(),
            n.id
        )));
    }
    let mut publishers = Vec::new();
    for p in publish {
        let parts: Vec<&str> = p.splitn(3, '=').collect();
        let [node, file, name] = parts[..] else {
            return Err(CliError::BadInput(format!(
                "--publish {p}: expected NODE=FILE=NAME"
            )));
        };
        if overlay.node(node).is_none() {
            return Err(CliError::BadInput(format!(
                "--publish {p}: {node:?} is not a node of the overlay"
            )));
        }
        let file = fs::canonicalize(file)
            .map_err(|e| CliError::BadInput(format!("--publish {p}: {file}: {e}")))?;
        publishers.push((node.to_string(), file, name.to_string()));
    }
    if dir.join(PIDS).exists() {
        return Err(CliError::BadInput(format!(
            "{} holds a running testbed; `pathpool testbed down --dir {}` first",
            dir.display(),
            dir.display()
        )));
    }
    fs::create_dir_all(dir).map_err(|e| failed(&dir.display().to_string(), e))?;
    let copy = dir.join(OVERLAY);
    fs::write(&copy, &text).map_err(|e| failed(&copy.display().to_string(), e))?;
    let copy = copy.display().to_string();
    let rv = &overlay.nodes()[overlay.rendezvous().0 as usize].id;
    let mut started: Vec<(String, u32)> = Vec::new();
    let mut start = |id: &str, args: Vec<String>| -> Result<(), CliError> {
        let pid = spawn(&args, &dir.join(format!("{id}.log")))?;
        started.push((id.to_string(), pid));
        Ok(())
    };
    start(rv, vec!["rv".into(), copy.clone()])?;
    for n in overlay.nodes() {
        if n.transit && &n.id != rv {
            start(
                &n.id,
                vec![
                    "fn".into(),
                    "--overlay".into(),
                    copy.clone(),
                    "--node".into(),
                    n.id.clone(),
                ],
            )?;
        }
    }
    for (node, file, name) in &publishers {
        start(
            node,
            vec![
                "publish".into(),
                file.display().to_string(),
                "--name".into(),
                name.clone(),
                "--overlay".into(),
                copy.clone(),
                "--node".into(),
                node.clone(),
            ],
        )?;
    }
    let pids: String = started
        .iter()
        .map(|(id, pid)| format!("{pid} {id}\n"))
        .collect();
    fs::write(dir.join(PIDS), pids).map_err(|e| failed("writing the pids", e))?;
    eprintln!(
        "testbed up in {}: {} processes ({}); `pathpool testbed down --dir {}` stops them",
        dir.display(),
        started.len(),
        started
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        dir.display()
    );
    Ok(())
}

fn down(dir: &Path) -> Result<(), CliError> {
    let path = dir.join(PIDS);
    let text = fs::read_to_string(&path).map_err(|e| {
        CliError::BadInput(format!("{}: {e} (no testbed is up there)", path.display()))
    })?;
    let mut stopped = 0;
    for line in text.lines() {
        let Some(pid) = line.split_whitespace().next() else {
            continue;
        };
        // SIGTERM: each node stops at its next wake-up and prints its counters to its log.
        let ok = Command::new("kill")
            .args(["-TERM", pid])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            stopped += 1;
        }
    }
    fs::remove_file(&path).map_err(|e| failed(&path.display().to_string(), e))?;
    eprintln!(
        "testbed down: {stopped} processes stopped; logs in {}",
        dir.display()
    );
    Ok(())
}

/// `pathpool testbed`.
///
/// # Errors
/// Bad arguments or overlay (exit 2); a process that cannot start, or a failed download
/// (exit 1).
pub fn testbed_command(a: &TestbedArgs) -> Result<(), CliError> {
    match &a.command {
        TestbedCommand::Up {
            overlay,
            publish,
            dir,
        } => up(overlay, publish, dir),
        TestbedCommand::Down { dir } => down(dir),
        TestbedCommand::Get {
            name,
            out,
            node,
            cc,
            gap_threshold,
            progress_log,
            dir,
        } => get_command(&GetArgs {
            name: name.clone(),
            out: out.clone(),
            cc: cc.clone(),
            max_sources: 8,
            paths: None,
            gap_threshold: *gap_threshold,
            stall_timeout: pathpool_core::Dur::from_secs(10),
            quiet: false,
            progress_log: progress_log.clone(),
            node: NodeArgs {
                overlay: dir.join(OVERLAY),
                node: node.clone(),
                seed: 1,
            },
        }),
    }
}
