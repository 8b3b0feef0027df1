//! Integrity validation of a reassembled content against its metadata (thesis §4.3: the
//! metadata carries "a hash-coded string for integrity validation"; D60: SHA-256 of the whole
//! content).
//!
//! The subscriber's state machine never sees payload bytes; the driver that stored them calls
//! [`verify`] (bytes in memory) or [`verify_reader`] (a file or any reader) once the transfer
//! is complete.

use std::fmt;
use std::io::{self, Read};

use sha2::{Digest, Sha256};

use super::message::Metadata;

/// Why a reassembled content does not match its metadata.
#[derive(Debug)]
pub enum IntegrityError {
    /// The content has the wrong length.
    SizeMismatch {
        /// The size the metadata gives.
        expected_bytes: u64,
        /// The size found.
        actual_bytes: u64,
    },
    /// The content's SHA-256 differs from the metadata's.
    HashMismatch {
        /// The hash the metadata gives.
        expected: [u8; 32],
        /// The hash of the content.
        actual: [u8; 32],
    },
    /// Reading the content failed.
    Io(io::Error),
}

fn hex(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl fmt::Display for IntegrityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntegrityError::SizeMismatch {
                expected_bytes,
                actual_bytes,
            } => write!(
                f,
                "content is {actual_bytes} bytes but its metadata says {expected_bytes}"
            ),
            IntegrityError::HashMismatch { expected, actual } => write!(
                f,
                "content SHA-256 {} does not match the metadata's {}",
                hex(actual),
                hex(expected)
            ),
            IntegrityError::Io(e) => write!(f, "reading the content failed: {e}"),
        }
    }
}

impl std::error::Error for IntegrityError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IntegrityError::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// SHA-256 of `content`.
#[must_use]
pub fn sha256(content: &[u8]) -> [u8; 32] {
    Sha256::digest(content).into()
}

/// Checks that `content` has the size and SHA-256 the metadata gives.
///
/// # Errors
/// [`IntegrityError::SizeMismatch`] or [`IntegrityError::HashMismatch`].
pub fn verify(metadata: &Metadata, content: &[u8]) -> Result<(), IntegrityError> {
    verify_reader(metadata, content)
}

/// Checks that what `reader` yields has the size and SHA-256 the metadata gives.
///
/// # Errors
/// [`IntegrityError::SizeMismatch`], [`IntegrityError::HashMismatch`], or
/// [`IntegrityError::Io`] if reading fails.
pub fn verify_reader<R: Read>(metadata: &Metadata, mut reader: R) -> Result<(), IntegrityError> {
    let mut hasher = Sha256::new();
    let mut buf = [0u8; 64 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(IntegrityError::Io(e)),
        };
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    if total != metadata.size_bytes {
        return Err(IntegrityError::SizeMismatch {
            expected_bytes: metadata.size_bytes,
            actual_bytes: total,
        });
    }
    let actual: [u8; 32] = hasher.finalize().into();
    if actual != metadata.sha256 {
        return Err(IntegrityError::HashMismatch {
            expected: metadata.sha256,
            actual,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_abc_is_the_fips_vector() {
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn matching_content_verifies() {
        let content: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        let m = Metadata::for_content(&content, 1000, "test");
        verify(&m, &content).unwrap();
        verify_reader(&m, io::Cursor::new(&content)).unwrap();
    }

    #[test]
    fn one_flipped_byte_is_a_hash_mismatch_with_a_clear_message() {
        let mut content = vec![1u8; 3000];
        let m = Metadata::for_content(&content, 1000, "");
        content[1234] ^= 0x40;
        let e = verify(&m, &content).unwrap_err();
        assert!(matches!(e, IntegrityError::HashMismatch { expected, .. } if expected == m.sha256));
        let msg = e.to_string();
        assert!(msg.contains("does not match"), "{msg}");
        assert!(msg.contains(&hex(&m.sha256)), "{msg}");
    }

    #[test]
    fn wrong_size_is_reported_before_the_hash() {
        let content = vec![9u8; 100];
        let m = Metadata::for_content(&content, 64, "");
        let e = verify(&m, &content[..99]).unwrap_err();
        assert!(matches!(
            e,
            IntegrityError::SizeMismatch {
                expected_bytes: 100,
                actual_bytes: 99
            }
        ));
        assert_eq!(
            e.to_string(),
            "content is 99 bytes but its metadata says 100"
        );
    }

    #[test]
    fn read_errors_are_reported() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk gone"))
            }
        }
        let m = Metadata::for_content(b"x", 1, "");
        let e = verify_reader(&m, Broken).unwrap_err();
        assert!(e.to_string().contains("disk gone"));
    }
}
