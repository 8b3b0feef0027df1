//! `pathpool testbed up / get / down`: a whole overlay as local processes, for demos and
//! tests (issue 5). `up` starts the rendezvous, a forwarding node for every other transit node
//! and the publishers asked for, each a `pathpool` process in its own process group with its
//! log in the testbed directory, and returns once every node serves and the rendezvous knows
//! every published name (or fails naming the node and its log); `down` stops them and names
//! the nodes that had died.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::overlay::{get_command, DownloadOptions, GetArgs, NodeArgs};
use crate::CliError;

mod keys;
mod netns;
mod nodes;
mod probe;

/// `pathpool testbed`.
#[derive(Args, Debug, Clone)]
pub struct TestbedArgs {
    #[command(subcommand)]
    command: TestbedCommand,
}

#[derive(Subcommand, Debug, Clone)]
enum TestbedCommand {
    /// Start every node of an overlay file (whose nodes all have addresses) as local
    /// processes, and wait until each serves.
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
        /// Fail if a node is not serving (or the rendezvous does not know every published
        /// name) this long after the start.
        #[arg(long, default_value = "10s", value_name = "DURATION")]
        start_timeout: pathpool_core::Dur,
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
        /// The testbed directory.
        #[arg(long, default_value = "testbed")]
        dir: PathBuf,
        /// How to download (as `pathpool get`).
        #[command(flatten)]
        download: DownloadOptions,
    },
    /// Stop every process the testbed started.
    Down {
        /// The testbed directory.
        #[arg(long, default_value = "testbed")]
        dir: PathBuf,
    },
    /// Internal: `up --netns` runs the rendezvous check inside a namespace with this.
    #[command(hide = true)]
    Probe {
        /// The testbed directory.
        #[arg(long)]
        dir: PathBuf,
        /// NAME=NODE,NODE,...: a published name and its publishers (repeatable).
        #[arg(long = "name")]
        names: Vec<String>,
        /// How long to try.
        #[arg(long, default_value = "10s")]
        timeout: pathpool_core::Dur,
    },
}

const OVERLAY: &str = "overlay.toml";

fn failed(what: &str, e: impl std::fmt::Display) -> CliError {
    CliError::Failed(format!("{what}: {e}"))
}

/// `--publish NODE=FILE=NAME` arguments, checked against the overlay.
fn publishers(
    overlay: &pathpool_net::overlay::Overlay,
    publish: &[String],
) -> Result<Vec<(String, PathBuf, String)>, CliError> {
    let mut out = Vec::new();
    for p in publish {
        let parts: Vec<&str> = p.splitn(3, '=').collect();
        let [node, file, name] = parts[..] else {
            return Err(CliError::BadInput(format!(
                "--publish {p}: expected NODE=FILE=NAME"
            )));
        };
        if overlay.node(node).is_none() {
            let ids: Vec<&str> = overlay.nodes().iter().map(|n| n.id.as_str()).collect();
            return Err(CliError::BadInput(format!(
                "--publish {p}: {node} is not a node of the overlay; nodes are {}",
                ids.join(", ")
            )));
        }
        pathpool_psi::ContentName::new(name)
            .map_err(|e| CliError::BadInput(format!("--publish {p}: {name}: {e}")))?;
        let file = fs::canonicalize(file)
            .map_err(|e| CliError::BadInput(format!("--publish {p}: {file}: {e}")))?;
        out.push((node.to_string(), file, name.to_string()));
    }
    Ok(out)
}

/// Every published name with its publishers, as the probe takes them.
fn published_names(publishers: &[(String, PathBuf, String)]) -> Vec<(String, Vec<String>)> {
    let mut names: Vec<(String, Vec<String>)> = Vec::new();
    for (node, _, name) in publishers {
        match names.iter_mut().find(|(n, _)| n == name) {
            Some((_, nodes)) => nodes.push(node.clone()),
            None => names.push((name.clone(), vec![node.clone()])),
        }
    }
    names
}

fn up(
    overlay_path: &Path,
    publish: &[String],
    dir: &Path,
    netns: bool,
    start_timeout: Duration,
) -> Result<(), CliError> {
    let text = fs::read_to_string(overlay_path)
        .map_err(|e| CliError::BadInput(format!("{}: {e}", overlay_path.display())))?;
    let overlay =
        pathpool_net::overlay::Overlay::from_toml(&text, &overlay_path.display().to_string())
            .map_err(|e| CliError::BadInput(e.to_string()))?;
    if netns {
        netns::Namespaces::check(&overlay, overlay_path)?;
    } else if let Some(n) = overlay.nodes().iter().find(|n| n.addr.is_none()) {
        return Err(CliError::BadInput(format!(
            "{}: node {} has no addr; a testbed needs every node's address (or --netns, which \
             gives each node one)",
            overlay_path.display(),
            n.id
        )));
    }
    let publishers = publishers(&overlay, publish)?;
    if dir.join(nodes::PIDS).exists() {
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
    let text = if overlay.security_mode() == pathpool_net::overlay::SecurityMode::On {
        let mut signers: Vec<String> = publishers.iter().map(|(n, _, _)| n.clone()).collect();
        signers.sort();
        signers.dedup();
        keys::with_publisher_keys(&text, dir, &signers)?
    } else {
        text
    };
    let copy = dir.join(OVERLAY);
    fs::write(&copy, &text).map_err(|e| failed(&copy.display().to_string(), e))?;
    copy_keys(overlay_path, &overlay, &copy)?;
    // The keys the copy needs and lacks, made as `pathpool keygen` makes them (issue 18).
    crate::keygen::keygen_overlay(&copy)?;
    let overlay = pathpool_net::overlay::Overlay::load(&copy)
        .map_err(|e| CliError::BadInput(e.to_string()))?;
    let copy = copy.display().to_string();
    let rv = overlay.nodes()[overlay.rendezvous().0 as usize].id.clone();
    let mut started: Vec<nodes::Started> = Vec::new();
    let result = (|| {
        let mut start = |id: &str, role: &'static str, args: Vec<String>| {
            let ns = namespaces.as_ref().map(|n| n.node(id));
            started.push(nodes::spawn(dir, id, role, &args, ns.as_deref())?);
            Ok::<(), CliError>(())
        };
        start(&rv, "rv", vec![copy.clone()])?;
        for n in overlay.nodes() {
            if n.transit && n.id != rv {
                let args = vec![
                    "--overlay".into(),
                    copy.clone(),
                    "--node".into(),
                    n.id.clone(),
                ];
                start(&n.id, "fn", args)?;
            }
        }
        for (node, file, name) in &publishers {
            let args = vec![
                file.display().to_string(),
                "--name".into(),
                name.clone(),
                "--overlay".into(),
                copy.clone(),
                "--node".into(),
                node.clone(),
            ];
            start(node, "publish", args)?;
        }
        // Recorded before the wait, so that `down` finds the nodes whatever happens next.
        nodes::write_pids(dir, &started)?;
        nodes::wait_ready(&mut started, start_timeout)?;
        check_rendezvous(
            dir,
            &overlay,
            &rv,
            &publishers,
            namespaces.as_ref(),
            start_timeout,
        )
    })();
    if let Err(e) = result {
        nodes::stop_started(&mut started);
        let _ = fs::remove_file(dir.join(nodes::PIDS));
        let _ = netns::delete_all(dir);
        let msg = match e {
            CliError::BadInput(m) | CliError::Failed(m) | CliError::Interrupted(m) => m,
        };
        return Err(CliError::Failed(format!(
            "testbed up in {}: {msg}; every node was stopped",
            dir.display()
        )));
    }
    eprintln!(
        "testbed up in {}: {} processes serving ({}){}; `pathpool testbed down --dir {}` stops \
         them",
        dir.display(),
        started.len(),
        started
            .iter()
            .map(|n| n.id.as_str())
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

/// Copies the keys beside the overlay file `original` (its overlay key and endpoints' signing
/// keys, when they exist) beside the testbed's `copy`, keeping their mode, and points the
/// copy's `overlay_key` at the copied file.
fn copy_keys(
    original: &Path,
    overlay: &pathpool_net::overlay::Overlay,
    copy: &Path,
) -> Result<(), CliError> {
    use pathpool_net::keys;
    let key = keys::overlay_dir(original).join(&overlay.security().overlay_key_file);
    let to = keys::overlay_dir(copy).join(keys::OVERLAY_KEY_FILE);
    let mut copied = Vec::new();
    if key.exists() {
        copied.push((key, to));
        let text = fs::read_to_string(copy).map_err(|e| failed(&copy.display().to_string(), e))?;
        let mut doc: toml_edit::DocumentMut = text
            .parse()
            .map_err(|e| CliError::BadInput(format!("{}: {e}", copy.display())))?;
        doc["overlay_key"] = toml_edit::value(keys::OVERLAY_KEY_FILE);
        fs::write(copy, doc.to_string()).map_err(|e| failed(&copy.display().to_string(), e))?;
    }
    for n in overlay.nodes().iter().filter(|n| !n.transit) {
        let from = keys::node_key_path(original, &n.id);
        if from.exists() {
            copied.push((from, keys::node_key_path(copy, &n.id)));
        }
    }
    for (from, to) in copied {
        if fs::canonicalize(&from).ok() == fs::canonicalize(&to).ok() {
            continue;
        }
        let _ = fs::remove_file(&to);
        // `fs::copy` keeps the permission bits: a 0600 key stays 0600.
        fs::copy(&from, &to).map_err(|e| failed(&from.display().to_string(), e))?;
    }
    Ok(())
}

/// Whether the rendezvous answers and knows every published name: the probe in this
/// process, or, in a `--netns` testbed, in the rendezvous's namespace.
fn check_rendezvous(
    dir: &Path,
    overlay: &pathpool_net::overlay::Overlay,
    rv: &str,
    publishers: &[(String, PathBuf, String)],
    namespaces: Option<&netns::Namespaces>,
    timeout: Duration,
) -> Result<(), CliError> {
    let names = published_names(publishers);
    let names = if names.is_empty() {
        // Still ask: an unknown name's answer shows the rendezvous serves.
        vec![("/pathpool/testbed-probe".to_string(), Vec::new())]
    } else {
        names
    };
    match namespaces {
        Some(ns) => {
            let mut command = crate::self_command()?;
            command.extend([
                "testbed".into(),
                "probe".into(),
                "--dir".into(),
                dir.display().to_string(),
                "--timeout".into(),
                pathpool_core::Dur::from_ns(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX))
                    .to_string(),
            ]);
            for (name, nodes) in &names {
                command.extend(["--name".into(), format!("{name}={}", nodes.join(","))]);
            }
            let out = Command::new("ip")
                .args(["netns", "exec", &ns.node(rv)])
                .args(&command)
                .output()
                .map_err(|e| failed("ip netns exec", e))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(CliError::Failed(
                    String::from_utf8_lossy(&out.stderr)
                        .trim()
                        .trim_start_matches("error: ")
                        .to_string(),
                ))
            }
        }
        None => probe_names(dir, overlay, rv, &names, timeout),
    }
}

/// Runs the probe and words its failure with the nodes and logs to look at.
fn probe_names(
    dir: &Path,
    overlay: &pathpool_net::overlay::Overlay,
    rv: &str,
    names: &[(String, Vec<String>)],
    timeout: Duration,
) -> Result<(), CliError> {
    let published: Vec<(String, Vec<String>)> = names
        .iter()
        .filter(|(_, nodes)| !nodes.is_empty())
        .cloned()
        .collect();
    match probe::probe(overlay, names, timeout) {
        Ok(()) => Ok(()),
        // Only the placeholder name was asked and the rendezvous answered: it serves.
        Err(probe::ProbeError::Unknown(_)) if published.is_empty() => Ok(()),
        Err(probe::ProbeError::Silent) => Err(CliError::Failed(format!(
            "the rendezvous {rv} does not answer a subscription; its log {} ends: {}",
            nodes::log_path(dir, rv).display(),
            nodes::log_tail(&nodes::log_path(dir, rv), 3)
        ))),
        Err(probe::ProbeError::Unknown(unknown)) => {
            let logs: Vec<String> = published
                .iter()
                .filter(|(n, _)| unknown.contains(n))
                .flat_map(|(_, nodes)| nodes)
                .map(|n| nodes::log_path(dir, n).display().to_string())
                .collect();
            Err(CliError::Failed(format!(
                "the rendezvous {rv} answers but does not know {}: their publishers did not \
                 reach it; see {}",
                unknown.join(", "),
                logs.join(", ")
            )))
        }
        Err(probe::ProbeError::Refused(m)) => Err(CliError::Failed(format!(
            "the rendezvous {rv} refused the check's subscription: {m}"
        ))),
        Err(probe::ProbeError::Io(m)) => Err(CliError::Failed(m)),
    }
}

fn probe_command(dir: &Path, names: &[String], timeout: Duration) -> Result<(), CliError> {
    let path = dir.join(OVERLAY);
    let overlay = pathpool_net::overlay::Overlay::load(&path)
        .map_err(|e| CliError::BadInput(e.to_string()))?;
    let names: Vec<(String, Vec<String>)> = names
        .iter()
        .map(|n| {
            let (name, nodes) = n.split_once('=').unwrap_or((n, ""));
            let nodes = nodes
                .split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            (name.to_string(), nodes)
        })
        .collect();
    let rv = overlay.nodes()[overlay.rendezvous().0 as usize].id.clone();
    probe_names(dir, &overlay, &rv, &names, timeout)
}

fn down(dir: &Path) -> Result<(), CliError> {
    let recorded = nodes::read_pids(dir)?;
    let mut stopped = Vec::new();
    let mut dead = Vec::new();
    for node in &recorded {
        if node.is_running() && node.terminate() {
            stopped.push(node);
        } else {
            dead.push(node);
        }
    }
    let _ = fs::remove_file(dir.join(nodes::PIDS));
    // A namespace is only gone once its processes are: give them their next wake-up
    // (at most 50 ms away) to stop.
    for _ in 0..40 {
        if !stopped.iter().any(|n| n.is_running()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for node in &recorded {
        nodes::forget_ready(dir, &node.id);
    }
    let namespaces = netns::delete_all(dir)?;
    eprintln!(
        "testbed down: {} of {} processes stopped{}; logs in {}",
        stopped.len(),
        recorded.len(),
        if namespaces > 0 {
            format!(", {namespaces} network namespaces deleted")
        } else {
            String::new()
        },
        dir.display()
    );
    for node in &dead {
        let log = nodes::log_path(dir, &node.id);
        eprintln!(
            "warning: node {} had already exited; its log {} ends: {}",
            node.label(),
            log.display(),
            nodes::log_tail(&log, 3)
        );
    }
    Ok(())
}

/// `testbed get` in a `--netns` testbed: the same command, run inside the node's namespace.
fn get_in_namespace(ns: &str, args: &[std::ffi::OsString]) -> Result<(), CliError> {
    let program = crate::self_command()?;
    let status = Command::new("ip")
        .args(["netns", "exec", ns])
        .args(&program)
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

fn std_duration(d: pathpool_core::Dur) -> Duration {
    Duration::from_nanos(d.as_ps() / 1000)
}

/// `pathpool testbed`.
///
/// # Errors
/// Bad arguments or overlay (exit 2); a node that does not start, or a failed download
/// (exit 1).
pub fn testbed_command(a: &TestbedArgs) -> Result<(), CliError> {
    match &a.command {
        TestbedCommand::Up {
            overlay,
            publish,
            dir,
            netns,
            start_timeout,
        } => up(overlay, publish, dir, *netns, std_duration(*start_timeout)),
        TestbedCommand::Down { dir } => down(dir),
        TestbedCommand::Probe {
            dir,
            names,
            timeout,
        } => probe_command(dir, names, std_duration(*timeout)),
        TestbedCommand::Get {
            name,
            out,
            node,
            dir,
            download,
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
                ];
                args.extend(download.to_args());
                return get_in_namespace(&ns, &args);
            }
            get_command(&GetArgs {
                name: name.clone(),
                out: out.clone(),
                download: download.clone(),
                publisher_key: Vec::new(),
                root: None,
                metadata_wait: pathpool_net::get_metadata::DEFAULT_METADATA_WAIT,
                node: NodeArgs {
                    overlay: dir.join(OVERLAY),
                    node: node.clone(),
                    seed: 1,
                    ready_file: None,
                },
            })
        }
    }
}
