"""Results of a run as pandas DataFrames."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from . import _pathpool
from ._tables import frame


def _frames(handle: _pathpool.RunHandle) -> dict[str, pd.DataFrame]:
    return {name: frame(parquet) for name, parquet in handle.tables().items()}


class Results:
    """What a run produced.

    Attributes:
        flows: one row per flow (throughput over the summary window, share, FCT, ...).
        links: one row per directed link (utilisation, drops, mean queue, ...).
        timeseries: per-flow goodput (and cwnd/ssthresh/srtt if traced) at each sample.
        link_timeseries: per-link queue and throughput at each sample.
        subflows: one row per subflow of each multipath flow.
        subflow_timeseries: per-subflow cwnd, ssthresh, srtt and algorithm state (LIA's
            alpha, NMCC's m, ...) at each sample, with ``measure(trace_cwnd=True)``.
        caches: one row per on-path chunk cache (hits, misses, bytes served, ...).
        routers: with ``[inrpp]``, one row per INRPP router (cache peak, drops, interface
            states at the end); empty otherwise.
        router_timeseries: with ``measure(trace_routers=True)``, each INRPP router at each
            sample (cache bytes, cumulative drops and detoured bytes, nonces, interface
            states); empty otherwise.
        router_flow_timeseries: with ``measure(trace_routers=True)``, the bytes each router
            holds of each flow, by primary interface, at each sample; empty otherwise.
        interarrival: with ``measure(interarrival=True)``, each flow's histogram of the time
            between in-order deliveries at its receiver (``flow``, ``lo_s``, ``hi_s``,
            ``count``); empty otherwise.
        sequence_trace: with ``measure(trace_sequences=[...])``, one row per packet event of
            the traced flows (``time_s``, ``flow``, ``point``: ``sender``, a router or
            ``receiver``, ``event``, ``seq``, ``nonce``); empty otherwise.
        mp_fairness: with ``measure(mp_fairness=...)``, one row per path of each multipath
            flow: M_p, T_p, S_p and the flow's lenient and stringent bounds, ratios and pass
            flags (Tse's eqs. 1.2 and 1.4); empty otherwise.
        afct_bins: with ``measure(afct_bins_per_decade=...)``, one row per logarithmic
            flow-size bin holding a finite flow: ``size_lo_bytes``, ``size_hi_bytes``,
            ``completed``, ``mean_fct_s`` and ``not_completed``; empty otherwise.
        ndn_nodes: with ``[ndn]``, one row per NDN node (Data produced, PIT, content-store,
            FAB and NACK counters); empty otherwise.
        ndn_paths: with PTP or mmTP consumers, one row per path a PTP consumer's probes
            found or subflow of an mmTP consumer (tag, nodes, in-use intervals, goodput, mean
            RTT, final cwnd); empty otherwise.
        ndn_path_timeseries: with ``[ndn]`` and ``measure(trace_cwnd=True)``, each path in
            use at each sample (cwnd, ssthresh, srtt, payload so far); empty otherwise.
        summary: the ``summary.json`` document as a dict.

    Column definitions: ``docs/metrics.md``.
    """

    flows: pd.DataFrame
    links: pd.DataFrame
    timeseries: pd.DataFrame
    link_timeseries: pd.DataFrame
    subflows: pd.DataFrame
    subflow_timeseries: pd.DataFrame
    caches: pd.DataFrame
    routers: pd.DataFrame
    router_timeseries: pd.DataFrame
    router_flow_timeseries: pd.DataFrame
    interarrival: pd.DataFrame
    sequence_trace: pd.DataFrame
    mp_fairness: pd.DataFrame
    afct_bins: pd.DataFrame
    ndn_nodes: pd.DataFrame
    ndn_paths: pd.DataFrame
    ndn_path_timeseries: pd.DataFrame
    summary: dict[str, Any]

    def __init__(
        self,
        frames: dict[str, pd.DataFrame],
        summary: dict[str, Any],
        handle: _pathpool.RunHandle | None = None,
        text: str | None = None,
    ) -> None:
        self.flows = frames["flows"]
        self.links = frames["links"]
        self.timeseries = frames["flow_timeseries"]
        self.link_timeseries = frames["link_timeseries"]
        # Results written before multipath flows existed have no subflow tables.
        self.subflows = frames.get("subflows", pd.DataFrame())
        self.subflow_timeseries = frames.get("subflow_timeseries", pd.DataFrame())
        # ... nor cache tables.
        self.caches = frames.get("caches", pd.DataFrame())
        # Only runs with INRPP routers have a routers table.
        self.routers = frames.get("routers", pd.DataFrame())
        self.router_timeseries = frames.get("router_timeseries", pd.DataFrame())
        self.router_flow_timeseries = frames.get("router_flow_timeseries", pd.DataFrame())
        self.interarrival = frames.get("interarrival", pd.DataFrame())
        self.sequence_trace = frames.get("sequence_trace", pd.DataFrame())
        # Only runs that asked for the fairness metrics have them.
        self.mp_fairness = frames.get("mp_fairness", pd.DataFrame())
        self.afct_bins = frames.get("afct_bins", pd.DataFrame())
        # Only NDN runs have the NDN tables.
        self.ndn_nodes = frames.get("ndn_nodes", pd.DataFrame())
        self.ndn_paths = frames.get("ndn_paths", pd.DataFrame())
        self.ndn_path_timeseries = frames.get("ndn_path_timeseries", pd.DataFrame())
        self.summary = summary
        self._handle = handle
        self._text = text

    @classmethod
    def _from_handle(cls, handle: _pathpool.RunHandle) -> Results:
        return cls(
            _frames(handle), json.loads(handle.summary_json()), handle, handle.summary_text()
        )

    @classmethod
    def read(cls, directory: str | os.PathLike[str]) -> Results:
        """Results written by ``pathpool run`` or :meth:`save`."""
        d = Path(directory)
        names = ["flows", "links", "flow_timeseries", "link_timeseries"]
        missing = [n for n in names if not (d / f"{n}.parquet").exists()]
        missing += [f for f in ("summary.json", "provenance.json") if not (d / f).exists()]
        if missing:
            raise FileNotFoundError(
                f"{d}: not a complete pathpool results directory (missing {', '.join(missing)})"
            )
        optional = [
            n
            for n in (
                "subflows",
                "subflow_timeseries",
                "caches",
                "routers",
                "router_timeseries",
                "router_flow_timeseries",
                "interarrival",
                "sequence_trace",
                "mp_fairness",
                "afct_bins",
                "ndn_nodes",
                "ndn_paths",
                "ndn_path_timeseries",
            )
            if (d / f"{n}.parquet").exists()
        ]
        # As the tables of a fresh run: the same bytes, read the same way.
        frames = {n: frame((d / f"{n}.parquet").read_bytes()) for n in names + optional}
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        return cls(frames, summary)

    @property
    def seed(self) -> int:
        """The seed of the run."""
        return int(self.summary["seed"])

    @property
    def jain_index(self) -> float | None:
        """Jain's fairness index over all flows active in the summary window."""
        value: float | None = self.summary["jain_index"]
        return value

    @property
    def jain_sampled(self) -> float | None:
        """Jain's index of the flows active over each ``measure(fairness_interval=...)``,
        averaged over the samples (None without it, or if no sample had two active flows)."""
        value: float | None = self.summary.get("jain_sampled")
        return value

    @property
    def jain_sampled_since_start(self) -> float | None:
        """The same samples as ``jain_sampled``, each flow's throughput being its mean since it
        started (or since the window opened): the other reading of the INRPP document's
        "instantaneous throughput" (None without ``fairness_interval``)."""
        value: float | None = self.summary.get("jain_sampled_since_start")
        return value

    @property
    def afct_s(self) -> float | None:
        """Mean completion time of the finite flows that completed."""
        value: float | None = self.summary["afct_s"]
        return value

    @property
    def wall_time_s(self) -> float:
        """Wall-clock seconds the simulation took."""
        return float(self.summary["wall_time_s"])

    @property
    def sim_time_s(self) -> float:
        """Simulated seconds."""
        return float(self.summary["sim_time_s"])

    def save(self, directory: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Writes Parquet tables, ``summary.json`` and ``provenance.json`` to ``directory``.

        ``directory`` may be new, empty, or hold earlier results: only the files pathpool
        wrote there are replaced, and the new set reads as complete only once every file is
        written. A directory holding other files raises ``FileExistsError`` (nothing is
        touched) unless ``force=True``, which writes the results beside those files.
        """
        if self._handle is None:
            raise ValueError("these results were read from disk; they are already saved")
        self._handle.save(str(directory), force)
        return Path(directory)

    @property
    def plot(self) -> Any:
        """Plots: ``res.plot.throughput()``, ``res.plot.cwnd()``, ``res.plot.queue()``."""
        from .plot import ResultsPlot

        return ResultsPlot(self)

    def __repr__(self) -> str:
        return self._text or (
            f"Results(seed={self.seed}, flows={len(self.flows)}, links={len(self.links)}, "
            f"jain_index={self.jain_index})"
        )
