//! The packets NDN forwarders exchange, with PTP's fields (spec 004 §3.2, issue 22): the
//! Interest's probe bit and tag, the Data's tag, 1-bit intermediate flag, route label and
//! congestion mark.

use pathpool_core::Dur;

use crate::name::Name;

/// A face of a node: its links numbered 1.. in the scenario's order; 0 is the node's own
/// application.
pub type FaceId = u32;

/// An Interest's lifetime unless it says otherwise: NFD's default, 4 s.
pub const DEFAULT_LIFETIME: Dur = Dur::from_secs(4);

/// A request for the Data of a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interest {
    /// The name asked for.
    pub name: Name,
    /// A random number that, with the name, tells a looping Interest from a new one.
    pub nonce: u32,
    /// How long a PIT keeps it.
    pub lifetime: Dur,
    /// A PTP probe: it skips content stores and is forwarded by the equal-weight strategy.
    pub probe: bool,
    /// PTP's path: a stack of face ids, the next hop's on top (the last element).
    pub tag: Vec<FaceId>,
}

impl Interest {
    /// An Interest for `name` with `nonce`, the default lifetime, no probe bit and no tag.
    #[must_use]
    pub fn new(name: Name, nonce: u32) -> Self {
        Interest {
            name,
            nonce,
            lifetime: DEFAULT_LIFETIME,
            probe: false,
            tag: Vec::new(),
        }
    }
}

/// The answer to an Interest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Data {
    /// The name it answers.
    pub name: Name,
    /// Payload bytes (the paper's packets carry 1024).
    pub payload_bytes: u32,
    /// A probe's Data: the faces it arrived on, pushed by each node on the way back.
    pub tag: Option<Vec<FaceId>>,
    /// PTP's 1-bit flag: set when a node other than the producer answered (a cache hit or
    /// an aggregated Interest); never cleared once set.
    pub intermediate: bool,
    /// RAAQM's route label: each node folds (node, arrival face) into it.
    pub route_label: u64,
    /// CHoPCoP's congestion mark.
    pub ce: bool,
}

impl Data {
    /// A producer's Data for `name`: no tag, flag 0, no label, no mark.
    #[must_use]
    pub fn new(name: Name, payload_bytes: u32) -> Self {
        Data {
            name,
            payload_bytes,
            tag: None,
            intermediate: false,
            route_label: 0,
            ce: false,
        }
    }
}

/// Why a node refused an Interest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NackReason {
    /// The (name, nonce) was seen already: the Interest loops or was duplicated.
    Duplicate,
    /// No route to the name.
    NoRoute,
    /// The face a tag named is down.
    FaceDown,
}

/// A network NACK: the Interest it refuses and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nack {
    /// The refused Interest's name.
    pub name: Name,
    /// Its nonce.
    pub nonce: u32,
    /// Whether it refuses a probe (a NACK carries the Interest it refuses, probe bit
    /// included, so that it finds the probe's PIT entry, not a tagged Interest's).
    pub probe: bool,
    /// Why.
    pub reason: NackReason,
}
