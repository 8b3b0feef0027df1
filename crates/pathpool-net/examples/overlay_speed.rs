//! Speed of the overlay on loopback (issue 5, acceptance 7, and issue 18, acceptance 4;
//! printed, never asserted): one publisher, one subscriber, one path without emulation,
//! directly with `security = "on"` (the default: signed metadata, per-chunk verification,
//! MACs and tickets) and with `"off"`, and through one forwarding node (security on), next to
//! a Linux TCP transfer of the same file over loopback in the same run (its bytes dropped,
//! and written to a file and hashed as the subscriber does): each three times, alternating,
//! then the medians; then, not compared, one direct run with 8935-byte chunks. CPU time is
//! the whole process's (user + system, from /proc/self/stat), per GB of payload, and each
//! thread's.
//!
//! `cargo run --release -p pathpool-net --example overlay_speed -- [MB]` (default 256);
//! `-- MB direct`, `-- MB direct-off` or `-- MB forwarded` runs that configuration alone
//! (for a profile).

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use pathpool_core::Rng;
use pathpool_net::get::{GetConfig, GetEndpoint, GetState};
use pathpool_net::get_metadata::Trust;
use pathpool_net::node::{run, Endpoint, NodeIo, Relay};
use pathpool_net::overlay::{Overlay, SecurityMode};
use pathpool_net::publisher::{FileStore, PublisherEndpoint, DEFAULT_CHUNK_BYTES};
use pathpool_net::rv::RvEndpoint;
use pathpool_psi::ContentName;
use pathpool_topo::NodeIx;
use pathpool_wire::auth::PublisherKey;
use sha2::{Digest, Sha256};

/// User + system CPU seconds in a `/proc` stat file (a process's or a thread's).
fn stat_cpu_seconds(path: &str) -> f64 {
    let stat = fs::read_to_string(path).unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 (1-based) of the whole line: 11 and 12 here.
    (ticks(11) + ticks(12)) / 100.0
}

/// User + system CPU seconds of this process so far.
fn cpu_seconds() -> f64 {
    stat_cpu_seconds("/proc/self/stat")
}

/// User + system CPU seconds of the calling thread so far.
fn thread_cpu_seconds() -> f64 {
    stat_cpu_seconds("/proc/thread-self/stat")
}

/// Runs of each configuration in a full comparison.
const REPEATS: usize = 3;

/// Payload of the chunks of the extra run: 9000-byte datagrams (a jumbo frame's payload),
/// eight times the default chunk.
const BIG_CHUNK_BYTES: u32 = 9000 - 65;

struct Figures {
    goodput_gbps: f64,
    cpu_s_per_gb: f64,
    /// The forwarding node's thread alone, when there is one.
    forwarder_cpu_s_per_gb: f64,
}

fn report(what: &str, bytes: u64, wall: f64, cpu: f64) -> Figures {
    let gb = bytes as f64 / 1e9;
    let f = Figures {
        goodput_gbps: bytes as f64 * 8.0 / wall / 1e9,
        cpu_s_per_gb: cpu / gb,
        forwarder_cpu_s_per_gb: 0.0,
    };
    println!(
        "{what:<44} {:>6.2} Gb/s   {:>5.2} CPU s/GB   ({bytes} B in {wall:.2} s)",
        f.goodput_gbps, f.cpu_s_per_gb
    );
    f
}

/// A thread with a name, so that a profile (`perf report --sort comm`) tells the nodes apart.
fn spawn_named<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    thread::Builder::new().name(name.into()).spawn(f).unwrap()
}

fn overlay_run(
    file: &Path,
    size: u64,
    via_forwarder: bool,
    chunk_bytes: u32,
    security: SecurityMode,
) -> Figures {
    let text = if via_forwarder {
        r#"
rendezvous = "rv"
nodes = [{ id = "rv" }, { id = "f" }, { id = "p", transit = false }, { id = "s", transit = false }]
links = [{ between = ["p", "f"] }, { between = ["f", "s"] }, { between = ["f", "rv"] }]
"#
    } else {
        r#"
rendezvous = "rv"
nodes = [{ id = "rv" }, { id = "p", transit = false }, { id = "s", transit = false }]
links = [{ between = ["p", "s"] }, { between = ["p", "rv"] }]
"#
    };
    // An overlay key as `pathpool keygen` makes one (ignored with security off).
    let overlay_key = pathpool_net::keys::new_overlay_key().unwrap();
    let mut overlay = Overlay::from_toml_with_key(text, "speed", overlay_key).unwrap();
    overlay.set_security(security);
    let sockets: Vec<UdpSocket> = (0..overlay.nodes().len())
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    for (i, s) in sockets.iter().enumerate() {
        overlay.set_addr(NodeIx(i as u32), s.local_addr().unwrap());
    }
    // The publisher signs with a key the overlay carries (security on, the default).
    let key = PublisherKey::from_seed([5; 32]);
    let p_node = overlay.node("p").unwrap();
    overlay.set_public_key(p_node, key.public());
    let key = (overlay.security_mode() == SecurityMode::On).then_some(key);
    let rv_addr = overlay.nodes()[overlay.rendezvous().0 as usize]
        .addr
        .unwrap();
    let name = ContentName::new("/bench/file").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // Each node's thread returns its name and the CPU time it used.
    let mut handles = Vec::new();
    let mut sub_socket = None;
    for (i, socket) in sockets.into_iter().enumerate() {
        let node = NodeIx(i as u32);
        let id = overlay.nodes()[i].id.clone();
        let mut io = NodeIo::with_socket(&overlay, node, socket, 1).unwrap();
        let stop = Arc::clone(&stop);
        let (thread_name, mut ep): (&str, Box<dyn Endpoint + Send>) = match id.as_str() {
            "rv" => ("rv", Box::new(RvEndpoint::new(&overlay))),
            "p" => {
                let store = FileStore::open(file, &name, chunk_bytes, node, key.as_ref()).unwrap();
                let ep = PublisherEndpoint::new(store, name.clone(), node, rv_addr)
                    .with_overlay_key(overlay.overlay_key().cloned());
                ("publisher", Box::new(ep))
            }
            "s" => {
                sub_socket = Some((node, io));
                continue;
            }
            _ => ("forwarder", Box::new(Relay::default())),
        };
        handles.push(spawn_named(thread_name, move || {
            drop(run(&mut io, ep.as_mut(), &stop));
            (thread_name, thread_cpu_seconds())
        }));
    }
    thread::sleep(std::time::Duration::from_millis(200));
    let (s, mut io) = sub_socket.unwrap();
    let out = file.with_extension("got");
    let mut config = GetConfig::new(name, out.clone());
    config.trust = Trust::from_overlay(&overlay);
    config.subscriber.gap_threshold = Some(3);
    let mut ep = GetEndpoint::new(config, s, rv_addr);
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let (ep, subscriber_cpu) = spawn_named("subscriber", move || {
        run(&mut io, &mut ep, &AtomicBool::new(false)).unwrap();
        (ep, thread_cpu_seconds())
    })
    .join()
    .unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    stop.store(true, Ordering::Relaxed);
    let mut threads = vec![("subscriber", subscriber_cpu)];
    threads.extend(handles.into_iter().filter_map(|h| h.join().ok()));
    assert_eq!(ep.state(), &GetState::Done, "{ep:?}");
    let _ = fs::remove_file(out);
    for sf in ep.subscriber().subflows() {
        let st = sf.stats();
        println!(
            "  subflow {:?}: {} requests, {} timeouts, {} gap losses, {} duplicates, srtt {:?}",
            sf.id(),
            st.requests,
            st.timeouts,
            st.gap_losses,
            st.duplicates,
            sf.srtt()
        );
    }
    // The partial file's writer thread has ended by now: it is the rest of the process's
    // time (with the rendezvous's, which is negligible).
    let gb = size as f64 / 1e9;
    let named: f64 = threads.iter().map(|(_, c)| c).sum();
    let mut by_thread: Vec<String> = threads
        .iter()
        .filter(|(n, _)| *n != "rv")
        .map(|(n, c)| format!("{n} {:.2}", c / gb))
        .collect();
    by_thread.push(format!("writer {:.2}", (cpu - named).max(0.0) / gb));
    println!("  CPU s/GB by thread: {}", by_thread.join(", "));
    let what = match (via_forwarder, chunk_bytes == DEFAULT_CHUNK_BYTES, security) {
        (true, _, _) => "mmTP over the overlay, through 1 forwarding node".to_string(),
        (false, true, SecurityMode::On) => "mmTP over the overlay, publisher -> subscriber".into(),
        (false, true, SecurityMode::Off) => {
            "mmTP, publisher -> subscriber, security off".to_string()
        }
        (false, false, _) => format!("mmTP, publisher -> subscriber, {chunk_bytes} B chunks"),
    };
    Figures {
        forwarder_cpu_s_per_gb: threads
            .iter()
            .filter(|(n, _)| *n == "forwarder")
            .map(|(_, c)| c / gb)
            .sum(),
        ..report(&what, size, wall, cpu)
    }
}

/// The median of one figure over runs.
fn median(runs: &[Figures], figure: impl Fn(&Figures) -> f64) -> f64 {
    let mut v: Vec<f64> = runs.iter().map(figure).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A Linux TCP transfer of `file` over loopback. With `to_file` the receiver does what
/// `pathpool get` does with the bytes: writes them to a file, hashes them with SHA-256 and
/// syncs the file at the end; without, it drops them (the transport alone).
fn tcp_run(file: &Path, size: u64, to_file: bool) -> Figures {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let path = file.to_path_buf();
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let server = thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut f = fs::File::open(path).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = f.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            conn.write_all(&buf[..n]).unwrap();
        }
    });
    let mut conn = TcpStream::connect(addr).unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0u64;
    let out = file.with_extension("tcp");
    let mut sink = to_file.then(|| (fs::File::create(&out).unwrap(), Sha256::new()));
    loop {
        let n = conn.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        if let Some((f, hash)) = sink.as_mut() {
            f.write_all(&buf[..n]).unwrap();
            hash.update(&buf[..n]);
        }
        got += n as u64;
    }
    if let Some((f, hash)) = sink {
        f.sync_data().unwrap();
        std::hint::black_box(hash.finalize());
    }
    server.join().unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let _ = fs::remove_file(out);
    assert_eq!(got, size);
    let what = if to_file {
        "Linux TCP, written to a file and hashed"
    } else {
        "Linux TCP over loopback (same file)"
    };
    report(what, size, wall, cpu)
}

fn main() {
    let mb: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(256);
    let size = mb << 20;
    let dir = std::env::temp_dir().join(format!("pathpool-speed-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("file.bin");
    {
        let mut rng = Rng::seed_from_u64(1);
        let mut f = fs::File::create(&file).unwrap();
        let mut block = vec![0u8; 1 << 20];
        for _ in 0..mb {
            for chunk in block.chunks_mut(8) {
                chunk.copy_from_slice(&rng.next_u64().to_le_bytes()[..chunk.len()]);
            }
            f.write_all(&block).unwrap();
        }
    }
    println!("{mb} MB file, loopback, no emulation, gap-based loss detection (D86):");
    // A profile of one configuration alone: `-- MB direct`, `direct-off` or `forwarded`.
    let alone = match std::env::args().nth(2).as_deref() {
        Some("direct") => Some((false, SecurityMode::On)),
        Some("direct-off") => Some((false, SecurityMode::Off)),
        Some("forwarded") => Some((true, SecurityMode::On)),
        _ => None,
    };
    if let Some((via_forwarder, security)) = alone {
        overlay_run(&file, size, via_forwarder, DEFAULT_CHUNK_BYTES, security);
        let _ = fs::remove_dir_all(&dir);
        return;
    }
    // On two cores shared with other work a single run varies by tens of percent: the
    // configurations alternate, and the comparison is between medians.
    let (mut direct, mut direct_off, mut forwarded, mut tcp, mut tcp_file) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..REPEATS {
        direct.push(overlay_run(
            &file,
            size,
            false,
            DEFAULT_CHUNK_BYTES,
            SecurityMode::On,
        ));
        direct_off.push(overlay_run(
            &file,
            size,
            false,
            DEFAULT_CHUNK_BYTES,
            SecurityMode::Off,
        ));
        forwarded.push(overlay_run(
            &file,
            size,
            true,
            DEFAULT_CHUNK_BYTES,
            SecurityMode::On,
        ));
        tcp.push(tcp_run(&file, size, false));
        tcp_file.push(tcp_run(&file, size, true));
    }
    let gbps = |runs: &[Figures]| median(runs, |f| f.goodput_gbps);
    let cpu = |runs: &[Figures]| median(runs, |f| f.cpu_s_per_gb);
    println!("medians of {REPEATS} runs each:");
    for (what, runs) in [
        ("mmTP, publisher -> subscriber", &direct),
        ("mmTP, the same, security off", &direct_off),
        ("mmTP, through 1 forwarding node", &forwarded),
        ("Linux TCP", &tcp),
        ("Linux TCP, to a file, hashed", &tcp_file),
    ] {
        println!(
            "  {what:<32} {:>6.2} Gb/s   {:>5.2} CPU s/GB",
            gbps(runs),
            cpu(runs)
        );
    }
    println!(
        "authentication (security on against off, direct): {:+.0}% CPU per GB, goodput {:.0}% \
         of the unauthenticated transfer's",
        (cpu(&direct) / cpu(&direct_off) - 1.0) * 100.0,
        gbps(&direct) / gbps(&direct_off) * 100.0
    );
    println!(
        "forwarding node: {:+.0}% CPU per GB (its own thread: {:.0}% of the direct transfer's); \
         overlay goodput {:.0}% of TCP's, {:.0}% of TCP's written to a file and hashed",
        (cpu(&forwarded) / cpu(&direct) - 1.0) * 100.0,
        median(&forwarded, |f| f.forwarder_cpu_s_per_gb) / cpu(&direct) * 100.0,
        gbps(&direct) / gbps(&tcp) * 100.0,
        gbps(&direct) / gbps(&tcp_file) * 100.0
    );
    // Not the headline (D89 fixes 1135-byte chunks): one direct run with 9000-byte datagrams
    // shows how much of the cost is per chunk rather than per byte.
    println!("not compared (chunks of {BIG_CHUNK_BYTES} B, 9000-byte datagrams), one run:");
    overlay_run(&file, size, false, BIG_CHUNK_BYTES, SecurityMode::On);
    let _ = fs::remove_dir_all(&dir);
}
