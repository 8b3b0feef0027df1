//! The scenario description: what a scenario file (TOML) or a Python dict contains.
//!
//! These types mirror the file format one to one; `docs/scenario-reference.md` documents
//! every field. Unknown fields are rejected, and so is a flow field its `kind` does not take
//! ([`FlowSpec`]). Quantities are strings with units (`"10Mbps"`,
//! `"5ms"`, `"1.5MB"`, `"100pkts"`). Semantic checks (unknown nodes, impossible values) happen
//! when the scenario is compiled (see [`crate::build`]).

use pathpool_cc::{
    BilevelTcpConfig, CaIncrease, CcKind, HackerConfig, LiaConfig, MultiPriorityConfig, NmccConfig,
    RecoveryExit, TcpLpConfig, WindowUnit, WvegasConfig,
};
use pathpool_core::{BufferSize, ByteSize, Dur, QueueSize, Rate};
use pathpool_proto::tcp::{FlightEstimate, PartialAckTimer};
use serde::{Deserialize, Serialize};

mod flow;
mod inrpp;
mod ndn;
mod rcp;
mod tfrc;
mod traffic;

pub(crate) use flow::NotTaken;
pub use flow::{
    FlowCc, FlowCommon, FlowKind, FlowSpec, MmtpFlowSpec, NdnFlowSpec, PeriodDist, TcpFlowSpec,
    TfrcFlowSpec, UdpFlowSpec, UdpOnoffFlowSpec,
};
pub use inrpp::InrppSpec;
pub use ndn::{
    NdnCsSpec, NdnFabSpec, NdnFibSpec, NdnProducerSpec, NdnRouting, NdnSpec, NdnStrategyEntry,
    NdnTransport, PtpSpec,
};
pub use rcp::RcpSpec;
pub use tfrc::{
    TfrcFirstInterval, TfrcHistory, TfrcLossCombination, TfrcMasterRtt, TfrcMultipath,
    TfrcNominalCap, TfrcRecvCap, TfrcResendOn, TfrcSpec, TFRC_MULTIPATH_FIELDS,
};
pub use traffic::{HostGroupSpec, HostNames, SizeDist, TrafficKind, TrafficSpec};

/// A whole scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used in reports.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Simulated time to run.
    pub duration: Dur,
    /// Seed used when none is given on the command line (default 1).
    #[serde(default)]
    pub seed: Option<u64>,
    /// The network's nodes (with a generator, added to the generated ones).
    #[serde(default)]
    pub nodes: NodesSpec,
    /// The network's links (with a generator, added to the generated ones).
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// Individual flows.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Groups of hosts, each on its own access link to one node, that generators draw
    /// their end hosts from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_groups: Vec<HostGroupSpec>,
    /// Flow generators (Poisson arrivals).
    #[serde(default)]
    pub traffic: Vec<TrafficSpec>,
    /// Defaults for every TCP flow (each flow may override fields).
    #[serde(default)]
    pub tcp: TcpSpec,
    /// Defaults for every TFRC flow.
    #[serde(default, skip_serializing_if = "TfrcSpec::is_empty")]
    pub tfrc: TfrcSpec,
    /// What to measure.
    #[serde(default)]
    pub measure: MeasureSpec,
    /// How routes are computed when a flow does not give one.
    #[serde(default)]
    pub routing: RoutingSpec,
    /// Nodes, links and flows generated from a model, expanded from the run's seed before
    /// the scenario is compiled.
    #[serde(default)]
    pub generate: Option<GenerateSpec>,
    /// On-path chunk caches at routers (thesis §4.1), used by mmTP downloads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caches: Vec<CacheSpec>,
    /// When present, every router is an INRPP router with these parameters (issue 21).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inrpp: Option<InrppSpec>,
    /// The constants of RCP, for the links that flows with `cc = "rcp"` cross (issue 21).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcp: Option<RcpSpec>,
    /// When present, every node is an NDN node (issue 22), and flows of `kind = "ndn"` are
    /// consumers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ndn: Option<NdnSpec>,
}

/// An on-path chunk cache at a router (thesis §4.1–4.2: "an on-path router that
/// opportunistically caches packets can inspect fast-path subscriptions and answer
/// immediately if it holds the chunk"): it keeps the mmTP replies that cross the router,
/// least recently used first out, and answers the requests for what it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    /// The router.
    pub node: String,
    /// Bytes it holds: chunk payloads, and the metadata's fields (`docs/mmtp.md`).
    pub capacity: ByteSize,
}

/// Scenario generators.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenerateSpec {
    /// A domain-scale network (thesis §4.4 E7): an AS topology with clients and servers
    /// placed by the thesis's rules, one download per client.
    #[serde(default)]
    pub domain: Option<DomainSpec>,
}

/// The transport of the downloads of a generated domain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DomainTransport {
    /// mmTP downloads (`kind = "mmtp"`), as the thesis's NS-3 runs (E7).
    #[default]
    Mmtp,
    /// Long-lived (multipath) TCP connections.
    Tcp,
}

/// Where the multipath TCP connections of a generated domain get their paths and coupling
/// groups (thesis §4.2.1 for the topology manager, §5.1 for SDN and MPLS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DomainAssistance {
    /// The topology manager (`paths`): its paths and its groups.
    #[default]
    Tm,
    /// An SDN controller (design 3): each client's `paths.k` least-cost paths, grouped by
    /// the controller at each subflow's set-up.
    Sdn,
    /// MPLS design B: the multipath clients run plain TCP; the ingress router of each server
    /// is a proxy that carries all of them to one egress router as one multipath connection
    /// over the administrator's label-switched paths (decision D338).
    MplsIngress,
}

/// A domain-scale network generated from an AS topology and a placement seed (thesis §4.4
/// E7, `docs/scenario-reference.md`). Defaults are the thesis's values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainSpec {
    /// A Topology Zoo GML file (`.gml`) or a topohub JSON file (`.json`); relative paths
    /// are relative to the working directory.
    pub topology: String,
    /// Clients per access node (default 2).
    #[serde(default)]
    pub clients_per_access_node: Option<u32>,
    /// Servers are this fraction of clients, uniform in `[lo, hi]` (default `[0.1, 0.2]`).
    #[serde(default)]
    pub server_fraction: Option<[f64; 2]>,
    /// Rate of a client's (primary) access link (default 100Mbps).
    #[serde(default)]
    pub access_rate: Option<Rate>,
    /// Rate of a dual-homed client's second access link (default 12Mbps).
    #[serde(default)]
    pub second_access_rate: Option<Rate>,
    /// Whether multipath clients get a second access link to another access node.
    #[serde(default)]
    pub dual_homed: bool,
    /// Access-link delays are uniform in `[lo, hi]` (default `["5ms", "125ms"]`).
    #[serde(default)]
    pub access_delay: Option<[Dur; 2]>,
    /// Rate of every intra-AS link (default 100Mbps).
    #[serde(default)]
    pub core_rate: Option<Rate>,
    /// Delay of every intra-AS link (default 5ms).
    #[serde(default)]
    pub core_delay: Option<Dur>,
    /// Output queue of the intra-AS and access links (default drop-tail, 100 packets).
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    /// mmTP downloads (default) or TCP connections.
    #[serde(default)]
    pub transport: DomainTransport,
    /// Share of clients with multipath transfers (default 1).
    #[serde(default)]
    pub multipath_share: Option<f64>,
    /// Congestion control of multipath transfers (default nmcc).
    #[serde(default)]
    pub cc: Option<CcKind>,
    /// Congestion control of single-path transfers (default newreno).
    #[serde(default)]
    pub single_path_cc: Option<CcKind>,
    /// The topology manager's paths for multipath transfers (default `k = 2`, k-shortest,
    /// shared-link groups).
    #[serde(default)]
    pub paths: Option<TmSpec>,
    /// Size of each mmTP download (default: twice what the client's access links carry in the
    /// run, so it never completes).
    #[serde(default)]
    pub size: Option<BufferSize>,
    /// Seed of the placement (default: the run's seed).
    #[serde(default)]
    pub placement_seed: Option<u64>,
    /// Where multipath TCP connections get their paths and groups (default `"tm"`; TCP
    /// transport only).
    #[serde(default)]
    pub assisted_by: Option<DomainAssistance>,
}

/// Hosts (flow endpoints, never forward) and routers (forward, never terminate flows).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodesSpec {
    /// Host names.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Router names.
    #[serde(default)]
    pub routers: Vec<String>,
}

/// A link: duplex (`between = [a, b]`) or one-way (`from = a`, `to = b`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Name; defaults to `a-b`.
    #[serde(default)]
    pub id: Option<String>,
    /// The two ends of a duplex link (one queue per direction, same parameters).
    #[serde(default)]
    pub between: Option<Vec<String>>,
    /// Start of a one-way link.
    #[serde(default)]
    pub from: Option<String>,
    /// End of a one-way link.
    #[serde(default)]
    pub to: Option<String>,
    /// Transmission rate (`"inf"` for none).
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Dur,
    /// Output queue of each direction.
    #[serde(default)]
    pub queue: QueueSpec,
    /// Probability that a packet is lost on the wire (Bernoulli, per packet, per direction).
    #[serde(default)]
    pub loss: f64,
    /// Routing weight (used when `routing.metric = "weight"`).
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Times the link fails (both directions of a duplex link): it loses every packet it
    /// holds at the failure and every packet offered until it is repaired. The topology
    /// manager re-sends the FID sets of the mmTP downloads this changes (`routing.tm_reaction`
    /// later); TCP flows keep their routes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<LinkFailureSpec>,
}

/// One failure of a link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFailureSpec {
    /// When the link fails.
    pub at: Dur,
    /// When it is repaired (default: never).
    #[serde(default)]
    pub until: Option<Dur>,
}

fn default_weight() -> f64 {
    1.0
}

/// An output queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum QueueSpec {
    /// First in, first out; arrivals that do not fit are dropped.
    #[serde(alias = "drop-tail", alias = "fifo")]
    Droptail {
        /// Capacity in packets, bytes, or time at the link's rate (`"50ms"`).
        size: QueueSize,
    },
    /// Random Early Detection (Floyd & Jacobson 1993).
    Red(RedSpec),
    /// CHoPCoP's Random Early Marking (issue 22): RED's average and probability, but an NDN
    /// Data that RED would drop early is marked CE instead (an Interest is dropped); the hard
    /// limit drops everything. For NDN scenarios only.
    Rem(RedSpec),
    /// htsim's `RandomQueue`: drop-tail with a random-drop band at the top (D120).
    Random {
        /// Hard capacity in packets, bytes or time at the link's rate; arrivals beyond it are
        /// always dropped.
        size: QueueSize,
        /// The top of the queue where arrivals are dropped at random, in the unit of `size`
        /// (default htsim's `RANDOM_BUFFER`: 3 packets, or 4500B when `size` is in bytes).
        band: Option<QueueSize>,
        /// Drop probability of an arrival that would leave the queue within the band (default
        /// 0.1, htsim's).
        #[serde(default = "default_random_p")]
        p: f64,
    },
}

/// The parameters of a RED queue (and of REM, which marks where RED drops).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    /// Hard capacity in packets, bytes or time at the link's rate; arrivals beyond it are
    /// always dropped.
    pub size: QueueSize,
    /// Lower threshold of the average queue (in packets if `size` is; a time is bytes at the
    /// link's rate).
    pub min_th: QueueSize,
    /// Upper threshold of the average queue.
    pub max_th: QueueSize,
    /// Drop (REM: marking) probability at `max_th` (default 0.1).
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    /// EWMA weight of the average (default 0.002).
    #[serde(default = "default_red_weight")]
    pub weight: f64,
    /// Gentle mode (default false: the original algorithm).
    #[serde(default)]
    pub gentle: bool,
    /// Typical packet size (default 1500B): idle-time decay and byte-mode scaling.
    #[serde(default = "default_mean_packet")]
    pub mean_packet: ByteSize,
}

fn default_random_p() -> f64 {
    0.1
}

fn default_max_p() -> f64 {
    0.1
}
fn default_red_weight() -> f64 {
    0.002
}
fn default_mean_packet() -> ByteSize {
    ByteSize(1500)
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::Droptail {
            size: QueueSize::Packets(100),
        }
    }
}

/// A publisher of an mmTP download that answers nothing from `start` until `stop`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutageSpec {
    /// The publisher (one of the download's sources).
    pub source: String,
    /// When it falls silent.
    pub start: Dur,
    /// When it answers again.
    pub stop: Dur,
}

/// mmTP subscriber parameters (thesis §4.5–4.6; `docs/mmtp.md`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MmtpSpec {
    /// Requests per subflow before its first reply, and the controller's initial window in
    /// chunks (default 1: "one packet per subflow", thesis §4.5).
    #[serde(default)]
    pub initial_window_chunks: Option<u32>,
    /// Request chunk 0 together with the metadata (default true, thesis §4.3).
    #[serde(default)]
    pub first_chunk_with_metadata: Option<bool>,
    /// Algorithm 1 as printed (`"scan"`) or its fast path (`"fast"`, default); they give the
    /// same requests.
    #[serde(default)]
    pub selection: Option<pathpool_proto::mmtp::Selection>,
    /// Gap-based loss detection: replies to later requests of a subflow after which a chunk
    /// request is presumed lost (default: none, timer only, thesis §4.5; D86).
    #[serde(default)]
    pub gap_threshold: Option<u32>,
    /// Where each subflow's exponential backoff stops doubling (default 2s, D117): a
    /// backed-off RTO grows to this and no further, never below the RTO estimate itself.
    /// `[tcp]`'s RTO fields apply as well; `backoff_limit` = `tcp.max_rto` is TCP's backoff.
    #[serde(default)]
    pub backoff_limit: Option<Dur>,
    /// mmTP over NDN (`kind = "ndn"`, `transport = "mmtp"`): the most routes steered at
    /// once, each a subflow, besides the unsteered subflow 0 (default 8; D327).
    #[serde(default)]
    pub max_routes: Option<u32>,
}

/// One subflow of a multipath connection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubflowSpec {
    /// Its source route (nodes from the flow's `from` to its `to`); default: the shortest
    /// path.
    #[serde(default)]
    pub route: Option<Vec<String>>,
    /// Coupling group: coupled controllers couple only subflows of equal groups (default 0).
    #[serde(default)]
    pub group: u32,
    /// When the subflow opens (default: when the connection starts).
    #[serde(default)]
    pub start: Option<Dur>,
    /// When the subflow closes; its unacknowledged data goes again on the others.
    #[serde(default)]
    pub stop: Option<Dur>,
    /// Moves to other routes without a new join (an SDN rule change the controller of
    /// `sdn` never sees): its packets take the new route from then on, its group stays.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<MoveSpec>,
}

/// A subflow's move to another route (`[[flows.subflows]]`'s `moves`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveSpec {
    /// When it moves.
    pub at: Dur,
    /// Its new route (nodes from the flow's `from` to its `to`).
    pub route: Vec<String>,
}

/// Topological assistance from an SDN controller (design 3, thesis §5.1.2): the coupling
/// groups of a multipath connection's subflows computed at each set-up from their paths.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SdnSpec {
    /// How long the controller keeps a connection's status after its last set-up (default
    /// 2 s; the thesis: 1-2 s).
    #[serde(default)]
    pub hold: Option<Dur>,
}

/// A receive window: a size or `"unlimited"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowLimit {
    /// No limit.
    Unlimited,
    /// At most this many bytes in flight.
    Bytes(ByteSize),
}

impl Serialize for WindowLimit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WindowLimit::Unlimited => s.serialize_str("unlimited"),
            WindowLimit::Bytes(b) => b.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for WindowLimit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.trim() == "unlimited" {
            return Ok(WindowLimit::Unlimited);
        }
        s.parse::<ByteSize>()
            .map(WindowLimit::Bytes)
            .map_err(|e| serde::de::Error::custom(format!("{e}; or \"unlimited\"")))
    }
}

/// TCP parameters; every field is optional so flows can override single values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Congestion control (default `"newreno"`).
    #[serde(default)]
    pub cc: Option<CcKind>,
    /// Maximum segment size (default 1460B).
    #[serde(default)]
    pub mss: Option<ByteSize>,
    /// IP + TCP header bytes per segment; also the size of an ACK (default 40B).
    #[serde(default)]
    pub header: Option<ByteSize>,
    /// Initial window in segments (default 10).
    #[serde(default)]
    pub initial_window: Option<u64>,
    /// Initial slow-start threshold in segments (default: none, i.e. infinite).
    #[serde(default)]
    pub initial_ssthresh: Option<u64>,
    /// Slow-start byte-counting limit L in segments (default 1).
    #[serde(default)]
    pub abc_limit: Option<u64>,
    /// Window after fast recovery: `"ssthresh"` (default) or `"flight-size"`.
    #[serde(default)]
    pub recovery_exit: Option<RecoveryExit>,
    /// Reno's congestion-avoidance increase: `"byte-counting"` (default, RFC 3465) or
    /// `"per-ack"` (RFC 5681 eq. 3, as htsim and ns-3; D121).
    #[serde(default)]
    pub ca_increase: Option<CaIncrease>,
    /// What a loss leaves of a fraction of a segment: `"byte"` (default) or `"segment"`
    /// (Linux's whole-segment windows; D348).
    #[serde(default)]
    pub window_unit: Option<WindowUnit>,
    /// Duplicate ACKs for fast retransmit (default 3).
    #[serde(default)]
    pub dupack_threshold: Option<u32>,
    /// Lower bound on the RTO (default 200ms).
    #[serde(default)]
    pub min_rto: Option<Dur>,
    /// RTO before the first sample (default 1s).
    #[serde(default)]
    pub initial_rto: Option<Dur>,
    /// Upper bound on the RTO (default 60s).
    #[serde(default)]
    pub max_rto: Option<Dur>,
    /// Delayed ACKs (default false).
    #[serde(default)]
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout (default 40ms).
    #[serde(default)]
    pub delack_timeout: Option<Dur>,
    /// Receive window (default `"unlimited"`).
    #[serde(default)]
    pub rwnd: Option<WindowLimit>,
    /// Limited transmit, RFC 3042 (default false).
    #[serde(default)]
    pub limited_transmit: Option<bool>,
    /// Which partial ACKs restart the retransmission timer in NewReno recovery:
    /// `"impatient"` (default, RFC 6582's recommendation) or `"slow-but-steady"`.
    #[serde(default)]
    pub partial_ack_timer: Option<PartialAckTimer>,
    /// What a loss halves and what counts as in flight without SACK: `"pipe"` (default;
    /// duplicate ACKs leave the pipe and the halved flight is at most the window in use, as
    /// Linux's Reno) or `"flight-size"` (RFC 5681's `snd_nxt − snd_una` literally; D124).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flight_estimate: Option<FlightEstimate>,
    /// Granularity of the retransmission timer: deadlines fire on the next tick of a clock
    /// of this period (default 0s: exactly; htsim scans every 10ms; D128).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_granularity: Option<Dur>,
    /// SACK: the receiver reports what it holds above a gap in SACK blocks (RFC 2018) and
    /// the sender recovers with them (RFC 6675), as Linux does; default false: NewReno
    /// (RFC 6582), as htsim and the papers' simulators (D129).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// ns-2's send overhead (`overhead_`): each segment waits a uniform random time in
    /// `[0, send_overhead]` before it leaves, one at a time, in order; breaks the phase
    /// effects of deterministic runs so that seeds differ (default 0s: off; D123).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_overhead: Option<Dur>,
    /// NMCC's options (used when `cc = "nmcc"`).
    #[serde(default)]
    pub nmcc: Option<NmccConfig>,
    /// LIA's options (used when `cc = "lia"`).
    #[serde(default)]
    pub lia: Option<LiaConfig>,
    /// wVegas's options (used when `cc = "wvegas"`).
    #[serde(default)]
    pub wvegas: Option<WvegasConfig>,
    /// The Hacker scheme's options (used when `cc = "hacker"`).
    #[serde(default)]
    pub hacker: Option<HackerConfig>,
    /// Bilevel TCP's options (used when `cc = "bilevel-tcp"`).
    #[serde(default)]
    pub bilevel_tcp: Option<BilevelTcpConfig>,
    /// TCP-LP's options (used when `cc = "tcp-lp"`, and by Multi-Priority TCP's background
    /// subflows).
    #[serde(default)]
    pub tcp_lp: Option<TcpLpConfig>,
    /// Multi-Priority TCP's options (used when `cc = "multi-priority"`).
    #[serde(default)]
    pub multi_priority: Option<MultiPriorityConfig>,
}

impl TcpSpec {
    /// `self` with every field that `over` sets replaced.
    #[must_use]
    pub fn merged(&self, over: &TcpSpec) -> TcpSpec {
        macro_rules! pick {
            ($($f:ident),*) => { TcpSpec { $($f: over.$f.or(self.$f)),* } };
        }
        pick!(
            cc,
            mss,
            header,
            initial_window,
            initial_ssthresh,
            abc_limit,
            recovery_exit,
            ca_increase,
            window_unit,
            dupack_threshold,
            min_rto,
            initial_rto,
            max_rto,
            delayed_ack,
            delack_timeout,
            rwnd,
            limited_transmit,
            partial_ack_timer,
            flight_estimate,
            timer_granularity,
            sack,
            send_overhead,
            nmcc,
            lia,
            wvegas,
            hacker,
            bilevel_tcp,
            tcp_lp,
            multi_priority
        )
    }
}

/// What to record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureSpec {
    /// Start of the summary window (default 0s).
    #[serde(default)]
    pub start: Option<Dur>,
    /// End of the summary window (default: the duration).
    #[serde(default)]
    pub end: Option<Dur>,
    /// Sampling interval of the time series (default 100ms).
    #[serde(default = "default_interval")]
    pub interval: Dur,
    /// Record cwnd, ssthresh and srtt of every TCP flow at each sample (default false).
    #[serde(default)]
    pub trace_cwnd: bool,
    /// Record every link's queue and throughput at each sample (default true).
    #[serde(default = "default_true")]
    pub trace_queues: bool,
    /// Tse's multipath TCP-fairness metrics of every multipath flow (eqs. 1.2 and 1.4;
    /// `docs/metrics.md`), with the fair shares T_p and spare capacities S_p from the scenario
    /// (`"analytic"`) or from runs without the flow (`"reference-runs"`); default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mp_fairness: Option<MpFairnessMode>,
    /// How far above its bound a flow may be and still pass, relative (default 0.05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mp_fairness_tolerance: Option<f64>,
    /// Sample Jain's index over the throughputs of the active flows every this often in the
    /// summary window and average it (spec 001 §5.1 samples every 10ms; `docs/metrics.md`,
    /// D290); default none: not computed, so that runs without it take no extra samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness_interval: Option<Dur>,
    /// Tabulate the mean completion time of the finite flows by size, in logarithmic bins
    /// with this many per decade (4 gives edges at 10^(k/4) bytes; D291); default none: no
    /// `afct_bins` table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub afct_bins_per_decade: Option<u32>,
    /// Record every INRPP router at each sample: its cache, drops, detoured bytes, nonces and
    /// interface states, and the bytes it holds of each flow (`router_timeseries`,
    /// `router_flow_timeseries`; default false). Needs `[inrpp]`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace_routers: bool,
    /// Histogram the time between consecutive data packets reaching each flow's receiver
    /// (`interarrival` table; the INRPP document's Fig. 12; default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interarrival: bool,
    /// Trace these flows' sequence numbers: every data segment their senders send, every
    /// ACK they receive, every data segment reaching an INRPP router on their way and their
    /// receivers (`sequence_trace` table; the INRPP document's Fig. 10). Single-path TCP,
    /// INRPP and RCP flows, by id; default none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace_sequences: Vec<String>,
}

/// Where the multipath-fairness metrics take T_p and S_p from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MpFairnessMode {
    /// From the scenario: each path's bottleneck is its slowest link, every other flow
    /// crossing it is greedy and bottlenecked there: T_p = C_p/(k_p + 1), S_p = C_p if
    /// k_p = 0, else 0.
    Analytic,
    /// Measured with the same seed: S_p in a run without the multipath flow, T_p in runs with
    /// one NewReno flow on p in its place.
    ReferenceRuns,
}

fn default_interval() -> Dur {
    Dur::from_ms(100)
}
fn default_true() -> bool {
    true
}

impl Default for MeasureSpec {
    fn default() -> Self {
        MeasureSpec {
            start: None,
            end: None,
            interval: default_interval(),
            trace_cwnd: false,
            trace_queues: true,
            mp_fairness: None,
            mp_fairness_tolerance: None,
            fairness_interval: None,
            afct_bins_per_decade: None,
            trace_routers: false,
            interarrival: false,
            trace_sequences: Vec::new(),
        }
    }
}

/// Route computation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingSpec {
    /// Path cost.
    #[serde(default)]
    pub metric: RouteMetric,
    /// Time from a link's failure or repair to the topology manager's new FID sets reaching
    /// the mmTP subscribers it concerns: detection, path computation and delivery as one
    /// delay (default 100 ms; the thesis gives none, see docs/decisions.md D107).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tm_reaction: Option<Dur>,
}

/// What a shortest path minimises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouteMetric {
    /// Number of links.
    #[default]
    Hops,
    /// Sum of link `weight`s.
    Weight,
    /// Sum of propagation delays.
    Delay,
}

pub use pathpool_psi::{FbFactorSpec, TmAssistance, TmMetric, TmPolicy, TmSpec};
