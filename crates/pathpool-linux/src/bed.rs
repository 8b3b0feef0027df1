//! Network-namespace test beds for kernel MPTCP, built with `ip` and `tc` and deleted on
//! drop: the tests, `pathpool linux bench` and the experiments use them.
//!
//! [`SharedBottleneck`]: the same client's two interfaces into a router namespace, whose one
//! `tbf`-limited link leads to the server: both subflows and any competitor share it.
//!
//! [`TwoPaths`]: a client namespace with two interfaces, each joined by a veth pair to the
//! server namespace, optionally limited by `tbf` on the client's egress (the data
//! direction). Path 1 is 10.9.1.1 → 10.9.1.2, path 2 10.9.2.1 → 10.9.2.2; the client's second
//! address is an MPTCP `subflow` endpoint, so a connection to 10.9.1.2 opens a second subflow
//! from 10.9.2.1 over path 2.

use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use crate::LinuxError;

/// The server's address and port on path 1.
pub const SERVER: &str = "10.9.1.2:5201";

/// Whether this process runs as root; when not, says on standard error that the calling
/// test checks nothing (the namespace tests need root).
#[must_use]
pub fn running_as_root() -> bool {
    let root = nix::unistd::Uid::effective().is_root();
    if !root {
        eprintln!("skipped: needs root (network namespaces, raw sockets, BPF)");
    }
    root
}

/// Runs a command, failing with its output.
///
/// # Errors
/// When it cannot start or exits non-zero.
pub fn must(args: &[&str]) -> Result<String, LinuxError> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| LinuxError::Unsupported(format!("cannot run {}: {e}", args[0])))?;
    if !out.status.success() {
        return Err(LinuxError::Failed(format!(
            "`{}` failed: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Fresh namespaces of these names, each with its loopback up (an old one of the same name,
/// left by a run that was killed, is deleted first).
pub(crate) fn namespaces(names: &[&str]) -> Result<(), LinuxError> {
    for n in names {
        delete_namespace(n);
        must(&["ip", "netns", "add", n])?;
        must(&["ip", "-n", n, "link", "set", "lo", "up"])?;
    }
    Ok(())
}

pub(crate) fn delete_namespace(name: &str) {
    let _ = Command::new("ip").args(["netns", "del", name]).output();
}

/// A veth pair from `a` in namespace `na` (address `addr_a`, with its prefix) to `b` in `nb`,
/// both ends up.
fn veth(
    (a, na, addr_a): (&str, &str, &str),
    (b, nb, addr_b): (&str, &str, &str),
) -> Result<(), LinuxError> {
    must(&[
        "ip", "link", "add", a, "netns", na, "type", "veth", "peer", "name", b, "netns", nb,
    ])?;
    for (dev, ns, addr) in [(a, na, addr_a), (b, nb, addr_b)] {
        must(&["ip", "-n", ns, "addr", "add", addr, "dev", dev])?;
        must(&["ip", "-n", ns, "link", "set", dev, "up"])?;
    }
    Ok(())
}

/// Two subflows per connection on both ends, the client's `address` (on `dev`) an MPTCP
/// `subflow` endpoint.
pub(crate) fn mptcp_endpoints(
    client: &str,
    server: &str,
    (address, dev): (&str, &str),
) -> Result<(), LinuxError> {
    for n in [client, server] {
        must(&[
            "ip",
            "netns",
            "exec",
            n,
            "ip",
            "mptcp",
            "limits",
            "set",
            "subflow",
            "2",
            "add_addr_accepted",
            "2",
        ])?;
    }
    must(&[
        "ip", "netns", "exec", client, "ip", "mptcp", "endpoint", "add", address, "dev", dev,
        "subflow",
    ])?;
    Ok(())
}

/// Two disjoint paths between a client and a server namespace.
#[derive(Debug)]
pub struct TwoPaths {
    /// The client namespace.
    pub client: String,
    /// The server namespace.
    pub server: String,
}

impl TwoPaths {
    /// Builds the bed; `rate` (a `tc` rate such as `50mbit`) limits each path, `None` leaves
    /// the veth pairs at full speed. Names are unique to this process and `tag`.
    ///
    /// # Errors
    /// When a command fails (no `ip`, no MPTCP, not root).
    pub fn new(tag: &str, rate: Option<&str>) -> Result<TwoPaths, LinuxError> {
        let pid = std::process::id();
        let bed = TwoPaths {
            client: format!("pp{tag}c{pid}"),
            server: format!("pp{tag}s{pid}"),
        };
        let (c, s) = (bed.client.as_str(), bed.server.as_str());
        namespaces(&[c, s])?;
        for k in 1..=2 {
            let (ci, si) = (format!("c{k}"), format!("s{k}"));
            veth(
                (&ci, c, &format!("10.9.{k}.1/24")),
                (&si, s, &format!("10.9.{k}.2/24")),
            )?;
            if let Some(rate) = rate {
                // About 16 ms of queue at 50 Mb/s: enough for one flow to fill the path.
                must(&[
                    "ip", "netns", "exec", c, "tc", "qdisc", "add", "dev", &ci, "root", "tbf",
                    "rate", rate, "burst", "16kb", "limit", "100kb",
                ])?;
            }
        }
        mptcp_endpoints(c, s, ("10.9.2.1", "c2"))?;
        Ok(bed)
    }

    /// `ip netns exec NS ARGS`.
    #[must_use]
    pub fn exec(ns: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns]).args(args);
        cmd
    }

    /// Starts a sink for one connection on the server and a `seconds`-long sender with `cc`
    /// (MPTCP unless `tcp`) on the client, both running `program` (pathpool-linux).
    ///
    /// # Errors
    /// When either cannot start.
    pub fn transfer(
        &self,
        program: &str,
        cc: &str,
        seconds: f64,
        tcp: bool,
    ) -> Result<(Child, Child), LinuxError> {
        let sink = sink(&self.server, program, SERVER, 1)?;
        thread::sleep(Duration::from_millis(300));
        let send = sender(&self.client, program, SERVER, (cc, tcp), seconds)?;
        Ok((sink, send))
    }
}

impl Drop for TwoPaths {
    fn drop(&mut self) {
        for n in [&self.client, &self.server] {
            delete_namespace(n);
        }
    }
}

/// The server's address and port behind the shared bottleneck.
pub const SHARED_SERVER: &str = "10.9.3.2:5201";

/// The shared bottleneck's link and the server's acknowledgements.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedLink {
    /// The bottleneck's rate, Mb/s.
    pub rate_mbps: f64,
    /// Its drop-tail queue (`tbf` limit), KiB as `tc` counts them (1024 bytes).
    pub queue_kib: u32,
    /// The server acknowledges every segment at once (its route carries `quickack 1`, as
    /// E8's `server_quickack`, D347).
    pub server_quickack: bool,
}

impl Default for SharedLink {
    /// Issue 23's acceptance 2: 50 Mb/s, 100 KiB of queue (about 68 full frames), the
    /// kernel's delayed ACKs.
    fn default() -> SharedLink {
        SharedLink {
            rate_mbps: 50.0,
            queue_kib: 100,
            server_quickack: false,
        }
    }
}

/// A client with two interfaces (10.9.1.1, 10.9.2.1) into a router, and one `tbf` link
/// from the router to the server (10.9.3.2). Subflow 1 leaves through the first interface,
/// the MPTCP `subflow` endpoint's through the second; plain TCP from the client takes the
/// first.
#[derive(Debug)]
pub struct SharedBottleneck {
    /// The client namespace.
    pub client: String,
    /// The router namespace.
    pub router: String,
    /// The server namespace.
    pub server: String,
}

impl SharedBottleneck {
    /// Builds the bed with the bottleneck `link`.
    ///
    /// # Errors
    /// When a command fails.
    pub fn new(tag: &str, link: &SharedLink) -> Result<SharedBottleneck, LinuxError> {
        let pid = std::process::id();
        let bed = SharedBottleneck {
            client: format!("pp{tag}c{pid}"),
            router: format!("pp{tag}r{pid}"),
            server: format!("pp{tag}s{pid}"),
        };
        let (c, r, s) = (
            bed.client.as_str(),
            bed.router.as_str(),
            bed.server.as_str(),
        );
        namespaces(&[c, r, s])?;
        for (a, na, b, nb, net) in [
            ("c1", c, "r1", r, 1),
            ("c2", c, "r2", r, 2),
            ("r3", r, "s3", s, 3),
        ] {
            let (ha, hb) = if net == 3 { (1, 2) } else { (1, 254) };
            veth(
                (a, na, &format!("10.9.{net}.{ha}/24")),
                (b, nb, &format!("10.9.{net}.{hb}/24")),
            )?;
        }
        must(&[
            "ip",
            "netns",
            "exec",
            r,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=1",
        ])?;
        // Each interface has its own route to the server, the second by metric: a subflow
        // bound to c2 takes it.
        for (via, dev, metric) in [("10.9.1.254", "c1", "100"), ("10.9.2.254", "c2", "200")] {
            must(&[
                "ip",
                "-n",
                c,
                "route",
                "add",
                "10.9.3.0/24",
                "via",
                via,
                "dev",
                dev,
                "metric",
                metric,
            ])?;
        }
        let mut route = vec!["ip", "-n", s, "route", "add", "default", "via", "10.9.3.1"];
        if link.server_quickack {
            route.extend(["quickack", "1"]);
        }
        must(&route)?;
        // kbit: tc's own unit, exact for any rate given in kb/s.
        let rate = format!("{}kbit", (link.rate_mbps * 1000.0).round() as u64);
        let limit = format!("{}kb", link.queue_kib);
        must(&[
            "ip", "netns", "exec", r, "tc", "qdisc", "add", "dev", "r3", "root", "tbf", "rate",
            &rate, "burst", "16kb", "limit", &limit,
        ])?;
        mptcp_endpoints(c, s, ("10.9.2.1", "c2"))?;
        Ok(bed)
    }
}

impl Drop for SharedBottleneck {
    fn drop(&mut self) {
        for n in [&self.client, &self.router, &self.server] {
            delete_namespace(n);
        }
    }
}

fn spawn(ns: &str, program: &str, args: &[&str]) -> Result<Child, LinuxError> {
    let mut all = vec![program];
    all.extend_from_slice(args);
    TwoPaths::exec(ns, &all)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| LinuxError::Failed(format!("cannot start {program} in {ns}: {e}")))
}

/// `program sink` in namespace `ns` for `connections` connections on `listen`; its standard
/// output (one JSON line per connection) is piped.
///
/// # Errors
/// When it cannot start.
pub fn sink(
    ns: &str,
    program: &str,
    listen: &str,
    connections: usize,
) -> Result<Child, LinuxError> {
    let n = connections.to_string();
    spawn(
        ns,
        program,
        &["sink", "--listen", listen, "--connections", &n],
    )
}

/// `program send` in namespace `ns` to `to` for `seconds` with congestion control `cc`, over
/// plain TCP when the flag is set; its JSON report is piped.
///
/// # Errors
/// When it cannot start.
pub fn sender(
    ns: &str,
    program: &str,
    to: &str,
    (cc, tcp): (&str, bool),
    seconds: f64,
) -> Result<Child, LinuxError> {
    let secs = seconds.to_string();
    let mut args = vec!["send", "--to", to, "--seconds", &secs, "--cc", cc];
    if tcp {
        args.push("--tcp");
    }
    spawn(ns, program, &args)
}
