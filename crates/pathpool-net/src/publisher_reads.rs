//! How a publisher reads its file for requests, and how it notices that the file changed
//! after it was published (issue 18; D153, D181).
//!
//! Chunks are read in windows of [`READ_AHEAD_BYTES`] (one `pread` for about a hundred
//! chunks, D108). With [`ReadCheck::Stat`] (the default) each window read is followed by an
//! `fstat` of the open file: while its size, modification time and change time are those
//! seen when the file was hashed, the bytes are the published ones and are sent as read.
//! Once they differ, every chunk is checked against its leaf before it is sent, as
//! [`ReadCheck::Hash`] does from the start.

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::str::FromStr;

/// Bytes a publisher reads from its file at once: Linux's default read-ahead window
/// (`read_ahead_kb` = 128), about 117 chunks of 1119 bytes.
pub const READ_AHEAD_BYTES: usize = 128 << 10;

/// When a publisher checks a chunk read from disk against the leaf it published.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadCheck {
    /// Only once the file's size, modification or change time differ from those it had
    /// when it was hashed (an `fstat` per 128 KiB read); the kernel updates both times
    /// before a `write` changes any byte. Not enough for files changed through `mmap`
    /// or on file systems that do not keep the times (some network ones).
    #[default]
    Stat,
    /// Every chunk, always: a BLAKE3 hash per chunk (about 1.7 µs for 1119 bytes on the
    /// test machine, a third of the publisher's CPU time).
    Hash,
}

impl FromStr for ReadCheck {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "stat" => Ok(ReadCheck::Stat),
            "hash" => Ok(ReadCheck::Hash),
            other => Err(format!(
                "read check {other:?}: must be \"stat\" or \"hash\""
            )),
        }
    }
}

/// What `fstat` says of a file's contents: their size and the times any change to them
/// updates. The change time cannot be set back by a user, so restoring the modification
/// time after a write does not hide it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileIdentity {
    len: u64,
    modified_ns: i128,
    changed_ns: i128,
}

impl FileIdentity {
    pub(crate) fn of(meta: &Metadata) -> Self {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        FileIdentity {
            len: meta.len(),
            modified_ns: ns(meta.mtime(), meta.mtime_nsec()),
            changed_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The file's size, bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }
}

/// A window of the file held in memory, so that consecutive chunks cost one `pread` between
/// them instead of one each (a `pread` per chunk was the publisher's largest cost, D108).
/// Requests come mostly in ascending runs (Algorithm 1 hands each subflow the next idle
/// chunks); any other chunk just moves the window.
#[derive(Debug)]
pub(crate) struct ReadAhead {
    data: Vec<u8>,
    /// Where `data` starts in the file.
    start: u64,
    /// The file as it was hashed.
    published: FileIdentity,
    /// Whether chunks must be checked against their leaves: from the start with
    /// [`ReadCheck::Hash`], from the first read that found the file changed with `Stat`.
    check_chunks: bool,
}

impl ReadAhead {
    pub(crate) fn new(published: FileIdentity, check: ReadCheck) -> Self {
        ReadAhead {
            data: Vec::new(),
            start: 0,
            published,
            check_chunks: check == ReadCheck::Hash,
        }
    }

    /// Whether chunks read now must be checked against their leaves.
    pub(crate) fn check_chunks(&self) -> bool {
        self.check_chunks
    }

    /// Copies the bytes at `offset` of `file` (`size_bytes` long when published) into `out`
    /// (its length), reading the window from `offset` on when they are not all in it.
    /// Returns whether this read found the file changed for the first time.
    pub(crate) fn read(
        &mut self,
        file: &File,
        size_bytes: u64,
        offset: u64,
        out: &mut [u8],
    ) -> io::Result<bool> {
        let end = offset + out.len() as u64;
        let held_to = self.start + self.data.len() as u64;
        let mut found_changed = false;
        if offset < self.start || end > held_to {
            let len = (size_bytes - offset).min(READ_AHEAD_BYTES.max(out.len()) as u64);
            self.data.resize(len as usize, 0);
            self.start = offset;
            if let Err(e) = file.read_exact_at(&mut self.data, offset) {
                self.data.clear();
                return Err(e);
            }
            // After the read: a write updates the times before it changes any byte, so a
            // window holding a changed byte is always followed by a changed identity.
            if !self.check_chunks {
                let now = file.metadata().map(|m| FileIdentity::of(&m));
                if now.as_ref().ok() != Some(&self.published) {
                    self.check_chunks = true;
                    found_changed = true;
                }
            }
        }
        let from = (offset - self.start) as usize;
        out.copy_from_slice(&self.data[from..from + out.len()]);
        Ok(found_changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Write;

    fn scratch(tag: &str, bytes: &[u8]) -> (std::path::PathBuf, File) {
        let path =
            std::env::temp_dir().join(format!("pathpool-reads-{tag}-{}.bin", std::process::id()));
        fs::write(&path, bytes).unwrap();
        // Published a while ago: a later write gets another modification time even where
        // the kernel keeps times at a coarse tick (before Linux 6.13's multigrain times).
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(past)
            .unwrap();
        let file = File::open(&path).unwrap();
        (path, file)
    }

    #[test]
    fn an_unchanged_file_is_read_without_chunk_checks() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let (path, file) = scratch("same", &data);
        let id = FileIdentity::of(&file.metadata().unwrap());
        let mut r = ReadAhead::new(id, ReadCheck::Stat);
        let mut out = vec![0u8; 1000];
        for offset in [0u64, 1000, 200_000, 5] {
            assert!(!r.read(&file, data.len() as u64, offset, &mut out).unwrap());
            assert_eq!(out, data[offset as usize..offset as usize + 1000]);
        }
        assert!(!r.check_chunks());
        assert!(ReadAhead::new(id, ReadCheck::Hash).check_chunks());
        fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_write_after_publishing_turns_chunk_checks_on_at_the_next_window() {
        let data = vec![7u8; 300_000];
        let (path, file) = scratch("changed", &data);
        let id = FileIdentity::of(&file.metadata().unwrap());
        let mut r = ReadAhead::new(id, ReadCheck::Stat);
        let mut out = vec![0u8; 1000];
        assert!(!r.read(&file, data.len() as u64, 0, &mut out).unwrap());
        // Same size, one byte changed far from the window held.
        let mut w = fs::OpenOptions::new().write(true).open(&path).unwrap();
        w.write_all_at(&[8], 250_000).unwrap();
        w.flush().unwrap();
        // Still inside the window read before the write: its bytes are the published ones.
        assert!(!r.read(&file, data.len() as u64, 1000, &mut out).unwrap());
        assert!(!r.check_chunks());
        assert!(r.read(&file, data.len() as u64, 249_500, &mut out).unwrap());
        assert!(r.check_chunks());
        assert_eq!(out[500], 8);
        // Said once.
        assert!(!r.read(&file, data.len() as u64, 0, &mut out).unwrap());
        fs::remove_file(path).unwrap();
    }

    #[test]
    fn read_check_names() {
        assert_eq!("stat".parse(), Ok(ReadCheck::Stat));
        assert_eq!("hash".parse(), Ok(ReadCheck::Hash));
        assert!("sha"
            .parse::<ReadCheck>()
            .unwrap_err()
            .contains("\"stat\" or \"hash\""));
    }
}
