//! `pathpool testbed up --netns`: every node of the overlay in its own network namespace,
//! all joined by a bridge in a hub namespace, so each node has its own IP stack (and a
//! researcher can shape a node's interface with `tc`, or start kernel TCP flows beside it).
//!
//! Names: the hub's namespace is `pp<tag>` and a node's `pp<tag>-<node>`, `tag` a short hex
//! id of the testbed; in a node's namespace its interface is `eth0`, with the address
//! `10.77.a.b/16` (`a.b` its index in the file plus one); on the bridge, `n<index>`. The list
//! of namespaces, the hub's first, is kept in the testbed directory for `down`.

use std::fs;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::Command;

use pathpool_net::overlay::Overlay;

use crate::CliError;

/// The file in the testbed directory listing the namespaces `up --netns` created.
pub(super) const NETNS_FILE: &str = "netns";

/// The UDP port of a node whose overlay entry gives none.
const DEFAULT_PORT: u16 = 7000;

/// Runs `ip ARGS` (or another tool) and fails with its message.
fn run(program: &str, args: &[&str]) -> Result<(), CliError> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| CliError::Failed(format!("{program}: {e} (is iproute2 installed?)")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(CliError::Failed(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Whether this process runs as root (network namespaces need it).
fn is_root() -> bool {
    fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            == Some("0")
    })
}

/// A node's address in the testbed: `10.77.a.b`, `a.b` = `index + 1`.
fn node_ip(index: usize) -> Result<Ipv4Addr, CliError> {
    let n = u16::try_from(index + 1)
        .ok()
        .filter(|&n| n < u16::MAX)
        .ok_or_else(|| {
            CliError::BadInput(format!(
                "--netns: at most {} nodes (one /16 subnet)",
                u16::MAX - 1
            ))
        })?;
    let [a, b] = n.to_be_bytes();
    Ok(Ipv4Addr::new(10, 77, a, b))
}

/// The namespaces of one testbed.
#[derive(Debug, Clone)]
pub(super) struct Namespaces {
    tag: String,
}

impl Namespaces {
    /// A tag for a new testbed: unique among the testbeds of this machine while they run.
    #[must_use]
    pub(super) fn new() -> Self {
        Namespaces {
            tag: format!("{:x}", std::process::id()),
        }
    }

    /// The hub's namespace (no node's: theirs have a `-` after the tag).
    #[must_use]
    pub(super) fn hub(&self) -> String {
        format!("pp{}", self.tag)
    }

    /// The namespace of node `id`.
    #[must_use]
    pub(super) fn node(&self, id: &str) -> String {
        format!("pp{}-{id}", self.tag)
    }

    /// Checks that the overlay's node ids can name namespaces, before anything is created.
    ///
    /// # Errors
    /// Not root, or a node id with other characters than letters, digits, `_`, `.`, `-`.
    pub(super) fn check(overlay: &Overlay, source: &Path) -> Result<(), CliError> {
        if !is_root() {
            return Err(CliError::BadInput(
                "--netns: network namespaces need root (run as root, or without --netns for \
                 processes on loopback)"
                    .into(),
            ));
        }
        for n in overlay.nodes() {
            let ok = !n.id.is_empty()
                && n.id.len() <= 40
                && n.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
            if !ok {
                return Err(CliError::BadInput(format!(
                    "{}: node {:?}: --netns names a namespace after each node; ids must be 1-40 \
                     letters, digits, '_', '.' or '-'",
                    source.display(),
                    n.id
                )));
            }
        }
        Ok(())
    }

    /// Creates the hub with its bridge and one namespace per node, joined to the hub; returns
    /// every node's address (its port from the overlay file, else 7000). Records the
    /// namespaces in `dir` as it goes, so `down` removes what was made even if a step fails.
    ///
    /// # Errors
    /// A failing `ip` command (its message).
    pub(super) fn create(
        &self,
        overlay: &Overlay,
        dir: &Path,
    ) -> Result<Vec<SocketAddr>, CliError> {
        let record = |names: &[String]| {
            fs::write(dir.join(NETNS_FILE), names.join("\n") + "\n")
                .map_err(|e| CliError::Failed(format!("{}: {e}", dir.display())))
        };
        let hub = self.hub();
        let mut made = vec![hub.clone()];
        run("ip", &["netns", "add", &hub])?;
        record(&made)?;
        run("ip", &["-n", &hub, "link", "add", "br0", "type", "bridge"])?;
        run("ip", &["-n", &hub, "link", "set", "br0", "up"])?;
        let mut addrs = Vec::new();
        for (i, n) in overlay.nodes().iter().enumerate() {
            let ns = self.node(&n.id);
            run("ip", &["netns", "add", &ns])?;
            made.push(ns.clone());
            record(&made)?;
            let port = format!("n{i}");
            run(
                "ip",
                &[
                    "link", "add", &port, "netns", &hub, "type", "veth", "peer", "name", "eth0",
                    "netns", &ns,
                ],
            )?;
            run("ip", &["-n", &hub, "link", "set", &port, "master", "br0"])?;
            run("ip", &["-n", &hub, "link", "set", &port, "up"])?;
            let ip = node_ip(i)?;
            run(
                "ip",
                &["-n", &ns, "addr", "add", &format!("{ip}/16"), "dev", "eth0"],
            )?;
            run("ip", &["-n", &ns, "link", "set", "eth0", "up"])?;
            run("ip", &["-n", &ns, "link", "set", "lo", "up"])?;
            let port = n.addr.map_or(DEFAULT_PORT, |a| a.port());
            addrs.push(SocketAddr::new(IpAddr::V4(ip), port));
        }
        Ok(addrs)
    }
}

impl Default for Namespaces {
    fn default() -> Self {
        Self::new()
    }
}

/// The overlay file's text with every node's `addr` set to `addrs[i]` (the rest of the text,
/// comments included, unchanged).
///
/// # Errors
/// Text that is not the overlay's TOML (it was parsed before, so this does not happen).
pub(super) fn with_addresses(text: &str, addrs: &[SocketAddr]) -> Result<String, CliError> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| CliError::BadInput(format!("overlay file: {e}")))?;
    let nodes = doc
        .get_mut("nodes")
        .ok_or_else(|| CliError::BadInput("overlay file: no nodes".into()))?;
    let set = |i: usize| toml_edit::value(addrs[i].to_string());
    if let Some(tables) = nodes.as_array_of_tables_mut() {
        for (i, t) in tables.iter_mut().enumerate().take(addrs.len()) {
            t.insert("addr", set(i));
        }
    } else if let Some(array) = nodes.as_array_mut() {
        for (i, v) in array.iter_mut().enumerate().take(addrs.len()) {
            if let Some(t) = v.as_inline_table_mut() {
                t.insert("addr", addrs[i].to_string().into());
            }
        }
    } else {
        return Err(CliError::BadInput(
            "overlay file: nodes must be an array of tables".into(),
        ));
    }
    Ok(doc.to_string())
}

/// The namespace a node of a `--netns` testbed in `dir` runs in, if the testbed is one.
///
/// # Errors
/// An unreadable namespace list.
pub(super) fn node_namespace(dir: &Path, node: &str) -> Result<Option<String>, CliError> {
    let path = dir.join(NETNS_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let text = fs::read_to_string(&path)
        .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
    let Some(hub) = text.lines().next() else {
        return Ok(None);
    };
    let want = format!("{hub}-{node}");
    Ok(text
        .lines()
        .skip(1)
        .find(|l| *l == want)
        .map(str::to_string))
}

/// Deletes the namespaces listed in `dir` (after the processes in them were stopped); returns
/// how many.
///
/// # Errors
/// An unreadable namespace list; namespaces that cannot be deleted are named.
pub(super) fn delete_all(dir: &Path) -> Result<usize, CliError> {
    let path = dir.join(NETNS_FILE);
    if !path.exists() {
        return Ok(0);
    }
    let text = fs::read_to_string(&path)
        .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
    let mut deleted = 0;
    let mut failed = Vec::new();
    for ns in text.lines().filter(|l| !l.is_empty()) {
        match run("ip", &["netns", "delete", ns]) {
            Ok(()) => deleted += 1,
            Err(CliError::BadInput(e) | CliError::Failed(e) | CliError::Interrupted(e)) => {
                failed.push(e);
            }
        }
    }
    if !failed.is_empty() {
        return Err(CliError::Failed(failed.join("; ")));
    }
    fs::remove_file(&path).map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_written_into_either_form_of_the_nodes_array() {
        let addrs: Vec<SocketAddr> = vec![
            "10.77.0.1:7000".parse().unwrap(),
            "10.77.0.2:9".parse().unwrap(),
        ];
        let inline = "# c\nnodes = [ { id = \"a\" }, { id = \"b\", addr = \"127.0.0.1:9\" } ]\n";
        let out = with_addresses(inline, &addrs).unwrap();
        assert!(out.starts_with("# c\n"), "{out}");
        assert!(out.contains("addr = \"10.77.0.1:7000\""), "{out}");
        assert!(out.contains("addr = \"10.77.0.2:9\""), "{out}");
        assert!(!out.contains("127.0.0.1"), "{out}");
        let tables = "[[nodes]]\nid = \"a\"\n[[nodes]]\nid = \"b\"\n";
        let out = with_addresses(tables, &addrs).unwrap();
        assert_eq!(out.matches("addr = ").count(), 2, "{out}");
    }

    #[test]
    fn node_addresses_count_from_one_in_a_slash_16() {
        assert_eq!(node_ip(0).unwrap(), Ipv4Addr::new(10, 77, 0, 1));
        assert_eq!(node_ip(255).unwrap(), Ipv4Addr::new(10, 77, 1, 0));
        assert!(node_ip(70_000).is_err());
    }
}
