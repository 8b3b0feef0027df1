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
use pathpool_net::get::{GetConfig, GetEndpoint, GetState};
use pathpool_net::node::{run, Endpoint, NodeIo, Relay};
use pathpool_net::overlay::Overlay;
use pathpool_net::publisher::{FileStore, PublisherEndpoint, DEFAULT_CHUNK_BYTES};
use pathpool_net::rv::RvEndpoint;
use pathpool_psi::{ContentName, Matching};
use pathpool_topo::NodeIx;

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
    /// Chunk size in bytes (default 1135: 1200-byte datagrams).
    #[arg(long, default_value_t = DEFAULT_CHUNK_BYTES)]
    pub chunk_bytes: u32,
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
        "forwarded {} copies of {} datagrams; kept {}; dropped {} (malformed {}, hop limit {}, no matching link {}, not from a neighbour {}, over the fill limit {}); not sent back {}, hop limit capped {}; send errors {}",
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
        io.send_errors()
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
    let store = FileStore::open(&a.file, &name, a.chunk_bytes)
        .map_err(|e| CliError::BadInput(e.to_string()))?;
    let stop = crate::sweep::signal_flag()?;
    let mut io = bind(&overlay, node, a.node.seed)?;
    let mut publisher = PublisherEndpoint::new(store, name.clone(), node, rv);
    let m = publisher.metadata();
    eprintln!(
        "publishing {name} ({} bytes, {} chunks of {} B) from {}; Ctrl-C stops",
        m.size_bytes, m.chunk_count, m.chunk_bytes, a.node.node
    );
    announce_ready(a.node.ready_file.as_deref(), &io)?;
    serve(&mut io, &mut publisher, &stop)?;
    let st = publisher.stats();
    eprintln!(
        "sent {} chunks ({} payload bytes), {} metadata replies; refused {}, ignored {}, read errors {}, bad tickets {}",
        st.chunks, st.payload_bytes, st.metadata, st.refused, st.ignored, st.read_errors, st.bad_ticket
    );
    Ok(())
}

/// `pathpool get NAME -o FILE --overlay FILE --node ID`.
///
/// # Errors
/// Bad arguments (exit 2); a failed download (exit 1: unknown name, no reachable source,
/// integrity mismatch, I/O), with no file left under the final name.
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
    if let Some(log) = &mut ep.log {
        log.row(&p, &overlay);
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
            eprintln!(
                "{name}: {} bytes ({:.1} MB) in {secs:.2} s, {:.1} Mb/s, SHA-256 verified",
                p.bytes,
                p.bytes as f64 / 1e6,
                p.bytes as f64 * 8.0 / secs.max(1e-9) / 1e6,
            );
            eprintln!("  from {}; written to {}", per.join(", "), a.out.display());
            Ok(())
        }
        GetState::Failed(e) => Err(CliError::Failed(format!("{name}: {e}"))),
        GetState::Subscribing | GetState::Downloading => {
            let _ = std::fs::remove_file(pathpool_net::get::part_path(&a.out));
            Err(CliError::Interrupted(format!(
                "{name}: stopped after {} bytes; nothing written",
                p.bytes
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
