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
    /// The longest time, seconds, during which the socket took no byte: a connection the
    /// kernel stopped moving shows here (docs/linux.md, "A stalled MPTCP connection").
    /// Measured by the sender only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_stall_s: Option<f64>,
}

/// How long one blocked write may wait before the sender looks at its deadline again.
const WRITE_WAIT: Duration = Duration::from_millis(200);

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

/// Waits for a `pathpool-linux send` child (`who`, for messages) and reads its report.
///
/// # Errors
/// It cannot be waited for, exits non-zero (its standard error is quoted), or prints no
/// report.
pub fn report_of(child: std::process::Child, who: &str) -> Result<Transferred, LinuxError> {
    let out = child
        .wait_with_output()
        .map_err(|e| LinuxError::Failed(format!("the {who}: {e}")))?;
    if !out.status.success() {
        return Err(LinuxError::Failed(format!(
            "the {who} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| LinuxError::Failed(format!("the {who}'s report: {e}")))
}

/// Checks that the kernel offers congestion control `cc`.
///
/// # Errors
/// It does not: the message names it and lists what the kernel has.
pub fn check_available(cc: &str) -> Result<(), LinuxError> {
    let available = std::fs::read_to_string(AVAILABLE).unwrap_or_default();
    if available.split_whitespace().any(|n| n == cc) {
        return Ok(());
    }
    Err(LinuxError::BadInput(format!(
        "--cc {cc}: no such congestion control in this kernel (it has: {}); `pathpool linux \
         load` registers pp_nmcc, pp_lia, pp_olia and pp_balia, `modprobe tcp_<name>` loads a \
         kernel module's",
        available.trim()
    )))
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
    if chosen {
        // An MPTCP socket accepts any name before it connects (the kernel applies it to the
        // subflows later), so the name is checked against the kernel's list here.
        check_available(cc)?;
    }
    let sock = socket(to, mptcp).map_err(|e| io_error(&format!("an {kind} socket"), &e))?;
    if chosen {
        sock.set_tcp_congestion(cc.as_bytes())
            .map_err(|e| io_error(&format!("TCP_CONGESTION {cc}"), &e))?;
    }
    sock.connect(&to.into())
        .map_err(|e| io_error(&format!("connecting to {to} over {kind}"), &e))?;
    let mut stream: TcpStream = sock.into();
    // A write blocked on a connection that stopped moving would otherwise hold the sender,
    // and the bed waiting for it, for ever (seen on 6.18 MPTCP, docs/linux.md): the sender
    // ends at its deadline whatever the connection does.
    stream
        .set_write_timeout(Some(WRITE_WAIT))
        .map_err(|e| io_error("SO_SNDTIMEO", &e))?;
    let chunk = vec![0x5au8; 64 * 1024];
    let start = Instant::now();
    let (mut bytes, mut last_progress, mut longest_stall) = (0u64, start, Duration::ZERO);
    while start.elapsed() < duration {
        match stream.write(&chunk) {
            Ok(n) => {
                bytes += n as u64;
                last_progress = Instant::now();
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                longest_stall = longest_stall.max(last_progress.elapsed());
            }
            Err(e) => return Err(io_error(&format!("sending to {to}"), &e)),
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let seconds = start.elapsed().as_secs_f64();
    Ok(Transferred {
        peer: to.to_string(),
        bytes,
        seconds,
        mbps: bytes as f64 * 8.0 / seconds / 1e6,
        longest_stall_s: Some(longest_stall.as_secs_f64()),
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
        handles.push(thread::spawn(move || -> Result<Transferred, LinuxError> {
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
                longest_stall_s: None,
            };
            print_line(&serde_json::to_string(&t).unwrap_or_default())?;
            Ok(t)
        }));
    }
    handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(LinuxError::Failed("a reading thread panicked".into())))
        })
        .collect()
}

/// Writes one line of a report to standard output. A reader that has gone (a closed pipe)
/// is an error to return, not a panic in `println!`.
///
/// # Errors
/// When standard output cannot be written.
pub fn print_line(line: &str) -> Result<(), LinuxError> {
    writeln!(io::stdout().lock(), "{line}")
        .map_err(|e| io_error("writing the report to standard output", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer that accepts and never reads stands for a connection the kernel stopped
    /// moving: the sender still ends at its deadline and reports the stall, where it used to
    /// block in `write` for ever.
    #[test]
    fn a_sender_whose_peer_stops_reading_ends_at_its_deadline_and_reports_the_stall() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let to = listener.local_addr().unwrap();
        let held = thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            thread::sleep(Duration::from_secs(4));
            drop(stream);
        });
        let started = Instant::now();
        let t = send(to, Duration::from_secs(2), false, "default").unwrap();
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(2000) + 2 * WRITE_WAIT + Duration::from_millis(300),
            "the sender took {took:?} for a 2-s run"
        );
        let stall = t.longest_stall_s.expect("the sender measures its stalls");
        // The socket buffers fill within milliseconds on loopback; the rest is a stall.
        assert!(stall > 1.0, "longest stall {stall} s, {} bytes", t.bytes);
        assert!(t.bytes > 0);
        held.join().unwrap();
    }
}
