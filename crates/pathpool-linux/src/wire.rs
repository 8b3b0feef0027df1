//! `pathpool emu` inside the namespace beds (issue 23 part B): an emulator running on its own
//! thread in a "wire" namespace, and [`WireBed`], two hosts joined through one.
//!
//! The emulator is pathpool-net's, run in this process: its thread enters the wire's network
//! namespace (setns(2) changes only the calling thread's), opens the interfaces there and
//! forwards between them until stopped, when it hands back its counters.

use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use nix::sched::{setns, CloneFlags};
use pathpool_net::emu::{DirectionStats, EmuConfig, Emulator};

use crate::bed::{delete_namespace, must, namespaces};
use crate::LinuxError;

type Outcome = Result<[DirectionStats; 2], String>;

/// An emulator forwarding between two interfaces of a namespace, stopped on drop.
#[derive(Debug)]
pub struct RunningEmu {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Outcome>>,
}

impl RunningEmu {
    /// Starts an emulator in network namespace `netns` (a name under /run/netns), once its
    /// interfaces are open.
    ///
    /// # Errors
    /// A namespace that cannot be entered, or interfaces that cannot be opened there.
    pub fn start(netns: &str, config: &EmuConfig) -> Result<RunningEmu, LinuxError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (opened_tx, opened_rx) = mpsc::channel::<Result<(), String>>();
        let (netns, config, flag) = (netns.to_string(), config.clone(), Arc::clone(&stop));
        let thread = std::thread::spawn(move || -> Outcome {
            let opened = File::open(format!("/run/netns/{netns}"))
                .map_err(|e| format!("network namespace {netns}: {e}"))
                .and_then(|f| {
                    setns(f, CloneFlags::CLONE_NEWNET)
                        .map_err(|e| format!("entering network namespace {netns}: {e}"))
                })
                .and_then(|()| Emulator::open(&config).map_err(|e| e.to_string()));
            let emulator = match opened {
                Ok(emulator) => {
                    let _ = opened_tx.send(Ok(()));
                    emulator
                }
                Err(e) => {
                    let _ = opened_tx.send(Err(e.clone()));
                    return Err(e);
                }
            };
            emulator
                .run(&flag, Duration::MAX, |_| {})
                .map_err(|e| e.to_string())
        });
        match opened_rx.recv() {
            Ok(Ok(())) => Ok(RunningEmu {
                stop,
                thread: Some(thread),
            }),
            Ok(Err(e)) => Err(LinuxError::Failed(format!("pathpool emu: {e}"))),
            Err(_) => Err(LinuxError::Failed(
                "pathpool emu: the emulator's thread ended before opening its interfaces".into(),
            )),
        }
    }

    /// Stops the emulator and returns both directions' counters (a→b first).
    ///
    /// # Errors
    /// A socket that failed while running.
    pub fn stop(mut self) -> Result<[DirectionStats; 2], LinuxError> {
        self.halt()
            .unwrap_or_else(|| Err("the emulator was already stopped".into()))
            .map_err(|e| LinuxError::Failed(format!("pathpool emu: {e}")))
    }

    fn halt(&mut self) -> Option<Outcome> {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take()?;
        Some(
            thread
                .join()
                .unwrap_or_else(|_| Err("the emulator's thread panicked".into())),
        )
    }
}

impl Drop for RunningEmu {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

/// Two hosts joined through a wire namespace: `left` (10.8.0.1, interface `e0`) — `wa` |
/// wire | `wb` — `right` (10.8.0.2, `e0`). The wire's interfaces have no addresses, and no
/// interface has IPv6, so the frames on the wire are the hosts' IPv4 traffic and nothing
/// but the emulator sends on the wire's side. The hosts know each other's hardware address
/// from the start, so no ARP crosses the wire either. Both hosts have segmentation and
/// receive offloads off, so every frame is at most one MTU, as the emulator requires.
#[derive(Debug)]
pub struct WireBed {
    /// The left host's namespace.
    pub left: String,
    /// The wire's namespace, where the emulator runs between `wa` and `wb`.
    pub wire: String,
    /// The right host's namespace.
    pub right: String,
}

/// The right host's address.
pub const RIGHT: &str = "10.8.0.2";

impl WireBed {
    /// Builds the bed; names are unique to this process and `tag`.
    ///
    /// # Errors
    /// When a command fails (no `ip` or `ethtool`, not root).
    pub fn new(tag: &str) -> Result<WireBed, LinuxError> {
        let pid = std::process::id();
        let bed = WireBed {
            left: format!("pp{tag}l{pid}"),
            wire: format!("pp{tag}w{pid}"),
            right: format!("pp{tag}r{pid}"),
        };
        let (l, w, r) = (bed.left.as_str(), bed.wire.as_str(), bed.right.as_str());
        namespaces(&[l, w, r])?;
        for (host, address, end) in [(l, "10.8.0.1/24", "wa"), (r, "10.8.0.2/24", "wb")] {
            must(&[
                "ip", "link", "add", "e0", "netns", host, "type", "veth", "peer", "name", end,
                "netns", w,
            ])?;
            // No IPv6: its neighbour and router discovery would add frames the tests count.
            must(&[
                "ip",
                "netns",
                "exec",
                host,
                "sysctl",
                "-qw",
                "net.ipv6.conf.e0.disable_ipv6=1",
            ])?;
            must(&["ip", "-n", host, "addr", "add", address, "dev", "e0"])?;
            must(&["ip", "-n", host, "link", "set", "e0", "up"])?;
            offloads_off(host, "e0")?;
            must(&[
                "ip",
                "netns",
                "exec",
                w,
                "sysctl",
                "-qw",
                &format!("net.ipv6.conf.{end}.disable_ipv6=1"),
            ])?;
            must(&["ip", "-n", w, "link", "set", end, "up"])?;
        }
        // Permanent neighbours: no ARP on the wire, so the frames a test counts are its own
        // (an entry gone stale is re-probed at a time of the kernel's choosing).
        for (host, other, address) in [(l, r, "10.8.0.2"), (r, l, "10.8.0.1")] {
            let mac = mac_address(other, "e0")?;
            must(&[
                "ip",
                "-n",
                host,
                "neigh",
                "replace",
                address,
                "lladdr",
                &mac,
                "dev",
                "e0",
                "nud",
                "permanent",
            ])?;
        }
        Ok(bed)
    }

    /// The emulator's configuration between `wa` (left) and `wb` (right).
    #[must_use]
    pub fn config(
        a_to_b: pathpool_net::emulation::LinkEmulation,
        b_to_a: pathpool_net::emulation::LinkEmulation,
    ) -> EmuConfig {
        EmuConfig {
            a: "wa".into(),
            b: "wb".into(),
            a_to_b,
            b_to_a,
            seed: 1,
            realtime: true,
        }
    }
}

impl Drop for WireBed {
    fn drop(&mut self) {
        for n in [&self.left, &self.wire, &self.right] {
            delete_namespace(n);
        }
    }
}

/// The hardware address of `dev` in `netns`.
///
/// # Errors
/// No such interface.
pub(crate) fn mac_address(netns: &str, dev: &str) -> Result<String, LinuxError> {
    let out = must(&["ip", "-n", netns, "-br", "link", "show", dev])?;
    out.split_whitespace()
        .nth(2)
        .map(str::to_string)
        .ok_or_else(|| LinuxError::Failed(format!("no address for {dev} in {netns}: {out}")))
}

/// Turns segmentation and receive offloads off on `dev` in `netns`, so its frames are at most
/// one MTU (checksum offload can stay: the emulator keeps a frame's checksum state).
///
/// # Errors
/// No `ethtool`, or it fails.
pub fn offloads_off(netns: &str, dev: &str) -> Result<(), LinuxError> {
    must(&[
        "ip", "netns", "exec", netns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro",
        "off",
    ])
    .map(|_| ())
}
