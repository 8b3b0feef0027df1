"""Scenarios as data.

A scenario is a plain dictionary with exactly the structure of a scenario file
(``docs/scenario-reference.md``). The builder functions here return such dictionaries, so
scenarios written in code and scenarios written as TOML files are the same thing:

>>> import pathpool as pp
>>> sc = pp.Scenario(
...     duration="30s",
...     hosts=["a", "b"],
...     links=[pp.link("a", "b", rate="10Mbps", delay="10ms", queue=pp.droptail("50pkts"))],
...     flows=[pp.flow("a", "b", count=2)],
... )
>>> sc.check().flows
2

Quantities are strings with units (``"10Mbps"``, ``"5ms"``, ``"1.5MB"``, ``"100pkts"``), as
in a scenario file. A bare number is refused with the file format's error (``links[0].rate:
the number 10 has no unit``): ``rate=10`` could mean bit/s or Mb/s, and the factor-of-a-million
mistake gives a link that silently carries nothing. Numbers go in through keywords that name
their unit: ``link(..., rate_bps=10e6, delay_s=0.005)``, ``flow(..., start_s=1,
size_bytes=1e6)``. Queue sizes given as ints are packets (``droptail(100)``), as documented.

The builders return the ``TypedDict`` types of :mod:`pathpool.types`, whose closed vocabularies
(``kind``, ``cc``, ``scheduler``, ...) are ``Literal`` types for a type checker. A
:class:`Scenario` is parsed by the Rust core once, when first checked, run or swept, and
every later check, run and sweep starts from the parsed scenario.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from . import _pathpool
from .types import (
    BilevelTcpOptions,
    Cache,
    CaIncrease,
    CongestionControl,
    ConstantSizes,
    DropTailQueue,
    ExponentialSizes,
    FlightEstimate,
    Flow,
    FlowKind,
    HackerOptions,
    HostGroup,
    LiaOptions,
    Link,
    Measure,
    Mmtp,
    MpFairnessMode,
    MultiPriorityOptions,
    Ndn,
    NmccOptions,
    Outage,
    ParetoSizes,
    PartialAckTimer,
    Periods,
    Poisson,
    Quantity,
    Queue,
    RandomDropQueue,
    RecoveryExit,
    RedQueue,
    Routing,
    Scheduler,
    Sdn,
    SizeDistribution,
    Subflow,
    SubflowMove,
    SweepTable,
    Tcp,
    TcpLpOptions,
    Tfrc,
    TopologyManager,
    WindowUnit,
    WvegasOptions,
)

if TYPE_CHECKING:
    import pandas as pd

    from ._sweep import Cluster
    from .results import Results


def _num(x: float) -> str:
    return format(x, ".15g") if isinstance(x, float) else str(x)


def _with_unit(
    name: str, value: Quantity | None, unit_name: str, number: float | None, unit: str
) -> Quantity | None:
    """``value`` (a string with a unit), or ``number`` given through the keyword that names
    its unit (``rate_bps``), written with that unit."""
    if number is None:
        return value
    if value is not None:
        raise ValueError(f"give {name} or {unit_name}, not both")
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise TypeError(f"{unit_name} must be a number, not {type(number).__name__}")
    return f"{_num(number)}{unit}"


def _rate(x: Quantity | None) -> Quantity | None:
    """A rate: a string with a unit; a number is left for validation to refuse."""
    return x


def _time(x: Quantity | None) -> Quantity | None:
    """A time: a string with a unit; a number is left for validation to refuse."""
    return x


def _size(x: Quantity | None) -> Quantity | None:
    """An amount of data: a string with a unit; a number is left for validation to refuse."""
    return x


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    """Drops keys whose value is None (meaning: use the default)."""
    return {k: v for k, v in d.items() if v is not None}


# --------------------------------------------------------------------------------------------
# Queues


def droptail(size: Quantity) -> DropTailQueue:
    """A drop-tail (FIFO) queue holding ``size`` packets (``"100pkts"``, or an int), bytes
    (``"64KB"``) or what the link sends in a time (``"50ms"``, bytes at the link's rate).

    >>> droptail(100)
    {'type': 'droptail', 'size': '100pkts'}
    >>> droptail("50ms")
    {'type': 'droptail', 'size': '50ms'}
    """
    if isinstance(size, int):
        size = f"{size}pkts"
    return {"type": "droptail", "size": size}


def red(
    size: Quantity,
    min_th: Quantity,
    max_th: Quantity,
    *,
    max_p: float = 0.1,
    weight: float = 0.002,
    gentle: bool = False,
    mean_packet: Quantity | None = None,
) -> RedQueue:
    """A RED queue (Floyd & Jacobson 1993). Sizes and thresholds are packets when given as
    ints, otherwise strings with a unit (all three in the same unit).

    >>> red(200, 25, 75)["min_th"]
    '25pkts'
    """

    def pk(x: Quantity) -> str:
        return f"{x}pkts" if isinstance(x, int) else str(x)

    return cast(
        RedQueue,
        _clean(
            {
                "type": "red",
                "size": pk(size),
                "min_th": pk(min_th),
                "max_th": pk(max_th),
                "max_p": max_p,
                "weight": weight,
                "gentle": gentle,
                "mean_packet": _size(mean_packet),
            }
        ),
    )


def random_drop(
    size: Quantity, *, band: Quantity | None = None, p: float | None = None
) -> RandomDropQueue:
    """htsim's random-drop queue: drop-tail whose top ``band`` (default 3 packets, or 4500B
    when ``size`` is in bytes) drops arrivals with probability ``p`` (default 0.1). Ints are
    packets.

    >>> random_drop(103)
    {'type': 'random', 'size': '103pkts'}
    >>> random_drop("30KB", band="6KB", p=0.2)
    {'type': 'random', 'size': '30KB', 'band': '6KB', 'p': 0.2}
    """

    def pk(x: Quantity | None) -> str | None:
        return f"{x}pkts" if isinstance(x, int) else (None if x is None else str(x))

    return cast(
        RandomDropQueue, _clean({"type": "random", "size": pk(size), "band": pk(band), "p": p})
    )


# --------------------------------------------------------------------------------------------
# Links, flows, traffic


def link(
    a: str,
    b: str,
    *,
    rate: Quantity | None = None,
    delay: Quantity | None = None,
    queue: Queue | None = None,
    loss: float | None = None,
    weight: float | None = None,
    id: str | None = None,
    duplex: bool = True,
    failures: Sequence[tuple[Quantity, Quantity | None]] | None = None,
    rate_bps: float | None = None,
    delay_s: float | None = None,
) -> Link:
    """A link between nodes ``a`` and ``b``: duplex by default, one-way from ``a`` to ``b``
    with ``duplex=False``. ``rate`` and ``delay`` are strings with units (``"10Mbps"``,
    ``"5ms"``), or numbers through ``rate_bps`` and ``delay_s``; the rate defaults to
    infinite and the delay to 0. ``failures`` lists ``(at, until)`` pairs of times (``until``
    may be ``None``: never repaired); the topology manager re-routes mmTP downloads around
    them.

    >>> link("r1", "r2", rate="10Mbps", delay="20ms")["rate"]
    '10Mbps'
    >>> link("r1", "r2", rate_bps=10e6, delay_s=0.02)["rate"]
    '10000000bps'
    >>> link("r1", "r2", rate="10Mbps", delay="20ms", failures=[("3s", "8s")])["failures"]
    [{'at': '3s', 'until': '8s'}]
    """
    d: dict[str, Any] = {"id": id}
    if duplex:
        d["between"] = [a, b]
    else:
        d["from"], d["to"] = a, b
    d.update(
        rate=_with_unit("rate", rate, "rate_bps", rate_bps, "bps"),
        delay=_with_unit("delay", delay, "delay_s", delay_s, "s"),
        queue=dict(queue) if queue is not None else None,
        loss=loss,
        weight=weight,
        failures=[
            _clean({"at": _time(at), "until": None if until is None else _time(until)})
            for at, until in failures
        ]
        if failures is not None
        else None,
    )
    return cast(Link, _clean(d))


def tcp(
    *,
    cc: CongestionControl | None = None,
    mss: Quantity | None = None,
    header: Quantity | None = None,
    initial_window: int | None = None,
    initial_ssthresh: int | None = None,
    abc_limit: int | None = None,
    recovery_exit: RecoveryExit | None = None,
    ca_increase: CaIncrease | None = None,
    window_unit: WindowUnit | None = None,
    dupack_threshold: int | None = None,
    min_rto: Quantity | None = None,
    initial_rto: Quantity | None = None,
    max_rto: Quantity | None = None,
    delayed_ack: bool | None = None,
    delack_timeout: Quantity | None = None,
    rwnd: Quantity | None = None,
    limited_transmit: bool | None = None,
    partial_ack_timer: PartialAckTimer | None = None,
    flight_estimate: FlightEstimate | None = None,
    timer_granularity: Quantity | None = None,
    sack: bool | None = None,
    send_overhead: Quantity | None = None,
    nmcc: NmccOptions | None = None,
    lia: LiaOptions | None = None,
    wvegas: WvegasOptions | None = None,
    hacker: HackerOptions | None = None,
    bilevel_tcp: BilevelTcpOptions | None = None,
    tcp_lp: TcpLpOptions | None = None,
    multi_priority: MultiPriorityOptions | None = None,
) -> Tcp:
    """TCP parameters (the ``[tcp]`` table of the scenario reference; ``None``: the default).
    Times and sizes are strings with units (``rwnd`` may be ``"unlimited"``).

    >>> tcp(mss="1460B", min_rto="1s")
    {'mss': '1460B', 'min_rto': '1s'}
    """
    fields = dict(locals())
    for k in ("nmcc", "lia", "wvegas", "hacker", "bilevel_tcp", "tcp_lp", "multi_priority"):
        if fields[k] is not None:
            fields[k] = dict(fields[k])
    return cast(Tcp, _clean(fields))


def flow(
    src: str | Sequence[str],
    dst: str,
    *,
    id: str | None = None,
    kind: FlowKind = "tcp",
    start: Quantity | None = None,
    start_spread: Quantity | None = None,
    stop: Quantity | None = None,
    size: Quantity | None = None,
    count: int | None = None,
    route: Sequence[str] | None = None,
    paths: Sequence[Sequence[str]] | None = None,
    subflows: Sequence[Subflow] | None = None,
    k_paths: int | None = None,
    tm: TopologyManager | None = None,
    sdn: Sdn | None = None,
    scheduler: Scheduler | None = None,
    receive_buffer: Quantity | None = None,
    opportunistic_retransmission: bool | None = None,
    penalisation: bool | None = None,
    cc: CongestionControl | None = None,
    tcp: Tcp | None = None,
    rate: Quantity | None = None,
    packet_size: Quantity | None = None,
    on: Quantity | None = None,
    off: Quantity | None = None,
    periods: Periods | None = None,
    outages: Sequence[Outage] | None = None,
    mmtp: Mmtp | None = None,
    content: str | None = None,
    tfrc: Tfrc | None = None,
    start_s: float | None = None,
    start_spread_s: float | None = None,
    stop_s: float | None = None,
    size_bytes: float | None = None,
    rate_bps: float | None = None,
) -> Flow:
    """A flow from host ``src`` to host ``dst`` (TCP by default).

    Times, sizes and rates are strings with units (``start="1s"``, ``size="10MB"``,
    ``rate="5Mbps"``), or numbers through ``start_s``, ``start_spread_s``, ``stop_s``,
    ``size_bytes`` and ``rate_bps``.

    With ``kind="mmtp"`` it is an mmTP download by subscriber ``dst`` from publisher ``src``,
    or from several when ``src`` is a list; ``outages`` lists times a publisher is silent
    (``{"source": "p1", "start": "2s", "stop": "9s"}``), ``mmtp`` sets the subscriber's
    parameters, and downloads with the same ``content`` name fetch the same content (so an
    on-path cache, see :func:`cache`, serves them all).

    ``size`` makes a TCP flow finite (bytes, or ``"30pkts"`` full segments); ``count``
    replicates it; ``route`` pins it to a list of nodes. ``paths`` (a list of routes) or
    ``subflows`` (see :func:`subflow`) make it a multipath connection with one subflow per
    route, ``k_paths=k`` one with a subflow on each of the k shortest loopless paths,
    ``tm={"k": 2, "assistance": "bottleneck"}`` one whose subflows and coupling groups the
    topology manager chooses; ``sdn={"hold": "2s"}`` has an SDN controller group the subflows
    by their paths at set-up (thesis design 3); ``scheduler`` picks the subflow for each
    segment (``"lowest-rtt"``, ``"round-robin"``). ``receive_buffer`` (``"200KB"``; default
    unlimited) gives a multipath connection a connection-level receive window shared by its
    subflows, with head-of-line blocking and the mitigations ``opportunistic_retransmission``
    and ``penalisation`` (both on by default with a finite buffer).

    >>> flow("a", "b", size="10MB", start="1s")
    {'from': 'a', 'to': 'b', 'kind': 'tcp', 'start': '1s', 'size': '10MB'}
    >>> flow("a", "b", size_bytes=1e7, start_s=1)
    {'from': 'a', 'to': 'b', 'kind': 'tcp', 'start': '1s', 'size': '10000000B'}
    """
    return cast(
        Flow,
        _clean(
            {
                "id": id,
                "from": src if isinstance(src, str) else None,
                "sources": None if isinstance(src, str) else list(src),
                "to": dst,
                "kind": kind,
                "start": _with_unit("start", start, "start_s", start_s, "s"),
                "start_spread": _with_unit(
                    "start_spread", start_spread, "start_spread_s", start_spread_s, "s"
                ),
                "stop": _with_unit("stop", stop, "stop_s", stop_s, "s"),
                "size": _with_unit("size", size, "size_bytes", size_bytes, "B"),
                "count": count,
                "route": list(route) if route is not None else None,
                "paths": [list(p) for p in paths] if paths is not None else None,
                "subflows": [dict(sf) for sf in subflows] if subflows is not None else None,
                "k_paths": k_paths,
                "tm": dict(tm) if tm is not None else None,
                "sdn": dict(sdn) if sdn is not None else None,
                "scheduler": scheduler,
                "receive_buffer": _size(receive_buffer),
                "opportunistic_retransmission": opportunistic_retransmission,
                "penalisation": penalisation,
                "cc": cc,
                "tcp": dict(tcp) if tcp is not None else None,
                "rate": _with_unit("rate", rate, "rate_bps", rate_bps, "bps"),
                "packet_size": _size(packet_size),
                "on": _time(on),
                "off": _time(off),
                "periods": periods,
                "outages": [
                    {
                        k: (_time(cast(Quantity, v)) if k in ("start", "stop") else v)
                        for k, v in o.items()
                    }
                    for o in outages
                ]
                if outages is not None
                else None,
                "mmtp": dict(mmtp) if mmtp is not None else None,
                "content": content,
                "tfrc": dict(tfrc) if tfrc is not None else None,
            }
        ),
    )


def cache(node: str, capacity: Quantity) -> Cache:
    """An on-path chunk cache at router ``node`` holding ``capacity`` bytes (least recently
    used out): it keeps the mmTP replies that cross the router and answers requests for what
    it holds.

    >>> cache("r2", "20MB")
    {'node': 'r2', 'capacity': '20MB'}
    """
    return {"node": node, "capacity": capacity}


def subflow(
    route: Sequence[str] | None = None,
    *,
    group: int | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    moves: Sequence[SubflowMove] | None = None,
) -> Subflow:
    """One subflow of a multipath :func:`flow`: its route, coupling group (subflows in
    different groups are not coupled), when it opens and closes, and ``moves`` to other routes
    without a new join (``[{"at": "30s", "route": [...]}]``).

    >>> subflow(["a", "r", "b"], group=1, start="5s")
    {'route': ['a', 'r', 'b'], 'group': 1, 'start': '5s'}
    """
    return cast(
        Subflow,
        _clean(
            {
                "route": list(route) if route is not None else None,
                "group": group,
                "start": _time(start),
                "stop": _time(stop),
                "moves": [{"at": _time(m["at"]), "route": list(m["route"])} for m in moves]
                if moves is not None
                else None,
            }
        ),
    )


def udp_cbr(src: str, dst: str, rate: Quantity | None, **kw: Any) -> Flow:
    """A constant-bit-rate UDP flow (``rate`` on the wire)."""
    return flow(src, dst, kind="udp-cbr", rate=rate, **kw)


def udp_onoff(src: str, dst: str, rate: Quantity, on: Quantity, off: Quantity, **kw: Any) -> Flow:
    """An on-off UDP flow: ``rate`` while on; on/off periods exponential with these means
    (``periods="constant"`` for fixed ones)."""
    return flow(src, dst, kind="udp-onoff", rate=rate, on=on, off=off, **kw)


def pareto(mean: Quantity, shape: float) -> ParetoSizes:
    """Pareto flow sizes with this mean (bytes, or ``"30pkts"``) and shape > 1."""
    return {"dist": "pareto", "mean": mean, "shape": shape}


def exponential(mean: Quantity) -> ExponentialSizes:
    """Exponential flow sizes with this mean."""
    return {"dist": "exponential", "mean": mean}


def constant(value: Quantity) -> ConstantSizes:
    """Every flow has this size."""
    return {"dist": "constant", "value": value}


def _names(v: str | Sequence[str]) -> str | list[str]:
    return v if isinstance(v, str) else list(v)


def poisson(
    src: str | Sequence[str],
    dst: str | Sequence[str],
    *,
    size: SizeDistribution,
    arrival_rate: float | None = None,
    load: float | None = None,
    load_link: str | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    max_flows: int | None = None,
    id: str | None = None,
    cc: CongestionControl | Literal["inrpp"] | None = None,
    paths: Sequence[Sequence[str]] | None = None,
    tcp: Tcp | None = None,
) -> Poisson:
    """Finite flows arriving as a Poisson process: ``arrival_rate`` flows per second, or
    ``load`` = λ·E[size]/C of the route's slowest link (or of ``load_link``, which flows
    between host groups need). With ``pareto`` sizes this is the Poisson Pareto Burst Process.
    ``src`` and ``dst`` are a host, a host group (:func:`host_group`) or a list of them: each
    flow then draws its hosts from them. ``cc="inrpp"`` makes INRPP flows; ``paths`` (node
    lists from ``src`` to ``dst``) with a multipath ``cc`` makes multipath connections.

    >>> poisson("a", "b", size=pareto("30pkts", 1.2), load=0.9)["kind"]
    'poisson'
    >>> poisson(["s1", "s2"], "d", size=constant("1MB"), load=0.5, load_link="e-t")["from"]
    ['s1', 's2']
    """
    return cast(
        Poisson,
        _clean(
            {
                "id": id,
                "kind": "poisson",
                "from": _names(src),
                "to": _names(dst),
                "size": dict(size),
                "arrival_rate": arrival_rate,
                "load": load,
                "load_link": load_link,
                "start": _time(start),
                "stop": _time(stop),
                "max_flows": max_flows,
                "cc": cc,
                "paths": [list(p) for p in paths] if paths is not None else None,
                "tcp": dict(tcp) if tcp is not None else None,
            }
        ),
    )


def host_group(
    name: str,
    count: int,
    attach: str,
    *,
    rate: Quantity,
    delay: Quantity,
    queue: Queue | None = None,
) -> HostGroup:
    """``count`` hosts ``<name>.0`` … ``<name>.<count-1>``, each on a duplex access link of its
    own (``rate``, ``delay``, ``queue``) to the router ``attach``; :func:`poisson`'s ``src``
    and ``dst`` may name the group.

    >>> host_group("s1", 3000, "e1", rate="100Mbps", delay="1ms")["count"]
    3000
    """
    return cast(
        HostGroup,
        _clean(
            {
                "name": name,
                "count": count,
                "attach": attach,
                "rate": rate,
                "delay": delay,
                "queue": dict(queue) if queue is not None else None,
            }
        ),
    )


# --------------------------------------------------------------------------------------------
# Scenario


@dataclass(frozen=True)
class ScenarioInfo:
    """What :meth:`Scenario.check` found."""

    flows: int
    """Flows after expanding ``count`` and generators."""
    links: int
    """Directed links (a duplex link counts twice)."""
    duration_s: float
    """Simulated seconds."""


def _override_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value)


class Scenario:
    """A scenario: built in code from keyword arguments, or loaded from a TOML file.

    ``duration`` is a string with a unit (``"60s"``), or a number of seconds through
    ``duration_s``.

    Building one only records the data. The first :meth:`check`, :meth:`run`,
    :meth:`sweep` or :meth:`to_dict` has the Rust core parse it (a problem raises
    :class:`pathpool.ScenarioError` there) and keeps the parsed scenario, so a scenario run a
    thousand times is parsed once; :meth:`set` gives a copy, parsed anew when it is used.
    """

    def __init__(
        self,
        *,
        duration: Quantity | None = None,
        hosts: Iterable[str] = (),
        routers: Iterable[str] = (),
        links: Iterable[Link] = (),
        host_groups: Iterable[HostGroup] = (),
        flows: Iterable[Flow] = (),
        traffic: Iterable[Poisson] = (),
        tcp: Tcp | None = None,
        tfrc: Tfrc | None = None,
        measure: Measure | None = None,
        routing: Routing | None = None,
        caches: Iterable[Cache] = (),
        ndn: Ndn | None = None,
        name: str | None = None,
        description: str | None = None,
        seed: int | None = None,
        duration_s: float | None = None,
    ) -> None:
        data = _clean(
            {
                "name": name,
                "description": description,
                "duration": _with_unit("duration", duration, "duration_s", duration_s, "s"),
                "seed": seed,
                "nodes": {"hosts": list(hosts), "routers": list(routers)},
                "links": [dict(x) for x in links],
                "host_groups": [dict(x) for x in host_groups] or None,
                "flows": [dict(x) for x in flows],
                "traffic": [dict(x) for x in traffic],
                "tcp": dict(tcp) if tcp is not None else None,
                "tfrc": dict(tfrc) if tfrc is not None else None,
                "measure": _measure(measure) if measure is not None else None,
                "routing": dict(routing) if routing is not None else None,
                "caches": [dict(x) for x in caches] or None,
                "ndn": dict(ndn) if ndn is not None else None,
            }
        )
        self._init(data, None, "<scenario>")

    def _init(self, data: dict[str, Any] | None, toml: str | None, source: str) -> None:
        self._data = data
        self._toml = toml
        self._source = source
        self._overrides: list[tuple[str, str]] = []
        self._compiled: _pathpool.CompiledScenario | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<scenario>") -> Scenario:
        """A scenario from a dictionary with the structure of a scenario file."""
        sc = cls.__new__(cls)
        sc._init(copy.deepcopy(dict(data)), None, source)
        return sc

    @classmethod
    def from_toml(cls, text: str, *, source: str = "<string>") -> Scenario:
        """A scenario from TOML text (errors then carry line numbers)."""
        sc = cls.__new__(cls)
        sc._init(None, text, source)
        return sc

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        """A scenario from a TOML file."""
        p = Path(path)
        return cls.from_toml(p.read_text(encoding="utf-8"), source=str(p))

    def set(self, key: str, value: Any) -> Scenario:
        """A copy with one field changed, as ``pathpool run --set KEY=VALUE`` does.

        >>> Scenario(duration="1s").set("duration", "5s").to_dict()["duration"]
        '5s'
        """
        sc = copy.copy(self)
        sc._overrides = [*self._overrides, (key, _override_text(value))]
        sc._compiled = None
        return sc

    def _rust(self) -> _pathpool.CompiledScenario:
        """The scenario parsed by the Rust core: parsed on first use, then kept."""
        if self._compiled is None:
            if self._toml is not None:
                text, fmt = self._toml, "toml"
            else:
                text, fmt = json.dumps(self._data), "json"
            self._compiled = _pathpool.CompiledScenario(
                text, fmt, self._source, list(self._overrides)
            )
        return self._compiled

    def check(self) -> ScenarioInfo:
        """Validates the scenario; raises :class:`pathpool.ScenarioError` if it is invalid."""
        flows, links, duration = self._rust().check()
        return ScenarioInfo(flows=flows, links=links, duration_s=duration)

    def run(self, seed: int | None = None, *, progress: bool | None = None) -> Results:
        """Runs the scenario (see :func:`pathpool.run`) and returns its results.

        ``seed`` defaults to the scenario's ``seed``, or 1; ``progress`` (a progress bar on
        runs longer than a second) to whether standard error is a terminal.

        Raises:
            ScenarioError: the scenario is invalid (the message names the field and line).
            KeyboardInterrupt: the run was interrupted.
        """
        from .results import Results

        if progress is None:
            progress = sys.stderr.isatty()
        return Results._from_handle(self._rust().run(seed, progress))

    def sweep(
        self,
        grid: Mapping[str, Sequence[Any]] | None = None,
        *,
        reps: int | None = None,
        seed: int | None = None,
        set: Mapping[str, Any] | None = None,
        table: SweepTable | None = None,
        metrics: Sequence[str] | None = None,
        jobs: int | None = None,
        out: str | os.PathLike[str] | None = None,
        cluster: Cluster | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        """Runs the scenario over a grid of overrides x repetitions and returns one table;
        the arguments are those of :func:`pathpool.sweep`."""
        from ._sweep import execute, grid_items

        rust = self._rust()
        items = grid_items(grid)
        set_items = [(k, _override_text(v)) for k, v in (set or {}).items()]
        metric_list = None if metrics is None else list(metrics)
        return execute(
            lambda directory: rust.sweep_plan(
                items, set_items, reps, seed, table, metric_list, directory
            ),
            out=out,
            jobs=jobs,
            cluster=cluster,
            progress=progress,
        )

    def to_dict(self) -> dict[str, Any]:
        """The scenario as it will run (overrides applied, every field spelled out)."""
        result: dict[str, Any] = json.loads(self._rust().normalized_json())
        return result

    @property
    def source(self) -> str:
        """Where the scenario came from (a file name, or ``<scenario>``)."""
        return self._source

    def __getstate__(self) -> dict[str, Any]:
        # The parsed scenario stays in this process: a copy or a pickle parses again.
        state = dict(self.__dict__)
        state["_compiled"] = None
        return state

    def __repr__(self) -> str:
        extra = f", {len(self._overrides)} overrides" if self._overrides else ""
        return f"Scenario(source={self._source!r}{extra})"


def _measure(m: Mapping[str, Any]) -> Measure:
    out = dict(m)
    for k in ("start", "end", "interval", "fairness_interval"):
        if k in out:
            out[k] = _time(out[k])
    return cast(Measure, _clean(out))


def measure(
    *,
    start: Quantity | None = None,
    end: Quantity | None = None,
    interval: Quantity | None = None,
    trace_cwnd: bool | None = None,
    trace_queues: bool | None = None,
    mp_fairness: MpFairnessMode | None = None,
    mp_fairness_tolerance: float | None = None,
    fairness_interval: Quantity | None = None,
    afct_bins_per_decade: int | None = None,
    trace_routers: bool | None = None,
    interarrival: bool | None = None,
    trace_sequences: list[str] | None = None,
) -> Measure:
    """What to record: the summary window ``[start, end]``, the time-series ``interval``,
    whether to trace cwnd/ssthresh/srtt and queues, Tse's multipath-fairness metrics
    (``"analytic"`` or ``"reference-runs"``; ``Results.mp_fairness``), Jain's index sampled
    every ``fairness_interval`` (``"10ms"`` in the INRPP document; ``Results.jain_sampled``)
    and the mean FCT per logarithmic size bin, ``afct_bins_per_decade`` bins per decade
    (``Results.afct_bins``); ``trace_routers`` records the INRPP routers at each sample
    (``Results.router_timeseries`` and ``Results.router_flow_timeseries``); ``interarrival``
    histograms the time between in-order deliveries at each receiver
    (``Results.interarrival``); ``trace_sequences`` names flows whose sequence numbers are
    traced at their senders, INRPP routers and receivers (``Results.sequence_trace``)."""
    return _measure(
        {
            "start": start,
            "end": end,
            "interval": interval,
            "trace_cwnd": trace_cwnd,
            "trace_queues": trace_queues,
            "mp_fairness": mp_fairness,
            "mp_fairness_tolerance": mp_fairness_tolerance,
            "fairness_interval": fairness_interval,
            "afct_bins_per_decade": afct_bins_per_decade,
            "trace_routers": trace_routers,
            "interarrival": interarrival,
            "trace_sequences": trace_sequences,
        }
    )
