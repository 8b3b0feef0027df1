//! `pathpool keygen` (issue 18, docs/overlay.md "Keys"): creates the keys an overlay file
//! names and writes the publishers' public keys into it, editing the file in place with
//! `toml_edit` so its comments and layout stay. Existing key files are never overwritten
//! (they are created with `O_EXCL`); a key already there is read and its public key written.

use std::path::{Path, PathBuf};

use clap::Args;
use pathpool_net::keys;
use toml_edit::{DocumentMut, Item, Value};

use crate::CliError;

/// `pathpool keygen`.
#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["overlay", "out"])))]
pub struct KeygenArgs {
    /// Create the overlay key and a signing key for every endpoint node (transit = false) of
    /// this overlay file, and write their public keys into it.
    #[arg(long, value_name = "FILE")]
    pub overlay: Option<PathBuf>,
    /// Create one publisher signing key in this file and print its public key.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// What [`keygen_overlay`] did, one line per key, for people.
pub type Report = Vec<String>;

fn bad(path: &Path, m: impl std::fmt::Display) -> CliError {
    CliError::BadInput(format!("{}: {m}", path.display()))
}

/// A node entry of the file: `[[nodes]]` tables or an inline array of tables.
fn node_entries(doc: &mut DocumentMut) -> Vec<&mut dyn toml_edit::TableLike> {
    match doc.get_mut("nodes") {
        Some(Item::ArrayOfTables(a)) => a
            .iter_mut()
            .map(|t| t as &mut dyn toml_edit::TableLike)
            .collect(),
        Some(Item::Value(Value::Array(a))) => a
            .iter_mut()
            .filter_map(|v| v.as_inline_table_mut())
            .map(|t| t as &mut dyn toml_edit::TableLike)
            .collect(),
        _ => Vec::new(),
    }
}

/// Creates the missing keys of the overlay file `path` and writes the endpoints' public keys
/// into it; returns what it did.
///
/// # Errors
/// The file does not parse or cannot be written; a key file cannot be created or read.
pub fn keygen_overlay(path: &Path) -> Result<Report, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| bad(path, e))?;
    // The whole file must be a valid overlay first: no key is made for a file that will not load.
    pathpool_net::overlay::Overlay::from_toml(&text, &path.display().to_string())
        .map_err(|e| CliError::BadInput(e.to_string()))?;
    let mut doc: DocumentMut = text.parse().map_err(|e| bad(path, e))?;
    let mut report = Report::new();
    let dir = keys::overlay_dir(path);
    let key_entry = doc
        .get("overlay_key")
        .and_then(Item::as_str)
        .map(str::to_string);
    let key_name = key_entry
        .clone()
        .unwrap_or_else(|| keys::OVERLAY_KEY_FILE.to_string());
    let key_file = dir.join(&key_name);
    if key_file.exists() {
        keys::read_overlay_key(&key_file).map_err(CliError::BadInput)?;
        report.push(format!("kept the overlay key {}", key_file.display()));
    } else {
        let key = keys::new_overlay_key().map_err(|e| CliError::Failed(e.to_string()))?;
        keys::write_key_file(&key_file, &key.to_hex()).map_err(CliError::Failed)?;
        report.push(format!("created the overlay key {}", key_file.display()));
    }
    if key_entry.is_none() {
        doc["overlay_key"] = toml_edit::value(key_name);
    }
    for node in node_entries(&mut doc) {
        let Some(id) = node.get("id").and_then(Item::as_str).map(str::to_string) else {
            continue;
        };
        let transit = node.get("transit").and_then(Item::as_bool).unwrap_or(true);
        if transit {
            continue;
        }
        let file = keys::node_key_path(path, &id);
        let key = if file.exists() {
            let k = keys::read_publisher_key(&file).map_err(CliError::BadInput)?;
            report.push(format!("kept {id}'s signing key {}", file.display()));
            k
        } else {
            let k = keys::new_publisher_key().map_err(|e| CliError::Failed(e.to_string()))?;
            keys::write_key_file(&file, &k.to_hex()).map_err(CliError::Failed)?;
            report.push(format!("created {id}'s signing key {}", file.display()));
            k
        };
        let public = key.public().to_string();
        if node.get("public_key").and_then(Item::as_str) != Some(public.as_str()) {
            node.insert("public_key", toml_edit::value(public.clone()));
            report.push(format!("wrote {id}'s public key {public}"));
        }
    }
    let new_text = doc.to_string();
    if new_text != text {
        // Written under a temporary name and renamed: a reader never sees half a file.
        let tmp = path.with_extension("keygen-partial");
        std::fs::write(&tmp, &new_text)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
        report.push(format!("updated {}", path.display()));
    }
    Ok(report)
}

/// `pathpool keygen --overlay FILE | --out FILE`.
///
/// # Errors
/// As [`keygen_overlay`]; for `--out`, the file exists or cannot be created.
pub fn keygen_command(a: &KeygenArgs) -> Result<(), CliError> {
    if let Some(path) = &a.overlay {
        for line in keygen_overlay(path)? {
            eprintln!("{line}");
        }
    }
    if let Some(out) = &a.out {
        let k = keys::new_publisher_key().map_err(|e| CliError::Failed(e.to_string()))?;
        keys::write_key_file(out, &k.to_hex()).map_err(CliError::BadInput)?;
        eprintln!("created the signing key {}; its public key:", out.display());
        println!("{}", k.public());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An overlay file with a comment, an inline node array and a `[[nodes]]`-free layout.
    const FILE: &str = "# my overlay\nrendezvous = \"rv\"\nnodes = [\n  { id = \"rv\" },\n  { id = \"p1\", transit = false }, # the publisher\n  { id = \"s\", transit = false },\n]\nlinks = [{ between = [\"rv\", \"p1\"] }, { between = [\"rv\", \"s\"] }]\n";

    #[test]
    fn keygen_makes_the_keys_once_and_writes_the_public_keys_keeping_the_file() {
        let dir = std::env::temp_dir().join(format!("pathpool-keygen-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("o.toml");
        std::fs::write(&file, FILE).unwrap();
        let first = keygen_overlay(&file).unwrap();
        assert!(first[0].starts_with("created the overlay key"), "{first:?}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("# my overlay\n"), "comments kept: {text}");
        assert!(text.contains("# the publisher"), "{text}");
        let overlay = pathpool_net::overlay::Overlay::load(&file).unwrap();
        assert!(overlay.overlay_key().is_some());
        let p1 = &overlay.nodes()[overlay.node("p1").unwrap().0 as usize];
        let key = keys::read_publisher_key(&dir.join("p1.key")).unwrap();
        assert_eq!(p1.public_key, Some(key.public()));
        assert!(dir.join("s.key").exists() && !dir.join("rv.key").exists());
        // Again: everything kept, nothing rewritten.
        let second = keygen_overlay(&file).unwrap();
        assert!(second.iter().all(|l| l.starts_with("kept")), "{second:?}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
