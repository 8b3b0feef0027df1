//! A fast hash for tables keyed by identifiers the program made itself.
//!
//! The multiply-rotate hash of rustc's `FxHasher`: a few cycles per key against SipHash's
//! tens. The keys hashed with it (link ids from the topology manager, content ids that are
//! already SHA-256 prefixes, chunk indices) come from the program, not from an adversary, so
//! SipHash's flooding resistance buys nothing there. Lookups only: no result may depend on a
//! table's iteration order.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The multiply-rotate hasher (rustc's `FxHasher` constant).
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(u64::from(x));
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn hash<T: Hash>(x: T) -> u64 {
        let mut h = FxHasher::default();
        x.hash(&mut h);
        h.finish()
    }

    #[test]
    fn equal_keys_hash_equal_and_widths_agree() {
        assert_eq!(hash(7u64), hash(7u64));
        assert_ne!(hash(7u64), hash(8u64));
        // Integers of every width hash as their 64-bit value, and bytes in 8-byte words.
        assert_eq!(hash(7u32), hash(7u64));
        let mut h = FxHasher::default();
        h.write(&7u64.to_le_bytes());
        assert_eq!(h.finish(), hash(7u64));
    }

    #[test]
    fn a_table_finds_what_it_holds() {
        let mut t: FxHashMap<(u64, u32), u32> = FxHashMap::default();
        for i in 0..1000u32 {
            t.insert((u64::from(i) * 0x9e37, i), i);
        }
        assert!((0..1000u32).all(|i| t[&(u64::from(i) * 0x9e37, i)] == i));
    }
}
