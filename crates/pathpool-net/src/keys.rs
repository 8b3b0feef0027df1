//! Key files (issue 18, `docs/security.md`): the overlay key and publishers' Ed25519 seeds,
//! each 64 hexadecimal digits and a newline in a file of mode 0600, created with `O_EXCL` so
//! an existing key is never overwritten, and refused when others may read it (as ssh refuses
//! a private key others can read). Random bytes come from the operating system (`getrandom`).

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use pathpool_wire::auth::{OverlayKey, PublisherKey, KEY_BYTES};

/// File name of the overlay key `pathpool keygen` creates beside the overlay file.
pub const OVERLAY_KEY_FILE: &str = "overlay.key";

/// Random bytes from the operating system.
///
/// # Errors
/// The operating system has no randomness to give (`getrandom` fails).
pub fn random_bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(|e| io::Error::other(format!("random source: {e}")))?;
    Ok(out)
}

/// A random `u32` (request ids), or a fixed one if the random source fails, which only makes
/// the id guessable: a forged answer still needs the overlay key's MAC.
#[must_use]
pub fn random_u32() -> u32 {
    random_bytes::<4>().map_or(1, u32::from_be_bytes)
}

/// A new overlay key.
///
/// # Errors
/// As [`random_bytes`].
pub fn new_overlay_key() -> io::Result<OverlayKey> {
    random_bytes::<KEY_BYTES>().map(OverlayKey::from_bytes)
}

/// A new publisher signing key.
///
/// # Errors
/// As [`random_bytes`].
pub fn new_publisher_key() -> io::Result<PublisherKey> {
    random_bytes::<KEY_BYTES>().map(PublisherKey::from_seed)
}

/// Writes `hex` and a newline to a new file `path` of mode 0600; an existing file is an error
/// (the key in it is kept).
///
/// # Errors
/// The file exists or cannot be created, naming it.
pub fn write_key_file(path: &Path, hex: &str) -> Result<(), String> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(format!("{hex}\n").as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The text of the key file `path`, refused if group or others may read or write it.
fn read_key_text(path: &Path, what: &str) -> Result<String, String> {
    let meta = fs::metadata(path).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            format!("{}: the {what} does not exist", path.display())
        } else {
            format!("{}: {e}", path.display())
        }
    })?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{}: the {what} has mode {mode:o}, so others may read it; `chmod 600 {}` first",
            path.display(),
            path.display()
        ));
    }
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads an overlay key file.
///
/// # Errors
/// Missing, readable by others, or not 64 hexadecimal digits, naming the file.
pub fn read_overlay_key(path: &Path) -> Result<OverlayKey, String> {
    let text = read_key_text(path, "overlay key")?;
    OverlayKey::parse_hex(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a publisher's signing key file.
///
/// # Errors
/// Missing, readable by others, or not 64 hexadecimal digits, naming the file.
pub fn read_publisher_key(path: &Path) -> Result<PublisherKey, String> {
    let text = read_key_text(path, "publisher key")?;
    PublisherKey::parse_hex(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The directory an overlay file's relative key paths start from.
#[must_use]
pub fn overlay_dir(overlay_file: &Path) -> PathBuf {
    overlay_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Where node `id`'s signing key lives: `ID.key` beside the overlay file.
#[must_use]
pub fn node_key_path(overlay_file: &Path, id: &str) -> PathBuf {
    overlay_dir(overlay_file).join(format!("{id}.key"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_are_private_new_and_read_back() {
        let dir = std::env::temp_dir().join(format!("pathpool-keys-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("overlay.key");
        let key = new_overlay_key().unwrap();
        write_key_file(&path, &key.to_hex()).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(read_overlay_key(&path).unwrap().to_hex(), key.to_hex());
        // Never overwritten.
        let again = write_key_file(&path, &"0".repeat(64)).unwrap_err();
        assert!(again.contains("overlay.key"), "{again}");
        assert_eq!(read_overlay_key(&path).unwrap().to_hex(), key.to_hex());
        // Readable by others: refused, naming the file and the fix.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let e = read_overlay_key(&path).unwrap_err();
        assert!(e.contains("mode 644") && e.contains("chmod 600"), "{e}");
        let missing = read_overlay_key(&dir.join("nope.key")).unwrap_err();
        assert!(
            missing.contains("nope.key: the overlay key does not exist"),
            "{missing}"
        );
        let bad = dir.join("bad.key");
        write_key_file(&bad, "xyz").unwrap();
        let e = read_publisher_key(&bad).unwrap_err();
        assert!(e.contains("bad.key: expected 64 hexadecimal digits"), "{e}");
        assert_eq!(
            node_key_path(Path::new("o.toml"), "p1"),
            PathBuf::from("./p1.key")
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
