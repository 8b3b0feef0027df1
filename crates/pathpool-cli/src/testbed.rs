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

mod netns;

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
        /// Run every node in its own network namespace, joined by a bridge, with addresses
        /// 10.77.0.1, 10.77.0.2, ... in file order (the file's ports are kept, else 7000).
        /// Needs root.
        #[arg(long)]
        netns: bool,
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
        /// Where the subflows' backoff stops doubling (as `pathpool get --backoff-limit`).
        #[arg(long, value_name = "DURATION")]
        backoff_limit: Option<pathpool_core::Dur>,
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

/// Starts `pathpool ARGS` in its own process group (inside network namespace `netns`, if
/// given), its output in `log`; returns its pid.
fn spawn(args: &[String], log: &Path, netns: Option<&str>) -> Result<u32, CliError> {
    let exe = std::env::current_exe().map_err(|e| failed("finding the pathpool binary", e))?;
    let out = fs::File::create(log).map_err(|e| failed(&log.display().to_string(), e))?;
    let err = out
        .try_clone()
        .map_err(|e| failed(&log.display().to_string(), e))?;
    let mut command = match netns {
        // `ip netns exec` enters the namespace and executes the program in its own place, so
        // the pid is the node's.
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    let child = command
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| failed("starting a node", e))?;
    Ok(child.id())
}

fn up(overlay_path: &Path, publish: &[String], dir: &Path, netns: bool) -> Result<(), CliError> {
    let text = fs::read_to_string(overlay_path)
        .map_err(|e| CliError::BadInput(format!("{}: {e}", overlay_path.display())))?;
    let overlay =
        pathpool_net::overlay::Overlay::from_toml(&text, &overlay_path.display().to_string())
            .map_err(|e| CliError::BadInput(e.to_string()))?;
    if netns {
        netns::Namespaces::check(&overlay, overlay_path)?;
    } else if let Some(n) = overlay.nodes().iter().find(|n| n.addr.is_none()) {
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
    let namespaces = netns.then(netns::Namespaces::new);
    let text = match &namespaces {
        Some(ns) => {
            let addrs = ns.create(&overlay, dir).inspect_err(|_| {
                // Undo what was made; the error is the creation's.
                let _ = netns::delete_all(dir);
            })?;
            netns::with_addresses(&text, &addrs)?
        }
        None => text,
    };
    let copy = dir.join(OVERLAY);
    fs::write(&copy, &text).map_err(|e| failed(&copy.display().to_string(), e))?;
    let copy = copy.display().to_string();
    let rv = &overlay.nodes()[overlay.rendezvous().0 as usize].id;
    let mut started: Vec<(String, u32)> = Vec::new();
    let mut start = |id: &str, args: Vec<String>| -> Result<(), CliError> {
        let ns = namespaces.as_ref().map(|n| n.node(id));
        let pid = spawn(&args, &dir.join(format!("{id}.log")), ns.as_deref())?;
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
        "testbed up in {}: {} processes ({}){}; `pathpool testbed down --dir {}` stops them",
        dir.display(),
        started.len(),
        started
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        namespaces.map_or_else(String::new, |ns| format!(
            ", each node in its network namespace {}-NODE (the bridge in {}; \
             `ip netns exec {}-NODE COMMAND` runs a command beside a node)",
            ns.hub(),
            ns.hub(),
            ns.hub()
        )),
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
    // A namespace is only gone once its processes are: give them their next wake-up
    // (at most 50 ms away) to stop.
    let pids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for _ in 0..40 {
        let running = pids.iter().any(|p| {
            fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|st| {
                st.rsplit_once(')')
                    .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
            })
        });
        if !running {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let namespaces = netns::delete_all(dir)?;
    eprintln!(
        "testbed down: {stopped} processes stopped{}; logs in {}",
        if namespaces > 0 {
            format!(", {namespaces} network namespaces deleted")
        } else {
            String::new()
        },
        dir.display()
    );
    Ok(())
}

/// `testbed get` in a `--netns` testbed: the same command, run inside the node's namespace.
fn get_in_namespace(ns: &str, args: &[std::ffi::OsString]) -> Result<(), CliError> {
    let exe = std::env::current_exe().map_err(|e| failed("finding the pathpool binary", e))?;
    let status = Command::new("ip")
        .args(["netns", "exec", ns])
        .arg(exe)
        .args(args)
        .status()
        .map_err(|e| failed("ip netns exec", e))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(2) => Err(CliError::BadInput(format!(
            "pathpool get in {ns} failed (above)"
        ))),
        _ => Err(CliError::Failed(format!(
            "pathpool get in {ns} failed (above)"
        ))),
    }
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
            netns,
        } => up(overlay, publish, dir, *netns),
        TestbedCommand::Down { dir } => down(dir),
        TestbedCommand::Get {
            name,
            out,
            node,
            cc,
            gap_threshold,
            backoff_limit,
            progress_log,
            dir,
        } => {
            if let Some(ns) = netns::node_namespace(dir, node)? {
                let mut args: Vec<std::ffi::OsString> = vec![
                    "get".into(),
                    name.into(),
                    "-o".into(),
                    out.into(),
                    "--overlay".into(),
                    dir.join(OVERLAY).into(),
                    "--node".into(),
                    node.into(),
                    "--cc".into(),
                    cc.into(),
                ];
                if let Some(g) = gap_threshold {
                    args.extend(["--gap-threshold".into(), g.to_string().into()]);
                }
                if let Some(b) = backoff_limit {
                    args.extend(["--backoff-limit".into(), b.to_string().into()]);
                }
                if let Some(p) = progress_log {
                    args.extend(["--progress-log".into(), p.into()]);
                }
                return get_in_namespace(&ns, &args);
            }
            get_command(&GetArgs {
                name: name.clone(),
                out: out.clone(),
                cc: cc.clone(),
                max_sources: 8,
                paths: None,
                gap_threshold: *gap_threshold,
                backoff_limit: *backoff_limit,
                stall_timeout: pathpool_core::Dur::from_secs(10),
                quiet: false,
                progress_log: progress_log.clone(),
                node: NodeArgs {
                    overlay: dir.join(OVERLAY),
                    node: node.clone(),
                    seed: 1,
                },
            })
        }
    }
}
