//! A bulk sender and a sink over kernel TCP or MPTCP, for the test beds and experiments:
//! the sender picks the congestion control per socket (`TCP_CONGESTION`, set before
//! `connect`, so every MPTCP subflow inherits it), the sink counts what each connection
//! delivered.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use socket2::{Domain, Protocol, Socket, Type};

use crate::LinuxError;

const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// What one connection carried.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Transferred {
    /// The peer.
    pub peer: String,
    /// Payload bytes.
    pub bytes: u64,
    /// From the first byte to the end, seconds.
    pub seconds: f64,
    /// bytes·8/seconds.
    pub mbps: f64,
}

fn socket(addr: SocketAddr, mptcp: bool) -> io::Result<Socket> {
    let domain = Domain::for_address(addr);
    let protocol = if mptcp {
        Protocol::MPTCP
    } else {
        Protocol::TCP
    };
    Socket::new(domain, Type::STREAM, Some(protocol))
}

fn io_error(what: &str, e: &io::Error) -> LinuxError {
    // EPROTONOSUPPORT: the kernel has no MPTCP, or it is disabled.
    if e.raw_os_error() == Some(93) {
        LinuxError::Unsupported(format!(
            "{what}: {e}; this kernel does not offer MPTCP (net.mptcp.enabled = 0 or no \
             CONFIG_MPTCP)"
        ))
    } else {
        LinuxError::Failed(format!("{what}: {e}"))
    }
}

/// Sends for `duration` to `to` with congestion control `cc` (`"default"`: the network
/// namespace's default, `net.ipv4.tcp_congestion_control`), over MPTCP when `mptcp`.
///
/// # Errors
/// An unknown algorithm, no MPTCP, or a failed connection.
pub fn send(
    to: SocketAddr,
    duration: Duration,
    mptcp: bool,
    cc: &str,
) -> Result<Transferred, LinuxError> {
    let kind = if mptcp { "MPTCP" } else { "TCP" };
    let chosen = cc != "default";
    // An MPTCP socket accepts any name before it connects (the kernel applies it to the
    // subflows later), so the name is checked against the kernel's list here.
    let available = std::fs::read_to_string(AVAILABLE).unwrap_or_default();
    if chosen && !available.split_whitespace().any(|n| n == cc) {
        return Err(LinuxError::BadInput(format!(
            "--cc {cc}: no such congestion control in this kernel (it has: {}); `pathpool \
             linux load` registers pp_nmcc, pp_lia, pp_olia and pp_balia, `modprobe \
             tcp_<name>` loads a kernel module's",
            available.trim()
        )));
    }
    let sock = socket(to, mptcp).map_err(|e| io_error(&format!("an {kind} socket"), &e))?;
    if chosen {
        sock.set_tcp_congestion(cc.as_bytes())
            .map_err(|e| io_error(&format!("TCP_CONGESTION {cc}"), &e))?;
    }
    sock.connect(&to.into())
        .map_err(|e| io_error(&format!("connecting to {to} over {kind}"), &e))?;
    let mut stream: TcpStream = sock.into();
    let chunk = vec![0x5au8; 64 * 1024];
    let start = Instant::now();
    let mut bytes = 0u64;
    while start.elapsed() < duration {
        let n = stream
            .write(&chunk)
            .map_err(|e| io_error(&format!("sending to {to}"), &e))?;
        bytes += n as u64;
    }
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let seconds = start.elapsed().as_secs_f64();
    Ok(Transferred {
        peer: to.to_string(),
        bytes,
        seconds,
        mbps: bytes as f64 * 8.0 / seconds / 1e6,
    })
}

/// Accepts `connections` connections on `listen` (MPTCP sockets also take plain TCP) and
/// reads each to its end; prints one JSON line per connection as it ends.
///
/// # Errors
/// When the address cannot be bound.
pub fn sink(
    listen: SocketAddr,
    connections: usize,
    mptcp: bool,
) -> Result<Vec<Transferred>, LinuxError> {
    let sock = socket(listen, mptcp).map_err(|e| io_error("a listening socket", &e))?;
    sock.set_reuse_address(true)
        .map_err(|e| io_error("SO_REUSEADDR", &e))?;
    sock.bind(&listen.into())
        .map_err(|e| io_error(&format!("binding {listen}"), &e))?;
    sock.listen(64).map_err(|e| io_error("listen", &e))?;
    let listener: TcpListener = sock.into();
    let mut handles = Vec::new();
    for _ in 0..connections {
        let (mut stream, peer) = listener.accept().map_err(|e| io_error("accept", &e))?;
        handles.push(thread::spawn(move || {
            let mut buf = vec![0u8; 256 * 1024];
            let mut bytes = 0u64;
            let mut first: Option<Instant> = None;
            loop {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        first.get_or_insert_with(Instant::now);
                        bytes += n as u64;
                    }
                }
            }
            let seconds = first.map_or(0.0, |t| t.elapsed().as_secs_f64());
            let t = Transferred {
                peer: peer.to_string(),
                bytes,
                seconds,
                mbps: if seconds > 0.0 {
                    bytes as f64 * 8.0 / seconds / 1e6
                } else {
                    0.0
                },
            };
            println!("{}", serde_json::to_string(&t).unwrap_or_default());
            t
        }));
    }
    Ok(handles.into_iter().filter_map(|h| h.join().ok()).collect())
}
