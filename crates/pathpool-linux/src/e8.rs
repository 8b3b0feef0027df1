//! The thesis's Linux experiment E8 (Ch. 5.2.2, Fig. 5.1) in network namespaces: one run of
//! one setting with one algorithm, reporting the bytes each client delivered in each second
//! (issue 23 part B). `pathpool reproduce convergence-linux` runs it per setting, algorithm
//! and repetition and computes the figures as the simulated `convergence` does.
//!
//! The bed (seven namespaces; path i ∈ {1, 2}):
//!
//! ```text
//!  mp  m_i 10.10.i.1 ─┐
//!                     r_i ── o_i 10.12.i.1 ═ wire_i (pathpool emu) ═ d_i 10.12.i.2  server
//!  sp  s_i 10.11.i.1 ─┘
//! ```
//!
//! The multipath client `mp` opens four MPTCP connections to 10.12.1.2: the first subflow
//! leaves through m1 (path 1), the second from the `subflow` endpoint 10.10.2.1 through m2
//! and router r2, which sends it over path 2 to the server's other interface. The single-path
//! client `sp` opens four Reno connections, two to each of the server's addresses. Per path:
//! four subflows and two Reno flows, as in the thesis. Each path's emulator gives the data
//! direction (router to server) the setting's rate, drop-tail queue, random loss and half the
//! round trip, and the ACK direction the other half.

use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use pathpool_core::{Dur, Rate};
use pathpool_net::emu::{DirectionStats, EmuConfig};
use pathpool_net::emulation::LinkEmulation;
use serde::{Deserialize, Serialize};

use crate::bed::{delete_namespace, mptcp_endpoints, must, namespaces, sender};
use crate::wire::{mac_address, offloads_off, RunningEmu};
use crate::LinuxError;

/// One path's setting.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct PathSetting {
    /// Rate of the data direction, bit/s.
    pub rate_bps: u64,
    /// Round-trip propagation delay, ms (half each way).
    pub rtt_ms: f64,
    /// Random loss probability of the data direction.
    pub loss: f64,
    /// Drop-tail queue of the data direction, bytes (Ethernet frames, as `tbf` counts).
    pub queue_bytes: Option<u64>,
    /// Drop-tail queue of the data direction, packets (when given, instead of bytes).
    pub queue_packets: Option<u64>,
}

/// One run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct E8Config {
    /// Path 1 and path 2.
    pub paths: [PathSetting; 2],
    /// The multipath client's congestion control (`pp_nmcc`, `pp_lia`, ..., or `reno` for
    /// uncoupled MPTCP).
    pub mp_cc: String,
    /// The single-path client's (`reno`).
    pub sp_cc: String,
    /// A control run: the multipath client opens eight plain TCP connections, four to each
    /// of the server's addresses (one per path), instead of four two-subflow MPTCP
    /// connections; with the same congestion control on both clients its share is 4/6.
    #[serde(default)]
    pub mp_as_tcp: bool,
    /// The server acknowledges every segment at once (its routes carry `quickack 1`), for
    /// both clients: no delayed ACKs. Linux MPTCP's receiver sends fewer of the single-segment
    /// ACKs that keep a subflow's delayed ACKs in step with its sender's pairs, which costs
    /// the subflows part of their share (docs/linux.md); this setting removes that effect,
    /// so that what remains is the congestion controllers' (D347). Off by default: the
    /// kernel's ordinary receiver (the thesis's bed had delayed ACKs too).
    #[serde(default)]
    pub server_quickack: bool,
    /// Length of the run, seconds.
    pub seconds: u32,
}

/// What one run measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct E8Run {
    /// Bytes the multipath connections delivered in each second (second k is (k, k + 1]).
    pub mp_bytes: Vec<u64>,
    /// Bytes the single-path connections delivered in each second.
    pub sp_bytes: Vec<u64>,
    /// Established MPTCP subflows (or, in a control run, TCP connections) of the multipath
    /// client seen 5 s into the run: 8 when every connection has both.
    pub subflows: usize,
    /// The emulators' data-direction counters, path 1 and path 2.
    pub data: [DirectionStats; 2],
    /// The emulators' ACK-direction counters.
    pub acks: [DirectionStats; 2],
    /// One line per connection whose socket took no byte for `STALL_REPORT_S` or more: a
    /// connection the kernel stopped moving, which lowers its client's share
    /// (docs/linux.md, "A stalled MPTCP connection").
    #[serde(default)]
    pub stalls: Vec<String>,
}

/// A sender whose socket took nothing for this long is reported in [`E8Run::stalls`]: 50
/// round trips of the default setting, far beyond a loss recovery's wait.
pub const STALL_REPORT_S: f64 = 5.0;
/// How long past the run's end the bed waits for a sender before killing it.
const SENDER_GRACE: Duration = Duration::from_secs(30);

const MP_PORT: u16 = 5201;
const SP_PORT: u16 = 5202;
const CONNECTIONS: usize = 4;
/// How often the run looks at its interruption flag.
const TICK: Duration = Duration::from_millis(100);

/// The bed's namespaces, deleted on drop.
struct Bed {
    names: Vec<String>,
}

/// The bed's namespaces, in the order of [`Bed::names`].
const NAMESPACES: [&str; 7] = ["mp", "sp", "r1", "r2", "w1", "w2", "d"];

impl Bed {
    fn ns(&self, which: &str) -> &str {
        let i = NAMESPACES
            .iter()
            .position(|n| *n == which)
            .expect("a namespace of the bed");
        &self.names[i]
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        for n in &self.names {
            delete_namespace(n);
        }
    }
}

fn exec(ns: &str, args: &[&str]) -> Result<String, LinuxError> {
    let mut all = vec!["ip", "netns", "exec", ns];
    all.extend_from_slice(args);
    must(&all)
}

fn veth(a: &str, na: &str, b: &str, nb: &str) -> Result<(), LinuxError> {
    must(&[
        "ip", "link", "add", a, "netns", na, "type", "veth", "peer", "name", b, "netns", nb,
    ])?;
    for (dev, ns) in [(a, na), (b, nb)] {
        offloads_off(ns, dev)?;
        must(&["ip", "-n", ns, "link", "set", dev, "up"])?;
    }
    Ok(())
}

fn address(ns: &str, dev: &str, addr: &str) -> Result<(), LinuxError> {
    must(&["ip", "-n", ns, "addr", "add", addr, "dev", dev]).map(|_| ())
}

fn route(ns: &str, args: &[&str]) -> Result<(), LinuxError> {
    let mut all = vec!["ip", "-n", ns, "route", "add"];
    all.extend_from_slice(args);
    must(&all).map(|_| ())
}

fn build(tag: &str, server_quickack: bool) -> Result<Bed, LinuxError> {
    let pid = std::process::id();
    let bed = Bed {
        names: NAMESPACES
            .iter()
            .map(|s| format!("pp{tag}{s}{pid}"))
            .collect(),
    };
    let names: Vec<&str> = bed.names.iter().map(String::as_str).collect();
    namespaces(&names)?;
    for n in &names {
        // No IPv6: nothing but the experiment's traffic on the wires.
        exec(n, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])?;
        exec(
            n,
            &["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
        )?;
    }
    let (mp, sp, d) = (bed.ns("mp"), bed.ns("sp"), bed.ns("d"));
    for i in 1..=2 {
        let (r, w) = (bed.ns(&format!("r{i}")), bed.ns(&format!("w{i}")));
        let (mi, si, oi, di) = (
            format!("m{i}"),
            format!("s{i}"),
            format!("o{i}"),
            format!("d{i}"),
        );
        veth(&mi, mp, &format!("x{i}"), r)?;
        veth(&si, sp, &format!("y{i}"), r)?;
        veth(&oi, r, "wa", w)?;
        veth("wb", w, &di, d)?;
        address(mp, &mi, &format!("10.10.{i}.1/24"))?;
        address(r, &format!("x{i}"), &format!("10.10.{i}.254/24"))?;
        address(sp, &si, &format!("10.11.{i}.1/24"))?;
        address(r, &format!("y{i}"), &format!("10.11.{i}.254/24"))?;
        address(r, &oi, &format!("10.12.{i}.1/24"))?;
        address(d, &di, &format!("10.12.{i}.2/24"))?;
        exec(r, &["sysctl", "-qw", "net.ipv4.ip_forward=1"])?;
        // A subflow to the server's other address enters this path too.
        let other = format!("10.12.{}.0/24", 3 - i);
        let server_here = format!("10.12.{i}.2");
        route(r, &[&other, "via", &server_here, "dev", &oi])?;
        // The server answers each client network over the path it came by; a route's
        // `quickack` attribute (RTAX_QUICKACK) turns delayed ACKs off for the sockets on it.
        for client in [format!("10.10.{i}.0/24"), format!("10.11.{i}.0/24")] {
            let via = format!("10.12.{i}.1");
            let mut args = vec![client.as_str(), "via", &via, "dev", &di];
            if server_quickack {
                args.extend(["quickack", "1"]);
            }
            route(d, &args)?;
        }
        // The single-path client reaches each server address over its own path.
        route(
            sp,
            &[
                &format!("10.12.{i}.0/24"),
                "via",
                &format!("10.11.{i}.254"),
                "dev",
                &si,
            ],
        )?;
        // Permanent neighbours across the wire: no ARP through the emulator.
        let (router_mac, server_mac) = (mac_address(r, &oi)?, mac_address(d, &di)?);
        must(&[
            "ip",
            "-n",
            r,
            "neigh",
            "replace",
            &server_here,
            "lladdr",
            &server_mac,
            "dev",
            &oi,
            "nud",
            "permanent",
        ])?;
        must(&[
            "ip",
            "-n",
            d,
            "neigh",
            "replace",
            &format!("10.12.{i}.1"),
            "lladdr",
            &router_mac,
            "dev",
            &di,
            "nud",
            "permanent",
        ])?;
    }
    // The multipath client: path 1 by default, path 2 for what is bound to m2 and for the
    // server's second address (the control run's plain TCP; MPTCP's subflows all go to the
    // first).
    route(mp, &["10.12.2.0/24", "via", "10.10.2.254", "dev", "m2"])?;
    for (i, metric) in [(1, "100"), (2, "200")] {
        route(
            mp,
            &[
                "10.12.0.0/16",
                "via",
                &format!("10.10.{i}.254"),
                "dev",
                &format!("m{i}"),
                "metric",
                metric,
            ],
        )?;
    }
    mptcp_endpoints(mp, d, ("10.10.2.1", "m2"))?;
    Ok(bed)
}

fn emulation(p: &PathSetting) -> [LinkEmulation; 2] {
    let half = Dur::from_secs_f64(p.rtt_ms / 2e3);
    let data = LinkEmulation {
        rate: Rate::from_bps(p.rate_bps),
        delay: half,
        loss: p.loss,
        queue_bytes: p.queue_bytes.unwrap_or(u64::MAX),
        queue_packets: p.queue_packets.unwrap_or(u64::MAX),
    };
    let acks = LinkEmulation {
        delay: half,
        ..LinkEmulation::TRANSPARENT
    };
    [data, acks]
}

/// Counts the bytes of every connection accepted on `port` (MPTCP listener: it takes TCP
/// too), in the server's namespace.
fn receiver(
    netns: &str,
    (port, connections): (u16, usize),
    total: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) -> Result<thread::JoinHandle<()>, LinuxError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = format!("/run/netns/{netns}");
    let handle = thread::spawn(move || {
        let bound = std::fs::File::open(&path)
            .map_err(|e| format!("{path}: {e}"))
            .and_then(|f| {
                nix::sched::setns(f, nix::sched::CloneFlags::CLONE_NEWNET)
                    .map_err(|e| format!("entering {path}: {e}"))
            })
            .and_then(|()| listener(port).map_err(|e| format!("listening on {port}: {e}")));
        let listener = match bound {
            Ok(l) => {
                let _ = tx.send(Ok(()));
                l
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        let mut readers = Vec::new();
        // Accept without blocking, so that a sender that never connects cannot hold the
        // server past the end of the run.
        let _ = listener.set_nonblocking(true);
        while readers.len() < connections && !stop.load(Ordering::Relaxed) {
            let mut stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(10));
                    continue;
                }
                Err(_) => break,
            };
            let _ = stream.set_nonblocking(false);
            let (total, stop) = (Arc::clone(&total), Arc::clone(&stop));
            readers.push(thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                let mut buf = vec![0u8; 256 * 1024];
                while !stop.load(Ordering::Relaxed) {
                    match stream.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            total.fetch_add(n as u64, Ordering::Relaxed);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                        Err(_) => break,
                    }
                }
            }));
        }
        for r in readers {
            let _ = r.join();
        }
    });
    match rx.recv() {
        Ok(Ok(())) => Ok(handle),
        Ok(Err(e)) => Err(LinuxError::Failed(format!("the E8 server: {e}"))),
        Err(_) => Err(LinuxError::Failed("the E8 server's thread ended".into())),
    }
}

fn listener(port: u16) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let sock = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::MPTCP))?;
    sock.set_reuse_address(true)?;
    sock.bind(&SocketAddr::from(([0, 0, 0, 0], port)).into())?;
    sock.listen(64)?;
    Ok(sock.into())
}

fn established_subflows(mp: &str) -> usize {
    exec(mp, &["ss", "-tnH", "state", "established"])
        .map(|out| {
            out.lines()
                .filter(|l| l.contains(&format!(":{MP_PORT}")))
                .count()
        })
        .unwrap_or(0)
}

/// Runs E8 once with `config`, `program` being this program (the senders run as `program
/// send`); `tag` keeps the namespaces of concurrent runs apart. `progress` is called each
/// second with the second and the bytes of both clients in it. Setting `interrupt` (a
/// signal handler's flag) ends the run early: the senders are killed and the bed deleted.
///
/// # Errors
/// Not root, no MPTCP, an algorithm not registered, a step that fails, or an interruption.
pub fn run(
    program: &str,
    config: &E8Config,
    (tag, interrupt): (&str, &AtomicBool),
    mut progress: impl FnMut(usize, u64, u64),
) -> Result<E8Run, LinuxError> {
    if config.seconds == 0 {
        return Err(LinuxError::BadInput(
            "seconds: give at least one second".into(),
        ));
    }
    let bed = build(tag, config.server_quickack)?;
    let mut emus = Vec::new();
    for (i, p) in config.paths.iter().enumerate() {
        let [data, acks] = emulation(p);
        let emu = EmuConfig {
            a: "wa".into(),
            b: "wb".into(),
            a_to_b: data,
            b_to_a: acks,
            seed: 1 + 2 * i as u64,
            realtime: true,
        };
        emus.push(RunningEmu::start(bed.ns(&format!("w{}", i + 1)), &emu)?);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mp_connections = if config.mp_as_tcp {
        2 * CONNECTIONS
    } else {
        CONNECTIONS
    };
    let (mp_total, sp_total) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let servers = [
        receiver(
            bed.ns("d"),
            (MP_PORT, mp_connections),
            Arc::clone(&mp_total),
            Arc::clone(&stop),
        )?,
        receiver(
            bed.ns("d"),
            (SP_PORT, CONNECTIONS),
            Arc::clone(&sp_total),
            Arc::clone(&stop),
        )?,
    ];
    let seconds = f64::from(config.seconds);
    let mut senders = Vec::new();
    let start = Instant::now();
    for k in 0..CONNECTIONS {
        if config.mp_as_tcp {
            // The control: two TCP connections per MPTCP connection, one to each path.
            for path in 1..=2 {
                let to = format!("10.12.{path}.2:{MP_PORT}");
                senders.push((
                    "the multipath client",
                    sender(bed.ns("mp"), program, &to, (&config.mp_cc, true), seconds)?,
                ));
            }
        } else {
            let to = format!("10.12.1.2:{MP_PORT}");
            senders.push((
                "the multipath client",
                sender(bed.ns("mp"), program, &to, (&config.mp_cc, false), seconds)?,
            ));
        }
        // Two Reno connections to each of the server's addresses: two per path.
        let to = format!("10.12.{}.2:{SP_PORT}", 1 + k % 2);
        senders.push((
            "the single-path client",
            sender(bed.ns("sp"), program, &to, (&config.sp_cc, true), seconds)?,
        ));
    }
    let mut subflows = 0;
    let (mut mp_bytes, mut sp_bytes) = (Vec::new(), Vec::new());
    let (mut mp_last, mut sp_last) = (0, 0);
    for k in 1..=config.seconds as usize {
        let due = start + Duration::from_secs(k as u64);
        while Instant::now() < due && !interrupt.load(Ordering::Relaxed) {
            thread::sleep(due.saturating_duration_since(Instant::now()).min(TICK));
        }
        if interrupt.load(Ordering::Relaxed) {
            for (_, mut s) in senders {
                let _ = s.kill();
                let _ = s.wait();
            }
            stop.store(true, Ordering::Relaxed);
            for s in servers {
                let _ = s.join();
            }
            // The emulators and the bed go when dropped.
            return Err(LinuxError::Failed(format!(
                "interrupted after {} of {} s; the namespaces are deleted",
                k - 1,
                config.seconds
            )));
        }
        let (m, s) = (
            mp_total.load(Ordering::Relaxed),
            sp_total.load(Ordering::Relaxed),
        );
        mp_bytes.push(m - mp_last);
        sp_bytes.push(s - sp_last);
        progress(k - 1, m - mp_last, s - sp_last);
        (mp_last, sp_last) = (m, s);
        if k == 5 {
            subflows = established_subflows(bed.ns("mp"));
        }
    }
    // The senders end on their own at their deadline (transfer::send); one that has not
    // ended `SENDER_GRACE` later is killed and counted as failed. The readers read to their
    // end, then stop.
    let mut failures = Vec::new();
    let mut stalls = Vec::new();
    let give_up = start + Duration::from_secs(u64::from(config.seconds)) + SENDER_GRACE;
    for (client, mut s) in senders {
        while matches!(s.try_wait(), Ok(None)) && Instant::now() < give_up {
            thread::sleep(TICK);
        }
        if matches!(s.try_wait(), Ok(None)) {
            let _ = s.kill();
            failures.push(format!(
                "a sender of {client} had not ended {} s after the run",
                SENDER_GRACE.as_secs()
            ));
            // Killed: its exit status and empty report say nothing more.
            let _ = s.wait();
            continue;
        }
        let out = s
            .wait_with_output()
            .map_err(|e| LinuxError::Failed(format!("a sender: {e}")))?;
        if !out.status.success() {
            failures.push(String::from_utf8_lossy(&out.stderr).trim().to_string());
            continue;
        }
        if let Ok(t) = serde_json::from_slice::<crate::transfer::Transferred>(&out.stdout) {
            let stall = t.longest_stall_s.unwrap_or(0.0);
            if stall >= STALL_REPORT_S {
                stalls.push(format!(
                    "a connection of {client} to {}: no byte taken for {stall:.1} s; {} bytes \
                     in all",
                    t.peer, t.bytes
                ));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    for s in servers {
        let _ = s.join();
    }
    let mut data = [DirectionStats::default(); 2];
    let mut acks = [DirectionStats::default(); 2];
    for (i, emu) in emus.into_iter().enumerate() {
        [data[i], acks[i]] = emu.stop()?;
    }
    drop(bed);
    if let Some(f) = failures.first() {
        return Err(LinuxError::Failed(format!(
            "{} of {} senders failed; the first: {f}",
            failures.len(),
            mp_connections + CONNECTIONS
        )));
    }
    Ok(E8Run {
        mp_bytes,
        sp_bytes,
        subflows,
        data,
        acks,
        stalls,
    })
}
