"""Plots of results (matplotlib)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .results import Results


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(8, 4.5))
    return ax


def _select(values: Sequence[str], wanted: Sequence[str] | None, what: str) -> list[str]:
    present = list(dict.fromkeys(values))
    if wanted is None:
        return present
    unknown = [w for w in wanted if w not in present]
    if unknown:
        raise KeyError(f"unknown {what}: {unknown}; present: {present[:20]}")
    return list(wanted)


class ResultsPlot:
    """Plot accessor of :class:`pathpool.Results`."""

    def __init__(self, results: Results) -> None:
        self._r = results

    def throughput(
        self,
        ax: Axes | None = None,
        flows: Sequence[str] | None = None,
        total: bool = False,
        **line_kw: Any,
    ) -> Axes:
        """Goodput of each flow (Mb/s) over time, one line per flow; ``total`` adds the sum."""
        ts = self._r.timeseries
        ax = _axes(ax)
        ids = _select(ts["flow"].tolist(), flows, "flows")
        many = len(ids) > 12
        for fid in ids:
            d = ts[ts["flow"] == fid]
            kw = {"linewidth": 0.6, "alpha": 0.5} if many else {"linewidth": 1.2}
            kw.update(line_kw)
            ax.plot(d["time_s"], d["goodput_bps"] / 1e6, label=None if many else fid, **kw)
        if total and len(ts):
            s = ts.groupby("time_s")["goodput_bps"].sum()
            ax.plot(s.index, s.values / 1e6, color="black", linewidth=1.5, label="total")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("goodput (Mb/s)")
        ax.set_title("Per-flow goodput")
        ax.grid(True, alpha=0.3)
        if (not many and ids) or total:
            ax.legend(loc="best", fontsize="small", ncol=2 if len(ids) > 6 else 1)
        return ax

    def cwnd(self, ax: Axes | None = None, flows: Sequence[str] | None = None) -> Axes:
        """Congestion window (KB) of each TCP flow over time (needs measure.trace_cwnd)."""
        ts = self._r.timeseries
        if "cwnd_bytes" not in ts.columns:
            raise ValueError("no cwnd trace: run with measure.trace_cwnd = true")
        ax = _axes(ax)
        for fid in _select(ts["flow"].tolist(), flows, "flows"):
            d = ts[ts["flow"] == fid]
            ax.plot(d["time_s"], d["cwnd_bytes"] / 1e3, label=fid, linewidth=1.0)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (KB)")
        ax.set_title("Congestion window")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
        return ax

    def subflows(
        self,
        ax: Axes | None = None,
        flows: Sequence[str] | None = None,
        column: str = "cwnd_bytes",
    ) -> Axes:
        """One line per subflow of the multipath flows over time: ``column`` is
        ``"cwnd_bytes"`` (default), ``"ssthresh_bytes"``, ``"srtt_s"`` or ``"alg_value"`` (the
        algorithm's state: LIA's alpha, NMCC's m, ...). Needs measure.trace_cwnd."""
        st = self._r.subflow_timeseries
        if not len(st):
            raise ValueError(
                "no subflow trace: run a multipath flow with measure.trace_cwnd = true"
            )
        if column not in st.columns:
            raise ValueError(f"unknown column {column!r}; expected one of {list(st.columns)}")
        ax = _axes(ax)
        scale, unit = (1e3, "KB") if column.endswith("_bytes") else (1.0, "")
        for fid in _select(st["flow"].tolist(), flows, "flows"):
            d = st[st["flow"] == fid]
            for sf in sorted(d["subflow"].unique()):
                e = d[d["subflow"] == sf]
                ax.plot(e["time_s"], e[column] / scale, label=f"{fid}/{sf}", linewidth=1.0)
        var = st["alg_var"].iloc[0] if column == "alg_value" else column
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"{var} ({unit})" if unit else str(var))
        ax.set_title("Subflows")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
        return ax

    def queue(self, ax: Axes | None = None, links: Sequence[str] | None = None) -> Axes:
        """Queue length (KB) over time of the given links (default: the busiest one)."""
        lt = self._r.link_timeseries
        if not len(lt):
            raise ValueError("no queue trace: run with measure.trace_queues = true")
        ax = _axes(ax)
        if links is None:
            busiest = self._r.links.sort_values("utilization", ascending=False)["id"]
            links = [str(busiest.iloc[0])]
        for lid in _select(lt["link"].tolist(), links, "links"):
            d = lt[lt["link"] == lid]
            ax.plot(d["time_s"], d["queue_bytes"] / 1e3, label=lid, linewidth=1.0)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("queue (KB)")
        ax.set_title("Queue length at each sample")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
        return ax
