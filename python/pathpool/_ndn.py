"""Builders for NDN scenarios (issue 22; ``docs/scenario-reference.md``, *NDN*, and
``docs/ndn.md``): the ``[ndn]`` table with its producers, content stores, FIB entries and
strategies, PTP's parameters, NDN consumers and REM queues.

>>> import pathpool as pp
>>> sc = pp.Scenario(
...     duration="20s",
...     routers=["c", "r", "p"],
...     links=[pp.link("c", "r", rate="100Mbps", delay="5ms"),
...            pp.link("r", "p", rate="10Mbps", delay="5ms")],
...     ndn=pp.ndn(producers=[pp.ndn_producer("p", "/c")]),
...     flows=[pp.ndn_consumer("c", "/c/A", size="2000pkts", transport="icp")],
... )
>>> sc.run().flows["completed"].tolist()
[True]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

from .scenario import _clean, _size, _time, _with_unit, red
from .types import (
    CongestionControl,
    Flow,
    Mmtp,
    Ndn,
    NdnContentStore,
    NdnFibEntry,
    NdnLabel,
    NdnProducer,
    NdnRouting,
    NdnStrategy,
    NdnStrategyEntry,
    NdnTransport,
    Ptp,
    PtpSelection,
    Quantity,
    RedQueue,
)


def ndn(
    *,
    producers: Iterable[NdnProducer] = (),
    routing: NdnRouting | None = None,
    strategy: NdnStrategy | None = None,
    strategies: Iterable[NdnStrategyEntry] = (),
    content_stores: Iterable[NdnContentStore] = (),
    fib: Iterable[NdnFibEntry] = (),
    fab_capacity: int | None = None,
    fab_key: str | None = None,
    label: NdnLabel | None = None,
    fisp: bool | None = None,
    interest_size: Quantity | None = None,
    data_header: Quantity | None = None,
    payload: Quantity | None = None,
    ptp: Ptp | None = None,
    raaqm: str | None = None,
) -> Ndn:
    """The ``[ndn]`` table: every node becomes an NDN node (pass it as ``Scenario(ndn=...)``).

    ``producers`` (see :func:`ndn_producer`) serve prefixes; ``routing`` fills the FIBs
    (``"all-paths"``, ``"shortest"`` or ``"explicit"`` from ``fib``, see :func:`ndn_fib`);
    ``strategy`` forwards the names no entry of ``strategies`` (:func:`ndn_strategy`)
    covers; ``content_stores`` (:func:`ndn_cs`) put stores at nodes; ``label =
    "branching-postfix"`` turns on mmTP's route labels; ``ptp`` (:func:`ptp`) gives every PTP
    consumer's defaults and the routers' ``fallback``; ``raaqm`` picks RAAQM consumers'
    constants (``"ndnsim"``, default, or Cisco's ``"hicn"``). Sizes are strings with a unit.

    >>> ndn(producers=[ndn_producer("p", "/c")], strategy="rfa", fab_capacity=0)
    {'strategy': 'rfa', 'fab': {'capacity': 0}, 'producers': [{'node': 'p', 'prefix': '/c'}]}
    """
    fab = _clean({"capacity": fab_capacity, "key": fab_key})
    return cast(
        Ndn,
        _clean(
            {
                "routing": routing,
                "strategy": strategy,
                "strategies": [dict(x) for x in strategies] or None,
                "fab": fab or None,
                "label": label,
                "fisp": fisp,
                "interest_size": _size(interest_size),
                "data_header": _size(data_header),
                "payload": _size(payload),
                "ptp": dict(ptp) if ptp is not None else None,
                "raaqm": raaqm,
                "producers": [dict(x) for x in producers] or None,
                "cs": [dict(x) for x in content_stores] or None,
                "fib": [dict(x) for x in fib] or None,
            }
        ),
    )


def ndn_producer(node: str, prefix: str) -> NdnProducer:
    """Node ``node``'s application answers every Interest under ``prefix``."""
    return {"node": node, "prefix": prefix}


def ndn_cs(node: str, capacity: int, *, admit: float | None = None) -> NdnContentStore:
    """A content store at ``node`` of ``capacity`` Data packets (least recently used out),
    storing a crossing Data with probability ``admit`` (default 1)."""
    return cast(NdnContentStore, _clean({"node": node, "capacity": capacity, "admit": admit}))


def ndn_fib(node: str, prefix: str, next: Sequence[str]) -> NdnFibEntry:
    """An explicit FIB entry: ``node`` forwards ``prefix`` to the neighbours ``next``,
    cheapest first (with ``ndn(routing="explicit")``)."""
    return {"node": node, "prefix": prefix, "next": list(next)}


def ndn_strategy(prefix: str, strategy: NdnStrategy) -> NdnStrategyEntry:
    """The strategy of the names under ``prefix`` (the longest matching prefix wins)."""
    return {"prefix": prefix, "strategy": strategy}


def ptp(
    *,
    max_paths: int | None = None,
    period: Quantity | None = None,
    beta: float | None = None,
    probe_rate: float | None = None,
    selection: PtpSelection | None = None,
    loss_detection: str | None = None,
    rtt_scale: str | None = None,
    rtt_ref: Quantity | None = None,
    fallback: str | None = None,
) -> Ptp:
    """PTP's parameters (spec 004): N = ``max_paths``, T = ``period``, MPCCP's ``beta``,
    ``probe_rate`` a second, the review's ``selection``, ``loss_detection`` (``"one"`` or
    ``"two"``), ``rtt_scale`` and ``rtt_ref``; ``fallback`` (``"nack"`` or ``"name"``) only
    in ``ndn(ptp=...)``, where it is the routers'.

    >>> ptp(max_paths=4, period="5s")
    {'max_paths': 4, 'period': '5s'}
    """
    return cast(
        Ptp,
        _clean(
            {
                "fallback": fallback,
                "max_paths": max_paths,
                "period": _time(period),
                "beta": beta,
                "probe_rate": probe_rate,
                "selection": selection,
                "loss_detection": loss_detection,
                "rtt_scale": rtt_scale,
                "rtt_ref": _time(rtt_ref),
            }
        ),
    )


def ndn_consumer(
    dst: str,
    content: str,
    *,
    size: Quantity | None = None,
    transport: NdnTransport | None = None,
    id: str | None = None,
    start: Quantity | None = None,
    start_spread: Quantity | None = None,
    count: int | None = None,
    ptp: Ptp | None = None,
    cc: CongestionControl | None = None,
    mmtp: Mmtp | None = None,
    size_packets: int | None = None,
    start_s: float | None = None,
) -> Flow:
    """An NDN consumer at node ``dst`` fetching ``content`` (a flow of ``kind = "ndn"``).

    ``size`` is required: ``"2000pkts"`` Data packets or bytes of payload (``"2MB"``), or a
    number of packets through ``size_packets``. ``transport``: ``"ptp"`` (default, with
    ``ptp``'s parameters over ``[ndn.ptp]``), ``"raaqm"``, ``"ric"``, ``"icp"``, or
    ``"mmtp"`` (mmTP over NDN, needing ``ndn(label="branching-postfix")``; ``cc``, default
    ``"nmcc"``, couples its subflows and ``mmtp`` sets its subscriber).

    >>> c = ndn_consumer("c", "/c/A", size_packets=500, transport="mmtp")
    >>> c["size"], c["transport"]
    ('500pkts', 'mmtp')
    """
    return cast(
        Flow,
        _clean(
            {
                "id": id,
                "kind": "ndn",
                "to": dst,
                "content": content,
                "start": _with_unit("start", start, "start_s", start_s, "s"),
                "start_spread": _time(start_spread),
                "size": _with_unit("size", size, "size_packets", size_packets, "pkts"),
                "count": count,
                "transport": transport,
                "ptp": dict(ptp) if ptp is not None else None,
                "cc": cc,
                "mmtp": dict(mmtp) if mmtp is not None else None,
            }
        ),
    )


def rem(
    size: Quantity,
    min_th: Quantity,
    max_th: Quantity,
    *,
    max_p: float = 0.1,
    weight: float = 0.002,
    gentle: bool = False,
) -> RedQueue:
    """A REM queue (CHoPCoP): RED's rule marks NDN Data CE instead of dropping them early
    (only in scenarios whose flows are all NDN consumers). Sizes as :func:`pathpool.red`'s.

    >>> rem(1000, 100, 300)["type"]
    'rem'
    """
    q = red(size, min_th, max_th, max_p=max_p, weight=weight, gentle=gentle)
    q["type"] = "rem"
    return q


__all__ = [
    "ndn",
    "ndn_consumer",
    "ndn_cs",
    "ndn_fib",
    "ndn_producer",
    "ndn_strategy",
    "ptp",
    "rem",
]
