//! Stateless LIPSIN forwarding (thesis §3.4; decision D48) as a node's per-datagram decision:
//! read the header without the body, check the hop limit, and send a copy on every outgoing
//! link whose tag the FID contains. Bad datagrams are counted by reason and dropped (issue 5,
//! acceptance 6).
//!
//! Forwarding is bounded (issue 18, item 3; D160–D162): a data datagram is taken only from a
//! configured neighbour, a FID with more bits set than the fill-factor limit is dropped (an
//! all-ones FID would match every link), no copy goes back on the link the datagram came in
//! on, and the hop limit of a forwarded copy is lowered to the node's maximum.

use std::fmt;

use pathpool_topo::Fid;
use pathpool_wire::{
    decrement_hop_limit, peek, DecodeError, DropCounters, MsgType, HOP_LIMIT_OFFSET,
};

use crate::overlay::NodeLink;
use crate::security::ForwardLimits;

/// Most outgoing links a node may have: the matching links of a datagram are a 64-bit mask.
pub const MAX_LINKS: usize = 64;

/// What to do with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// An endpoint's datagram: hand it to the local publisher, subscriber or rendezvous.
    Local(MsgType),
    /// Send a copy on each link whose bit is set (bit `i` is the node's `i`-th link); the
    /// hop limit has been decremented in place.
    Forward(LinkMask),
    /// Dropped; the reason is counted.
    Drop,
}

/// A set of a node's outgoing links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkMask(pub u64);

impl LinkMask {
    /// The links' positions, ascending.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(i)
        })
    }

    /// Number of links.
    #[must_use]
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether no link is set.
    #[must_use]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// A forwarding node's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForwardStats {
    /// Datagrams received.
    pub received: u64,
    /// Datagrams handed to the local endpoint.
    pub local: u64,
    /// Copies sent (a datagram matching two links counts two).
    pub copies: u64,
    /// Dropped: the header did not decode, by reason.
    pub malformed: DropCounters,
    /// Dropped: the hop limit ran out (a loop or an over-long path).
    pub hop_limit_expired: u64,
    /// Dropped: the FID matched none of the node's links (other than the incoming one).
    pub no_match: u64,
    /// Dropped: a data datagram from an address that is not a neighbour's.
    pub not_neighbour: u64,
    /// Dropped: the FID has more bits set than the fill-factor limit.
    pub over_fill: u64,
    /// Datagrams whose FID also matched the incoming link: no copy went back on it.
    pub not_sent_back: u64,
    /// Forwarded datagrams whose hop limit was lowered to the node's maximum.
    pub hop_capped: u64,
}

impl ForwardStats {
    /// All drops.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.malformed.total()
            + self.hop_limit_expired
            + self.no_match
            + self.not_neighbour
            + self.over_fill
    }
}

/// Where a datagram came from, as the forwarder sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incoming {
    /// From the neighbour at the far end of the node's link `i`.
    Link(usize),
    /// From an address that is no neighbour's.
    Stranger,
}

/// Too many links for one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyLinks(pub usize);

impl fmt::Display for TooManyLinks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a node has {} links; a forwarding node handles at most {MAX_LINKS}",
            self.0
        )
    }
}

impl std::error::Error for TooManyLinks {}

/// A node's forwarding table, bounds and counters.
#[derive(Debug, Clone)]
pub struct Forwarder {
    tags: Vec<Fid>,
    transit: bool,
    max_bits: u32,
    max_hop_limit: u8,
    stats: ForwardStats,
}

impl Forwarder {
    /// A forwarder over `links` (the node's outgoing links, in the order the masks use). A
    /// node that is not `transit` is an endpoint: it keeps every valid datagram it receives
    /// and forwards none.
    ///
    /// # Errors
    /// More than [`MAX_LINKS`] links.
    pub fn new(
        links: &[NodeLink],
        transit: bool,
        limits: ForwardLimits,
    ) -> Result<Self, TooManyLinks> {
        if links.len() > MAX_LINKS {
            return Err(TooManyLinks(links.len()));
        }
        // The limit as a count of bits: floor(max_fill · m), so 0.5 of 256 bits is 128.
        let max_bits = (limits.max_fill * Fid::<4>::BITS as f64).floor() as u32;
        Ok(Forwarder {
            tags: links.iter().map(|l| l.tag).collect(),
            transit,
            max_bits,
            max_hop_limit: limits.max_hop_limit,
            stats: ForwardStats::default(),
        })
    }

    /// The links whose tags `fid` contains: where a datagram on `fid` goes from this node
    /// (an endpoint uses it to send its own datagrams).
    #[must_use]
    pub fn matching(&self, fid: &Fid) -> LinkMask {
        let mut mask = 0u64;
        for (i, tag) in self.tags.iter().enumerate() {
            if fid.contains(tag) {
                mask |= 1 << i;
            }
        }
        LinkMask(mask)
    }

    /// Decides what to do with a datagram received from `incoming`, decrementing (and
    /// capping) its hop limit in place when it is forwarded. Control messages go to the node
    /// whoever sent them (their MAC is checked there); data messages only from neighbours.
    /// Never panics, whatever the bytes.
    pub fn route(&mut self, datagram: &mut [u8], incoming: Incoming) -> Route {
        self.stats.received += 1;
        let (msg_type, fid) = match peek::<4>(datagram) {
            Ok(h) => (h.msg_type, h.fid),
            Err(e) => return self.malformed(&e),
        };
        if is_slow_path(msg_type) {
            self.stats.local += 1;
            return Route::Local(msg_type);
        }
        let Incoming::Link(back) = incoming else {
            self.stats.not_neighbour += 1;
            return Route::Drop;
        };
        if !self.transit {
            self.stats.local += 1;
            return Route::Local(msg_type);
        }
        if fid.count_ones() > self.max_bits {
            self.stats.over_fill += 1;
            return Route::Drop;
        }
        let mut mask = self.matching(&fid);
        if back < MAX_LINKS && mask.0 & (1 << back) != 0 {
            mask.0 &= !(1 << back);
            self.stats.not_sent_back += 1;
        }
        if mask.is_empty() {
            self.stats.no_match += 1;
            return Route::Drop;
        }
        let Some(hop) = decrement_hop_limit(datagram) else {
            self.stats.hop_limit_expired += 1;
            return Route::Drop;
        };
        if hop > self.max_hop_limit {
            if let Some(h) = datagram.get_mut(HOP_LIMIT_OFFSET) {
                *h = self.max_hop_limit;
            }
            self.stats.hop_capped += 1;
        }
        self.stats.copies += u64::from(mask.len());
        Route::Forward(mask)
    }

    fn malformed(&mut self, e: &DecodeError) -> Route {
        self.stats.malformed.record(e);
        Route::Drop
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> &ForwardStats {
        &self.stats
    }
}

/// Whether a message belongs to the slow path (thesis §4.2 steps 1–3: publish, subscribe and
/// the topology manager's answer). The overlay sends these straight to the addressee's socket
/// rather than along a FID: the thesis leaves the rendezvous network's own routing out of
/// scope, and a node must reach the rendezvous before it has any FID.
#[must_use]
pub fn is_slow_path(msg: MsgType) -> bool {
    matches!(
        msg,
        MsgType::Publish
            | MsgType::Unpublish
            | MsgType::Subscribe
            | MsgType::FidSet
            | MsgType::ControlError
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::Overlay;
    use pathpool_core::{Rng, Time};
    use pathpool_proto::mmtp::{ContentId, Echo, ErrorKind, ErrorReply, Part, PathIndex};
    use pathpool_psi::ContentName;
    use pathpool_topo::NodeIx;
    use pathpool_wire::{ControlAuth, Message, Packet, Publish};

    const LIMITS: ForwardLimits = ForwardLimits {
        max_fill: 0.5,
        max_hop_limit: 64,
    };

    /// The index of `node`'s link to `peer`.
    fn link_to(o: &Overlay, node: NodeIx, peer: NodeIx) -> usize {
        o.node_links(node)
            .iter()
            .position(|l| l.peer == peer)
            .unwrap()
    }

    /// p - a - s and p - b - s, plus a - b.
    const SQUARE: &str = r#"
rendezvous = "s"
tm = { policy = "k-shortest", k = 3 }
nodes = [
  { id = "p", transit = false }, { id = "a" }, { id = "b" }, { id = "s", transit = false },
]
links = [
  { between = ["p", "a"] }, { between = ["p", "b"] }, { between = ["a", "s"] },
  { between = ["b", "s"] }, { between = ["a", "b"] },
]
"#;

    fn packet(fid: Fid, hop_limit: u8) -> Vec<u8> {
        Packet::<4> {
            hop_limit,
            fid,
            message: Message::DataError(pathpool_wire::DataErrorMsg {
                error: ErrorReply {
                    content: ContentId(7),
                    part: Part::Chunk(3),
                    path: PathIndex(0),
                    echo: Echo {
                        sent_at: Time::ZERO,
                        retransmission: false,
                    },
                    kind: ErrorKind::UnknownContent,
                },
                version: 0,
                token: 0,
                publisher: pathpool_topo::NodeIx(0),
                mac: [0; 16],
            }),
        }
        .to_vec()
        .unwrap()
    }

    #[test]
    fn slow_path_messages_go_to_the_node_itself() {
        let o = Overlay::from_toml(SQUARE, "square.toml").unwrap();
        let mut fw = Forwarder::new(&o.node_links(o.node("a").unwrap()), true, LIMITS).unwrap();
        let mut d = Packet::<4> {
            hop_limit: 64,
            fid: Fid::default(),
            message: Message::Publish(Publish {
                publisher: NodeIx(0),
                name: ContentName::new("/video/a").unwrap(),
                auth: ControlAuth::default(),
            }),
        }
        .to_vec()
        .unwrap();
        // From anyone: its MAC is checked by the endpoint.
        assert_eq!(
            fw.route(&mut d, Incoming::Stranger),
            Route::Local(MsgType::Publish)
        );
    }

    #[test]
    fn every_path_of_the_topology_manager_is_followed_hop_by_hop() {
        let o = Overlay::from_toml(SQUARE, "square.toml").unwrap();
        let mut fw: Vec<Forwarder> = (0..o.nodes().len())
            .map(|n| {
                let n = NodeIx(n as u32);
                Forwarder::new(&o.node_links(n), o.nodes()[n.0 as usize].transit, LIMITS).unwrap()
            })
            .collect();
        let (p, s) = (o.node("p").unwrap(), o.node("s").unwrap());
        let set = o.topology_manager().paths(&[p], s).unwrap();
        assert_eq!(set.paths.len(), 3);
        for path in &set.paths {
            // Walk the datagram through the overlay as the nodes would, following every copy.
            let g = o.topology_manager().graph();
            let mut at = vec![(p, p, packet(path.forward_fid, 64))];
            let mut crossed = Vec::new();
            let mut arrived = 0;
            while let Some((node, from, mut d)) = at.pop() {
                let links = o.node_links(node);
                let mask = if node == p {
                    fw[p.0 as usize].matching(&path.forward_fid)
                } else {
                    let incoming = Incoming::Link(link_to(&o, node, from));
                    match fw[node.0 as usize].route(&mut d, incoming) {
                        Route::Local(MsgType::DataError) => {
                            arrived += 1;
                            continue;
                        }
                        Route::Forward(m) => m,
                        other => panic!("unexpected {other:?} at node {node:?}"),
                    }
                };
                for i in mask.iter() {
                    crossed.push(links[i].edge);
                    at.push((g.ends(links[i].edge).1, node, d.clone()));
                }
            }
            assert_eq!(arrived, 1, "one copy reaches the subscriber");
            crossed.sort();
            let mut expected = path.forward.clone();
            expected.sort();
            assert_eq!(
                crossed, expected,
                "no false-positive copies in so small a net"
            );
        }
    }

    #[test]
    fn the_hop_limit_is_decremented_and_enforced() {
        let o = Overlay::from_toml(SQUARE, "square.toml").unwrap();
        let a = o.node("a").unwrap();
        let links = o.node_links(a);
        let mut fw = Forwarder::new(
            &links,
            true,
            ForwardLimits {
                max_hop_limit: 5,
                ..LIMITS
            },
        )
        .unwrap();
        let from = Incoming::Link(1);
        let mut d = packet(links[0].tag, 2);
        assert_eq!(fw.route(&mut d, from), Route::Forward(LinkMask(1)));
        assert_eq!(peek::<4>(&d).unwrap().hop_limit, 1);
        assert_eq!(fw.route(&mut d, from), Route::Drop);
        assert_eq!(fw.stats().hop_limit_expired, 1);
        // A FID with no tag of this node's links.
        let mut stray = packet(Fid::default(), 64);
        assert_eq!(fw.route(&mut stray, from), Route::Drop);
        assert_eq!(fw.stats().no_match, 1);
        // A sender's hop limit of 255 leaves at the node's maximum.
        let mut high = packet(links[0].tag, 255);
        assert_eq!(fw.route(&mut high, from), Route::Forward(LinkMask(1)));
        assert_eq!(peek::<4>(&high).unwrap().hop_limit, 5);
        assert_eq!(fw.stats().hop_capped, 1);
    }

    #[test]
    fn bounded_forwarding_refuses_full_fids_strangers_and_the_way_back() {
        let o = Overlay::from_toml(SQUARE, "square.toml").unwrap();
        let a = o.node("a").unwrap();
        let links = o.node_links(a);
        let mut fw = Forwarder::new(&links, true, LIMITS).unwrap();
        // All ones: it matches every link, and is refused at once.
        let mut ones = packet(Fid::from_words([u64::MAX; 4]), 64);
        assert_eq!(fw.route(&mut ones, Incoming::Link(0)), Route::Drop);
        assert_eq!(fw.stats().over_fill, 1);
        // 129 bits set is over the limit of 128 (half of 256); 128 is not.
        let mut d = packet(Fid::from_words([u64::MAX, u64::MAX, 1, 0]), 64);
        assert_eq!(fw.route(&mut d, Incoming::Link(0)), Route::Drop);
        assert_eq!(fw.stats().over_fill, 2);
        let mut d = packet(Fid::from_words([u64::MAX, u64::MAX, 0, 0]), 64);
        fw.route(&mut d, Incoming::Link(0));
        assert_eq!(fw.stats().over_fill, 2);
        let all_links = LinkMask((1 << links.len()) - 1);
        // Never back on the incoming link: a FID of every link's tag, from link 0.
        let mut every = Fid::default();
        for l in &links {
            for (i, w) in l.tag.words().iter().enumerate() {
                let mut words = *every.words();
                words[i] |= w;
                every = Fid::from_words(words);
            }
        }
        let mut d = packet(every, 64);
        assert_eq!(
            fw.route(&mut d, Incoming::Link(0)),
            Route::Forward(LinkMask(all_links.0 & !1))
        );
        assert!(fw.stats().not_sent_back >= 1);
        // A data datagram from a stranger is dropped, whatever its FID.
        let mut d = packet(links[1].tag, 64);
        assert_eq!(fw.route(&mut d, Incoming::Stranger), Route::Drop);
        assert_eq!(fw.stats().not_neighbour, 1);
    }

    #[test]
    fn random_bytes_are_counted_and_dropped() {
        let o = Overlay::from_toml(SQUARE, "square.toml").unwrap();
        let mut fw = Forwarder::new(&o.node_links(o.node("a").unwrap()), true, LIMITS).unwrap();
        let valid = packet(Fid::default(), 64);
        let mut rng = Rng::seed_from_u64(5);
        let n = 20_000;
        for i in 0..n {
            // Half pure noise, half a valid packet with a few bytes flipped or cut short.
            let mut d = if i % 2 == 0 {
                (0..rng.below(1600)).map(|_| rng.next_u64() as u8).collect()
            } else {
                let mut d = valid.clone();
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(d.len() as u64) as usize;
                    d[at] ^= 1 << rng.below(8);
                }
                d.truncate(rng.below(d.len() as u64 + 1) as usize);
                d
            };
            fw.route(&mut d, Incoming::Link(0));
        }
        let st = fw.stats();
        assert_eq!(st.received, n);
        // A mutation can turn the type into a slow-path one, which the node keeps.
        assert_eq!(
            st.dropped() + st.copies + st.local,
            n,
            "every datagram dropped, forwarded once or kept"
        );
        assert!(st.malformed.total() > 15_000, "{st:?}");
    }

    #[test]
    fn endpoints_keep_what_they_receive() {
        let o = Overlay::from_toml(SQUARE, "square.toml").unwrap();
        let mut fw = Forwarder::new(&o.node_links(o.node("s").unwrap()), false, LIMITS).unwrap();
        let mut d = packet(Fid::default(), 1);
        assert_eq!(
            fw.route(&mut d, Incoming::Link(0)),
            Route::Local(MsgType::DataError)
        );
        assert_eq!(fw.stats().local, 1);
    }
}
