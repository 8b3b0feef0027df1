//! A testbed's publisher keys (issue 18): with `security = "on"`, `testbed up` gives every
//! publisher it starts a fresh Ed25519 key, `NODE.key` (mode 0600) in the testbed directory,
//! and writes its public half into the testbed's copy of the overlay file, so a testbed needs
//! no key set up by hand. (Part B's `pathpool keygen` does the same for a real overlay.)

use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use pathpool_wire::auth::PublisherKey;

use crate::CliError;

/// A key from 32 bytes of the OS's random source.
fn fresh_key() -> Result<PublisherKey, CliError> {
    let mut seed = [0u8; 32];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut seed))
        .map_err(|e| CliError::Failed(format!("/dev/urandom: {e}")))?;
    Ok(PublisherKey::from_seed(seed))
}

/// Writes `dir/NODE.key` for each of `nodes` and returns `text` with each node's
/// `public_key` set.
///
/// # Errors
/// A key file that cannot be written, or an overlay file whose nodes are not tables.
pub(super) fn with_publisher_keys(
    text: &str,
    dir: &Path,
    nodes: &[String],
) -> Result<String, CliError> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| CliError::BadInput(format!("overlay file: {e}")))?;
    let mut public = Vec::new();
    for node in nodes {
        let key = fresh_key()?;
        let path = dir.join(format!("{node}.key"));
        let _ = fs::remove_file(&path);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{}", key.to_hex()))
            .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
        public.push((node.as_str(), key.public().to_string()));
    }
    let key_of = |id: Option<&str>| {
        public
            .iter()
            .find(|(n, _)| Some(*n) == id)
            .map(|(_, k)| k.clone())
    };
    let items = doc
        .get_mut("nodes")
        .ok_or_else(|| CliError::BadInput("overlay file: no nodes".into()))?;
    if let Some(tables) = items.as_array_of_tables_mut() {
        for t in tables.iter_mut() {
            if let Some(k) = key_of(t.get("id").and_then(|v| v.as_str())) {
                t.insert("public_key", toml_edit::value(k));
            }
        }
    } else if let Some(array) = items.as_array_mut() {
        for v in array.iter_mut() {
            if let Some(t) = v.as_inline_table_mut() {
                if let Some(k) = key_of(t.get("id").and_then(|v| v.as_str())) {
                    t.insert("public_key", k.into());
                }
            }
        }
    } else {
        return Err(CliError::BadInput(
            "overlay file: nodes must be an array of tables".into(),
        ));
    }
    Ok(doc.to_string())
}
