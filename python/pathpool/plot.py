"""Plots of results (matplotlib).

Every plot works for every kind of flow: single-path TCP, multipath connections and mmTP
downloads (whose windows live in their subflows), and UDP flows where the quantity exists.
A plot that would have nothing to draw raises ``ValueError`` saying what the run lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .results import Results

#: The quantities ``subflows()`` can draw, with their axis label and scale.
SUBFLOW_COLUMNS: dict[str, tuple[str, float]] = {
    "cwnd_bytes": ("cwnd (KB)", 1e3),
    "ssthresh_bytes": ("ssthresh (KB)", 1e3),
    "srtt_s": ("smoothed RTT (ms)", 1e-3),
    "goodput_bps": ("goodput (Mb/s)", 1e6),
    "alg_value": ("", 1.0),
}

#: The quantities ``ndn_paths()`` can draw, with their axis label and scale.
NDN_PATH_COLUMNS: dict[str, tuple[str, float]] = {
    "cwnd": ("cwnd (Interests or chunks)", 1.0),
    "ssthresh": ("ssthresh (Interests or chunks)", 1.0),
    "srtt_s": ("smoothed RTT (ms)", 1e-3),
    "goodput_bps": ("goodput (Mb/s)", 1e6),
}

_NO_TRACE = "run with measure.trace_cwnd = true (--set measure.trace_cwnd=true)"


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(8, 4.5))
    return ax


def _names(values: Sequence[str], limit: int = 20) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def _select(values: Sequence[str], wanted: Sequence[str] | None, what: str) -> list[str]:
    present = list(dict.fromkeys(values))
    if wanted is None:
        return present
    unknown = [w for w in wanted if w not in present]
    if unknown:
        raise ValueError(
            f"unknown {what}: {_names(unknown)}; the run has {_names(present) or 'none'}"
        )
    return list(wanted)


def _column(column: str, allowed: dict[str, tuple[str, float]]) -> tuple[str, float]:
    """The axis label and scale of ``column``, one of ``allowed``."""
    if column not in allowed:
        raise ValueError(f"unknown column {column}; expected one of {', '.join(allowed)}")
    return allowed[column]


def _per_second(e: pd.DataFrame, counter: str) -> pd.Series:
    """The rate (bit/s) of byte counter ``counter`` between consecutive samples of ``e``."""
    return e[counter].diff() * 8 / e["time_s"].diff()


def _draw_series(
    ax: Axes,
    ts: pd.DataFrame,
    ids: Sequence[str],
    key: str,
    column: str,
    counter: str,
    scale: float,
    name: Callable[[str, int], str],
) -> int:
    """One line per (flow, ``key``) of time series ``ts`` for the flows ``ids``: ``column``
    divided by ``scale``, or for ``"goodput_bps"`` the rate of byte counter ``counter``;
    labelled ``name(flow, key)``. Returns the number of lines."""
    n = 0
    for fid in ids:
        d = ts[ts["flow"] == fid]
        for k in sorted(d[key].unique()):
            e = d[d[key] == k].sort_values("time_s")
            y = _per_second(e, counter) if column == "goodput_bps" else e[column]
            ax.plot(e["time_s"], y / scale, label=name(fid, int(k)), linewidth=1.0)
            n += 1
    return n


def _legend(ax: Axes, n: int) -> None:
    if n <= 12:
        ax.legend(loc="best", fontsize="small", ncol=2 if n > 6 else 1)


class ResultsPlot:
    """Plot accessor of :class:`pathpool.Results`."""

    def __init__(self, results: Results) -> None:
        self._r = results

    def _path_of(self) -> dict[tuple[str, int], str]:
        sf = self._r.subflows
        if not len(sf):
            return {}
        return {(str(f), int(s)): str(p) for f, s, p in zip(sf["flow"], sf["subflow"], sf["path"])}

    def throughput(
        self,
        ax: Axes | None = None,
        flows: Sequence[str] | None = None,
        total: bool = False,
        **line_kw: Any,
    ) -> Axes:
        """Goodput of each flow (Mb/s) over time, one line per flow; ``total`` adds the sum."""
        ts = self._r.timeseries
        ids = _select(ts["flow"].tolist(), flows, "flows")
        if not ids:
            raise ValueError("no goodput samples: the run has no flow active at a sample")
        ax = _axes(ax)
        many = len(ids) > 12
        for fid in ids:
            d = ts[ts["flow"] == fid]
            kw: dict[str, Any] = {"linewidth": 0.6, "alpha": 0.5} if many else {"linewidth": 1.2}
            kw.update(line_kw)
            ax.plot(d["time_s"], d["goodput_bps"] / 1e6, label=None if many else fid, **kw)
        if total:
            s = ts[ts["flow"].isin(ids)].groupby("time_s")["goodput_bps"].sum()
            ax.plot(s.index, s.values / 1e6, color="black", linewidth=1.5, label="total")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("goodput (Mb/s)")
        ax.set_title("Per-flow goodput")
        ax.grid(True, alpha=0.3)
        if not many or total:
            _legend(ax, len(ids) + int(total))
        return ax

    def cwnd(self, ax: Axes | None = None, flows: Sequence[str] | None = None) -> Axes:
        """Congestion window (KB) of each flow over time (needs measure.trace_cwnd).

        A single-path TCP flow draws its window; a multipath connection or an mmTP download
        draws the sum of its subflows' windows (``subflows()`` draws each). UDP flows have
        no window and are left out unless asked for by name."""
        ts = self._r.timeseries
        st = self._r.subflow_timeseries
        traced = "cwnd_bytes" in ts.columns and ts["cwnd_bytes"].notna().any()
        if not traced and not len(st):
            raise ValueError(f"no cwnd trace: {_NO_TRACE}")
        ids = _select(ts["flow"].tolist(), flows, "flows")
        multi = set(st["flow"]) if len(st) else set()
        n_paths = st.groupby("flow")["subflow"].nunique().to_dict() if len(st) else {}
        lines: list[tuple[str, pd.Series, pd.Series]] = []
        empty: list[str] = []
        for fid in ids:
            if fid in multi:
                d = st[st["flow"] == fid].groupby("time_s")["cwnd_bytes"].sum(min_count=1)
                label = f"{fid} (total of {n_paths[fid]} paths)"
                lines.append((label, d.index.to_series(), d))
                continue
            d = ts[ts["flow"] == fid]
            d = d[d["cwnd_bytes"].notna()] if "cwnd_bytes" in d.columns else d.iloc[0:0]
            if len(d):
                lines.append((fid, d["time_s"], d["cwnd_bytes"]))
            else:
                empty.append(fid)
        if flows is not None and empty:
            raise ValueError(f"no congestion window for {_names(empty)} (UDP flows have none)")
        if not lines:
            raise ValueError(f"no congestion window to draw: {_NO_TRACE}")
        ax = _axes(ax)
        for label, t, w in lines:
            ax.plot(t, w / 1e3, label=label, linewidth=1.0)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (KB)")
        ax.set_title("Congestion window")
        ax.grid(True, alpha=0.3)
        _legend(ax, len(lines))
        return ax

    def subflows(
        self,
        ax: Axes | None = None,
        flows: Sequence[str] | None = None,
        column: str = "cwnd_bytes",
    ) -> Axes:
        """One line per subflow of the multipath connections and mmTP downloads over time,
        labelled ``flow/index path``: ``column`` is ``"cwnd_bytes"`` (default),
        ``"ssthresh_bytes"``, ``"srtt_s"``, ``"goodput_bps"`` (acknowledged payload per
        sample interval) or ``"alg_value"`` (the algorithm's state: LIA's alpha, NMCC's m,
        ...). Needs measure.trace_cwnd."""
        label, scale = _column(column, SUBFLOW_COLUMNS)
        st = self._r.subflow_timeseries
        if not len(st):
            if not len(self._r.subflows):
                raise ValueError(
                    "no subflows: the run has no multipath connection or mmTP download"
                )
            raise ValueError(f"no subflow trace: {_NO_TRACE}")
        ids = _select(st["flow"].tolist(), flows, "multipath or mmTP flows")
        paths = self._path_of()
        if column == "alg_value":
            known = st[st["flow"].isin(ids) & st["alg_value"].notna()]
            if not len(known):
                raise ValueError(
                    "no algorithm state: these subflows' controller keeps none (NMCC's m, "
                    "LIA's alpha, ... are recorded; NewReno and Uncoupled have none)"
                )
            label = str(known["alg_var"].iloc[0])
        ax = _axes(ax)

        def name(fid: str, sf: int) -> str:
            path = paths.get((fid, sf))
            return f"{fid}/{sf} {path}" if path else f"{fid}/{sf}"

        n = _draw_series(ax, st, ids, "subflow", column, "acked_bytes", scale, name)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(label)
        ax.set_title("Subflows")
        ax.grid(True, alpha=0.3)
        _legend(ax, n)
        return ax

    def ndn_paths(
        self,
        ax: Axes | None = None,
        flows: Sequence[str] | None = None,
        column: str = "cwnd",
    ) -> Axes:
        """One line per path of the NDN consumers over time, while in use, labelled
        ``flow/path nodes`` (a PTP path, or an mmTP-over-NDN subflow): ``column`` is
        ``"cwnd"`` (default: Interests for PTP, chunks for mmTP), ``"ssthresh"``,
        ``"srtt_s"`` or ``"goodput_bps"``. Needs ``[ndn]`` and measure.trace_cwnd."""
        label, scale = _column(column, NDN_PATH_COLUMNS)
        ts = self._r.ndn_path_timeseries
        if not len(ts):
            if not len(self._r.ndn_paths):
                raise ValueError("no NDN paths: the run has no PTP or mmTP-over-NDN consumer")
            raise ValueError(f"no NDN path trace: {_NO_TRACE}")
        ids = _select(ts["flow"].tolist(), flows, "NDN consumers")
        known = self._r.ndn_paths
        nodes = {
            (str(f), int(p)): str(n)
            for f, p, n in zip(known["flow"], known["path"], known["nodes"])
        }
        ax = _axes(ax)
        n = _draw_series(
            ax,
            ts,
            ids,
            "path",
            column,
            "payload_bytes",
            scale,
            lambda fid, p: f"{fid}/{p} {nodes.get((fid, p)) or 'unsteered'}",
        )
        ax.set_xlabel("time (s)")
        ax.set_ylabel(label)
        ax.set_title("NDN paths")
        ax.grid(True, alpha=0.3)
        _legend(ax, n)
        return ax

    def queue(self, ax: Axes | None = None, links: Sequence[str] | None = None) -> Axes:
        """Queue length (KB) over time of the given links (default: the busiest one)."""
        lt = self._r.link_timeseries
        if not len(lt) or "queue_bytes" not in lt.columns:
            raise ValueError(
                "no queue trace: run with measure.trace_queues = true "
                "(--set measure.trace_queues=true)"
            )
        if links is None:
            busiest = self._r.links.sort_values("utilization", ascending=False)["id"]
            links = [str(busiest.iloc[0])]
        ax = _axes(ax)
        chosen = _select(lt["link"].tolist(), links, "links")
        for lid in chosen:
            d = lt[lt["link"] == lid]
            ax.plot(d["time_s"], d["queue_bytes"] / 1e3, label=lid, linewidth=1.0)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("queue (KB)")
        ax.set_title("Queue length at each sample")
        ax.grid(True, alpha=0.3)
        _legend(ax, len(chosen))
        return ax
