//! End-to-end downloads over a PSI overlay on loopback: every node a thread with its own UDP
//! socket, the rendezvous and topology manager, forwarding nodes with emulated links,
//! stateless publishers serving a file from disk and an mmTP subscriber (issue 5).

use std::fs;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use pathpool_core::Rng;
use pathpool_net::get::{GetConfig, GetEndpoint, GetError, GetState};
use pathpool_net::node::{run, Endpoint, NodeIo, Relay};
use pathpool_net::overlay::Overlay;
use pathpool_net::publisher::{FileStore, PublisherEndpoint, DEFAULT_CHUNK_BYTES};
use pathpool_net::rv::RvEndpoint;
use pathpool_psi::ContentName;
use pathpool_topo::NodeIx;

/// A scratch directory removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("pathpool-net-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn random_file(path: &Path, bytes: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::seed_from_u64(seed);
    let data: Vec<u8> = (0..bytes.div_ceil(8))
        .flat_map(|_| rng.next_u64().to_le_bytes())
        .take(bytes)
        .collect();
    fs::write(path, &data).unwrap();
    data
}

/// An overlay with every node on a loopback socket bound to port 0; the sockets go to the
/// nodes' threads.
fn bind_all(text: &str) -> (Overlay, Vec<UdpSocket>) {
    let mut overlay = Overlay::from_toml(text, "test overlay").unwrap();
    let sockets: Vec<UdpSocket> = (0..overlay.nodes().len())
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    for (i, s) in sockets.iter().enumerate() {
        overlay.set_addr(NodeIx(i as u32), s.local_addr().unwrap());
    }
    (overlay, sockets)
}

type Handle = thread::JoinHandle<()>;

fn spawn<E: Endpoint + Send + 'static>(
    overlay: &Overlay,
    node: NodeIx,
    socket: UdpSocket,
    mut endpoint: E,
    stop: &Arc<AtomicBool>,
) -> thread::JoinHandle<E> {
    let mut io = NodeIo::with_socket(overlay, node, socket, 1).unwrap();
    let stop = Arc::clone(stop);
    thread::spawn(move || {
        run(&mut io, &mut endpoint, &stop).unwrap();
        endpoint
    })
}

/// Three publishers behind two forwarding nodes, the subscriber dual-homed on both.
const OVERLAY: &str = r#"
rendezvous = "rv"
tm = { policy = "k-shortest", k = 1 }
nodes = [
  { id = "rv" }, { id = "f1" }, { id = "f2" },
  { id = "p1", transit = false }, { id = "p2", transit = false }, { id = "p3", transit = false },
  { id = "s", transit = false },
]
links = [
  { between = ["p1", "f1"], rate = "100Mbps", delay = "2ms", loss = 0.01 },
  { between = ["p2", "f1"], rate = "100Mbps", delay = "3ms" },
  { between = ["p3", "f2"], rate = "100Mbps", delay = "4ms", loss = 0.01 },
  { between = ["f1", "s"], rate = "200Mbps", delay = "1ms", queue = "200KB" },
  { between = ["f2", "s"], rate = "200Mbps", delay = "1ms", queue = "200KB" },
  { between = ["f1", "rv"] },
  { between = ["f2", "rv"] },
]
"#;

struct Testbed {
    stop: Arc<AtomicBool>,
    others: Vec<Handle>,
}

impl Drop for Testbed {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.others.drain(..) {
            let _ = h.join();
        }
    }
}

fn start_overlay(
    overlay: &Overlay,
    sockets: &mut [Option<UdpSocket>],
    file: &Path,
    name: &ContentName,
) -> Testbed {
    let stop = Arc::new(AtomicBool::new(false));
    let rv = overlay.rendezvous();
    let rv_addr = overlay.nodes()[rv.0 as usize].addr.unwrap();
    let mut others: Vec<Handle> = Vec::new();
    for (i, n) in overlay.nodes().iter().enumerate() {
        let node = NodeIx(i as u32);
        let socket = sockets[i].take().unwrap();
        let h: Handle = if node == rv {
            let ep = RvEndpoint::new(overlay);
            let h = spawn(overlay, node, socket, ep, &stop);
            thread::spawn(move || drop(h.join()))
        } else if n.id.starts_with('p') {
            let store = FileStore::open(file, name, DEFAULT_CHUNK_BYTES).unwrap();
            let ep = PublisherEndpoint::new(store, name.clone(), node, rv_addr);
            let h = spawn(overlay, node, socket, ep, &stop);
            thread::spawn(move || drop(h.join()))
        } else if n.id == "s" {
            sockets[i] = Some(socket);
            continue;
        } else {
            let h = spawn(overlay, node, socket, Relay::default(), &stop);
            thread::spawn(move || drop(h.join()))
        };
        others.push(h);
    }
    Testbed { stop, others }
}

#[test]
fn a_file_from_three_publishers_arrives_bit_identical_despite_loss() {
    let dir = Scratch::new("three");
    let src = dir.0.join("content.bin");
    let size = 8 << 20;
    let data = random_file(&src, size, 42);
    let name = ContentName::new("/test/content").unwrap();
    let (overlay, sockets) = bind_all(OVERLAY);
    let mut sockets: Vec<Option<UdpSocket>> = sockets.into_iter().map(Some).collect();
    let _bed = start_overlay(&overlay, &mut sockets, &src, &name);
    // Let the publishers announce themselves.
    thread::sleep(Duration::from_millis(300));
    let s = overlay.node("s").unwrap();
    let out = dir.0.join("downloaded.bin");
    let config = GetConfig::new(name, out.clone());
    let rv_addr = overlay.nodes()[overlay.rendezvous().0 as usize]
        .addr
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let getter = spawn(
        &overlay,
        s,
        sockets[s.0 as usize].take().unwrap(),
        GetEndpoint::new(config, s, rv_addr),
        &stop,
    );
    let ep = getter.join().unwrap();
    let wall = started.elapsed();
    assert_eq!(ep.state(), &GetState::Done, "{ep:?}");
    let got = fs::read(&out).unwrap();
    assert!(got == data, "the downloaded file differs from the source");
    let progress = ep.progress(pathpool_core::Time::MAX);
    assert_eq!(progress.per_source.len(), 3, "one path per publisher");
    for (node, bytes) in &progress.per_source {
        assert!(*bytes > 0, "publisher {node:?} sent nothing: {progress:?}");
    }
    let st = ep.subscriber().stats();
    eprintln!(
        "{} MB in {:.2} s ({:.1} Mb/s), per source {:?}, {st:?}",
        size >> 20,
        wall.as_secs_f64(),
        size as f64 * 8.0 / wall.as_secs_f64() / 1e6,
        progress.per_source
    );
}

#[test]
fn an_unknown_name_fails_cleanly_without_a_file() {
    let dir = Scratch::new("unknown");
    let src = dir.0.join("content.bin");
    random_file(&src, 10_000, 1);
    let name = ContentName::new("/test/content").unwrap();
    let (overlay, sockets) = bind_all(OVERLAY);
    let mut sockets: Vec<Option<UdpSocket>> = sockets.into_iter().map(Some).collect();
    let _bed = start_overlay(&overlay, &mut sockets, &src, &name);
    thread::sleep(Duration::from_millis(200));
    let s = overlay.node("s").unwrap();
    let out = dir.0.join("never.bin");
    let config = GetConfig::new(ContentName::new("/test/other").unwrap(), out.clone());
    let rv_addr = overlay.nodes()[overlay.rendezvous().0 as usize]
        .addr
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let ep = spawn(
        &overlay,
        s,
        sockets[s.0 as usize].take().unwrap(),
        GetEndpoint::new(config, s, rv_addr),
        &stop,
    )
    .join()
    .unwrap();
    match ep.state() {
        GetState::Failed(GetError::Refused(text)) => {
            assert!(text.contains("/test/other"), "{text}")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(!out.exists());
    assert!(!pathpool_net::get::part_path(&out).exists());
}
