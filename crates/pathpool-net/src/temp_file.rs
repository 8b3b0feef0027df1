//! Where a download's bytes live until they are verified: a file under a random name beside
//! the output, created so that nothing already in the directory can be written through it.
//!
//! Version 1 wrote to `OUT.part`, opened with `O_CREAT|O_TRUNC`: a symlink planted there had
//! its target truncated and overwritten (issue 18, "Part file follows symlinks"). Here:
//!
//! * the name is `.OUT.pathpool-XXXXXXXXXXXXXXXX.part`, the X being 64 random bits from the
//!   operating system (`getrandom`), so an attacker cannot plant anything at it in advance;
//! * the file is opened with `O_CREAT|O_EXCL|O_NOFOLLOW`: if anything is at the name (a file, a
//!   symlink, even one that points nowhere: POSIX `open`, "If O_CREAT and O_EXCL are set, and
//!   path names a symbolic link, open() shall fail with EEXIST"), the open fails and another
//!   random name is tried (D171). `O_NOFOLLOW` repeats the refusal of a symlink for kernels or
//!   file systems that would not honour `O_EXCL` on one;
//! * its mode is 0600 while it holds unverified, partial content, and becomes what a file
//!   created normally would get (0666 less the umask) just before the rename (D172);
//! * it is renamed onto `OUT` only after verification. `rename(2)` replaces whatever is at
//!   `OUT` atomically and never follows a symlink there: a symlink at `OUT` is replaced by the
//!   file, its target untouched (D173);
//! * dropped unrenamed, it is removed. A process killed (SIGKILL) leaves it behind: the random
//!   name, the mode 0600 and the hidden `.` keep it from being mistaken for content, no run
//!   ever opens an existing file of this pattern, and [`leftovers`] lists them so that
//!   `pathpool get` can tell the user (D174).
//!
//! The file is written through the descriptor opened here (and its duplicates), never through
//! its name again, so renaming or replacing the name meanwhile cannot redirect the writes.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use nix::fcntl::OFlag;

/// Random names tried before giving up. Each collides only with a file already at that name;
/// with 64 random bits this happens by chance about never, so running out means something in
/// the directory is refusing every name (or the random source is broken): an error.
pub const NAME_ATTEMPTS: usize = 16;

/// Mode of the file while it holds partial, unverified content: the user's alone.
pub const PARTIAL_MODE: u32 = 0o600;

/// Bytes of the output's file name kept in the temporary name, so that the temporary name
/// (the kept bytes, 35 more) stays within the usual 255-byte limit of a name.
const STEM_BYTES: usize = 200;

/// What follows the stem: `.pathpool-`, 16 hex digits, `.part`.
const MARK: &str = ".pathpool-";
const SUFFIX: &str = ".part";
const RANDOM_HEX_DIGITS: usize = 16;

/// A temporary file beside an output (see the module documentation); removed when dropped
/// unless [`TempFile::persist`] renamed it onto the output.
#[derive(Debug)]
pub struct TempFile {
    file: File,
    path: PathBuf,
    out: PathBuf,
    persisted: bool,
}

impl TempFile {
    /// Creates, readable and writable, a new empty file of mode 0600 under a random name in the
    /// directory of `out` (the current directory when `out` has none).
    ///
    /// # Errors
    /// `out` names no file (it ends in `..` or `/`), the randomness is unavailable, the file
    /// cannot be created, or [`NAME_ATTEMPTS`] names were all taken.
    pub fn create_beside(out: &Path) -> io::Result<TempFile> {
        TempFile::create_with(out, random_hex)
    }

    /// [`TempFile::create_beside`] with the random part of each name tried drawn from `draw`
    /// (the tests give it names that are taken).
    fn create_with(
        out: &Path,
        mut draw: impl FnMut() -> io::Result<String>,
    ) -> io::Result<TempFile> {
        let stem = stem_of(out)?;
        let dir = dir_of(out);
        for _ in 0..NAME_ATTEMPTS {
            let path = dir.join(temp_name(&stem, &draw()?));
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(PARTIAL_MODE)
                .custom_flags(OFlag::O_NOFOLLOW.bits())
                .open(&path)
            {
                Ok(file) => {
                    return Ok(TempFile {
                        file,
                        path,
                        out: out.to_path_buf(),
                        persisted: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{}: {NAME_ATTEMPTS} random names for the partial file of {} were all taken",
                dir.display(),
                out.display()
            ),
        ))
    }

    /// The file's current name.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file.
    #[must_use]
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Gives the file the mode of a normally created file and renames it onto the output,
    /// replacing whatever is there (a symlink there is replaced, not followed). The rename is
    /// then made durable by syncing the directory, as far as it can be (a failure to sync the
    /// directory is not reported: the file is complete and in place either way).
    ///
    /// # Errors
    /// The mode cannot be set or the rename fails (the output is then as it was, and the file
    /// is removed when dropped); the message names the file.
    pub fn persist(mut self) -> io::Result<()> {
        let named =
            |e: io::Error, p: &Path| io::Error::new(e.kind(), format!("{}: {e}", p.display()));
        self.file
            .set_permissions(Permissions::from_mode(normal_mode()))
            .map_err(|e| named(e, &self.path))?;
        fs::rename(&self.path, &self.out).map_err(|e| named(e, &self.out))?;
        self.persisted = true;
        if let Ok(dir) = File::open(dir_of(&self.out)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// Removes the file now and returns its name.
    ///
    /// # Errors
    /// The removal failed; the message names the file.
    pub fn discard(mut self) -> Result<PathBuf, String> {
        self.persisted = true;
        let path = std::mem::take(&mut self.path);
        fs::remove_file(&path)
            .map(|()| path.clone())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// A temporary file of an earlier download to the same output that was never renamed nor
/// removed (its process was killed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    /// Its name.
    pub path: PathBuf,
    /// Its length (the content's full size: the file is sized when created).
    pub bytes: u64,
    /// When it was last written.
    pub modified: Option<SystemTime>,
}

/// The temporary files of downloads to `out` that are still in its directory: regular files
/// whose names follow the pattern of [`TempFile::create_beside`] for `out`. Nothing reads or
/// removes them; they may belong to a download to `out` running now. An unreadable
/// directory gives none.
#[must_use]
pub fn leftovers(out: &Path) -> Vec<Leftover> {
    let Ok(stem) = stem_of(out) else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(dir_of(out)) else {
        return Vec::new();
    };
    let mut found: Vec<Leftover> = entries
        .filter_map(Result::ok)
        .filter(|e| is_temp_name(&e.file_name(), &stem))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            m.file_type().is_file().then(|| Leftover {
                path: e.path(),
                bytes: m.len(),
                modified: m.modified().ok(),
            })
        })
        .collect();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// The directory `out` goes in.
fn dir_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The first [`STEM_BYTES`] bytes of `out`'s file name.
fn stem_of(out: &Path) -> io::Result<Vec<u8>> {
    let name = out.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file name", out.display()),
        )
    })?;
    let bytes = name.as_bytes();
    Ok(bytes[..bytes.len().min(STEM_BYTES)].to_vec())
}

/// `.STEM.pathpool-RANDOM.part`.
fn temp_name(stem: &[u8], random: &str) -> OsString {
    let mut name = b".".to_vec();
    name.extend_from_slice(stem);
    name.extend_from_slice(MARK.as_bytes());
    name.extend_from_slice(random.as_bytes());
    name.extend_from_slice(SUFFIX.as_bytes());
    OsString::from_vec(name)
}

/// Whether `name` is a temporary name for the stem `stem`.
fn is_temp_name(name: &OsStr, stem: &[u8]) -> bool {
    let rest = name
        .as_bytes()
        .strip_prefix(b".")
        .and_then(|r| r.strip_prefix(stem))
        .and_then(|r| r.strip_prefix(MARK.as_bytes()))
        .and_then(|r| r.strip_suffix(SUFFIX.as_bytes()));
    rest.is_some_and(|r| {
        r.len() == RANDOM_HEX_DIGITS
            && r.iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    })
}

/// 64 random bits from the operating system, as 16 lowercase hex digits.
fn random_hex() -> io::Result<String> {
    let mut bytes = [0u8; RANDOM_HEX_DIGITS / 2];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The mode a file created normally (`open` with 0666) gets: 0666 less the process's umask,
/// read from `/proc/self/status` (Linux 4.7 and later). Setting the umask to read it would
/// change it for every thread meanwhile. Where it cannot be read, the file keeps 0600: the
/// safe side (D172).
fn normal_mode() -> u32 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        })
        .map_or(PARTIAL_MODE, |umask| 0o666 & !umask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pathpool-temp-{}-{tag}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn mode(p: &Path) -> u32 {
        fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
    }

    /// Names drawn in order from `names`.
    fn drawing<const N: usize>(names: [&'static str; N]) -> impl FnMut() -> io::Result<String> {
        let mut it = names.into_iter();
        move || Ok(it.next().expect("enough names").to_string())
    }

    #[test]
    fn the_name_is_random_hidden_beside_the_output_and_recognised() {
        let dir = scratch("name");
        let out = dir.join("movie.bin");
        let a = TempFile::create_beside(&out).unwrap();
        let b = TempFile::create_beside(&out).unwrap();
        assert_ne!(a.path(), b.path());
        for t in [&a, &b] {
            assert_eq!(t.path().parent(), Some(dir.as_path()));
            let name = t.path().file_name().unwrap().to_str().unwrap();
            assert!(
                name.starts_with(".movie.bin.pathpool-") && name.ends_with(".part"),
                "{name}"
            );
            assert_eq!(mode(t.path()), PARTIAL_MODE);
        }
        // Names of another output, or not of the pattern, are not leftovers of this one.
        fs::write(dir.join(".movie.bin.pathpool-0123456789abcdeg.part"), b"x").unwrap();
        fs::write(dir.join(".movie.bin.pathpool-0123.part"), b"x").unwrap();
        fs::write(dir.join("movie.bin.part"), b"x").unwrap();
        let _other = TempFile::create_beside(&dir.join("movie")).unwrap();
        let found: Vec<PathBuf> = leftovers(&out).into_iter().map(|l| l.path).collect();
        let mut want = vec![a.path().to_path_buf(), b.path().to_path_buf()];
        want.sort();
        assert_eq!(found, want);
        drop((a, b));
        assert!(leftovers(&out).is_empty(), "dropped files are removed");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_symlink_at_a_guessed_name_is_never_followed() {
        let dir = scratch("symlink");
        let out = dir.join("out.bin");
        let victim = dir.join("victim");
        fs::write(&victim, b"precious").unwrap();
        let nowhere = dir.join("nowhere");
        let guessed = ["00000000000000aa", "00000000000000bb", "00000000000000cc"];
        // A symlink to a file, then a dangling one (plain O_CREAT would create its target),
        // then the name that is free.
        symlink(&victim, dir.join(temp_name(b"out.bin", guessed[0]))).unwrap();
        symlink(&nowhere, dir.join(temp_name(b"out.bin", guessed[1]))).unwrap();
        let t = TempFile::create_with(&out, drawing(guessed)).unwrap();
        assert_eq!(t.path(), dir.join(temp_name(b"out.bin", guessed[2])));
        assert!(t.file().metadata().unwrap().is_file());
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert!(
            !nowhere.exists(),
            "the dangling symlink's target was created"
        );
        // Every name taken by a symlink: an error naming the directory, nothing written.
        let taken = [guessed[0]; NAME_ATTEMPTS];
        let e = TempFile::create_with(&out, drawing(taken)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert!(e.to_string().contains("were all taken"), "{e}");
        assert!(e.to_string().contains(dir.to_str().unwrap()), "{e}");
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_name_collision_is_retried_with_another_name() {
        let dir = scratch("collision");
        let out = dir.join("out.bin");
        let first = dir.join(temp_name(b"out.bin", "1111111111111111"));
        fs::write(&first, b"someone else's").unwrap();
        let t =
            TempFile::create_with(&out, drawing(["1111111111111111", "2222222222222222"])).unwrap();
        assert_eq!(
            t.path(),
            dir.join(temp_name(b"out.bin", "2222222222222222"))
        );
        assert_eq!(fs::read(&first).unwrap(), b"someone else's");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn persist_gives_the_normal_mode_and_replaces_a_symlink_at_the_output() {
        let dir = scratch("persist");
        let out = dir.join("out.bin");
        let victim = dir.join("victim");
        fs::write(&victim, b"precious").unwrap();
        symlink(&victim, &out).unwrap();
        let t = TempFile::create_beside(&out).unwrap();
        let temp = t.path().to_path_buf();
        std::io::Write::write_all(&mut t.file(), b"content").unwrap();
        t.persist().unwrap();
        assert!(!temp.exists());
        assert!(
            fs::symlink_metadata(&out).unwrap().is_file(),
            "the symlink was replaced"
        );
        assert_eq!(fs::read(&out).unwrap(), b"content");
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        // The mode a file created the ordinary way in the same place gets.
        let plain = dir.join("plain");
        File::create(&plain).unwrap();
        assert_eq!(mode(&out), mode(&plain));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn discard_removes_and_names_the_file() {
        let dir = scratch("discard");
        let out = dir.join("out.bin");
        let t = TempFile::create_beside(&out).unwrap();
        let temp = t.path().to_path_buf();
        assert_eq!(t.discard().unwrap(), temp);
        assert!(!temp.exists());
        assert!(!out.exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_output_without_a_file_name_is_refused() {
        let e = TempFile::create_beside(Path::new("/tmp/..")).unwrap_err();
        assert!(e.to_string().contains("not a file name"), "{e}");
    }

    #[test]
    fn a_long_output_name_still_gives_a_valid_temporary_name() {
        let dir = scratch("long");
        let out = dir.join("x".repeat(255));
        let t = TempFile::create_beside(&out).unwrap();
        assert_eq!(leftovers(&out).len(), 1);
        t.persist().unwrap();
        assert!(out.exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
