//! A PSI overlay on loopback for tests: every node a thread with its own UDP socket, roles by
//! id (`rv` the rendezvous, `f…` forwarding nodes, `p…` publishers of one file, `s…`
//! subscribers the test drives).

#![allow(dead_code, unreachable_pub)]

use std::fs;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread;
use std::time::{Duration, Instant};

use pathpool_core::{Rng, Time};
use pathpool_net::cache::RefusedStats;
use pathpool_net::control_plane::ControlRejects;
use pathpool_net::forward::ForwardStats;
use pathpool_net::get::{GetConfig, GetEndpoint};
use pathpool_net::get_metadata::Trust;
use pathpool_net::node::{run, Endpoint, NodeIo, Relay};
use pathpool_net::overlay::Overlay;
use pathpool_net::publisher::PublisherStats;
use pathpool_net::publisher::{FileStore, PublisherEndpoint, DEFAULT_CHUNK_BYTES};
use pathpool_net::rv::{RvEndpoint, RvStats};
use pathpool_net::security::SecurityMode;
use pathpool_proto::mmtp::CacheStats;
use pathpool_psi::ContentName;
use pathpool_topo::NodeIx;
use pathpool_wire::auth::{OverlayKey, PublisherKey};
use pathpool_wire::MsgType;

/// The machine's cores, shared by the tests of one binary, which the test harness runs in
/// parallel threads. A test that measures a rate in real time holds them alone
/// ([`exclusive`]); the others share them ([`shared`]) with one another but not with it.
static CORES: RwLock<()> = RwLock::new(());

/// Held by a test that measures rates: no other test of the binary runs meanwhile.
pub fn exclusive() -> RwLockWriteGuard<'static, ()> {
    CORES
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What a failed rate assertion should say about the machine: its load averages (the
/// emulated links run on the wall clock, and a busy machine moves shares and rates; see
/// docs/overlay.md, acceptance 4).
pub fn machine_load() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let averages: Vec<&str> = load.split_whitespace().take(3).collect();
    format!(
        "load average {} on {} cores; this measurement needs a machine not otherwise busy",
        averages.join(" "),
        std::thread::available_parallelism().map_or(0, std::num::NonZeroUsize::get)
    )
}

/// Held by a test that only checks outcomes: it runs beside the others of its kind.
pub fn shared() -> RwLockReadGuard<'static, ()> {
    CORES
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A scratch directory removed at the end.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Self {
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

pub fn random_file(path: &Path, bytes: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::seed_from_u64(seed);
    let data: Vec<u8> = (0..bytes.div_ceil(8))
        .flat_map(|_| rng.next_u64().to_le_bytes())
        .take(bytes)
        .collect();
    fs::write(path, &data).unwrap();
    data
}

/// Runs `endpoint` on `node` until `stop`; gives back the endpoint and the node's I/O (for
/// its counters).
pub fn spawn<E: Endpoint + Send + 'static>(
    overlay: &Overlay,
    node: NodeIx,
    socket: UdpSocket,
    mut endpoint: E,
    stop: &Arc<AtomicBool>,
) -> thread::JoinHandle<(E, NodeIo)> {
    let mut io = NodeIo::with_socket(overlay, node, socket, u64::from(node.0) + 1).unwrap();
    let stop = Arc::clone(stop);
    thread::spawn(move || {
        run(&mut io, &mut endpoint, &stop).unwrap();
        (endpoint, io)
    })
}

/// A publisher thread with its own stop flag, so a test can kill and restart it.
pub struct PublisherThread {
    pub stop: Arc<AtomicBool>,
    pub handle: Option<thread::JoinHandle<(PublisherEndpoint, NodeIo)>>,
}

/// The overlay's nodes running, except the subscribers.
pub struct Bed {
    pub overlay: Overlay,
    pub stop: Arc<AtomicBool>,
    pub file: PathBuf,
    pub name: ContentName,
    pub publishers: Vec<(NodeIx, PublisherThread)>,
    /// Each publisher's signing key (the overlay file gives their public keys).
    pub keys: Vec<(NodeIx, PublisherKey)>,
    /// The overlay key, which seals publishers' DATA_ERRORs.
    pub overlay_key: OverlayKey,
    /// A file a publisher serves instead of [`Bed::file`] (a changed copy).
    pub files: Vec<(NodeIx, PathBuf)>,
    others: Vec<(String, thread::JoinHandle<Counters>)>,
    subscriber_sockets: Vec<(NodeIx, Option<UdpSocket>)>,
    /// The cache counters of the rendezvous and forwarding nodes that have a cache, once
    /// [`finish`](Bed::finish)ed.
    pub caches: Vec<(String, CacheStats)>,
    /// What those caches refused to store (unverified metadata or chunks), by node.
    pub cache_refused: Vec<(String, RefusedStats)>,
    /// The token of the latest download started (what an on-path attacker reads off its
    /// requests).
    pub token: Arc<AtomicU64>,
    /// Every node's counters but the subscribers', once [`finish`](Bed::finish)ed.
    pub reports: Vec<(String, Report)>,
}

/// What a node counted: forwarding, refused control messages, its cache if it has one (and
/// what it refused to store), the rendezvous's or the publisher's counters if it is one.
#[derive(Debug, Clone)]
pub struct Report {
    pub forward: ForwardStats,
    pub rejects: ControlRejects,
    pub cache: Option<CacheStats>,
    pub cache_refused: Option<RefusedStats>,
    pub rv: Option<RvStats>,
    pub publisher: Option<PublisherStats>,
    /// Datagrams the kernel dropped at the node's full receive buffer.
    pub receive_overflows: u64,
}

type Counters = Report;

/// A node's counters.
fn counters(io: &NodeIo) -> Counters {
    Report {
        forward: *io.forwarder().stats(),
        rejects: io.control().rejects(),
        cache: io.cache().map(|c| *c.stats()),
        cache_refused: io.cache().map(|c| c.refused()),
        rv: None,
        publisher: None,
        receive_overflows: io.receive_overflows(),
    }
}

impl Bed {
    /// Binds every node of `text` on loopback and starts all but the subscribers; the
    /// publishers serve `file` as `name`.
    pub fn start(text: &str, file: &Path, name: &str) -> Bed {
        Bed::start_with(text, file, name, &[])
    }

    /// As [`Bed::start`], but the publishers named in `files` serve their own file.
    pub fn start_with(text: &str, file: &Path, name: &str, files: &[(&str, PathBuf)]) -> Bed {
        let key = pathpool_net::keys::new_overlay_key().unwrap();
        Self::start_with_key_and_files(text, file, name, key, files)
    }

    /// As [`start`](Bed::start), with `key` as the overlay key.
    pub fn start_with_key(
        text: &str,
        file: &Path,
        name: &str,
        key: pathpool_wire::auth::OverlayKey,
    ) -> Bed {
        Self::start_with_key_and_files(text, file, name, key, &[])
    }

    fn start_with_key_and_files(
        text: &str,
        file: &Path,
        name: &str,
        key: OverlayKey,
        files: &[(&str, PathBuf)],
    ) -> Bed {
        // Security on (issue 18), with an overlay key as `pathpool keygen` makes one.
        let overlay_key = key.clone();
        let mut overlay = Overlay::from_toml_with_key(text, "test overlay", key).unwrap();
        let sockets: Vec<UdpSocket> = (0..overlay.nodes().len())
            .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
            .collect();
        for (i, s) in sockets.iter().enumerate() {
            overlay.set_addr(NodeIx(i as u32), s.local_addr().unwrap());
        }
        // Wire version 2: every publisher signs with its own key, whose public half the
        // overlay file carries (as `pathpool keygen` writes it); seeds are per node and fixed.
        let mut keys = Vec::new();
        for i in 0..overlay.nodes().len() {
            if overlay.nodes()[i].id.starts_with('p') {
                let node = NodeIx(i as u32);
                let key = PublisherKey::from_seed([0x70 ^ i as u8; 32]);
                overlay.set_public_key(node, key.public());
                keys.push((node, key));
            }
        }
        let name = ContentName::new(name).unwrap();
        let files = files
            .iter()
            .map(|(id, f)| (overlay.node(id).unwrap(), f.clone()))
            .collect();
        let mut bed = Bed {
            overlay,
            stop: Arc::new(AtomicBool::new(false)),
            file: file.to_path_buf(),
            name,
            publishers: Vec::new(),
            keys,
            overlay_key,
            files,
            others: Vec::new(),
            caches: Vec::new(),
            cache_refused: Vec::new(),
            token: Arc::new(AtomicU64::new(0)),
            reports: Vec::new(),
            subscriber_sockets: Vec::new(),
        };
        for (i, socket) in sockets.into_iter().enumerate() {
            let node = NodeIx(i as u32);
            let id = bed.overlay.nodes()[i].id.clone();
            if node == bed.overlay.rendezvous() {
                let h = spawn(
                    &bed.overlay,
                    node,
                    socket,
                    RvEndpoint::new(&bed.overlay),
                    &bed.stop,
                );
                bed.others.push((
                    id,
                    thread::spawn(move || {
                        let (rv, io) = h.join().unwrap();
                        Report {
                            rv: Some(rv.stats()),
                            ..counters(&io)
                        }
                    }),
                ));
            } else if id.starts_with('p') {
                let t = bed.publisher(node, socket);
                bed.publishers.push((node, t));
            } else if id.starts_with('s') {
                bed.subscriber_sockets.push((node, Some(socket)));
            } else {
                let h = spawn(&bed.overlay, node, socket, Relay::default(), &bed.stop);
                bed.others
                    .push((id, thread::spawn(move || counters(&h.join().unwrap().1))));
            }
        }
        // Let the publishers announce themselves.
        thread::sleep(Duration::from_millis(300));
        bed
    }

    pub fn rv_addr(&self) -> SocketAddr {
        self.overlay.nodes()[self.overlay.rendezvous().0 as usize]
            .addr
            .unwrap()
    }

    fn publisher(&self, node: NodeIx, socket: UdpSocket) -> PublisherThread {
        let key = self
            .keys
            .iter()
            .find(|(n, _)| *n == node && self.overlay.security_mode() == SecurityMode::On)
            .map(|(_, k)| k);
        let file = self
            .files
            .iter()
            .find(|(n, _)| *n == node)
            .map_or(&self.file, |(_, f)| f);
        let store = FileStore::open(file, &self.name, DEFAULT_CHUNK_BYTES, node, key).unwrap();
        let ep = PublisherEndpoint::new(store, self.name.clone(), node, self.rv_addr())
            .with_overlay_key(Some(self.overlay_key.clone()));
        let stop = Arc::new(AtomicBool::new(false));
        PublisherThread {
            handle: Some(spawn(&self.overlay, node, socket, ep, &stop)),
            stop,
        }
    }

    /// Stops publisher `id` (its socket closes: requests to it are lost).
    pub fn kill_publisher(&mut self, id: &str) {
        let node = self.overlay.node(id).unwrap();
        let (_, t) = self
            .publishers
            .iter_mut()
            .find(|(n, _)| *n == node)
            .unwrap();
        t.stop.store(true, Ordering::Relaxed);
        if let Some(h) = t.handle.take() {
            let _ = h.join();
        }
    }

    /// Starts publisher `id` again on its address.
    pub fn restart_publisher(&mut self, id: &str) {
        let node = self.overlay.node(id).unwrap();
        let addr = self.overlay.nodes()[node.0 as usize].addr.unwrap();
        let socket = UdpSocket::bind(addr).unwrap();
        let t = self.publisher(node, socket);
        let slot = self
            .publishers
            .iter_mut()
            .find(|(n, _)| *n == node)
            .unwrap();
        slot.1 = t;
    }

    /// The socket of subscriber `id`, for a test that sends from its address (a neighbour's
    /// address, as an attacker on that link would).
    pub fn take_socket(&mut self, id: &str) -> UdpSocket {
        let node = self.overlay.node(id).unwrap();
        self.subscriber_sockets
            .iter_mut()
            .find(|(n, _)| *n == node)
            .and_then(|(_, s)| s.take())
            .expect("a subscriber's socket, not yet taken")
    }

    /// The address of node `id`.
    pub fn addr(&self, id: &str) -> SocketAddr {
        self.overlay.nodes()[self.overlay.node(id).unwrap().0 as usize]
            .addr
            .unwrap()
    }

    /// Starts a download by subscriber `id`; `progress` follows its first-copy bytes.
    pub fn get(
        &mut self,
        id: &str,
        configure: impl FnOnce(&mut GetConfig),
        out: &Path,
        progress: &Arc<AtomicU64>,
        stop: &Arc<AtomicBool>,
    ) -> thread::JoinHandle<(Counting, NodeIo)> {
        let node = self.overlay.node(id).unwrap();
        let socket = self
            .subscriber_sockets
            .iter_mut()
            .find(|(n, _)| *n == node)
            .and_then(|(_, s)| s.take())
            .expect("each subscriber downloads once");
        let mut config = GetConfig::new(self.name.clone(), out.to_path_buf());
        config.trust = Trust::from_overlay(&self.overlay);
        config.trust.overlay_key = Some(self.overlay_key.clone());
        configure(&mut config);
        let ep = Counting {
            inner: GetEndpoint::new(config, node, self.rv_addr()),
            bytes: Arc::clone(progress),
        };
        self.token.store(ep.inner.token(), Ordering::Relaxed);
        spawn(&self.overlay, node, socket, ep, stop)
    }
}

impl Bed {
    /// Stops every node and returns each one's forwarding counters, by id.
    pub fn finish(&mut self) -> Vec<(String, ForwardStats)> {
        self.stop.store(true, Ordering::Relaxed);
        let mut out = Vec::new();
        for (node, t) in &mut self.publishers {
            t.stop.store(true, Ordering::Relaxed);
            if let Some(h) = t.handle.take() {
                if let Ok((ep, io)) = h.join() {
                    let id = self.overlay.nodes()[node.0 as usize].id.clone();
                    out.push((id.clone(), *io.forwarder().stats()));
                    self.reports.push((
                        id,
                        Report {
                            publisher: Some(ep.stats()),
                            ..counters(&io)
                        },
                    ));
                }
            }
        }
        for (id, h) in self.others.drain(..) {
            if let Ok(report) = h.join() {
                if let (Some(c), Some(refused)) = (report.cache, report.cache_refused) {
                    self.caches.push((id.clone(), c));
                    self.cache_refused.push((id.clone(), refused));
                }
                out.push((id.clone(), report.forward));
                self.reports.push((id, report));
            }
        }
        out
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A download that publishes its byte count for the test thread to sample.
pub struct Counting {
    pub inner: GetEndpoint,
    pub bytes: Arc<AtomicU64>,
}

impl Endpoint for Counting {
    fn handle_datagram(
        &mut self,
        io: &mut NodeIo,
        now: Time,
        from: SocketAddr,
        msg: MsgType,
        datagram: &[u8],
    ) {
        self.inner.handle_datagram(io, now, from, msg, datagram);
        self.bytes
            .store(self.inner.progress(now).bytes, Ordering::Relaxed);
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.inner.poll_timeout()
    }
    fn handle_timeout(&mut self, io: &mut NodeIo, now: Time) {
        self.inner.handle_timeout(io, now);
    }
    fn is_done(&self) -> bool {
        self.inner.is_done()
    }
}

/// Seconds since `t`.
pub fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}
