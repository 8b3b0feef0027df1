//! What `pathpool get` shows while it downloads, and its `--progress-log`.
//!
//! The display fits the terminal's width (80 columns included): a bar with the share done,
//! megabytes (10^6 bytes) received of the whole, the rate in Mb/s over the last two seconds
//! and the time left at that rate; then a line per source and, under it, a line per path
//! (named by the nodes it crosses) with its rate, megabytes and the requests it lost. One
//! family of units throughout: MB and Mb/s.

use std::collections::VecDeque;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use pathpool_core::{Dur, Time};
use pathpool_net::get::{GetEndpoint, GetProgress};
use pathpool_net::node::{Endpoint, NodeIo};
use pathpool_net::overlay::Overlay;
use pathpool_topo::NodeIx;
use pathpool_wire::MsgType;

use crate::CliError;

/// How often the display is redrawn.
const DRAW_EVERY: Dur = Dur::from_ms(250);
/// How often `--progress-log` gets a row.
const LOG_EVERY: Dur = Dur::from_ms(100);
/// Rates are measured over this much of the recent past.
const RATE_WINDOW: Dur = Dur::from_secs(2);
/// Beyond this many lines the paths are left out and only the sources shown.
const MAX_LINES: usize = 16;

/// `--progress-log`: the CSV file, the next row's time and the first write error (reported
/// at the end; the download goes on without the log).
pub(super) struct ProgressLog {
    pub(super) path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    next: Time,
    pub(super) error: Option<std::io::Error>,
}

impl ProgressLog {
    pub(super) fn create(path: &Path) -> Result<Self, CliError> {
        let file = std::fs::File::create(path)
            .map_err(|e| CliError::BadInput(format!("--progress-log {}: {e}", path.display())))?;
        let mut log = ProgressLog {
            path: path.to_path_buf(),
            out: std::io::BufWriter::new(file),
            next: Time::ZERO,
            error: None,
        };
        log.write(|out| writeln!(out, "unix_time_s,elapsed_s,source,path,bytes,requests,lost"));
        Ok(log)
    }

    fn write(
        &mut self,
        f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
    ) {
        if self.error.is_none() {
            if let Err(e) = f(&mut self.out).and_then(|()| self.out.flush()) {
                self.error = Some(e);
            }
        }
    }

    /// One row per path of `p`; `vias` are the paths' nodes as the display shows them.
    fn row(&mut self, p: &GetProgress, names: &Overlay, vias: &[String]) {
        let unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let elapsed_s = p.elapsed.as_secs_f64();
        let rows: Vec<String> = p
            .per_path
            .iter()
            .zip(vias)
            .map(|(x, via)| {
                let id = &names.nodes()[x.publisher.0 as usize].id;
                format!(
                    "{unix_s:.3},{elapsed_s:.3},{id},{via},{},{},{}",
                    x.bytes, x.requests, x.lost
                )
            })
            .collect();
        self.write(|out| rows.iter().try_for_each(|r| writeln!(out, "{r}")));
    }
}

/// `1234567` bytes as `1.2 MB`.
fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// A rate as `26.4 Mb/s`.
fn mbps(bps: f64) -> String {
    format!("{:.1} Mb/s", bps / 1e6)
}

/// Seconds left as `7s`, `3m05s` or `2h04m`.
fn eta(secs: f64) -> String {
    if !secs.is_finite() {
        return "-".into();
    }
    let s = secs.ceil() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

/// `text` cut to `width` characters, the last one an ellipsis if anything was cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// One path as the display shows it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct PathLine {
    /// Its publisher's node id.
    pub(super) source: String,
    /// The nodes between the publisher and the subscriber, `bottom>left>top` (empty when the
    /// publisher is a neighbour; `?` when its FID could not be traced).
    pub(super) via: String,
    pub(super) bytes: u64,
    pub(super) bps: f64,
    pub(super) requests: u64,
    pub(super) lost: u64,
}

/// `lost 3 (0.4%)`, or nothing when nothing was lost.
fn lost(lost: u64, requests: u64) -> String {
    if lost == 0 {
        return String::new();
    }
    format!(
        "lost {lost} ({:.1}%)",
        100.0 * lost as f64 / requests.max(1) as f64
    )
}

/// The display's lines for a download of `size` bytes (when known) of which `bytes` are in,
/// at `bps`, with its paths, in at most `width` columns each.
pub(super) fn render(
    name: &str,
    bytes: u64,
    size: Option<u64>,
    bps: f64,
    paths: &[PathLine],
    width: usize,
) -> Vec<String> {
    let width = width.max(40);
    let mut lines = Vec::new();
    match size {
        None if paths.is_empty() => lines.push(fit(&format!("{name}: subscribing"), width)),
        None => lines.push(fit(
            &format!(
                "{name}: {} path{}, waiting for the metadata",
                paths.len(),
                if paths.len() == 1 { "" } else { "s" }
            ),
            width,
        )),
        Some(size) => {
            let done = bytes as f64 / size.max(1) as f64;
            let left = size.saturating_sub(bytes) as f64 * 8.0 / bps;
            let right = format!(
                " {:>3.0}%  {}/{}  {}  ETA {}",
                100.0 * done,
                mb(bytes).trim_end_matches(" MB"),
                mb(size),
                mbps(bps),
                eta(left)
            );
            let bar_width = width.saturating_sub(right.chars().count() + 2).max(10);
            let filled = ((done.clamp(0.0, 1.0) * bar_width as f64) as usize).min(bar_width);
            lines.push(fit(
                &format!(
                    "[{}{}]{right}",
                    "#".repeat(filled),
                    "-".repeat(bar_width - filled)
                ),
                width,
            ));
        }
    }
    let mut sources: Vec<&str> = Vec::new();
    for p in paths {
        if !sources.contains(&p.source.as_str()) {
            sources.push(&p.source);
        }
    }
    let show_paths = 1 + sources.len() + paths.len() <= MAX_LINES;
    // Columns: a label, the rate, the megabytes, the losses; the label takes what the others
    // leave, so rates and sizes line up whatever the names.
    const LOST_WIDTH: usize = 17;
    let label_width = width.saturating_sub(11 + 10 + 2 + LOST_WIDTH).max(12);
    let row = |label: &str, bps: f64, bytes: u64, lost_text: String| {
        let label = fit(label, label_width - 1);
        fit(
            format!(
                "{label:<label_width$}{:>11}{:>10}  {lost_text}",
                mbps(bps),
                mb(bytes)
            )
            .trim_end(),
            width,
        )
    };
    for source in &sources {
        let mine: Vec<&PathLine> = paths.iter().filter(|p| p.source == *source).collect();
        let n = mine.len();
        lines.push(row(
            &format!("  {source} ({n} path{})", if n == 1 { "" } else { "s" }),
            mine.iter().map(|p| p.bps).sum(),
            mine.iter().map(|p| p.bytes).sum(),
            lost(
                mine.iter().map(|p| p.lost).sum(),
                mine.iter().map(|p| p.requests).sum(),
            ),
        ));
        if show_paths {
            for p in mine {
                let via = if p.via.is_empty() {
                    "    direct".to_string()
                } else {
                    format!("    via {}", p.via)
                };
                lines.push(row(&via, p.bps, p.bytes, lost(p.lost, p.requests)));
            }
        }
    }
    if !show_paths && !paths.is_empty() {
        lines.push(fit(
            &format!(
                "  ({} paths: too many to show each; --progress-log records every source)",
                paths.len()
            ),
            width,
        ));
    }
    lines
}

/// A download with its display and its optional CSV log.
pub(super) struct Watched<'a> {
    pub(super) inner: GetEndpoint,
    bar: Option<ProgressBar>,
    pub(super) log: Option<ProgressLog>,
    names: &'a Overlay,
    subscriber: NodeIx,
    content: String,
    next_draw: Time,
    /// Recent `(time, total bytes, bytes per path)`, for rates over [`RATE_WINDOW`].
    history: VecDeque<(Time, u64, Vec<u64>)>,
    /// Each path's `via`, traced once per FID.
    routes: Vec<(pathpool_topo::Fid, String)>,
}

impl<'a> Watched<'a> {
    /// `display`: draw on standard error (a terminal).
    pub(super) fn new(
        inner: GetEndpoint,
        display: bool,
        log: Option<ProgressLog>,
        names: &'a Overlay,
        subscriber: NodeIx,
        content: String,
    ) -> Self {
        let bar = display.then(|| {
            let b = ProgressBar::new(0);
            b.set_style(
                ProgressStyle::with_template("{msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        Watched {
            inner,
            bar,
            log,
            names,
            subscriber,
            content,
            next_draw: Time::ZERO,
            history: VecDeque::new(),
            routes: Vec::new(),
        }
    }

    /// Clears the display (before the summary line).
    pub(super) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    /// Writes `p` to the `--progress-log`, if there is one.
    pub(super) fn log_row(&mut self, p: &GetProgress) {
        if self.log.is_none() {
            return;
        }
        let vias: Vec<String> = p.per_path.iter().map(|x| self.via(x)).collect();
        if let Some(log) = &mut self.log {
            log.row(p, self.names, &vias);
        }
    }

    fn via(&mut self, path: &pathpool_net::get::PathProgress) -> String {
        if let Some((_, v)) = self.routes.iter().find(|(f, _)| *f == path.forward_fid) {
            return v.clone();
        }
        let names = self.names;
        let v = names
            .route_of(path.publisher, self.subscriber, &path.forward_fid)
            .map_or_else(
                || "?".to_string(),
                |r| {
                    r[1..r.len() - 1]
                        .iter()
                        .map(|n| names.nodes()[n.0 as usize].id.as_str())
                        .collect::<Vec<_>>()
                        .join(">")
                },
            );
        self.routes.push((path.forward_fid, v.clone()));
        v
    }

    fn update(&mut self, now: Time) {
        if self.log.as_ref().is_some_and(|log| now >= log.next) {
            let p = self.inner.progress(now);
            self.log_row(&p);
            if let Some(log) = &mut self.log {
                log.next = now + LOG_EVERY;
            }
        }
        if self.bar.is_none() || now < self.next_draw {
            return;
        }
        self.next_draw = now + DRAW_EVERY;
        let p = self.inner.progress(now);
        let per_path: Vec<u64> = p.per_path.iter().map(|x| x.bytes).collect();
        // A new FID set restarts the rates of its paths.
        if self
            .history
            .back()
            .is_some_and(|(_, _, b)| b.len() != per_path.len())
        {
            self.history.clear();
        }
        self.history.push_back((now, p.bytes, per_path));
        while self
            .history
            .front()
            .is_some_and(|(t, _, _)| now.saturating_since(*t) > RATE_WINDOW)
        {
            self.history.pop_front();
        }
        let (t0, b0, paths0) = self.history.front().cloned().expect("just pushed");
        let secs = now.saturating_since(t0).as_secs_f64();
        let rate = |now_bytes: u64, then: u64| {
            if secs > 0.0 {
                now_bytes.saturating_sub(then) as f64 * 8.0 / secs
            } else {
                0.0
            }
        };
        let lines: Vec<PathLine> = p
            .per_path
            .iter()
            .enumerate()
            .map(|(i, x)| PathLine {
                source: self.names.nodes()[x.publisher.0 as usize].id.clone(),
                via: self.via(x),
                bytes: x.bytes,
                bps: rate(x.bytes, paths0.get(i).copied().unwrap_or(0)),
                requests: x.requests,
                lost: x.lost,
            })
            .collect();
        let width = console_width();
        let text = render(
            &self.content,
            p.bytes,
            p.size,
            rate(p.bytes, b0),
            &lines,
            width,
        )
        .join("\n");
        if let Some(bar) = &self.bar {
            bar.set_message(text);
        }
    }

    /// The earliest of the display's and the log's next update, if either is on.
    fn next_update(&self) -> Option<Time> {
        let bar = self.bar.as_ref().map(|_| self.next_draw);
        let log = self.log.as_ref().map(|l| l.next);
        match (bar, log) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The terminal's width (`COLUMNS`, else 80): indicatif clips lines to the terminal itself,
/// so this only has to be right about the room there is.
fn console_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(80)
}

impl Endpoint for Watched<'_> {
    fn handle_datagram(
        &mut self,
        io: &mut NodeIo,
        now: Time,
        from: SocketAddr,
        msg: MsgType,
        datagram: &[u8],
    ) {
        self.inner.handle_datagram(io, now, from, msg, datagram);
        self.update(now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        let inner = self.inner.poll_timeout();
        match self.next_update() {
            None => inner,
            Some(next) => Some(inner.map_or(next, |t| t.min(next))),
        }
    }
    fn handle_timeout(&mut self, io: &mut NodeIo, now: Time) {
        if self.inner.poll_timeout().is_some_and(|t| t <= now) {
            self.inner.handle_timeout(io, now);
        }
        self.update(now);
    }
    fn is_done(&self) -> bool {
        self.inner.is_done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(source: &str, via: &str, bytes: u64, mbit: f64, lost: u64) -> PathLine {
        PathLine {
            source: source.into(),
            via: via.into(),
            bytes,
            bps: mbit * 1e6,
            requests: 1000,
            lost,
        }
    }

    #[test]
    fn the_display_fits_80_columns_in_one_family_of_units() {
        let paths = [
            path("p1", "bottom>left>top", 2_100_000, 5.1, 3),
            path("p1", "bottom>right>top", 2_000_000, 5.0, 0),
            path("p2", "left>top", 5_000_000, 12.0, 1),
            path(
                "publisher-with-a-long-name",
                "a>very>long>route>through>many>more>nodes>than>fit>in>a>line>to>top",
                1_000_000,
                0.4,
                0,
            ),
        ];
        let lines = render(
            "/demo/file",
            10_100_000,
            Some(20_000_000),
            22.5e6,
            &paths,
            80,
        );
        for l in &lines {
            assert!(
                l.chars().count() <= 80,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        assert!(lines[0].starts_with("[####"), "{}", lines[0]);
        assert!(
            lines[0].ends_with(" 50%  10.1/20.0 MB  22.5 Mb/s  ETA 4s"),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines[1],
            "  p1 (2 paths)                            10.1 Mb/s    4.1 MB  lost 3 (0.1%)"
        );
        assert_eq!(
            lines[2],
            "    via bottom>left>top                    5.1 Mb/s    2.1 MB  lost 3 (0.3%)"
        );
        assert_eq!(
            lines[3],
            "    via bottom>right>top                   5.0 Mb/s    2.0 MB"
        );
        // The rate and size columns line up on every line.
        let col = |l: &str| l[..l.find(" Mb/s").unwrap()].chars().count();
        assert!(
            lines[1..].iter().all(|l| col(l) == col(&lines[1])),
            "{lines:#?}"
        );
        assert!(
            lines.iter().any(|l| l.contains("…")),
            "the long route is cut"
        );
        assert!(!lines
            .iter()
            .any(|l| l.contains("MiB") || l.contains("KB/s")));
        assert_eq!(lines.len(), 1 + 3 + 4);
    }

    #[test]
    fn before_the_metadata_and_with_many_paths() {
        assert_eq!(render("/x", 0, None, 0.0, &[], 80), ["/x: subscribing"]);
        let one = [path("p", "", 0, 0.0, 0)];
        assert_eq!(
            render("/x", 0, None, 0.0, &one, 80)[0],
            "/x: 1 path, waiting for the metadata"
        );
        let many: Vec<PathLine> = (0..20)
            .map(|i| path(&format!("p{i}"), "a", 1, 1.0, 0))
            .collect();
        let lines = render("/x", 1, Some(100), 1.0, &many, 80);
        assert_eq!(lines.len(), 1 + 20 + 1, "sources only");
    }

    #[test]
    fn times_left_read_as_people_write_them() {
        assert_eq!(eta(7.2), "8s");
        assert_eq!(eta(185.0), "3m05s");
        assert_eq!(eta(7440.0), "2h04m");
        assert_eq!(eta(f64::INFINITY), "-");
    }
}
