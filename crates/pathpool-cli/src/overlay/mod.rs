//! The overlay's node commands (issue 5): `pathpool rv`, `pathpool fn`, `pathpool publish`
//! and `pathpool get`, each one node of an overlay file (docs/overlay.md) on its UDP socket,
//! driving the same state machines as the simulator.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use clap::Args;
use pathpool_cc::CcKind;
use pathpool_core::{ByteSize, Dur};
use pathpool_net::get::{GetConfig, GetEndpoint, GetError, GetState};
use pathpool_net::get_metadata::Trust;
use pathpool_net::node::{run, Endpoint, NodeIo, Relay};
use pathpool_net::overlay::{Overlay, SecurityMode};
use pathpool_net::publisher::{FileStore, PublisherEndpoint, DEFAULT_CHUNK_BYTES};
use pathpool_net::publisher_key;
use pathpool_net::publisher_reads::ReadCheck;
use pathpool_net::rv::RvEndpoint;
use pathpool_psi::{ContentName, Matching};
use pathpool_topo::NodeIx;
use pathpool_wire::auth::PublicKey;

use crate::CliError;

mod progress;

use progress::{ProgressLog, Watched};

/// The overlay file and this process's node in it.
#[derive(Args, Debug, Clone)]
pub struct NodeArgs {
    /// The overlay file (TOML: nodes, links, tm; docs/overlay.md).
    #[arg(long, value_name = "FILE")]
    pub overlay: PathBuf,
    /// This node's id in the overlay file.
    #[arg(long, value_name = "ID")]
    pub node: String,
    /// Seed of the link emulation's random losses.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Internal (`testbed up`): write the bound address to this file once the node serves.
    #[arg(long, value_name = "FILE", hide = true)]
    pub ready_file: Option<PathBuf>,
}

/// `pathpool fn`.
#[derive(Args, Debug, Clone)]
pub struct FnArgs {
    /// The overlay file and the node.
    #[command(flatten)]
    pub node: NodeArgs,
    /// An on-path chunk cache of this size (e.g. 64MB; overrides the node's `cache` in the
    /// overlay file): keeps the chunks it forwards and answers requests for them.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub cache: Option<ByteSize>,
}

fn parse_size(text: &str) -> Result<ByteSize, String> {
    match text.parse::<ByteSize>() {
        Ok(b) if b.bytes() > 0 => Ok(b),
        Ok(_) => Err("must be positive".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `pathpool rv`.
#[derive(Args, Debug, Clone)]
pub struct RvArgs {
    /// The overlay file.
    pub overlay: PathBuf,
    /// Seed of the link emulation's random losses.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Internal (`testbed up`): write the bound address to this file once the node serves.
    #[arg(long, value_name = "FILE", hide = true)]
    pub ready_file: Option<PathBuf>,
}

/// `pathpool publish`.
#[derive(Args, Debug, Clone)]
pub struct PublishArgs {
    /// The file to serve (read from disk chunk by chunk, never whole).
    pub file: PathBuf,
    /// The content's name, `/scope/.../item`.
    #[arg(long)]
    pub name: String,
    /// Chunk size in bytes (default 1119: 1200-byte datagrams), at least 64.
    #[arg(long, default_value_t = DEFAULT_CHUNK_BYTES)]
    pub chunk_bytes: u32,
    /// The publisher's signing key: 64 hex digits of its Ed25519 seed (default: NODE.key
    /// beside the overlay file). Its public key must be the node's `public_key` in the
    /// overlay file. Not read with `security = "off"`.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// When chunks read from the file are checked against the published hashes: `stat`
    /// once the file's size or times show it changed after publishing (an `fstat` per
    /// 128 KiB read), `hash` every chunk always (for files changed through `mmap` or on
    /// file systems that do not keep the times; a third more CPU).
    #[arg(long, default_value = "stat", value_name = "stat|hash")]
    pub check_reads: ReadCheck,
    /// The overlay and this node.
    #[command(flatten)]
    pub node: NodeArgs,
}

/// `pathpool get`.
#[derive(Args, Debug, Clone)]
pub struct GetArgs {
    /// The content's name, `/scope/.../item`.
    pub name: String,
    /// Where to write it (it appears under this name only when complete and verified).
    #[arg(short, long)]
    pub out: PathBuf,
    /// How to download.
    #[command(flatten)]
    pub download: DownloadOptions,
    /// Trust only metadata signed by this key (`ed25519:<64 hex>`; repeatable) instead of
    /// the overlay file's publisher keys.
    #[arg(long, value_name = "KEY")]
    pub publisher_key: Vec<String>,
    /// Accept only the content whose root hash is this (64 hex digits): a self-certifying
    /// name for one version.
    #[arg(long, value_name = "HEX")]
    pub root: Option<String>,
    /// How long after the first trusted metadata reply the other sources' replies are
    /// awaited before the root most of them signed is adopted.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub metadata_wait: Dur,
    /// The overlay and this node.
    #[command(flatten)]
    pub node: NodeArgs,
}

/// How a download runs: the options `pathpool get` and `pathpool testbed get` share.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct DownloadOptions {
    /// Congestion controller of the subflows (nmcc, lia, olia, balia, uncoupled, ...).
    #[arg(long, default_value = "nmcc")]
    pub cc: String,
    /// Most publishers to download from at once (1 = a single source).
    #[arg(long, default_value_t = 8)]
    pub max_sources: u16,
    /// Use at most this many paths from each publisher (default: all the topology manager
    /// gives).
    #[arg(long)]
    pub paths: Option<usize>,
    /// Presume a chunk request lost after this many replies to later requests of its
    /// subflow (gap-based loss detection, D86; default: the retransmission timer only, as the
    /// thesis and the simulator's default).
    #[arg(long)]
    pub gap_threshold: Option<u32>,
    /// Where each subflow's exponential backoff stops doubling (default 2s, as the
    /// simulator's `mmtp.backoff_limit`; D117): a source that stops answering is asked again
    /// at least this often (never sooner than the RTO estimate); `60s` is TCP's backoff.
    #[arg(long, value_name = "DURATION")]
    pub backoff_limit: Option<Dur>,
    /// Give up when no chunk arrives for this long.
    #[arg(long, default_value = "10s")]
    pub stall_timeout: Dur,
    /// Hide the progress display.
    #[arg(short, long)]
    pub quiet: bool,
    /// Write the download's progress to this CSV file every 100 ms: `unix_time_s`,
    /// `elapsed_s` (since the subscription), `source` (publisher node id) and `bytes`
    /// (first-copy payload bytes received from it so far), one row per source.
    #[arg(long, value_name = "FILE")]
    pub progress_log: Option<PathBuf>,
}

impl DownloadOptions {
    /// The options as command-line arguments that parse back to `self` (`testbed get`
    /// passes them to `pathpool get` inside a node's network namespace).
    #[must_use]
    pub fn to_args(&self) -> Vec<std::ffi::OsString> {
        let mut v: Vec<std::ffi::OsString> = vec![
            "--cc".into(),
            self.cc.clone().into(),
            "--max-sources".into(),
            self.max_sources.to_string().into(),
            "--stall-timeout".into(),
            self.stall_timeout.to_string().into(),
        ];
        if let Some(p) = self.paths {
            v.extend(["--paths".into(), p.to_string().into()]);
        }
        if let Some(g) = self.gap_threshold {
            v.extend(["--gap-threshold".into(), g.to_string().into()]);
        }
        if let Some(b) = self.backoff_limit {
            v.extend(["--backoff-limit".into(), b.to_string().into()]);
        }
        if self.quiet {
            v.push("--quiet".into());
        }
        if let Some(p) = &self.progress_log {
            v.extend(["--progress-log".into(), p.clone().into_os_string()]);
        }
        v
    }
}

fn load(path: &Path) -> Result<Overlay, CliError> {
    Overlay::load(path).map_err(|e| CliError::BadInput(e.to_string()))
}

fn node_of(overlay: &Overlay, args: &NodeArgs) -> Result<NodeIx, CliError> {
    overlay.node(&args.node).ok_or_else(|| {
        let names: Vec<&str> = overlay.nodes().iter().map(|n| n.id.as_str()).collect();
        CliError::BadInput(format!(
            "--node {}: not a node of {}; nodes are {}",
            args.node,
            args.overlay.display(),
            names.join(", ")
        ))
    })
}

fn rendezvous_addr(overlay: &Overlay) -> Result<SocketAddr, CliError> {
    let rv = &overlay.nodes()[overlay.rendezvous().0 as usize];
    rv.addr.ok_or_else(|| {
        CliError::BadInput(format!(
            "the rendezvous node {:?} has no address in the overlay file",
            rv.id
        ))
    })
}

fn bind(overlay: &Overlay, node: NodeIx, seed: u64) -> Result<NodeIo, CliError> {
    NodeIo::bind(overlay, node, seed).map_err(|e| CliError::Failed(e.to_string()))
}

/// Tells `testbed up` that the node is bound and about to serve: its address in `path`,
/// written under a temporary name and renamed, so a reader never sees half of it.
fn announce_ready(path: Option<&Path>, io: &NodeIo) -> Result<(), CliError> {
    let Some(path) = path else { return Ok(()) };
    let addr = io
        .local_addr()
        .map_err(|e| CliError::Failed(format!("socket: {e}")))?;
    let tmp = path.with_extension("ready-partial");
    std::fs::write(&tmp, format!("{addr}\n"))
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))
}

fn serve(io: &mut NodeIo, endpoint: &mut dyn Endpoint, stop: &AtomicBool) -> Result<(), CliError> {
    run(io, endpoint, stop).map_err(|e| CliError::Failed(format!("socket: {e}")))
}

fn print_forwarding(io: &NodeIo) {
    let st = io.forwarder().stats();
    eprintln!(
        "forwarded {} copies of {} datagrams; kept {}; dropped {} (malformed {}, hop limit {}, no matching link {}, not from a neighbour {}, over the fill limit {}); not sent back {}, hop limit capped {}; send errors {}; lost at the full receive buffer {}",
        st.copies,
        st.received,
        st.local,
        st.dropped(),
        st.malformed.total(),
        st.hop_limit_expired,
        st.no_match,
        st.not_neighbour,
        st.over_fill,
        st.not_sent_back,
        st.hop_capped,
        io.send_errors(),
        io.receive_overflows()
    );
    let rejects = io.control().rejects();
    if rejects.total() > 0 {
        let kinds: Vec<String> = rejects
            .nonzero()
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        eprintln!(
            "control messages refused: {} ({})",
            rejects.total(),
            kinds.join(", ")
        );
    }
    let kinds: Vec<String> = st
        .malformed
        .iter()
        .filter(|&(_, n)| n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if let Some(c) = io.cache() {
        let s = c.stats();
        let (capacity, used) = c.occupancy();
        eprintln!(
            "cache: {} hits, {} misses, {} replies kept, {} evicted, {} payload bytes served; holds {used} of {capacity} B",
            s.hits, s.misses, s.stored, s.evicted, s.payload_bytes_served
        );
    }
    if !kinds.is_empty() {
        eprintln!("malformed by reason: {}", kinds.join(", "));
    }
}

/// `pathpool rv OVERLAY`: the rendezvous and topology manager (and a forwarding node).
///
/// # Errors
/// A bad overlay file (exit 2); a socket failure (exit 1).
pub fn rv_command(a: &RvArgs) -> Result<(), CliError> {
    let overlay = load(&a.overlay)?;
    let node = overlay.rendezvous();
    let stop = crate::sweep::signal_flag()?;
    let mut io = bind(&overlay, node, a.seed)?;
    eprintln!(
        "rendezvous {} on {}: {} nodes, {} links; Ctrl-C stops",
        overlay.nodes()[node.0 as usize].id,
        io.local_addr()
            .map_or_else(|e| e.to_string(), |a| a.to_string()),
        overlay.nodes().len(),
        overlay.links().len()
    );
    let mut rv = RvEndpoint::new(&overlay);
    announce_ready(a.ready_file.as_deref(), &io)?;
    serve(&mut io, &mut rv, &stop)?;
    let st = rv.stats();
    eprintln!(
        "publishes {}, FID sets {}, refused {}, ignored {}, unauthenticated {}, impersonations {}",
        st.publishes, st.fid_sets, st.refused, st.ignored, st.unauthenticated, st.impersonations
    );
    eprintln!(
        "publications held {}; refused at the per-node limit {}, at the total limit {}; expired {}",
        st.publications,
        st.limits.refused_publisher_full,
        st.limits.refused_full,
        st.limits.expired
    );
    print_forwarding(&io);
    Ok(())
}

/// `pathpool fn --overlay FILE --node ID`: a forwarding node.
///
/// # Errors
/// A bad overlay file or node (exit 2); a socket failure (exit 1).
pub fn fn_command(args: &FnArgs) -> Result<(), CliError> {
    let a = &args.node;
    let overlay = load(&a.overlay)?;
    let node = node_of(&overlay, a)?;
    let stop = crate::sweep::signal_flag()?;
    let mut io = bind(&overlay, node, a.seed)?;
    if let Some(c) = args.cache {
        io.set_cache(Some(c.bytes()));
    }
    let cache = io.cache().map_or(String::new(), |c| {
        format!(" and a {} B cache", c.occupancy().0)
    });
    eprintln!(
        "forwarding node {} on {} with {} links{cache}; Ctrl-C stops",
        a.node,
        io.local_addr()
            .map_or_else(|e| e.to_string(), |a| a.to_string()),
        overlay.node_links(node).len()
    );
    let mut relay = Relay::default();
    announce_ready(a.ready_file.as_deref(), &io)?;
    serve(&mut io, &mut relay, &stop)?;
    print_forwarding(&io);
    Ok(())
}

/// Lowercase hexadecimal of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A root hash from 64 hexadecimal digits.
fn parse_root(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(text.as_bytes().chunks(2)) {
        *o = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

/// `pathpool publish FILE --name NAME --overlay FILE --node ID`.
///
/// # Errors
/// A bad name, file, overlay or node (exit 2); a socket failure (exit 1).
pub fn publish_command(a: &PublishArgs) -> Result<(), CliError> {
    let name = ContentName::new(&a.name)
        .map_err(|e| CliError::BadInput(format!("--name {}: {e}", a.name)))?;
    let overlay = load(&a.node.overlay)?;
    let node = node_of(&overlay, &a.node)?;
    let rv = rendezvous_addr(&overlay)?;
    let key = match overlay.security_mode() {
        SecurityMode::Off => None,
        SecurityMode::On => {
            let path = a
                .key
                .clone()
                .unwrap_or_else(|| publisher_key::default_path(&a.node.overlay, &a.node.node));
            let key = publisher_key::load(&path).map_err(|e| {
                CliError::BadInput(format!("--key {e} (security is on: a publisher signs)"))
            })?;
            match overlay.public_key(node) {
                Some(k) if *k == key.public() => {}
                Some(k) => {
                    return Err(CliError::BadInput(format!(
                        "--key {}: its public key {} is not node {}'s public_key {k} in {}",
                        path.display(),
                        key.public(),
                        a.node.node,
                        a.node.overlay.display()
                    )))
                }
                None => {
                    return Err(CliError::BadInput(format!(
                        "{}: node {} has no public_key: subscribers could not check what it \
                         signs (add public_key = \"{}\")",
                        a.node.overlay.display(),
                        a.node.node,
                        key.public()
                    )))
                }
            }
            Some(key)
        }
    };
    let store = FileStore::open(&a.file, &name, a.chunk_bytes, node, key.as_ref())
        .map_err(|e| CliError::BadInput(e.to_string()))?;
    let stop = crate::sweep::signal_flag()?;
    let mut io = bind(&overlay, node, a.node.seed)?;
    let mut publisher = PublisherEndpoint::new(store, name.clone(), node, rv)
        .with_overlay_key(overlay.overlay_key().cloned())
        .with_read_check(a.check_reads);
    let m = publisher.metadata();
    eprintln!(
        "publishing {name} ({} bytes, {} chunks of {} B, {} pages, root {}) from {}; Ctrl-C stops",
        m.size_bytes,
        m.data_chunks,
        m.chunk_bytes,
        m.pages,
        hex(&m.root),
        a.node.node
    );
    announce_ready(a.node.ready_file.as_deref(), &io)?;
    serve(&mut io, &mut publisher, &stop)?;
    let st = publisher.stats();
    eprintln!(
        "sent {} chunks ({} payload bytes), {} metadata replies; refused {}, ignored {}, unavailable (file changed or unreadable) {}, bad tickets {}",
        st.chunks, st.payload_bytes, st.metadata, st.refused, st.ignored, st.unavailable, st.bad_ticket
    );
    Ok(())
}

/// Names the partial files that downloads to `out` killed before (SIGKILL, a second Ctrl-C,
/// a crash) left beside it. They are never read (a download always starts a new file under
/// a new random name) nor removed (one may belong to a download to `out` running now): the
/// user is told (D174).
fn warn_of_leftovers(out: &Path) {
    for l in pathpool_net::temp_file::leftovers(out) {
        let age = l
            .modified
            .and_then(|m| m.elapsed().ok())
            .map_or(String::new(), |d| {
                format!(", last written {} s ago", d.as_secs())
            });
        eprintln!(
            "note: {} ({} bytes{age}) is the partial file of an earlier download to {} that \
             never finished; it is not used; remove it unless that download is still running",
            l.path.display(),
            l.bytes,
            out.display()
        );
    }
}

/// `pathpool get NAME -o FILE --overlay FILE --node ID`.
///
/// # Errors
/// Bad arguments (exit 2); a failed download (exit 1: unknown name, no reachable source,
/// integrity mismatch, I/O) or Ctrl-C (exit 130), with no file left under the final name
/// (an existing one left as it was) and the partial file removed.
pub fn get_command(a: &GetArgs) -> Result<(), CliError> {
    let d = &a.download;
    let name = ContentName::new(&a.name)
        .map_err(|e| CliError::BadInput(format!("NAME {}: {e}", a.name)))?;
    let cc: CcKind =
        d.cc.parse()
            .map_err(|e| CliError::BadInput(format!("--cc {}: {e}", d.cc)))?;
    if d.max_sources == 0 {
        return Err(CliError::BadInput(
            "--max-sources: must be at least 1".into(),
        ));
    }
    let overlay = load(&a.node.overlay)?;
    let node = node_of(&overlay, &a.node)?;
    let rv = rendezvous_addr(&overlay)?;
    let stop = crate::sweep::signal_flag()?;
    let mut io = bind(&overlay, node, a.node.seed)?;
    let mut config = GetConfig::new(name.clone(), a.out.clone());
    config.trust = Trust::from_overlay(&overlay);
    for k in &a.publisher_key {
        let key = PublicKey::parse(k)
            .map_err(|e| CliError::BadInput(format!("--publisher-key {k}: {e}")))?;
        config.trust.only_keys.push(key);
    }
    if let Some(r) = &a.root {
        let root = parse_root(r)
            .ok_or_else(|| CliError::BadInput(format!("--root {r}: expected 64 hex digits")))?;
        config.trust.root = Some(root);
    }
    config.metadata_wait = a.metadata_wait;
    config.cc = cc;
    config.matching = if d.max_sources == 1 {
        Matching::Single
    } else {
        Matching::Multisource {
            max_sources: usize::from(d.max_sources),
        }
    };
    config.stall_timeout = d.stall_timeout;
    if d.paths == Some(0) {
        return Err(CliError::BadInput("--paths: must be at least 1".into()));
    }
    config.paths_per_source = d.paths;
    if d.gap_threshold == Some(0) {
        return Err(CliError::BadInput(
            "--gap-threshold: must be at least 1".into(),
        ));
    }
    config.subscriber.gap_threshold = d.gap_threshold;
    if let Some(limit) = d.backoff_limit {
        config.subscriber.rtt.backoff_limit = Some(limit);
    }
    let log = d
        .progress_log
        .as_deref()
        .map(ProgressLog::create)
        .transpose()?;
    let display = !d.quiet && std::io::stderr().is_terminal();
    warn_of_leftovers(&a.out);
    let mut ep = Watched::new(
        GetEndpoint::new(config, node, rv),
        display,
        log,
        &overlay,
        node,
        name.to_string(),
    );
    serve(&mut io, &mut ep, &stop)?;
    ep.finish();
    let now = io.now();
    let p = ep.inner.progress(now);
    ep.log_row(&p);
    if let Some(log) = &ep.log {
        if let Some(e) = &log.error {
            eprintln!(
                "warning: --progress-log {}: {e}; the log is incomplete",
                log.path.display()
            );
        }
    }
    match ep.inner.state() {
        GetState::Done => {
            let secs = p.elapsed.as_secs_f64();
            let per: Vec<String> = p
                .per_source
                .iter()
                .map(|(n, b)| {
                    format!(
                        "{} {:.1} MB",
                        overlay.nodes()[n.0 as usize].id,
                        *b as f64 / 1e6
                    )
                })
                .collect();
            // Two lines, each readable at 80 columns for a few sources; the exact byte count
            // first, since it is what a script checks.
            let how = match ep.inner.metadata() {
                Some(m) if m.pages > 0 => format!(
                    "verified chunk by chunk, root {}… signed by {}",
                    &hex(&m.root)[..16],
                    overlay.nodes()[m.publisher.0 as usize].id
                ),
                Some(m) => format!("BLAKE3 {}… checked (security off)", &hex(&m.root)[..16]),
                None => String::new(),
            };
            eprintln!(
                "{name}: {} bytes ({:.1} MB) in {secs:.2} s, {:.1} Mb/s, {how}",
                p.bytes,
                p.bytes as f64 / 1e6,
                p.bytes as f64 * 8.0 / secs.max(1e-9) / 1e6,
            );
            eprintln!("  from {}; written to {}", per.join(", "), a.out.display());
            let st = ep.inner.stats();
            if st.renewed_tickets + st.paths_not_renewed > 0 {
                eprintln!(
                    "  FID tickets renewed before expiry: {} path tickets in all, {} paths not renewed",
                    st.renewed_tickets, st.paths_not_renewed
                );
            }
            if !ep.inner.excluded().is_empty() {
                eprintln!("  excluded: {}", ep.inner.excluded_summary());
            }
            Ok(())
        }
        GetState::Failed(e) => {
            if !ep.inner.excluded().is_empty() && !matches!(e, GetError::AllSourcesExcluded(_)) {
                eprintln!("  excluded: {}", ep.inner.excluded_summary());
            }
            Err(CliError::Failed(format!("{name}: {e}")))
        }
        GetState::Subscribing | GetState::Downloading => {
            // Each clause says what is true on disk: a partial file exists only once the
            // metadata has come, and the output is touched only by the verified rename.
            let partial = match ep.inner.abandon(now) {
                Ok(None) => "nothing written".to_string(),
                Ok(Some(path)) => format!("removed the partial file {}", path.display()),
                Err(e) => format!("the partial file could not be removed: {e}"),
            };
            let out = if a.out.symlink_metadata().is_ok() {
                "left as it was"
            } else {
                "not created"
            };
            Err(CliError::Interrupted(format!(
                "{name}: stopped after {} bytes; {partial}; {} {out}",
                p.bytes,
                a.out.display()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Options {
        #[command(flatten)]
        download: DownloadOptions,
    }

    fn parse(args: &[std::ffi::OsString]) -> DownloadOptions {
        let mut argv: Vec<std::ffi::OsString> = vec!["get".into()];
        argv.extend_from_slice(args);
        Options::try_parse_from(argv).unwrap().download
    }

    /// `testbed get` in a network namespace passes its options on as arguments: every one
    /// survives the trip.
    #[test]
    fn download_options_survive_the_command_line() {
        let defaults = parse(&[]);
        assert_eq!(parse(&defaults.to_args()), defaults);
        let all = DownloadOptions {
            cc: "lia".into(),
            max_sources: 1,
            paths: Some(2),
            gap_threshold: Some(3),
            backoff_limit: Some(Dur::from_ms(1500)),
            stall_timeout: Dur::from_secs(30),
            quiet: true,
            progress_log: Some(PathBuf::from("/tmp/p.csv")),
        };
        assert_eq!(parse(&all.to_args()), all);
    }
}
