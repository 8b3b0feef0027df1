//! A scenario's `[[flows]]`: the fields every flow has and those its `kind` takes. How a flow
//! table is read is in [`read`].

use pathpool_cc::CcKind;
use pathpool_core::{BufferSize, ByteSize, Dur, Rate};
use pathpool_proto::mptcp::Scheduler;
use serde::{Deserialize, Serialize};

use super::{
    MmtpSpec, NdnTransport, OutageSpec, PtpSpec, SdnSpec, SubflowSpec, TcpSpec, TfrcSpec, TmSpec,
    WindowLimit,
};

mod read;

pub(crate) use read::NotTaken;

/// What kind of traffic a flow carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowKind {
    /// A TCP connection.
    #[default]
    Tcp,
    /// Constant-bit-rate UDP.
    UdpCbr,
    /// On-off UDP (constant rate while on).
    UdpOnoff,
    /// An mmTP download (thesis §4.1): a subscriber (`to`) pulls `size` bytes from one or
    /// more publishers (`from` or `sources`) over the topology manager's paths.
    Mmtp,
    /// A TFRC flow (RFC 3448): paced data and the receiver's feedback, on one path or, with
    /// `paths` or `subflows`, on several (Bilevel or 1/N TFRC, Tse 2006).
    Tfrc,
    /// An NDN consumer (issue 22): Interests for the SEQs of a content, by name, to whichever
    /// producers `[ndn]` has serve it.
    Ndn,
}

/// A flow's `cc`: a window-based congestion controller of `pathpool-cc`, or a rate-based
/// transport, INRPP's host or RCP (issue 21; single-path TCP flows only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowCc {
    /// A congestion controller.
    Window(CcKind),
    /// An INRPP host: open loop at its access rate, backpressure from the routers.
    Inrpp,
    /// RCP: paced at the rate the links on its path offer.
    Rcp,
}

impl FlowCc {
    /// The name in files and results.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FlowCc::Window(k) => k.name(),
            FlowCc::Inrpp => "inrpp",
            FlowCc::Rcp => "rcp",
        }
    }

    /// The congestion controller, if this is one.
    #[must_use]
    pub fn window(self) -> Option<CcKind> {
        match self {
            FlowCc::Window(k) => Some(k),
            FlowCc::Inrpp | FlowCc::Rcp => None,
        }
    }
}

impl Serialize for FlowCc {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for FlowCc {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.eq_ignore_ascii_case("inrpp") {
            return Ok(FlowCc::Inrpp);
        }
        if s.eq_ignore_ascii_case("rcp") {
            return Ok(FlowCc::Rcp);
        }
        s.parse::<CcKind>().map(FlowCc::Window).map_err(|e| {
            serde::de::Error::custom(format!("{e}; and for a single-path TCP flow, inrpp or rcp"))
        })
    }
}

/// The kinds that take a field, as a bit set of [`FlowKind::bit`]s.
type Kinds = u8;
const TCP: Kinds = 1;
const CBR: Kinds = 1 << 1;
const ONOFF: Kinds = 1 << 2;
const MMTP: Kinds = 1 << 3;
const TFRC: Kinds = 1 << 4;
const NDN: Kinds = 1 << 5;
const ALL_KINDS: Kinds = TCP | CBR | ONOFF | MMTP | TFRC | NDN;
const UDP: Kinds = CBR | ONOFF;

/// Every field of a flow table, in the order of `docs/scenario-reference.md`, with the kinds
/// that take it: one table, so that a kind's fields and the file's fields cannot disagree.
const FIELD_KINDS: [(&str, Kinds); 33] = [
    ("id", ALL_KINDS),
    ("kind", ALL_KINDS),
    ("from", ALL_KINDS & !NDN),
    ("to", ALL_KINDS),
    ("start", ALL_KINDS),
    ("start_spread", ALL_KINDS),
    ("stop", TCP | UDP | TFRC),
    ("size", TCP | MMTP | NDN),
    ("count", ALL_KINDS),
    ("route", TCP | UDP | TFRC),
    ("paths", TCP | TFRC),
    ("subflows", TCP | TFRC),
    ("k_paths", TCP),
    ("tm", TCP | MMTP),
    ("sdn", TCP),
    ("scheduler", TCP),
    ("receive_buffer", TCP),
    ("opportunistic_retransmission", TCP),
    ("penalisation", TCP),
    ("cc", TCP | MMTP | NDN),
    ("tcp", TCP | MMTP),
    ("rate", UDP),
    ("packet_size", UDP | TFRC),
    ("on", ONOFF),
    ("off", ONOFF),
    ("periods", ONOFF),
    ("sources", MMTP),
    ("outages", MMTP),
    ("mmtp", MMTP | NDN),
    ("content", MMTP | NDN),
    ("tfrc", TFRC),
    ("transport", NDN),
    ("ptp", NDN),
];

/// Every field of a flow table, in the order of `docs/scenario-reference.md`.
const FIELDS: [&str; FIELD_KINDS.len()] = {
    let mut names = [""; FIELD_KINDS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = FIELD_KINDS[i].0;
        i += 1;
    }
    names
};

impl FlowKind {
    /// Every kind, in the order of the reference.
    pub const ALL: [FlowKind; 6] = [
        FlowKind::Tcp,
        FlowKind::UdpCbr,
        FlowKind::UdpOnoff,
        FlowKind::Mmtp,
        FlowKind::Tfrc,
        FlowKind::Ndn,
    ];

    /// The name used in files and results.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Tcp => "tcp",
            FlowKind::UdpCbr => "udp-cbr",
            FlowKind::UdpOnoff => "udp-onoff",
            FlowKind::Mmtp => "mmtp",
            FlowKind::Tfrc => "tfrc",
            FlowKind::Ndn => "ndn",
        }
    }

    /// This kind's bit in [`FIELD_KINDS`].
    fn bit(self) -> Kinds {
        match self {
            FlowKind::Tcp => TCP,
            FlowKind::UdpCbr => CBR,
            FlowKind::UdpOnoff => ONOFF,
            FlowKind::Mmtp => MMTP,
            FlowKind::Tfrc => TFRC,
            FlowKind::Ndn => NDN,
        }
    }

    /// The fields a flow of this kind takes, in the order of the reference.
    pub fn fields(self) -> impl Iterator<Item = &'static str> {
        FIELD_KINDS
            .iter()
            .filter(move |(_, kinds)| kinds & self.bit() != 0)
            .map(|(name, _)| *name)
    }

    /// Whether a flow of this kind takes `field`.
    #[must_use]
    pub fn takes(self, field: &str) -> bool {
        FIELD_KINDS
            .iter()
            .any(|(name, kinds)| *name == field && kinds & self.bit() != 0)
    }

    /// Why a flow of this kind does not take `field`, where more can be said than which kinds
    /// do.
    fn why_not(self, field: &str) -> Option<&'static str> {
        let udp = matches!(self, FlowKind::UdpCbr | FlowKind::UdpOnoff);
        Some(match (self, field) {
            (FlowKind::Tcp, "rate") => "TCP rates are set by congestion control",
            (FlowKind::Tcp, "packet_size") => "TCP segments are sized by tcp.mss",
            (_, "size") if udp => "UDP flows send until they stop",
            (_, "paths" | "subflows" | "k_paths" | "tm" | "scheduler") if udp => {
                "multipath is for TCP and TFRC flows"
            }
            (FlowKind::Mmtp, "route" | "paths" | "subflows" | "k_paths") => {
                "the topology manager chooses an mmTP download's paths (give tm)"
            }
            (FlowKind::Mmtp, "scheduler") => "mmTP subflows pick chunks by Algorithm 1",
            (
                FlowKind::Mmtp,
                "receive_buffer" | "opportunistic_retransmission" | "penalisation",
            ) => "an mmTP subscriber requests chunks and keeps no MPTCP receive window",
            (FlowKind::Mmtp, "rate") => "mmTP rates are set by congestion control",
            (FlowKind::Mmtp, "packet_size") => "mmTP chunks are tcp.mss bytes",
            (FlowKind::Mmtp, "stop") => "a download ends when its content has arrived",
            (FlowKind::Tfrc, "rate") => "TFRC rates are set by its equation",
            (FlowKind::Tfrc, "size") => "TFRC flows send until they stop",
            (FlowKind::Tfrc, "k_paths" | "tm") => {
                "a multipath TFRC flow lists its paths or subflows"
            }
            (FlowKind::Tfrc, "scheduler") => "each TFRC subflow sends when its pacing allows",
            (FlowKind::Tfrc, "cc" | "tcp") => {
                "TFRC's parameters are in the flow's tfrc table and the scenario's [tfrc]"
            }
            (_, "tfrc") => "TFRC parameters are for TFRC flows",
            (FlowKind::Ndn, "from") => {
                "an NDN consumer's Interests go by name to the producers of its content \
                 (ndn.producers)"
            }
            (FlowKind::Ndn, "stop") => "a consumer ends when its content has arrived",
            (FlowKind::Ndn, "route" | "paths" | "subflows" | "k_paths" | "tm" | "scheduler") => {
                "NDN Interests are forwarded by name (ndn.routing, ndn.strategy)"
            }
            (
                FlowKind::Ndn,
                "tcp" | "receive_buffer" | "opportunistic_retransmission" | "penalisation",
            ) => "an NDN consumer's window is its transport's (transport, ptp, cc, mmtp)",
            (FlowKind::Ndn, "rate" | "packet_size") => {
                "NDN Data carry ndn.payload bytes, fetched as the window allows"
            }
            (_, "transport" | "ptp") => "NDN transports are for kind = \"ndn\" flows",
            _ => return None,
        })
    }
}

/// What every flow has, whatever its kind.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowCommon {
    /// Name; defaults to `flow<i>`. With `count > 1` the copies are `<id>.0`, `<id>.1`, ….
    pub id: Option<String>,
    /// Sending host (for `kind = "mmtp"`: the publisher, unless `sources` lists them); empty
    /// when not given (and then not written).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub from: String,
    /// Receiving host.
    pub to: String,
    /// When the flow starts.
    pub start: Dur,
    /// Copies start uniformly at random in `[start, start + start_spread]`.
    pub start_spread: Dur,
    /// Number of identical copies (0 disables the entry, which sweeps and reproductions use).
    pub count: u32,
}

impl Default for FlowCommon {
    /// A file's defaults: no id, hosts not given, start at 0, one copy.
    fn default() -> Self {
        FlowCommon {
            id: None,
            from: String::new(),
            to: String::new(),
            start: Dur::ZERO,
            start_spread: Dur::ZERO,
            count: 1,
        }
    }
}

/// One flow, or `count` identical ones: a table tagged by `kind` (default `"tcp"`), which
/// takes the fields of [`FlowCommon`] and those of its kind, and no others.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FlowSpec {
    /// A TCP connection, single-path or multipath.
    Tcp(TcpFlowSpec),
    /// Constant-bit-rate UDP.
    UdpCbr(UdpFlowSpec),
    /// On-off UDP.
    UdpOnoff(UdpOnoffFlowSpec),
    /// An mmTP download.
    Mmtp(MmtpFlowSpec),
    /// A TFRC flow.
    Tfrc(TfrcFlowSpec),
    /// An NDN consumer.
    Ndn(NdnFlowSpec),
}

impl FlowSpec {
    /// The flow's kind.
    #[must_use]
    pub fn kind(&self) -> FlowKind {
        match self {
            FlowSpec::Tcp(_) => FlowKind::Tcp,
            FlowSpec::UdpCbr(_) => FlowKind::UdpCbr,
            FlowSpec::UdpOnoff(_) => FlowKind::UdpOnoff,
            FlowSpec::Mmtp(_) => FlowKind::Mmtp,
            FlowSpec::Tfrc(_) => FlowKind::Tfrc,
            FlowSpec::Ndn(_) => FlowKind::Ndn,
        }
    }

    /// What every flow has.
    #[must_use]
    pub fn common(&self) -> &FlowCommon {
        match self {
            FlowSpec::Tcp(f) => &f.common,
            FlowSpec::UdpCbr(f) => &f.common,
            FlowSpec::UdpOnoff(f) => &f.udp.common,
            FlowSpec::Mmtp(f) => &f.common,
            FlowSpec::Tfrc(f) => &f.common,
            FlowSpec::Ndn(f) => &f.common,
        }
    }
}

/// A TCP flow (`kind = "tcp"`): one connection, or a multipath one with `paths`, `subflows`,
/// `k_paths` or `tm`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TcpFlowSpec {
    /// What every flow has.
    #[serde(flatten)]
    pub common: FlowCommon,
    /// When a long-lived flow stops sending new data.
    pub stop: Option<Dur>,
    /// Bytes (or `"<n>pkts"` full segments) a finite flow transfers.
    pub size: Option<BufferSize>,
    /// Explicit source route as a list of nodes from `from` to `to`.
    pub route: Option<Vec<String>>,
    /// A multipath connection with one subflow on each of these routes (node lists from
    /// `from` to `to`), all in coupling group 0. Shorthand for `subflows`.
    pub paths: Option<Vec<Vec<String>>>,
    /// A multipath connection with these subflows.
    pub subflows: Option<Vec<SubflowSpec>>,
    /// A multipath connection with one subflow on each of the k least-cost loopless paths
    /// (Yen's algorithm on the routing metric), all in coupling group 0.
    pub k_paths: Option<u32>,
    /// A multipath connection whose subflows and coupling groups the topology manager
    /// chooses (topological assistance, thesis §5).
    pub tm: Option<TmSpec>,
    /// Coupling groups from an SDN controller that compares the subflows' paths at their
    /// set-up (design 3, thesis §5.1.2; overrides the subflows' `group`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sdn: Option<SdnSpec>,
    /// Which subflow gets the next segment of a multipath connection (default
    /// `"lowest-rtt"`).
    pub scheduler: Option<Scheduler>,
    /// A multipath connection's connection-level receive buffer, which its receive window
    /// shares among the subflows (default `"unlimited"`: no receive window and no
    /// head-of-line blocking; D175).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive_buffer: Option<WindowLimit>,
    /// With a finite `receive_buffer`: a subflow stopped by the receive window sends again
    /// the data holding up its left edge (default true; Raiciu et al. NSDI 2012; D177).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opportunistic_retransmission: Option<bool>,
    /// With a finite `receive_buffer`: the subflow holding up the receive window has its
    /// congestion window halved, once per its RTT at most (default true; D178).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub penalisation: Option<bool>,
    /// Congestion control (shortcut for `tcp.cc`), or `"inrpp"`.
    pub cc: Option<FlowCc>,
    /// TCP parameters overriding the scenario's `[tcp]` table.
    pub tcp: Option<TcpSpec>,
}

/// A UDP flow (`kind = "udp-cbr"`, and the common part of `"udp-onoff"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct UdpFlowSpec {
    /// What every flow has.
    #[serde(flatten)]
    pub common: FlowCommon,
    /// When the flow stops sending.
    pub stop: Option<Dur>,
    /// Explicit source route as a list of nodes from `from` to `to`.
    pub route: Option<Vec<String>>,
    /// Sending rate (while on); required.
    pub rate: Option<Rate>,
    /// Datagram size on the wire (default 1500B).
    pub packet_size: Option<ByteSize>,
}

/// An on-off UDP flow (`kind = "udp-onoff"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct UdpOnoffFlowSpec {
    /// What a constant-rate UDP flow has.
    #[serde(flatten)]
    pub udp: UdpFlowSpec,
    /// Mean on period; required.
    pub on: Option<Dur>,
    /// Mean off period; required.
    pub off: Option<Dur>,
    /// Distribution of on/off periods (default exponential).
    pub periods: PeriodDist,
}

/// An mmTP download (`kind = "mmtp"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MmtpFlowSpec {
    /// What every flow has (`from` is the publisher, unless `sources` lists them).
    #[serde(flatten)]
    pub common: FlowCommon,
    /// The content's size; required.
    pub size: Option<BufferSize>,
    /// The topology manager's paths from each publisher (default: one shortest path each).
    pub tm: Option<TmSpec>,
    /// Congestion control (shortcut for `tcp.cc`).
    pub cc: Option<CcKind>,
    /// TCP parameters (chunk size, header, RTO) overriding the scenario's `[tcp]` table.
    pub tcp: Option<TcpSpec>,
    /// The publishers (instead of `from`).
    pub sources: Option<Vec<String>>,
    /// Times when a publisher answers nothing (thesis E2).
    pub outages: Option<Vec<OutageSpec>>,
    /// Subscriber parameters.
    pub mmtp: Option<MmtpSpec>,
    /// The name of the download's content: downloads of one name fetch the same content,
    /// so a cache that kept it for one answers the others (default: the flow's id, a content
    /// of its own).
    pub content: Option<String>,
}

/// A TFRC flow (`kind = "tfrc"`), with the scenario's `[tfrc]` parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TfrcFlowSpec {
    /// What every flow has.
    #[serde(flatten)]
    pub common: FlowCommon,
    /// When the flow stops sending.
    pub stop: Option<Dur>,
    /// Explicit source route as a list of nodes from `from` to `to` (the feedback takes it
    /// backwards).
    pub route: Option<Vec<String>>,
    /// A multipath TFRC flow with one subflow on each of these routes.
    pub paths: Option<Vec<Vec<String>>>,
    /// A multipath TFRC flow with these subflows (only `route` is taken).
    pub subflows: Option<Vec<SubflowSpec>>,
    /// Packet size on the wire (default `tfrc.packet_size`).
    pub packet_size: Option<ByteSize>,
    /// TFRC parameters overriding the scenario's `[tfrc]` for this flow.
    pub tfrc: Option<TfrcSpec>,
}

/// An NDN consumer (`kind = "ndn"`): fetches SEQs `0..size` of `content` at `to`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NdnFlowSpec {
    /// What every flow has (`from` is not taken: Interests go by name).
    #[serde(flatten)]
    pub common: FlowCommon,
    /// The content's size: Data packets (`"2000pkts"`) or bytes of payload; required.
    pub size: Option<BufferSize>,
    /// The content's name (e.g. `"/c/A"`); its SEQs are `/c/A/0`, `/c/A/1`, …; required.
    pub content: Option<String>,
    /// The consumer's transport (default `"ptp"`).
    pub transport: Option<NdnTransport>,
    /// PTP's parameters for this consumer, over `[ndn.ptp]`.
    pub ptp: Option<PtpSpec>,
    /// With `transport = "mmtp"`: the coupled controller of its subflows (default NMCC).
    pub cc: Option<CcKind>,
    /// With `transport = "mmtp"`: the subscriber's parameters.
    pub mmtp: Option<MmtpSpec>,
}

/// How on/off periods are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeriodDist {
    /// Exponential with the given means.
    #[default]
    Exponential,
    /// Exactly the given durations.
    Constant,
}
