//! The start of a download under wire version 2 (issue 18, item 1): which metadata to trust.
//!
//! The subscriber asks every source for the metadata and accepts a reply only if it answers
//! one of its outstanding requests (the token matched already), names the content asked for,
//! has sizes that agree, and carries the signature of a trusted key for a publisher of the
//! FID set (or, with `get --publisher-key`, of one of the keys given). Within a short window
//! after the first such reply (`metadata_wait`, D152) it adopts the root most sources signed,
//! or the one pinned with `get --root`; sources that signed another root are excluded and
//! named, and a tie fails with the sources and roots named.

use std::fmt::Write as _;

use pathpool_core::{Dur, Time};
use pathpool_proto::mmtp::Echo;
use pathpool_psi::ContentName;
use pathpool_topo::NodeIx;
use pathpool_wire::auth::{OverlayKey, PublicKey};
use pathpool_wire::hash_tree::Hash;
use pathpool_wire::{MetadataReplyMsg, PathFids, SignedMetadata};

use crate::overlay::{Overlay, SecurityMode};

/// Default `metadata_wait`: how long after the first trusted metadata reply the other
/// sources' replies are awaited before a root is adopted (D152). A loopback or LAN source
/// answers within milliseconds; 1 s leaves room for a WAN path's first RTT and a loss.
pub const DEFAULT_METADATA_WAIT: Dur = Dur::from_secs(1);

/// What a download trusts.
#[derive(Clone, Debug, Default)]
pub struct Trust {
    /// Whether anything is checked at all.
    pub security: SecurityMode,
    /// The publisher keys of the overlay file, by node.
    pub node_keys: Vec<(NodeIx, PublicKey)>,
    /// Keys given on the command line (`get --publisher-key`): when any is given, only
    /// these are trusted, whatever the overlay file says.
    pub only_keys: Vec<PublicKey>,
    /// A root pinned on the command line (`get --root`): only it is adopted.
    pub root: Option<Hash>,
    /// The overlay key, which authenticates publishers' DATA_ERRORs; without it they are
    /// ignored under security on.
    pub overlay_key: Option<OverlayKey>,
    /// Node ids of the overlay file, for messages (`node N` where missing).
    pub node_names: Vec<String>,
}

impl Trust {
    /// The overlay file's security mode and publisher keys.
    #[must_use]
    pub fn from_overlay(overlay: &Overlay) -> Trust {
        Trust {
            security: overlay.security_mode(),
            node_keys: (0..overlay.nodes().len())
                .filter_map(|i| {
                    let n = NodeIx(i as u32);
                    overlay.public_key(n).map(|k| (n, *k))
                })
                .collect(),
            node_names: overlay.nodes().iter().map(|n| n.id.clone()).collect(),
            overlay_key: overlay.overlay_key().cloned(),
            ..Trust::default()
        }
    }

    /// The overlay file's id of `node`.
    #[must_use]
    pub fn name(&self, node: NodeIx) -> String {
        self.node_names
            .get(node.0 as usize)
            .cloned()
            .unwrap_or_else(|| format!("node {}", node.0))
    }

    /// Whether `m` carries a signature this download trusts, for the claimed publisher.
    pub(crate) fn signed(&self, m: &SignedMetadata) -> bool {
        if !self.only_keys.is_empty() {
            return self.only_keys.iter().any(|k| m.verify(k));
        }
        self.node_keys
            .iter()
            .any(|(n, k)| *n == m.publisher && m.verify(k))
    }
}

/// A trusted metadata reply from one source.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    /// The publisher at the far end of the path it came on.
    pub(crate) source: NodeIx,
    /// That path.
    pub(crate) path: usize,
    /// Its echo.
    pub(crate) echo: Echo,
    /// The metadata.
    pub(crate) metadata: SignedMetadata,
}

/// What to do after a reply or a timer.
#[derive(Debug)]
pub(crate) enum Decision {
    /// Not yet.
    Wait,
    /// Adopt this metadata; exclude these sources (with why).
    Adopt(Box<Candidate>, Vec<(NodeIx, String)>),
    /// Give up, with why.
    Fail(String),
}

/// The metadata phase of a download.
#[derive(Debug)]
pub(crate) struct MetadataPhase {
    /// Per path: whether a metadata request is outstanding on it.
    pub(crate) outstanding: Vec<bool>,
    /// When requests were last sent.
    pub(crate) last_sent: Option<Time>,
    candidates: Vec<Candidate>,
    first_trusted: Option<Time>,
    /// Why replies were refused, for the error if none is trusted.
    pub(crate) rejected: Vec<String>,
}

fn hex8(root: &Hash) -> String {
    root.iter().take(8).fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

impl MetadataPhase {
    pub(crate) fn new(paths: usize) -> Self {
        MetadataPhase {
            outstanding: vec![false; paths],
            last_sent: None,
            candidates: Vec::new(),
            first_trusted: None,
            rejected: Vec::new(),
        }
    }

    /// When [`decide`](Self::decide) must look again, if a reply was trusted.
    pub(crate) fn deadline(&self, wait: Dur) -> Option<Time> {
        self.first_trusted.map(|t| t + wait)
    }

    /// A reply whose token matched: recorded if trusted, else its refusal is noted.
    pub(crate) fn accept(
        &mut self,
        trust: &Trust,
        paths: &[PathFids],
        name: &ContentName,
        reply: &MetadataReplyMsg<'_>,
        now: Time,
    ) {
        let path = reply.prefix.path.index();
        let m = &reply.metadata;
        let refuse = |why: String| format!("metadata reply on path {path}: {why}");
        let why = if !self.outstanding.get(path).copied().unwrap_or(false) {
            Some(refuse("answers no outstanding request".into()))
        } else if m.name != *name {
            Some(refuse(format!("names {} instead", m.name)))
        } else if let Err(e) = m.validate() {
            Some(refuse(e.to_string()))
        } else if (trust.security == SecurityMode::On) != (m.pages > 0) {
            Some(refuse(format!(
                "{} pages under security {:?}",
                m.pages, trust.security
            )))
        } else if !paths.iter().any(|p| p.publisher == m.publisher) {
            Some(refuse(format!(
                "signed for node {} which is no source of this download",
                m.publisher.0
            )))
        } else if trust.security == SecurityMode::On && !trust.signed(m) {
            Some(refuse(format!(
                "signature of node {} does not verify with a trusted key",
                m.publisher.0
            )))
        } else {
            None
        };
        if let Some(why) = why {
            self.rejected.push(why);
            return;
        }
        let Some(source) = paths.get(path).map(|p| p.publisher) else {
            return;
        };
        self.outstanding[path] = false;
        if self.candidates.iter().any(|c| c.source == source) {
            return;
        }
        self.first_trusted.get_or_insert(now);
        self.candidates.push(Candidate {
            source,
            path,
            echo: reply.prefix.echo,
            metadata: m.clone(),
        });
    }

    /// Adopts a root once every source answered or the window after the first trusted reply
    /// has passed.
    pub(crate) fn decide(
        &self,
        trust: &Trust,
        sources: &[NodeIx],
        now: Time,
        wait: Dur,
    ) -> Decision {
        let all = sources
            .iter()
            .all(|s| self.candidates.iter().any(|c| c.source == *s));
        let waited = self.first_trusted.is_some_and(|t| now >= t + wait);
        if self.candidates.is_empty() || !(all || waited) {
            return Decision::Wait;
        }
        // Roots by the sources that signed them, in the order first seen.
        let mut roots: Vec<(Hash, Vec<&Candidate>)> = Vec::new();
        for c in &self.candidates {
            match roots.iter_mut().find(|(r, _)| *r == c.metadata.root) {
                Some((_, v)) => v.push(c),
                None => roots.push((c.metadata.root, vec![c])),
            }
        }
        let chosen = match trust.root {
            Some(pin) => match roots.iter().find(|(r, _)| *r == pin) {
                Some((r, _)) => *r,
                None if all => {
                    return Decision::Fail(format!(
                        "no source serves root {}: {}",
                        hex8(&pin),
                        describe(&roots, trust)
                    ))
                }
                None => return Decision::Wait,
            },
            None => {
                let most = roots.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
                let top: Vec<&(Hash, Vec<&Candidate>)> =
                    roots.iter().filter(|(_, v)| v.len() == most).collect();
                if top.len() > 1 {
                    return Decision::Fail(format!(
                        "the sources disagree with no majority: {}; pin one with --root",
                        describe(&roots, trust)
                    ));
                }
                top[0].0
            }
        };
        let excluded = self
            .candidates
            .iter()
            .filter(|c| c.metadata.root != chosen)
            .map(|c| {
                (
                    c.source,
                    format!(
                        "signed another version (root {}…, adopted {}…)",
                        hex8(&c.metadata.root),
                        hex8(&chosen)
                    ),
                )
            })
            .collect();
        match self.candidates.iter().find(|c| c.metadata.root == chosen) {
            Some(c) => Decision::Adopt(Box::new(c.clone()), excluded),
            None => Decision::Wait,
        }
    }
}

fn describe(roots: &[(Hash, Vec<&Candidate>)], trust: &Trust) -> String {
    roots
        .iter()
        .map(|(r, v)| {
            let who: Vec<String> = v.iter().map(|c| trust.name(c.source)).collect();
            format!("root {}… from {}", hex8(r), who.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathpool_proto::mmtp::PathIndex;
    use pathpool_topo::Fid;
    use pathpool_wire::auth::PublisherKey;
    use pathpool_wire::DataPrefix;

    fn key(node: u32) -> PublisherKey {
        PublisherKey::from_seed([node as u8 + 1; 32])
    }

    /// Three sources, nodes 1 to 3, one path each (path i to node i + 1).
    fn paths() -> Vec<PathFids> {
        (1..=3)
            .map(|n| PathFids {
                publisher: NodeIx(n),
                group_id: 0,
                forward_fid: Fid::default(),
                reverse_fid: Fid::default(),
                ticket: pathpool_wire::Ticket::default(),
            })
            .collect()
    }

    fn trust() -> Trust {
        Trust {
            node_keys: (1..=3).map(|n| (NodeIx(n), key(n).public())).collect(),
            node_names: ["rv", "p1", "p2", "p3"].map(String::from).to_vec(),
            ..Trust::default()
        }
    }

    fn name() -> ContentName {
        ContentName::new("/t/x").unwrap()
    }

    /// Metadata of a 100-byte content whose root is `root`, signed by `node`.
    fn metadata(node: u32, root: u8, signer: &PublisherKey) -> SignedMetadata {
        let mut m = SignedMetadata {
            name: name(),
            publisher: NodeIx(node),
            size_bytes: 100,
            chunk_bytes: 64,
            data_chunks: 2,
            pages: 1,
            root: [root; 32],
            content_hash: [root; 32],
            description: String::new(),
            signature: [0; 64],
        };
        m.sign(signer).unwrap();
        m
    }

    fn reply(path: u32, m: &SignedMetadata) -> MetadataReplyMsg<'static> {
        MetadataReplyMsg {
            prefix: DataPrefix {
                content: m.content(),
                version: m.version(),
                token: 0,
                path: PathIndex(path),
                echo: Echo {
                    sent_at: Time::ZERO,
                    retransmission: false,
                },
            },
            metadata: m.clone(),
            first_chunk: None,
        }
    }

    fn phase() -> MetadataPhase {
        let mut p = MetadataPhase::new(3);
        p.outstanding = vec![true; 3];
        p
    }

    const SOURCES: [NodeIx; 3] = [NodeIx(1), NodeIx(2), NodeIx(3)];
    const WAIT: Dur = Dur::from_secs(1);

    #[test]
    fn the_majority_root_is_adopted_and_the_other_source_named() {
        let (t, mut p) = (trust(), phase());
        let now = Time::from_ms(10);
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(0, &metadata(1, 7, &key(1))),
            now,
        );
        assert!(matches!(p.decide(&t, &SOURCES, now, WAIT), Decision::Wait));
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(1, &metadata(2, 8, &key(2))),
            now,
        );
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(2, &metadata(3, 7, &key(3))),
            now,
        );
        let Decision::Adopt(c, excluded) = p.decide(&t, &SOURCES, now, WAIT) else {
            panic!("no decision");
        };
        assert_eq!(c.metadata.root, [7; 32]);
        assert_eq!(excluded.len(), 1);
        assert_eq!(excluded[0].0, NodeIx(2));
        assert!(excluded[0]
            .1
            .starts_with("signed another version (root 0808"));
    }

    #[test]
    fn a_tie_fails_naming_sources_and_roots_unless_a_root_is_pinned() {
        let (mut t, mut p) = (trust(), phase());
        let now = Time::from_ms(10);
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(0, &metadata(1, 7, &key(1))),
            now,
        );
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(1, &metadata(2, 8, &key(2))),
            now,
        );
        // p3 never answers: the decision comes when the window has passed.
        assert!(matches!(p.decide(&t, &SOURCES, now, WAIT), Decision::Wait));
        let later = now + WAIT;
        let Decision::Fail(why) = p.decide(&t, &SOURCES, later, WAIT) else {
            panic!("a tie must fail");
        };
        assert!(
            why.contains("root 0707070707070707… from p1")
                && why.contains("root 0808080808080808… from p2"),
            "{why}"
        );
        t.root = Some([8; 32]);
        let Decision::Adopt(c, excluded) = p.decide(&t, &SOURCES, later, WAIT) else {
            panic!("the pinned root is adopted");
        };
        assert_eq!((c.source, excluded[0].0), (NodeIx(2), NodeIx(1)));
    }

    #[test]
    fn untrusted_unsolicited_and_foreign_replies_are_refused() {
        let (mut t, mut p) = (trust(), phase());
        let now = Time::from_ms(10);
        // Signed by a key the overlay does not give node 1.
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(0, &metadata(1, 7, &key(9))),
            now,
        );
        // Signed by node 2's key but claiming node 1.
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(0, &metadata(1, 7, &key(2))),
            now,
        );
        // Node 9 is no source of this download.
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(0, &metadata(9, 7, &key(9))),
            now,
        );
        // Answers no outstanding request.
        p.outstanding[1] = false;
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(1, &metadata(2, 7, &key(2))),
            now,
        );
        assert_eq!(p.rejected.len(), 4, "{:?}", p.rejected);
        assert!(matches!(
            p.decide(&t, &SOURCES, now + WAIT, WAIT),
            Decision::Wait
        ));
        // With --publisher-key, only that key counts, whatever the overlay says.
        t.only_keys = vec![key(9).public()];
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(0, &metadata(1, 7, &key(1))),
            now,
        );
        assert_eq!(p.rejected.len(), 5);
        p.accept(
            &t,
            &paths(),
            &name(),
            &reply(0, &metadata(1, 7, &key(9))),
            now,
        );
        assert!(matches!(
            p.decide(&t, &SOURCES, now + WAIT, WAIT),
            Decision::Adopt(..)
        ));
    }
}
