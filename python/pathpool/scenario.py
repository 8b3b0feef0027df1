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
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from . import _pathpool

#: A quantity with its unit, as a string: ``"10Mbps"``, ``"5ms"``, ``"1.5MB"``. Numbers are
#: passed on unchanged and refused by the scenario's validation with the field's name.
Quantity = Union[str, int, float]


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


def droptail(size: Quantity) -> dict[str, Any]:
    """A drop-tail (FIFO) queue holding ``size`` packets (``"100pkts"``, or an int) or bytes.

    >>> droptail(100)
    {'type': 'droptail', 'size': '100pkts'}
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
) -> dict[str, Any]:
    """A RED queue (Floyd & Jacobson 1993). Sizes and thresholds are packets when given as
    ints, otherwise strings with a unit (all three in the same unit).

    >>> red(200, 25, 75)["min_th"]
    '25pkts'
    """

    def pk(x: Quantity) -> str:
        return f"{x}pkts" if isinstance(x, int) else str(x)

    return _clean(
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
    )


def random_drop(
    size: Quantity, *, band: Quantity | None = None, p: float | None = None
) -> dict[str, Any]:
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

    return _clean({"type": "random", "size": pk(size), "band": pk(band), "p": p})


# --------------------------------------------------------------------------------------------
# Links, flows, traffic


def link(
    a: str,
    b: str,
    *,
    rate: Quantity | None = None,
    delay: Quantity | None = None,
    queue: Mapping[str, Any] | None = None,
    loss: float | None = None,
    weight: float | None = None,
    id: str | None = None,
    duplex: bool = True,
    failures: Sequence[tuple[Quantity, Quantity | None]] | None = None,
    rate_bps: float | None = None,
    delay_s: float | None = None,
) -> dict[str, Any]:
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
    return _clean(d)


def tcp(**fields: Any) -> dict[str, Any]:
    """TCP parameters (see the ``[tcp]`` table of the scenario reference).

    >>> tcp(mss="1460B", min_rto="1s")
    {'mss': '1460B', 'min_rto': '1s'}
    """
    conv = {
        "rwnd": lambda v: v if v == "unlimited" else _size(v),
        "mss": _size,
        "header": _size,
        "min_rto": _time,
        "initial_rto": _time,
        "max_rto": _time,
        "delack_timeout": _time,
    }
    out = {}
    for k, v in fields.items():
        if v is None:
            continue
        out[k] = conv[k](v) if k in conv else v
    return out


def flow(
    src: str | Sequence[str],
    dst: str,
    *,
    id: str | None = None,
    kind: str = "tcp",
    start: Quantity | None = None,
    start_spread: Quantity | None = None,
    stop: Quantity | None = None,
    size: Quantity | None = None,
    count: int | None = None,
    route: Sequence[str] | None = None,
    paths: Sequence[Sequence[str]] | None = None,
    subflows: Sequence[Mapping[str, Any]] | None = None,
    k_paths: int | None = None,
    tm: Mapping[str, Any] | None = None,
    scheduler: str | None = None,
    receive_buffer: Quantity | None = None,
    opportunistic_retransmission: bool | None = None,
    penalisation: bool | None = None,
    cc: str | None = None,
    tcp: Mapping[str, Any] | None = None,
    rate: Quantity | None = None,
    packet_size: Quantity | None = None,
    on: Quantity | None = None,
    off: Quantity | None = None,
    periods: str | None = None,
    outages: Sequence[Mapping[str, Any]] | None = None,
    mmtp: Mapping[str, Any] | None = None,
    content: str | None = None,
    start_s: float | None = None,
    start_spread_s: float | None = None,
    stop_s: float | None = None,
    size_bytes: float | None = None,
    rate_bps: float | None = None,
) -> dict[str, Any]:
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
    topology manager chooses; ``scheduler`` picks the subflow for each segment (``"lowest-rtt"``,
    ``"round-robin"``). ``receive_buffer`` (``"200KB"``; default unlimited) gives a multipath
    connection a connection-level receive window shared by its subflows, with head-of-line
    blocking and the mitigations ``opportunistic_retransmission`` and ``penalisation`` (both on
    by default with a finite buffer).

    >>> flow("a", "b", size="10MB", start="1s")
    {'from': 'a', 'to': 'b', 'kind': 'tcp', 'start': '1s', 'size': '10MB'}
    >>> flow("a", "b", size_bytes=1e7, start_s=1)
    {'from': 'a', 'to': 'b', 'kind': 'tcp', 'start': '1s', 'size': '10000000B'}
    """
    return _clean(
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
                {k: (_time(v) if k in ("start", "stop") else v) for k, v in o.items()}
                for o in outages
            ]
            if outages is not None
            else None,
            "mmtp": dict(mmtp) if mmtp is not None else None,
            "content": content,
        }
    )


def cache(node: str, capacity: Quantity) -> dict[str, Any]:
    """An on-path chunk cache at router ``node`` holding ``capacity`` bytes (least recently
    used out): it keeps the mmTP replies that cross the router and answers requests for what
    it holds.

    >>> cache("r2", "20MB")
    {'node': 'r2', 'capacity': '20MB'}
    """
    return {"node": node, "capacity": _size(capacity)}


def subflow(
    route: Sequence[str] | None = None,
    *,
    group: int | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
) -> dict[str, Any]:
    """One subflow of a multipath :func:`flow`: its route, coupling group (subflows in
    different groups are not coupled), and when it opens and closes.

    >>> subflow(["a", "r", "b"], group=1, start="5s")
    {'route': ['a', 'r', 'b'], 'group': 1, 'start': '5s'}
    """
    return _clean(
        {
            "route": list(route) if route is not None else None,
            "group": group,
            "start": _time(start),
            "stop": _time(stop),
        }
    )


def udp_cbr(src: str, dst: str, rate: Quantity, **kw: Any) -> dict[str, Any]:
    """A constant-bit-rate UDP flow (``rate`` on the wire)."""
    return flow(src, dst, kind="udp-cbr", rate=rate, **kw)


def udp_onoff(
    src: str, dst: str, rate: Quantity, on: Quantity, off: Quantity, **kw: Any
) -> dict[str, Any]:
    """An on-off UDP flow: ``rate`` while on; on/off periods exponential with these means
    (``periods="constant"`` for fixed ones)."""
    return flow(src, dst, kind="udp-onoff", rate=rate, on=on, off=off, **kw)


def pareto(mean: Quantity, shape: float) -> dict[str, Any]:
    """Pareto flow sizes with this mean (bytes, or ``"30pkts"``) and shape > 1."""
    return {"dist": "pareto", "mean": _size(mean), "shape": shape}


def exponential(mean: Quantity) -> dict[str, Any]:
    """Exponential flow sizes with this mean."""
    return {"dist": "exponential", "mean": _size(mean)}


def constant(value: Quantity) -> dict[str, Any]:
    """Every flow has this size."""
    return {"dist": "constant", "value": _size(value)}


def poisson(
    src: str,
    dst: str,
    *,
    size: Mapping[str, Any],
    arrival_rate: float | None = None,
    load: float | None = None,
    start: Quantity | None = None,
    stop: Quantity | None = None,
    max_flows: int | None = None,
    id: str | None = None,
    cc: str | None = None,
    tcp: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Finite TCP flows arriving as a Poisson process: ``arrival_rate`` flows per second, or
    ``load`` = λ·E[size]/C of the route's slowest link. With ``pareto`` sizes this is the
    Poisson Pareto Burst Process.

    >>> poisson("a", "b", size=pareto("30pkts", 1.2), load=0.9)["kind"]
    'poisson'
    """
    return _clean(
        {
            "id": id,
            "kind": "poisson",
            "from": src,
            "to": dst,
            "size": dict(size),
            "arrival_rate": arrival_rate,
            "load": load,
            "start": _time(start),
            "stop": _time(stop),
            "max_flows": max_flows,
            "cc": cc,
            "tcp": dict(tcp) if tcp is not None else None,
        }
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

    The scenario is data; nothing is compiled until :meth:`check` or :func:`pathpool.run`.
    """

    def __init__(
        self,
        *,
        duration: Quantity | None = None,
        hosts: Iterable[str] = (),
        routers: Iterable[str] = (),
        links: Iterable[Mapping[str, Any]] = (),
        flows: Iterable[Mapping[str, Any]] = (),
        traffic: Iterable[Mapping[str, Any]] = (),
        tcp: Mapping[str, Any] | None = None,
        measure: Mapping[str, Any] | None = None,
        routing: Mapping[str, Any] | None = None,
        caches: Iterable[Mapping[str, Any]] = (),
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
                "flows": [dict(x) for x in flows],
                "traffic": [dict(x) for x in traffic],
                "tcp": dict(tcp) if tcp is not None else None,
                "measure": _measure(measure) if measure is not None else None,
                "routing": dict(routing) if routing is not None else None,
                "caches": [dict(x) for x in caches] or None,
            }
        )
        self._data: dict[str, Any] | None = data
        self._toml: str | None = None
        self._source = "<scenario>"
        self._overrides: list[tuple[str, str]] = []

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<scenario>") -> Scenario:
        """A scenario from a dictionary with the structure of a scenario file."""
        sc = cls.__new__(cls)
        sc._data = copy.deepcopy(dict(data))
        sc._toml = None
        sc._source = source
        sc._overrides = []
        return sc

    @classmethod
    def from_toml(cls, text: str, *, source: str = "<string>") -> Scenario:
        """A scenario from TOML text (errors then carry line numbers)."""
        sc = cls.__new__(cls)
        sc._data = None
        sc._toml = text
        sc._source = source
        sc._overrides = []
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
        return sc

    def _payload(self) -> tuple[str, str, str, list[tuple[str, str]]]:
        if self._toml is not None:
            return self._toml, "toml", self._source, list(self._overrides)
        return json.dumps(self._data), "json", self._source, list(self._overrides)

    def check(self) -> ScenarioInfo:
        """Validates the scenario; raises :class:`pathpool.ScenarioError` if it is invalid."""
        flows, links, duration = _pathpool.check(*self._payload())
        return ScenarioInfo(flows=flows, links=links, duration_s=duration)

    def to_dict(self) -> dict[str, Any]:
        """The scenario as it will run (overrides applied, every field spelled out)."""
        return json.loads(_pathpool.normalize(*self._payload()))

    @property
    def source(self) -> str:
        """Where the scenario came from (a file name, or ``<scenario>``)."""
        return self._source

    def __repr__(self) -> str:
        extra = f", {len(self._overrides)} overrides" if self._overrides else ""
        return f"Scenario(source={self._source!r}{extra})"


def _measure(m: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(m)
    for k in ("start", "end", "interval"):
        if k in out:
            out[k] = _time(out[k])
    return _clean(out)


def measure(
    *,
    start: Quantity | None = None,
    end: Quantity | None = None,
    interval: Quantity | None = None,
    trace_cwnd: bool | None = None,
    trace_queues: bool | None = None,
) -> dict[str, Any]:
    """What to record: the summary window ``[start, end]``, the time-series ``interval``,
    and whether to trace cwnd/ssthresh/srtt and queues."""
    return _measure(
        {
            "start": start,
            "end": end,
            "interval": interval,
            "trace_cwnd": trace_cwnd,
            "trace_queues": trace_queues,
        }
    )
