//! Per-chunk verification and the exclusion of bad sources, for [`GetEndpoint`] (issue 18,
//! item 1; D154): every chunk goes through the download's
//! [`ContentCheck`](crate::content_check::ContentCheck) before the state machine sees it, and
//! a source that sends a chunk failing it, or says its copy changed, is excluded with every
//! path it has.

use pathpool_core::Time;
use pathpool_proto::mmtp::{Chunk, Echo, ErrorKind, PathIndex, Reply};
use pathpool_topo::NodeIx;
use pathpool_wire::{data_error_authentic, ChunkMsg, DataErrorMsg};

use super::{GetEndpoint, GetError, GetState};
use crate::node::NodeIo;
use crate::overlay::SecurityMode;

impl GetEndpoint {
    /// Stops using every path of `source`, and says why once.
    pub(super) fn exclude(&mut self, source: NodeIx, why: String) {
        if self.excluded.iter().any(|(s, _)| *s == source) {
            return;
        }
        for (i, p) in self.paths.iter().enumerate() {
            if p.publisher == source {
                self.subscriber
                    .remove_path(&mut self.cc, PathIndex(i as u32));
            }
        }
        self.excluded.push((source, why));
    }

    pub(super) fn is_excluded(&self, path: usize) -> bool {
        self.paths
            .get(path)
            .is_some_and(|p| self.excluded.iter().any(|(s, _)| *s == p.publisher))
    }

    pub(super) fn on_chunk(&mut self, io: &mut NodeIo, now: Time, c: &ChunkMsg<'_>) {
        let path = c.prefix.path.index();
        let Some(m) = &self.signed else {
            return;
        };
        if c.prefix.version != m.version() || path >= self.paths.len() || self.is_excluded(path) {
            self.get_stats.stale_replies += 1;
            return;
        }
        let Some(check) = &mut self.check else {
            // Security off: checked at the end only.
            self.on_reply(io, now, &Reply::Chunk(c.to_chunk()), c.payload);
            return;
        };
        let (first, settled) = check.offer_borrowed(c.index, path, c.prefix.echo, c.payload, now);
        match first {
            Some(true) => self.deliver(io, now, c.index, path, c.prefix.echo, c.payload),
            Some(false) => self.reject(c.index, path),
            None => {}
        }
        for bad in settled.invalid {
            self.reject(bad.index, bad.path);
        }
        for good in settled.valid {
            self.deliver(io, now, good.index, good.path, good.echo, &good.payload);
        }
        if self.state == GetState::Downloading {
            self.check_sources(now);
        }
    }

    /// A chunk failed verification: its source is excluded.
    fn reject(&mut self, index: u32, path: usize) {
        self.get_stats.invalid_chunks += 1;
        if let Some(p) = self.paths.get(path) {
            let why = format!("sent chunk {index} that failed verification (path {path})");
            self.exclude(p.publisher, why);
        }
    }

    /// A verified chunk goes to the state machine and, if new, to the file.
    fn deliver(
        &mut self,
        io: &mut NodeIo,
        now: Time,
        index: u32,
        path: usize,
        echo: Echo,
        payload: &[u8],
    ) {
        let Some((pages, chunk_bytes)) = self.signed.as_ref().map(|m| (m.pages, m.chunk_bytes))
        else {
            return;
        };
        if self.is_excluded(path) || self.state != GetState::Downloading {
            return;
        }
        // A page is counted as a full chunk by the state machine (D151).
        let payload_bytes = if index < pages {
            chunk_bytes
        } else {
            u32::try_from(payload.len()).unwrap_or(u32::MAX)
        };
        let chunk = Chunk {
            content: self.subscriber.content(),
            index,
            path: PathIndex(path as u32),
            echo,
            payload_bytes,
        };
        self.on_reply(io, now, &Reply::Chunk(chunk), payload);
    }

    /// Fails the download if every source has been excluded.
    pub(super) fn check_sources(&mut self, now: Time) {
        if !self.paths.is_empty()
            && self
                .paths
                .iter()
                .enumerate()
                .all(|(i, _)| self.is_excluded(i))
        {
            let why = self.excluded_summary();
            self.fail(now, GetError::AllSourcesExcluded(why));
        }
    }

    /// The excluded sources and why, one clause each.
    #[must_use]
    pub fn excluded_summary(&self) -> String {
        self.excluded
            .iter()
            .map(|(s, why)| format!("{} {why}", self.config.trust.name(*s)))
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub(super) fn on_data_error(
        &mut self,
        io: &mut NodeIo,
        now: Time,
        e: &DataErrorMsg,
        datagram: &[u8],
    ) {
        let path = e.error.path.index();
        if self.config.trust.security == SecurityMode::On
            && !self
                .config
                .trust
                .overlay_key
                .as_ref()
                .is_some_and(|k| data_error_authentic(datagram, k))
        {
            self.get_stats.unauthenticated_errors += 1;
            return;
        }
        let Some(p) = self.paths.get(path) else {
            return;
        };
        if p.publisher != e.publisher || self.signed.is_none() || self.is_excluded(path) {
            return;
        }
        let source = p.publisher;
        self.on_reply(io, now, &Reply::Error(e.error), &[]);
        if matches!(
            e.error.kind,
            ErrorKind::Unavailable | ErrorKind::DifferentVersion
        ) {
            self.exclude(source, format!("reported: {}", e.error.kind));
            self.check_sources(now);
        }
    }
}
