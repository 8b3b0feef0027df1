//! A download's per-chunk verification (issue 18, item 1): every chunk that arrives is checked
//! against the signed root through the hash tree before the subscriber's state machine sees
//! it; a chunk whose parent page has not been verified yet is held, up to a bound, and checked
//! when the page is.

use std::collections::BTreeMap;

use pathpool_core::Time;
use pathpool_proto::mmtp::Echo;
use pathpool_wire::hash_tree::{Check, Verifier};

/// Bytes of chunks a download holds while their parent pages are missing (D155): 4 MiB,
/// about 3 700 chunks of 1119 bytes, far more than the requests in flight at once on a
/// loopback transfer; beyond it a chunk is dropped, and its request times out and is sent
/// again as any lost one.
pub const MAX_HELD_BYTES: usize = 4 << 20;

/// A chunk as it arrived, owned (held ones outlive their datagram).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrived {
    /// Transfer index (pages first).
    pub index: u32,
    /// The subflow its reply names.
    pub path: usize,
    /// Its echo.
    pub echo: Echo,
    /// Its bytes.
    pub payload: Vec<u8>,
    /// When it arrived.
    pub at: Time,
}

/// What became of chunks offered: each is valid or not (held ones come out later).
#[derive(Debug, Default)]
pub struct Settled {
    /// Verified, in the order to hand them on (a page before the chunks it vouches for).
    pub valid: Vec<Arrived>,
    /// Failed verification.
    pub invalid: Vec<Arrived>,
}

/// The checker of one download.
#[derive(Debug)]
pub struct ContentCheck {
    verifier: Verifier,
    /// Held chunks by the parent page they wait for.
    held: BTreeMap<u32, Vec<Arrived>>,
    held_bytes: usize,
    /// Chunks dropped because the hold was full.
    pub overflowed: u64,
}

impl ContentCheck {
    /// A checker with `verifier`'s root and shape.
    #[must_use]
    pub fn new(verifier: Verifier) -> Self {
        ContentCheck {
            verifier,
            held: BTreeMap::new(),
            held_bytes: 0,
            overflowed: 0,
        }
    }

    /// Bytes held now.
    #[must_use]
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Checks `chunk`, and the held chunks it lets be checked if it is a valid page.
    pub fn offer(&mut self, chunk: Arrived) -> Settled {
        let mut out = Settled::default();
        self.settle(vec![chunk], &mut out);
        out
    }

    /// As [`offer`](Self::offer) for a chunk still in its datagram: copied only if it must
    /// be held. Returns whether it is valid (`None`: held) and the held chunks it settled.
    pub fn offer_borrowed(
        &mut self,
        index: u32,
        path: usize,
        echo: Echo,
        payload: &[u8],
        at: Time,
    ) -> (Option<bool>, Settled) {
        let mut out = Settled::default();
        match self.verifier.check(index, payload) {
            Check::Valid => {
                let children = self.release(index);
                self.settle(children, &mut out);
                (Some(true), out)
            }
            Check::Invalid => (Some(false), out),
            Check::ParentMissing { parent } => {
                self.hold(
                    parent,
                    Arrived {
                        index,
                        path,
                        echo,
                        payload: payload.to_vec(),
                        at,
                    },
                );
                (None, out)
            }
        }
    }

    /// The held children of page `index`, now checkable.
    fn release(&mut self, index: u32) -> Vec<Arrived> {
        let children = self.held.remove(&index).unwrap_or_default();
        self.held_bytes -= children.iter().map(|h| h.payload.len()).sum::<usize>();
        children
    }

    fn hold(&mut self, parent: u32, c: Arrived) {
        if self.held_bytes + c.payload.len() > MAX_HELD_BYTES {
            self.overflowed += 1;
            return;
        }
        self.held_bytes += c.payload.len();
        self.held.entry(parent).or_default().push(c);
    }

    fn settle(&mut self, mut work: Vec<Arrived>, out: &mut Settled) {
        while let Some(c) = work.pop() {
            match self.verifier.check(c.index, &c.payload) {
                Check::Valid => {
                    work.extend(self.release(c.index));
                    out.valid.push(c);
                }
                Check::Invalid => out.invalid.push(c),
                Check::ParentMissing { parent } => self.hold(parent, c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathpool_wire::hash_tree::{leaf_hash, HashTree};

    fn arrived(index: u32, payload: &[u8]) -> Arrived {
        Arrived {
            index,
            path: 0,
            echo: Echo {
                sent_at: Time::ZERO,
                retransmission: false,
            },
            payload: payload.to_vec(),
            at: Time::ZERO,
        }
    }

    /// Data before its pages is held, then released valid or invalid when the pages come.
    #[test]
    fn held_chunks_are_settled_when_their_page_arrives() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 3) as u8).collect();
        let leaves = data
            .chunks(64)
            .enumerate()
            .map(|(i, c)| leaf_hash(i as u64, c))
            .collect();
        let tree = HashTree::from_leaves(leaves, 64).unwrap();
        let mut check = ContentCheck::new(Verifier::new(tree.shape().clone(), tree.root()));
        let pages = tree.shape().pages();
        let s = check.offer(arrived(pages, &data[..64]));
        assert!(s.valid.is_empty() && s.invalid.is_empty());
        let s = check.offer(arrived(pages + 1, b"forged"));
        assert!(s.valid.is_empty() && s.invalid.is_empty());
        assert_eq!(check.held_bytes(), 70);
        let mut valid = Vec::new();
        let mut invalid = Vec::new();
        for i in (0..pages).rev() {
            let s = check.offer(arrived(i, tree.page(i).unwrap()));
            valid.extend(s.valid.iter().map(|c| c.index));
            invalid.extend(s.invalid.iter().map(|c| c.index));
        }
        assert_eq!(invalid, vec![pages + 1]);
        assert!(valid.contains(&pages));
        assert_eq!(valid.len() as u32, pages + 1);
        assert_eq!(check.held_bytes(), 0);
    }
}
