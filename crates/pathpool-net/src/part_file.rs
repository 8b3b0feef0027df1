//! The partial file of a download, written and hashed by a thread of its own.
//!
//! A subscriber receives a file as thousands of chunks a second, mostly in ascending order.
//! Writing each with its own `pwrite` and re-reading the whole file at the end to check its
//! SHA-256 took a third of the subscriber thread's time (docs/overlay.md, "Speed"). Here the
//! subscriber only copies a chunk into the current run of contiguous bytes; a full or broken
//! run goes to the writer thread, which writes it with one call and hashes it while it is in
//! memory if it continues the hashed prefix. Bytes written out of order are hashed when the
//! prefix reaches them, read back from the file (only those). At the end the writer has the
//! BLAKE3 hash of the whole file, which the signed metadata carries (D181), without reading it
//! again, and the file is synced to disk; the kernel has been writing it out all along, so
//! the sync has little left to do, and the pages already on disk have left the page cache (a download streams through it, as with Linux's
//! `RWF_DONTCACHE`, rather than filling it).
//!
//! The file itself is a [`TempFile`] beside the output: a random name, created with
//! `O_EXCL|O_NOFOLLOW` and mode 0600, renamed onto the output by [`PartFile::persist`] once
//! the caller has verified the content, and removed when the partial file is dropped
//! unpersisted (issue 18; see `temp_file.rs`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};

use crate::temp_file::TempFile;

/// Largest run of contiguous bytes the subscriber gathers before handing it to the writer.
pub const RUN_BYTES: usize = 1 << 20;

/// Most run buffers a partial file uses: how far (16 MiB) the writer may fall behind before
/// the subscriber waits for it. The buffers go round between the two threads and are never
/// freed before the end, so filling one costs no page faults once the pool has grown (D109).
pub const MAX_RUNS: usize = 16;

/// The writer asks the kernel to start writing the file to disk each time the hashed prefix
/// has grown by this much since it last asked, so that the final sync has little left to wait
/// for, and to drop the previous such range from the page cache (D109).
pub const WRITEBACK_BYTES: u64 = 8 << 20;

/// A run of contiguous bytes for the writer: where it starts in the file, and the bytes.
struct Run {
    offset: u64,
    data: Vec<u8>,
}

/// The whole file as the writer saw it: its BLAKE3 hash, once every byte was written.
pub type Digest = [u8; 32];

/// A download's partial file (see the module documentation).
pub struct PartFile {
    /// Dropped after the writer has been joined (`Drop`), which removes the file unless it
    /// was persisted.
    temp: Option<TempFile>,
    path: PathBuf,
    run: Vec<u8>,
    run_start: u64,
    to_writer: Option<Sender<Run>>,
    spare: Receiver<Vec<u8>>,
    /// Run buffers allocated so far (at most [`MAX_RUNS`]).
    buffers: usize,
    failure: Arc<Mutex<Option<String>>>,
    writer: Option<JoinHandle<Result<Digest, String>>>,
}

impl std::fmt::Debug for PartFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartFile")
            .field("path", &self.path)
            .field("run_start", &self.run_start)
            .field("run_bytes", &self.run.len())
            .finish_non_exhaustive()
    }
}

impl PartFile {
    /// Creates the partial file of a download to `out`, `size_bytes` long, under a new random
    /// name beside `out` (`temp_file.rs`), and starts its writer, which hashes it with BLAKE3.
    /// Nothing at `out` or at any other existing name is opened.
    ///
    /// # Errors
    /// The file cannot be created or sized, or the thread cannot start; the message names
    /// the file.
    pub fn create(out: &Path, size_bytes: u64) -> io::Result<PartFile> {
        let temp = TempFile::create_beside(out)?;
        let path = temp.path().to_path_buf();
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
        temp.file().set_len(size_bytes).map_err(named)?;
        let file = temp.file().try_clone().map_err(named)?;
        let (to_writer, runs) = channel::<Run>();
        let (give_back, spare) = channel::<Vec<u8>>();
        let failure = Arc::new(Mutex::new(None));
        let writer = Writer {
            file,
            path: path.clone(),
            size_bytes,
            hasher: Box::new(blake3::Hasher::new()),
            hashed_to: 0,
            unhashed: BTreeMap::new(),
            written_back_to: 0,
            dropped_to: 0,
            failure: Arc::clone(&failure),
        };
        let writer = thread::Builder::new()
            .name("part-file".into())
            .spawn(move || writer.serve(&runs, &give_back))
            .map_err(named)?;
        Ok(PartFile {
            temp: Some(temp),
            path,
            run: Vec::with_capacity(RUN_BYTES),
            run_start: 0,
            to_writer: Some(to_writer),
            spare,
            buffers: 1,
            failure,
            writer: Some(writer),
        })
    }

    /// The file's name while it is partial (random; see `temp_file.rs`).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `data` at `offset`. Each byte of the file must be written exactly once.
    ///
    /// # Errors
    /// An earlier write failed (the message names the file and the error); the download
    /// should stop.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), String> {
        if let Some(e) = self.failure() {
            return Err(e);
        }
        let continues = offset == self.run_start + self.run.len() as u64;
        if !self.run.is_empty() && (!continues || self.run.len() + data.len() > RUN_BYTES) {
            self.hand_over();
        }
        if self.run.is_empty() {
            self.run_start = offset;
        }
        self.run.extend_from_slice(data);
        Ok(())
    }

    /// The first write error, if any.
    fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .map_or_else(|p| p.into_inner().clone(), |g| g.clone())
    }

    /// Sends the current run to the writer and starts an empty one: in a buffer the writer
    /// gave back, in a new one while there are fewer than [`MAX_RUNS`], or else in the next
    /// one the writer gives back (the subscriber then waits for the writer, as it waited for
    /// its own writes before the writer thread: memory stays bounded whatever the disk's
    /// speed).
    fn hand_over(&mut self) {
        let next = match self.spare.try_recv() {
            Ok(b) => b,
            Err(_) if self.buffers < MAX_RUNS => {
                self.buffers += 1;
                Vec::with_capacity(RUN_BYTES)
            }
            // A writer thread that has ended (it panicked) gives nothing back; `finish`
            // reports it.
            Err(_) => self
                .spare
                .recv()
                .unwrap_or_else(|_| Vec::with_capacity(RUN_BYTES)),
        };
        let data = std::mem::replace(&mut self.run, next);
        if let Some(tx) = &self.to_writer {
            // A writer that stopped has recorded why; `finish` reports it.
            let _ = tx.send(Run {
                offset: self.run_start,
                data,
            });
        }
    }

    /// Writes what is left, waits for the writer, syncs the file and returns the digest of
    /// its whole content. The file keeps its temporary name: [`PartFile::persist`] it once
    /// verified, or drop it to remove it.
    ///
    /// # Errors
    /// A write, read-back or sync failed, or some bytes were never written (the message says
    /// from where).
    pub fn finish(&mut self) -> Result<Digest, String> {
        if !self.run.is_empty() {
            self.hand_over();
        }
        self.to_writer = None;
        let writer = self.writer.take();
        match writer.map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(format!(
                "{}: the writer thread stopped",
                self.path.display()
            )),
        }
    }

    /// Renames the file, once [`PartFile::finish`]ed and verified by the caller, onto the
    /// output given to [`PartFile::create`], with the mode of a normally created file. Whatever
    /// was at the output is replaced atomically; a symlink there is replaced, not followed.
    ///
    /// # Errors
    /// The rename failed (the output is as it was and the partial file is removed); the
    /// message names the file.
    pub fn persist(mut self) -> Result<(), String> {
        self.stop_writer();
        match self.temp.take() {
            Some(t) => t.persist().map_err(|e| e.to_string()),
            None => Err(format!("{}: already removed", self.path.display())),
        }
    }

    /// Abandons the download: stops the writer and removes the file now.
    ///
    /// # Errors
    /// The removal failed; the message names the file.
    pub fn discard(mut self) -> Result<PathBuf, String> {
        self.stop_writer();
        match self.temp.take() {
            Some(t) => t.discard(),
            None => Err(format!("{}: already removed", self.path.display())),
        }
    }

    /// Lets the writer finish before the file is renamed or removed, so that nothing writes to
    /// a file that no longer has its name.
    fn stop_writer(&mut self) {
        self.to_writer = None;
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}

impl Drop for PartFile {
    fn drop(&mut self) {
        // Abandoned (a failed download): the writer finishes, then dropping `temp` removes
        // the file.
        self.stop_writer();
    }
}

/// The writer thread's state.
struct Writer {
    file: File,
    path: PathBuf,
    size_bytes: u64,
    hasher: Box<blake3::Hasher>,
    /// Every byte before this offset has been written and hashed.
    hashed_to: u64,
    /// Written but not yet hashed: start → end of each run beyond the hashed prefix.
    unhashed: BTreeMap<u64, u64>,
    /// The kernel has been asked to write back every byte before this offset.
    written_back_to: u64,
    /// The kernel has been asked to drop from the page cache every byte before this offset
    /// (the range before `written_back_to` whose write-back started one step later).
    dropped_to: u64,
    failure: Arc<Mutex<Option<String>>>,
}

impl Writer {
    fn serve(
        mut self,
        runs: &Receiver<Run>,
        give_back: &Sender<Vec<u8>>,
    ) -> Result<Digest, String> {
        let mut failed: Option<String> = None;
        for mut run in runs {
            if failed.is_none() {
                if let Err(e) = self.take(&run) {
                    let e = format!("{}: {e}", self.path.display());
                    if let Ok(mut g) = self.failure.lock() {
                        *g = Some(e.clone());
                    }
                    failed = Some(e);
                }
            }
            run.data.clear();
            let _ = give_back.send(run.data);
        }
        if let Some(e) = failed {
            return Err(e);
        }
        if self.hashed_to != self.size_bytes {
            return Err(format!(
                "{}: bytes from offset {} of {} were never written",
                self.path.display(),
                self.hashed_to,
                self.size_bytes
            ));
        }
        self.file
            .sync_data()
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        Ok(*self.hasher.finalize().as_bytes())
    }

    /// Writes a run, hashes it if it continues the hashed prefix, then hashes whatever
    /// written runs the prefix now reaches.
    fn take(&mut self, run: &Run) -> io::Result<()> {
        let end = run.offset + run.data.len() as u64;
        if end > self.size_bytes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a write to bytes {}..{end} past the end ({})",
                    run.offset, self.size_bytes
                ),
            ));
        }
        self.file.write_all_at(&run.data, run.offset)?;
        if run.offset == self.hashed_to {
            self.hasher.update(&run.data);
            self.hashed_to = end;
        } else if !run.data.is_empty() {
            self.unhashed.insert(run.offset, end);
        }
        let mut buf = Vec::new();
        while let Some(end) = self.unhashed.remove(&self.hashed_to) {
            buf.resize((end - self.hashed_to) as usize, 0);
            self.file.read_exact_at(&mut buf, self.hashed_to)?;
            self.hasher.update(&buf);
            self.hashed_to = end;
        }
        if self.hashed_to - self.written_back_to >= WRITEBACK_BYTES {
            self.start_writeback();
        }
        Ok(())
    }

    /// Starts the write-back of the hashed prefix not yet asked for, and drops from the page
    /// cache the range whose write-back started the time before. On Linux,
    /// `POSIX_FADV_DONTNEED` starts writing a range's dirty pages without waiting, then drops
    /// the range's clean pages (`mm/fadvise.c`): one call over both ranges does both, since
    /// the new range's pages are still dirty or being written. PostgreSQL's `pg_flush_data`
    /// (`src/backend/storage/file/fd.c`) falls back on it for the same purpose where
    /// `sync_file_range` and `msync` are missing (neither has a safe wrapper in `nix`); the
    /// dropping is what Linux's `RWF_DONTCACHE` writes do (6.14). Only the hashed prefix,
    /// which is never read back, is advised. Without the early write-back the whole file was
    /// written at the final sync, a quarter of a second for 512 MiB on the test machine;
    /// without the dropping, the page cache kept the whole download, taking fresh pages for
    /// every write (see D109 for what that costs on a virtual machine). The advice may fail
    /// harmlessly: the final sync is what makes the file durable.
    fn start_writeback(&mut self) {
        let (Ok(offset), Ok(len)) = (
            i64::try_from(self.dropped_to),
            i64::try_from(self.hashed_to - self.dropped_to),
        ) else {
            return;
        };
        let _ = posix_fadvise(
            self.file.as_raw_fd(),
            offset,
            len,
            PosixFadviseAdvice::POSIX_FADV_DONTNEED,
        );
        self.dropped_to = self.written_back_to;
        self.written_back_to = self.hashed_to;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The output of a download in a scratch directory of its own, removed when the
    /// returned guard is dropped.
    fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new()
            .prefix(&format!("pathpool-part-{name}-"))
            .tempdir()
            .unwrap();
        let path = dir.path().join("f.bin");
        (dir, path)
    }

    fn content(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    /// Writes `content` as chunks of `chunk` bytes in the order `order` (chunk indices).
    fn write_in_order(path: &Path, content: &[u8], chunk: usize, order: &[usize]) -> PartFile {
        let mut f = PartFile::create(path, content.len() as u64).unwrap();
        for &i in order {
            let start = i * chunk;
            let end = (start + chunk).min(content.len());
            f.write(start as u64, &content[start..end]).unwrap();
        }
        f
    }

    #[test]
    fn in_order_chunks_give_the_file_and_its_hash() {
        let (_dir, path) = scratch("in-order");
        // More runs than buffers (the subscriber waits for the writer), and a short last
        // chunk.
        let data = content((MAX_RUNS + 3) * RUN_BYTES + 1000);
        let n = data.len().div_ceil(1135);
        let mut f = write_in_order(&path, &data, 1135, &(0..n).collect::<Vec<_>>());
        let digest = f.finish().unwrap();
        assert_eq!(digest, *blake3::hash(&data).as_bytes());
        assert!(!path.exists(), "the output appears only when persisted");
        f.persist().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), data);
        assert!(crate::temp_file::leftovers(&path).is_empty());
    }

    #[test]
    fn a_missing_chunk_is_an_error_naming_the_offset() {
        let (_dir, path) = scratch("missing");
        let data = content(10 * 1000);
        let mut f = write_in_order(&path, &data, 1000, &[0, 1, 2, 4, 5, 6, 7, 8, 9]);
        let e = f.finish().unwrap_err();
        assert!(e.contains("from offset 3000 of 10000"), "{e}");
        assert!(e.contains(f.path().to_str().unwrap()), "{e}");
        assert!(e.contains(".f.bin.pathpool-"), "{e}");
        // A failed download leaves nothing: dropping the partial file removes it.
        drop(f);
        assert!(crate::temp_file::leftovers(&path).is_empty());
        assert!(!path.exists());
    }

    /// Version 1's partial file was `OUT.part`, opened with `O_CREAT|O_TRUNC`: a symlink
    /// planted there had its target overwritten. Now neither it nor one at `OUT` is followed
    /// (the creation flags are tested in `temp_file.rs`).
    #[test]
    fn symlinks_at_the_old_partial_name_and_the_output_are_not_followed() {
        use std::os::unix::fs::symlink;
        let (_dir, path) = scratch("symlinks");
        let dir = path.parent().unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let old = dir.join("f.bin.part");
        symlink(&victim, &old).unwrap();
        symlink(&victim, &path).unwrap();
        let data = content(5000);
        let mut f = write_in_order(&path, &data, 1000, &[4, 3, 2, 1, 0]);
        f.finish().unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        f.persist().unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
        assert_eq!(std::fs::read(&path).unwrap(), data);
        assert_eq!(std::fs::read_link(&old).unwrap(), victim);
    }

    #[test]
    fn discard_stops_the_writer_and_removes_the_file() {
        let (_dir, path) = scratch("discard");
        let data = content(3 * RUN_BYTES);
        let f = write_in_order(&path, &data, 1000, &(0..2000).collect::<Vec<_>>());
        let temp = f.path().to_path_buf();
        assert!(temp.exists());
        assert_eq!(f.discard().unwrap(), temp);
        assert!(!temp.exists());
        assert!(!path.exists());
    }

    #[test]
    fn a_write_past_the_end_stops_the_download() {
        let (_dir, path) = scratch("past-end");
        let mut f = PartFile::create(&path, 100).unwrap();
        f.write(50, &[1; 100]).unwrap();
        let e = f.finish().unwrap_err();
        assert!(e.contains("past the end (100)"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Any order of arrival gives the same file and the BLAKE3 hash of the content.
        #[test]
        fn any_order_gives_the_file_and_its_hash(
            len in 1usize..40_000,
            chunk in 1usize..3000,
            seed in any::<u64>(),
        ) {
            let (_dir, path) = scratch(&format!("prop-{seed}"));
            let data = content(len);
            let n = len.div_ceil(chunk);
            let mut order: Vec<usize> = (0..n).collect();
            let mut rng = pathpool_core::Rng::seed_from_u64(seed);
            for i in (1..n).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut f = write_in_order(&path, &data, chunk, &order);
            let digest = f.finish().unwrap();
            prop_assert_eq!(digest, *blake3::hash(&data).as_bytes());
            f.persist().unwrap();
            prop_assert_eq!(std::fs::read(&path).unwrap(), data);
            let _ = std::fs::remove_file(&path);
        }
    }
}
