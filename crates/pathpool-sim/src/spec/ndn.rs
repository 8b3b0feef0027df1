//! `[ndn]`: when present, every node of the network is an NDN node (issue 22; spec 004 §3),
//! with one forwarder; `[[ndn.producers]]` serve prefixes, `[[ndn.cs]]` give nodes content
//! stores, `[[ndn.fib]]` (with `routing = "explicit"`) lists next hops, and flows of
//! `kind = "ndn"` are consumers.

use pathpool_cc::RttScale;
use pathpool_core::{ByteSize, Dur};
use pathpool_ndn::{FabKey, Labeling, Strategy, TagFallback};
use pathpool_proto::ndn::{LossDetection, RaaqmVariant, Selection};
use serde::{Deserialize, Serialize};

/// How the FIBs are filled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NdnRouting {
    /// Every face whose neighbour reaches a producer of the prefix without coming back
    /// through the node (ndnSIM's all possible routes), cheapest first; a producer's node
    /// keeps only its own face (default; D324).
    #[default]
    AllPaths,
    /// One face: the first link of a least-cost path to the nearest producer.
    Shortest,
    /// Only the `[[ndn.fib]]` entries (and each producer's own face).
    Explicit,
}

/// A strategy for the names under a prefix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdnStrategyEntry {
    /// The prefix.
    pub prefix: String,
    /// Its strategy.
    pub strategy: Strategy,
}

/// `[ndn.fab]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdnFabSpec {
    /// Tuples a node's FAB keeps (default 1024; 0: every lookup is an LPM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u64>,
    /// How a tuple matches (default `"stored"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<FabKey>,
}

/// PTP's parameters: `[ndn.ptp]` for every PTP consumer (and the routers' `fallback`), a
/// flow's `ptp` for its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PtpSpec {
    /// The routers' fallback for a tag that does not hold (`[ndn.ptp]` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<TagFallback>,
    /// N, the most paths in use (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_paths: Option<u32>,
    /// T, the review period (default 10s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Dur>,
    /// MPCCP's β, in (0, 1) (default 0.75).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Probes a second (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_rate: Option<f64>,
    /// How a review chooses (default `"bandwidth"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    /// Loss detection (default `"one"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_detection: Option<LossDetection>,
    /// RTT scaling of the increase (default `"equation"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_scale: Option<RttScale>,
    /// rtt_ref (default 100ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ref: Option<Dur>,
}

impl PtpSpec {
    /// `self`'s values, else `base`'s.
    #[must_use]
    pub fn or(&self, base: &PtpSpec) -> PtpSpec {
        PtpSpec {
            fallback: self.fallback.or(base.fallback),
            max_paths: self.max_paths.or(base.max_paths),
            period: self.period.or(base.period),
            beta: self.beta.or(base.beta),
            probe_rate: self.probe_rate.or(base.probe_rate),
            selection: self.selection.or(base.selection),
            loss_detection: self.loss_detection.or(base.loss_detection),
            rtt_scale: self.rtt_scale.or(base.rtt_scale),
            rtt_ref: self.rtt_ref.or(base.rtt_ref),
        }
    }
}

/// A producer: the node's application answers every Interest under `prefix`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdnProducerSpec {
    /// The node.
    pub node: String,
    /// The prefix it serves (e.g. `"/c"`).
    pub prefix: String,
}

/// A content store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdnCsSpec {
    /// The node.
    pub node: String,
    /// Data packets it holds (least recently used first out).
    pub capacity: u64,
    /// The probability that a Data crossing the node is stored (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admit: Option<f64>,
}

/// An explicit FIB entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdnFibSpec {
    /// The node.
    pub node: String,
    /// The prefix.
    pub prefix: String,
    /// Neighbours to forward to, cheapest first.
    pub next: Vec<String>,
}

/// `[ndn]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdnSpec {
    /// How FIBs are filled (default `"all-paths"`).
    #[serde(default)]
    pub routing: NdnRouting,
    /// The strategy of names no `[[ndn.strategies]]` entry covers (default `"best-route"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// Strategies by prefix (the longest matching prefix wins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strategies: Vec<NdnStrategyEntry>,
    /// The FABs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fab: Option<NdnFabSpec>,
    /// Route labels in Data names (default `"none"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<Labeling>,
    /// FISP: each face's Interests shaped to the Data rate of its reverse link, shared fairly
    /// by flow names (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fisp: Option<bool>,
    /// An Interest's size on the wire before its tag (default 50B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interest_size: Option<ByteSize>,
    /// A Data's headers on the wire besides its payload and tag (default 50B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_header: Option<ByteSize>,
    /// A Data's payload (default 1024B, the paper's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<ByteSize>,
    /// PTP's parameters for every PTP consumer, and the routers' fallback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptp: Option<PtpSpec>,
    /// RAAQM consumers' constants: `"ndnsim"` (default) or `"hicn"` (Cisco's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raaqm: Option<RaaqmVariant>,
    /// The producers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub producers: Vec<NdnProducerSpec>,
    /// The content stores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cs: Vec<NdnCsSpec>,
    /// Explicit FIB entries (with `routing = "explicit"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fib: Vec<NdnFibSpec>,
}

impl NdnSpec {
    /// An Interest's size before its tag.
    pub const DEFAULT_INTEREST_SIZE: u64 = 50;
    /// A Data's headers.
    pub const DEFAULT_DATA_HEADER: u64 = 50;
    /// A Data's payload.
    pub const DEFAULT_PAYLOAD: u64 = 1024;
    /// A FAB's capacity.
    pub const DEFAULT_FAB_CAPACITY: u64 = 1024;
}

/// The transport of an NDN consumer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NdnTransport {
    /// PTP: probes, path tags and MPCCP (default).
    #[default]
    Ptp,
    /// RAAQM: one window, random cuts from per-route RTTs.
    Raaqm,
    /// RIC (CHoPCoP's receiver): one window, cut on CE marks.
    Ric,
    /// ICP: one window, cut on timeouts.
    Icp,
    /// mmTP's subscriber (thesis §6.3): a subflow per route the branching routers' labels
    /// reveal, coupled by `cc` (default NMCC); needs `ndn.label = "branching-postfix"`.
    Mmtp,
}

impl NdnTransport {
    /// The name in files and results.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            NdnTransport::Ptp => "ptp",
            NdnTransport::Raaqm => "raaqm",
            NdnTransport::Ric => "ric",
            NdnTransport::Icp => "icp",
            NdnTransport::Mmtp => "mmtp",
        }
    }
}
