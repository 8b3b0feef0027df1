"""The types of scenario data: what the builders of :mod:`pathpool` return and accept.

Each builder returns a ``TypedDict`` with the structure of that part of a scenario file
(``docs/scenario-reference.md``), and the fields whose values form a closed vocabulary (a
flow's ``kind``, ``cc``, ``scheduler``, ...) are ``Literal`` types, so that a type checker
catches ``cc="nmmc"`` before the scenario's own validation does. At run time they are plain
dictionaries and strings.
"""

from __future__ import annotations

from typing import Literal, TypedDict, Union

#: A quantity with its unit, as a string: ``"10Mbps"``, ``"5ms"``, ``"1.5MB"``. Numbers are
#: passed on unchanged and refused by the scenario's validation with the field's name.
Quantity = Union[str, int, float]

# --------------------------------------------------------------------------------------------
# Closed vocabularies (the scenario reference's tables list them)

#: ``[[flows]].kind``.
FlowKind = Literal["tcp", "udp-cbr", "udp-onoff", "mmtp", "tfrc", "ndn"]
#: ``[tcp].cc`` and a flow's ``cc``: single-path controllers, then the multipath family.
CongestionControl = Literal[
    "newreno",
    "reno",
    "cubic",
    "uncoupled",
    "ewtcp",
    "coupled",
    "lia",
    "olia",
    "balia",
    "nmcc",
    "wvegas",
    "hacker",
    "bilevel-tcp",
    "tcp-lp",
    "multi-priority",
]
#: A multipath flow's ``scheduler``.
Scheduler = Literal["lowest-rtt", "round-robin"]
#: ``periods`` of an on-off UDP flow.
Periods = Literal["exponential", "constant"]
#: ``tm.policy``: how the topology manager chooses paths.
TmPolicy = Literal["k-shortest", "disjoint-only", "k-disjoint"]
#: ``tm.metric``.
TmMetric = Literal["hops", "delay"]
#: ``tm.assistance``: how subflows are grouped for coupling.
TmAssistance = Literal["shared-link", "bottleneck", "none"]
#: ``[routing].metric``.
RouteMetric = Literal["hops", "weight", "delay"]
#: ``[measure].mp_fairness``: where Tse's fairness metrics take T_p and S_p from.
MpFairnessMode = Literal["analytic", "reference-runs"]
#: ``[tcp].recovery_exit``.
RecoveryExit = Literal["ssthresh", "flight-size"]
#: ``[tcp].ca_increase``.
CaIncrease = Literal["byte-counting", "per-ack"]
#: ``[tcp].window_unit``.
WindowUnit = Literal["byte", "segment"]
#: ``[tcp].partial_ack_timer``.
PartialAckTimer = Literal["impatient", "slow-but-steady"]
#: ``[tcp].flight_estimate``.
FlightEstimate = Literal["pipe", "flight-size"]
#: ``mmtp.selection``.
ChunkSelection = Literal["fast", "scan"]
#: ``[ndn].routing``: how FIBs are filled.
NdnRouting = Literal["all-paths", "shortest", "explicit"]
#: ``[ndn].strategy``: how a node chooses among next hops.
NdnStrategy = Literal["best-route", "multicast", "equal-weight", "rfa", "paf"]
#: ``[ndn].label``: route labels in Data names (mmTP over NDN).
NdnLabel = Literal["none", "branching-postfix"]
#: An NDN consumer's ``transport``.
NdnTransport = Literal["ptp", "raaqm", "ric", "icp", "mmtp"]
#: ``ptp.selection``: how PTP's review picks paths.
PtpSelection = Literal["bandwidth", "random", "hops", "latency", "latency-variance"]
#: ``table=`` of a sweep: the results table gathered.
SweepTable = Literal["flows", "links", "subflows", "caches", "summary"]

# --------------------------------------------------------------------------------------------
# Queues


class DropTailQueue(TypedDict):
    """``{ type = "droptail", size }``."""

    type: Literal["droptail"]
    size: Quantity


class _RedQueueRequired(TypedDict):
    type: Literal["red", "rem"]
    size: Quantity
    min_th: Quantity
    max_th: Quantity
    max_p: float
    weight: float
    gentle: bool


class RedQueue(_RedQueueRequired, total=False):
    """``{ type = "red", size, min_th, max_th, ... }`` (Floyd & Jacobson 1993); with
    ``type = "rem"``, REM: the same rule marks NDN Data instead of dropping them."""

    mean_packet: Quantity


class _RandomDropQueueRequired(TypedDict):
    type: Literal["random"]
    size: Quantity


class RandomDropQueue(_RandomDropQueueRequired, total=False):
    """htsim's random-drop queue: ``{ type = "random", size, band, p }``."""

    band: Quantity
    p: float


Queue = Union[DropTailQueue, RedQueue, RandomDropQueue]

# --------------------------------------------------------------------------------------------
# Links


class Failure(TypedDict, total=False):
    """One outage of a link: it fails ``at`` and is repaired ``until`` (never, if absent)."""

    at: Quantity
    until: Quantity


Link = TypedDict(
    "Link",
    {
        "id": str,
        "between": list[str],
        "from": str,
        "to": str,
        "rate": Quantity,
        "delay": Quantity,
        "queue": Queue,
        "loss": float,
        "weight": float,
        "failures": list[Failure],
    },
    total=False,
)
"""A ``[[links]]`` entry: ``between`` two nodes (duplex) or ``from``/``to`` (one way)."""

# --------------------------------------------------------------------------------------------
# TCP


class NmccOptions(TypedDict, total=False):
    """``tcp.nmcc``: NMCC's options (D30)."""

    friendly_slow_start: bool
    loss_time_factor: bool
    initial_m: Literal["m-squared-is-n", "m-is-n"]
    shadow_update: Literal["per-ack", "per-rtt"]
    loss_estimator: Literal["inter-loss", "cumulative"]
    clamp_mt: bool
    window_floor: int


class LiaOptions(TypedDict, total=False):
    """``tcp.lia``: LIA's options (D119, D138)."""

    alpha_update: Literal["per-ack", "on-window-change", "on-segment-growth"]


class WvegasOptions(TypedDict, total=False):
    """``tcp.wvegas``: wVegas's options (D42)."""

    total_alpha_pkts: float
    initial_alpha_pkts: float
    min_alpha_pkts: float
    gamma_pkts: float
    queue_drain: bool


class HackerOptions(TypedDict, total=False):
    """``tcp.hacker``: Tse's Hacker scheme's options (D240)."""

    base: int
    divisor: int


class BilevelTcpOptions(TypedDict, total=False):
    """``tcp.bilevel_tcp``: Bilevel TCP's options (D259)."""

    child_floor_millisegments: int


class TcpLpOptions(TypedDict, total=False):
    """``tcp.tcp_lp``: TCP-LP's options (D241, D245, D265, D266)."""

    delta_percent: int
    gamma_inverse: int
    itt_srtts: int
    reset_extremes_on_ci: bool
    ci_lowers_ssthresh: bool
    itt_rtt: Literal["srtt", "latest"]
    forget_largest_owd: bool


class MultiPriorityOptions(TypedDict, total=False):
    """``tcp.multi_priority``: Multi-Priority TCP's options (D246, D247)."""

    base: int
    accounting: Literal["naive", "borrow", "borrow-return"]
    borrow_unit: Literal["slot", "decrement"]


class Tcp(TypedDict, total=False):
    """A ``[tcp]`` table (the scenario's defaults, or one flow's overrides)."""

    cc: CongestionControl
    mss: Quantity
    header: Quantity
    initial_window: int
    initial_ssthresh: int
    abc_limit: int
    recovery_exit: RecoveryExit
    ca_increase: CaIncrease
    window_unit: WindowUnit
    dupack_threshold: int
    min_rto: Quantity
    initial_rto: Quantity
    max_rto: Quantity
    delayed_ack: bool
    delack_timeout: Quantity
    rwnd: Quantity
    limited_transmit: bool
    partial_ack_timer: PartialAckTimer
    flight_estimate: FlightEstimate
    timer_granularity: Quantity
    sack: bool
    send_overhead: Quantity
    nmcc: NmccOptions
    lia: LiaOptions
    wvegas: WvegasOptions
    hacker: HackerOptions
    bilevel_tcp: BilevelTcpOptions
    tcp_lp: TcpLpOptions
    multi_priority: MultiPriorityOptions


# --------------------------------------------------------------------------------------------
# Flows


class TopologyManager(TypedDict, total=False):
    """A flow's ``tm``: the topology manager's paths and coupling groups (thesis §5)."""

    policy: TmPolicy
    k: int
    candidates: int
    metric: TmMetric
    assistance: TmAssistance
    # Union, not `|`: typing.get_type_hints evaluates it, and Python 3.9 has no `|` of types.
    factor: Union[Literal["paths-on-link", "all-paths"], float]  # noqa: UP007


class SubflowMove(TypedDict):
    """A subflow's move to another route without a new join (an SDN rule change)."""

    at: Quantity
    route: list[str]


class Subflow(TypedDict, total=False):
    """One subflow of a multipath flow (see :func:`pathpool.subflow`)."""

    route: list[str]
    group: int
    start: Quantity
    stop: Quantity
    moves: list[SubflowMove]


class Sdn(TypedDict, total=False):
    """A flow's ``sdn`` table: coupling groups from an SDN controller (design 3)."""

    hold: Quantity


class Outage(TypedDict, total=False):
    """A publisher silent in ``[start, stop)`` (mmTP downloads)."""

    source: str
    start: Quantity
    stop: Quantity


class Mmtp(TypedDict, total=False):
    """An mmTP download's ``mmtp`` table."""

    initial_window_chunks: int
    first_chunk_with_metadata: bool
    selection: ChunkSelection
    gap_threshold: int
    backoff_limit: Quantity
    max_routes: int


class Tfrc(TypedDict, total=False):
    """The ``[tfrc]`` table, and a TFRC flow's ``tfrc`` table over it."""

    packet_size: Quantity
    history: Literal["wrap-safe", "fixed-array"]
    history_slots: int
    loss_intervals: int
    multipath: Literal["bilevel", "fractional"]
    master_rtt: Literal["rate-weighted-mean", "max", "min"]
    loss_combination: Literal["connection-history", "rate-weighted", "sum"]
    recv_cap: Literal["sent", "nominal"]
    nack_expiry_rtts: float
    resend_on: Literal["highest-rate", "same"]
    nominal_cap: Literal["connection", "subflow"]
    first_interval: Literal["connection", "subflow"]


class Ptp(TypedDict, total=False):
    """``[ndn.ptp]`` (every PTP consumer's defaults, and the routers' ``fallback``), or a
    consumer's ``ptp`` table over it (without ``fallback``)."""

    fallback: Literal["nack", "name"]
    max_paths: int
    period: Quantity
    beta: float
    probe_rate: float
    selection: PtpSelection
    loss_detection: Literal["one", "two"]
    rtt_scale: Literal["equation", "prose", "none"]
    rtt_ref: Quantity


class NdnProducer(TypedDict):
    """A ``[[ndn.producers]]`` entry: node ``node`` serves the names under ``prefix``."""

    node: str
    prefix: str


class _NdnContentStoreRequired(TypedDict):
    node: str
    capacity: int


class NdnContentStore(_NdnContentStoreRequired, total=False):
    """A ``[[ndn.cs]]`` entry: a content store of ``capacity`` Data packets."""

    admit: float


class NdnFibEntry(TypedDict):
    """An ``[[ndn.fib]]`` entry (with ``routing = "explicit"``): next hops, cheapest first."""

    node: str
    prefix: str
    next: list[str]


class NdnStrategyEntry(TypedDict):
    """An ``[[ndn.strategies]]`` entry: the strategy of the names under ``prefix``."""

    prefix: str
    strategy: NdnStrategy


class NdnFab(TypedDict, total=False):
    """``[ndn].fab``."""

    capacity: int
    key: Literal["stored", "prefix"]


class Ndn(TypedDict, total=False):
    """The ``[ndn]`` table (see :func:`pathpool.ndn`)."""

    routing: NdnRouting
    strategy: NdnStrategy
    strategies: list[NdnStrategyEntry]
    fab: NdnFab
    label: NdnLabel
    fisp: bool
    interest_size: Quantity
    data_header: Quantity
    payload: Quantity
    ptp: Ptp
    raaqm: Literal["ndnsim", "hicn"]
    producers: list[NdnProducer]
    cs: list[NdnContentStore]
    fib: list[NdnFibEntry]


Flow = TypedDict(
    "Flow",
    {
        "id": str,
        "from": str,
        "sources": list[str],
        "to": str,
        "kind": FlowKind,
        "start": Quantity,
        "start_spread": Quantity,
        "stop": Quantity,
        "size": Quantity,
        "count": int,
        "route": list[str],
        "paths": list[list[str]],
        "subflows": list[Subflow],
        "k_paths": int,
        "tm": TopologyManager,
        "sdn": Sdn,
        "scheduler": Scheduler,
        "receive_buffer": Quantity,
        "opportunistic_retransmission": bool,
        "penalisation": bool,
        "cc": CongestionControl,
        "tcp": Tcp,
        "rate": Quantity,
        "packet_size": Quantity,
        "on": Quantity,
        "off": Quantity,
        "periods": Periods,
        "outages": list[Outage],
        "mmtp": Mmtp,
        "content": str,
        "tfrc": Tfrc,
        "transport": NdnTransport,
        "ptp": Ptp,
    },
    total=False,
)
"""A ``[[flows]]`` entry (see :func:`pathpool.flow`)."""


class Cache(TypedDict):
    """An on-path chunk cache at a router."""

    node: str
    capacity: Quantity


# --------------------------------------------------------------------------------------------
# Traffic generators


class ParetoSizes(TypedDict):
    """Pareto flow sizes."""

    dist: Literal["pareto"]
    mean: Quantity
    shape: float


class ExponentialSizes(TypedDict):
    """Exponential flow sizes."""

    dist: Literal["exponential"]
    mean: Quantity


class ConstantSizes(TypedDict):
    """Every flow the same size."""

    dist: Literal["constant"]
    value: Quantity


SizeDistribution = Union[ParetoSizes, ExponentialSizes, ConstantSizes]

Poisson = TypedDict(
    "Poisson",
    {
        "id": str,
        "kind": Literal["poisson"],
        "from": Union[str, list[str]],
        "to": Union[str, list[str]],
        "size": SizeDistribution,
        "arrival_rate": float,
        "load": float,
        "load_link": str,
        "start": Quantity,
        "stop": Quantity,
        "max_flows": int,
        "cc": Union[CongestionControl, Literal["inrpp"]],
        "paths": list[list[str]],
        "tcp": Tcp,
    },
    total=False,
)
"""A ``[[traffic]]`` generator of Poisson arrivals (see :func:`pathpool.poisson`): ``from``
and ``to`` are a host, a host group or a list of them."""


class HostGroup(TypedDict, total=False):
    """A ``[[host_groups]]`` entry (see :func:`pathpool.host_group`): ``count`` hosts
    ``<name>.<i>``, each on its own access link to the router ``attach``."""

    name: str
    count: int
    attach: str
    rate: Quantity
    delay: Quantity
    queue: Queue


# --------------------------------------------------------------------------------------------
# Scenario-wide tables


class Measure(TypedDict, total=False):
    """The ``[measure]`` table: what to record."""

    start: Quantity
    end: Quantity
    interval: Quantity
    trace_cwnd: bool
    trace_queues: bool
    mp_fairness: MpFairnessMode
    mp_fairness_tolerance: float
    fairness_interval: Quantity
    afct_bins_per_decade: int
    trace_routers: bool
    interarrival: bool
    trace_sequences: list[str]


class Routing(TypedDict, total=False):
    """The ``[routing]`` table."""

    metric: RouteMetric
    tm_reaction: Quantity


__all__ = [
    "BilevelTcpOptions",
    "CaIncrease",
    "Cache",
    "ChunkSelection",
    "CongestionControl",
    "ConstantSizes",
    "DropTailQueue",
    "ExponentialSizes",
    "Failure",
    "FlightEstimate",
    "Flow",
    "FlowKind",
    "HackerOptions",
    "HostGroup",
    "LiaOptions",
    "Link",
    "Measure",
    "Mmtp",
    "MpFairnessMode",
    "Ndn",
    "NdnContentStore",
    "NdnFab",
    "NdnFibEntry",
    "NdnLabel",
    "NdnProducer",
    "NdnRouting",
    "NdnStrategy",
    "NdnStrategyEntry",
    "NdnTransport",
    "NmccOptions",
    "Outage",
    "ParetoSizes",
    "PartialAckTimer",
    "Periods",
    "Poisson",
    "Ptp",
    "PtpSelection",
    "Quantity",
    "Queue",
    "RandomDropQueue",
    "RecoveryExit",
    "RedQueue",
    "RouteMetric",
    "Routing",
    "Scheduler",
    "Sdn",
    "SizeDistribution",
    "Subflow",
    "SubflowMove",
    "SweepTable",
    "Tcp",
    "Tfrc",
    "TmAssistance",
    "TmMetric",
    "TmPolicy",
    "TopologyManager",
    "WindowUnit",
    "WvegasOptions",
]
