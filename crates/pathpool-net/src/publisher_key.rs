//! Reading a publisher's signing key from its file (`pathpool publish --key FILE`): 64
//! hexadecimal digits of the Ed25519 seed (`pathpool_wire::auth`). Creating key files, and
//! their permissions, is `keygen`'s business.

use std::path::{Path, PathBuf};

use pathpool_wire::auth::PublisherKey;

/// Where `publish` looks for `node`'s key by default: `NODE.key` beside the overlay file.
#[must_use]
pub fn default_path(overlay_file: &Path, node: &str) -> PathBuf {
    overlay_file
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("{node}.key"))
}

/// Reads the key in `path`.
///
/// # Errors
/// The file cannot be read or does not hold 64 hexadecimal digits; the message names it.
pub fn load(path: &Path) -> Result<PublisherKey, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    PublisherKey::parse_hex(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_load_and_bad_files_are_named() {
        let dir = std::env::temp_dir().join(format!("pathpool-pk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = PublisherKey::from_seed([3; 32]);
        let path = dir.join("p.key");
        std::fs::write(&path, format!("{}\n", key.to_hex())).unwrap();
        assert_eq!(load(&path).unwrap().public(), key.public());
        std::fs::write(&path, "not hex\n").unwrap();
        let e = load(&path).unwrap_err();
        assert!(e.contains("p.key") && e.contains("64 hexadecimal"), "{e}");
        assert!(load(&dir.join("missing.key"))
            .unwrap_err()
            .contains("missing.key"));
        assert_eq!(
            default_path(Path::new("/etc/pp/overlay.toml"), "p1"),
            Path::new("/etc/pp/p1.key")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
