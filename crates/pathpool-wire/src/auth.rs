//! The keys and primitives of wire version 2's authentication (`docs/security.md`, issue 18).
//!
//! Two kinds of key. The [`OverlayKey`] is a 32-byte secret every member of an overlay holds:
//! each use gets its own subkey, derived with BLAKE3's key-derivation mode and a context string
//! per use (BLAKE3 spec §2.6), and a MAC is the first 16 bytes of BLAKE3's keyed hash under
//! that subkey. A [`PublisherKey`] is an Ed25519 signing key (RFC 8032) held by one publisher;
//! its [`PublicKey`] is written in the overlay file so subscribers and caches can check the
//! metadata it signs without sharing any secret.
//!
//! Nothing here reads files, clocks or random sources: the runtimes load keys and draw seeds.

use core::fmt;

use ed25519_dalek::Signer;

/// Bytes of a MAC on the wire: 128 bits, as HMAC-SHA-256-128 in IPsec (RFC 4868 §2.6).
pub const MAC_BYTES: usize = 16;
/// Bytes of an Ed25519 signature (RFC 8032 §5.1.6).
pub const SIGNATURE_BYTES: usize = 64;
/// Bytes of a key: an overlay key, an Ed25519 seed or an Ed25519 public key.
pub const KEY_BYTES: usize = 32;

const CONTROL_MAC_CONTEXT: &str = "pathpool v2 control mac";
const TICKET_MAC_CONTEXT: &str = "pathpool v2 fid ticket";
const DATA_ERROR_MAC_CONTEXT: &str = "pathpool v2 data error mac";
const LIPSIN_TAGS_CONTEXT: &str = "pathpool v2 lipsin tags";
const PUBLIC_KEY_PREFIX: &str = "ed25519:";

/// Why a key's text was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// Not 64 hexadecimal digits (after the `ed25519:` prefix for a public key).
    BadHex,
    /// A public key without its `ed25519:` prefix.
    MissingPrefix,
    /// 32 bytes that are not an Ed25519 public key (not a curve point).
    NotAPoint,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::BadHex => f.write_str("expected 64 hexadecimal digits (32 bytes)"),
            KeyError::MissingPrefix => {
                f.write_str("expected a public key written \"ed25519:\" and 64 hexadecimal digits")
            }
            KeyError::NotAPoint => f.write_str("not an Ed25519 public key"),
        }
    }
}

impl std::error::Error for KeyError {}

fn parse_hex32(text: &str) -> Result<[u8; KEY_BYTES], KeyError> {
    let text = text.trim();
    if text.len() != 2 * KEY_BYTES || !text.is_ascii() {
        return Err(KeyError::BadHex);
    }
    let mut out = [0u8; KEY_BYTES];
    for (byte, pair) in out.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
        let pair = core::str::from_utf8(pair).map_err(|_| KeyError::BadHex)?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| KeyError::BadHex)?;
    }
    Ok(out)
}

fn to_hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn mac(subkey: &[u8; KEY_BYTES], message: &[u8]) -> [u8; MAC_BYTES] {
    let hash = blake3::keyed_hash(subkey, message);
    let mut out = [0u8; MAC_BYTES];
    for (o, b) in out.iter_mut().zip(hash.as_bytes()) {
        *o = *b;
    }
    out
}

fn mac_parts(subkey: &[u8; KEY_BYTES], parts: &[&[u8]]) -> [u8; MAC_BYTES] {
    let mut hasher = blake3::Hasher::new_keyed(subkey);
    for p in parts {
        hasher.update(p);
    }
    let mut out = [0u8; MAC_BYTES];
    for (o, b) in out.iter_mut().zip(hasher.finalize().as_bytes()) {
        *o = *b;
    }
    out
}

/// Whether two MACs are equal, in time independent of where they differ.
#[must_use]
pub fn macs_equal(a: &[u8; MAC_BYTES], b: &[u8; MAC_BYTES]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The secret shared by an overlay's members, with a subkey per use derived once.
#[derive(Clone)]
pub struct OverlayKey {
    secret: [u8; KEY_BYTES],
    control: [u8; KEY_BYTES],
    ticket: [u8; KEY_BYTES],
    data_error: [u8; KEY_BYTES],
    lipsin: [u8; KEY_BYTES],
}

impl fmt::Debug for OverlayKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OverlayKey(..)")
    }
}

impl OverlayKey {
    /// The key from its 32 bytes.
    #[must_use]
    pub fn from_bytes(secret: [u8; KEY_BYTES]) -> Self {
        OverlayKey {
            secret,
            control: blake3::derive_key(CONTROL_MAC_CONTEXT, &secret),
            ticket: blake3::derive_key(TICKET_MAC_CONTEXT, &secret),
            data_error: blake3::derive_key(DATA_ERROR_MAC_CONTEXT, &secret),
            lipsin: blake3::derive_key(LIPSIN_TAGS_CONTEXT, &secret),
        }
    }

    /// The key from 64 hexadecimal digits (surrounding white space ignored).
    ///
    /// # Errors
    /// [`KeyError::BadHex`] for anything else.
    pub fn parse_hex(text: &str) -> Result<Self, KeyError> {
        parse_hex32(text).map(Self::from_bytes)
    }

    /// The key as 64 lowercase hexadecimal digits, as key files hold it.
    #[must_use]
    pub fn to_hex(&self) -> String {
        to_hex(&self.secret)
    }

    /// The MAC of a control message (PUBLISH, UNPUBLISH, SUBSCRIBE, FID_SET, CONTROL_ERROR).
    #[must_use]
    pub fn control_mac(&self, message: &[u8]) -> [u8; MAC_BYTES] {
        mac(&self.control, message)
    }

    /// The MAC of a control message given in pieces (the datagram around its hop limit):
    /// the same as [`control_mac`](Self::control_mac) of the pieces laid end to end.
    #[must_use]
    pub fn control_mac_parts(&self, parts: &[&[u8]]) -> [u8; MAC_BYTES] {
        mac_parts(&self.control, parts)
    }

    /// The MAC of a FID ticket.
    #[must_use]
    pub fn ticket_mac(&self, message: &[u8]) -> [u8; MAC_BYTES] {
        mac(&self.ticket, message)
    }

    /// The MAC of a publisher's DATA_ERROR.
    #[must_use]
    pub fn data_error_mac(&self, message: &[u8]) -> [u8; MAC_BYTES] {
        mac(&self.data_error, message)
    }

    /// The seed of the LIPSIN link tags, so that FIDs cannot be computed without the key.
    #[must_use]
    pub fn lipsin_seed(&self) -> u64 {
        let mut seed = [0u8; 8];
        for (o, b) in seed.iter_mut().zip(&self.lipsin) {
            *o = *b;
        }
        u64::from_be_bytes(seed)
    }
}

/// A publisher's Ed25519 signing key.
#[derive(Clone)]
pub struct PublisherKey(ed25519_dalek::SigningKey);

impl fmt::Debug for PublisherKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublisherKey({})", self.public())
    }
}

impl PublisherKey {
    /// The key from its 32-byte seed (RFC 8032 §5.1.5's private key).
    #[must_use]
    pub fn from_seed(seed: [u8; KEY_BYTES]) -> Self {
        PublisherKey(ed25519_dalek::SigningKey::from_bytes(&seed))
    }

    /// The key from its seed in 64 hexadecimal digits.
    ///
    /// # Errors
    /// [`KeyError::BadHex`] for anything else.
    pub fn parse_hex(text: &str) -> Result<Self, KeyError> {
        parse_hex32(text).map(Self::from_seed)
    }

    /// The seed as 64 lowercase hexadecimal digits, as key files hold it.
    #[must_use]
    pub fn to_hex(&self) -> String {
        to_hex(&self.0.to_bytes())
    }

    /// The public key that checks this key's signatures.
    #[must_use]
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// The Ed25519 signature of `message`.
    #[must_use]
    pub fn sign(&self, message: &[u8]) -> [u8; SIGNATURE_BYTES] {
        self.0.sign(message).to_bytes()
    }
}

/// An Ed25519 public key, written `ed25519:` and 64 hexadecimal digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(ed25519_dalek::VerifyingKey);

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({self})")
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PUBLIC_KEY_PREFIX}{}", to_hex(self.0.as_bytes()))
    }
}

impl PublicKey {
    /// The key from `ed25519:` and 64 hexadecimal digits.
    ///
    /// # Errors
    /// [`KeyError`] naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let hex = text
            .trim()
            .strip_prefix(PUBLIC_KEY_PREFIX)
            .ok_or(KeyError::MissingPrefix)?;
        Self::from_bytes(parse_hex32(hex)?)
    }

    /// The key from its 32 bytes.
    ///
    /// # Errors
    /// [`KeyError::NotAPoint`] if they do not encode a curve point.
    pub fn from_bytes(bytes: [u8; KEY_BYTES]) -> Result<Self, KeyError> {
        ed25519_dalek::VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|_| KeyError::NotAPoint)
    }

    /// The key's 32 bytes.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; KEY_BYTES] {
        self.0.to_bytes()
    }

    /// Whether `signature` is this key's signature of `message` (RFC 8032 §5.1.7, with
    /// `verify_strict`'s rejection of small-order keys and non-canonical signatures).
    #[must_use]
    pub fn verify(&self, message: &[u8], signature: &[u8; SIGNATURE_BYTES]) -> bool {
        let signature = ed25519_dalek::Signature::from_bytes(signature);
        self.0.verify_strict(message, &signature).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8032 §7.1, TEST 1: the empty message under the first test key.
    #[test]
    fn rfc8032_test_1_signs_and_verifies() {
        let key = PublisherKey::parse_hex(
            "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        )
        .unwrap();
        assert_eq!(
            key.public().to_string(),
            "ed25519:d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
        );
        let signature = key.sign(b"");
        assert_eq!(
            to_hex(&signature),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        );
        assert!(key.public().verify(b"", &signature));
        assert!(!key.public().verify(b"x", &signature));
    }

    #[test]
    fn keys_round_trip_through_text() {
        let overlay = OverlayKey::from_bytes([7; 32]);
        assert_eq!(
            OverlayKey::parse_hex(&overlay.to_hex()).unwrap().to_hex(),
            overlay.to_hex()
        );
        let publisher = PublisherKey::from_seed([9; 32]);
        let public = publisher.public();
        assert_eq!(PublicKey::parse(&public.to_string()).unwrap(), public);
        assert_eq!(
            PublisherKey::parse_hex(&publisher.to_hex())
                .unwrap()
                .public(),
            public
        );
    }

    #[test]
    fn bad_key_text_is_refused_with_the_reason() {
        assert_eq!(OverlayKey::parse_hex("abc").unwrap_err(), KeyError::BadHex);
        assert_eq!(
            OverlayKey::parse_hex(&"g".repeat(64)).unwrap_err(),
            KeyError::BadHex
        );
        assert_eq!(
            PublicKey::parse(&"0".repeat(64)).unwrap_err(),
            KeyError::MissingPrefix
        );
    }

    #[test]
    fn subkeys_differ_per_use_and_macs_depend_on_key_and_message() {
        let key = OverlayKey::from_bytes([1; 32]);
        let other = OverlayKey::from_bytes([2; 32]);
        let m = b"publish /a/b";
        assert_ne!(key.control_mac(m), key.ticket_mac(m));
        assert_ne!(key.control_mac(m), key.data_error_mac(m));
        assert_ne!(key.control_mac(m), other.control_mac(m));
        assert_ne!(key.control_mac(m), key.control_mac(b"publish /a/c"));
        assert!(macs_equal(&key.control_mac(m), &key.control_mac(m)));
        assert!(!macs_equal(&key.control_mac(m), &other.control_mac(m)));
        assert_ne!(key.lipsin_seed(), other.lipsin_seed());
        assert_eq!(
            key.control_mac_parts(&[b"publish ", b"/a/b"]),
            key.control_mac(m)
        );
    }
}
