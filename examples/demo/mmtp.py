"""Part 2: a simulated mmTP download from three publishers, one failing mid-transfer.

The scenario (scenarios/demo/mmtp-failover.toml) gives each publisher a path of its own, so
each source should deliver at its path's capacity, and after the failure the other two
should go on at theirs while the failed source's outstanding chunks are handed to them
(after two retransmission timeouts, docs/mmtp.md). The expectations are computed from the
run's own links and paths.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import pandas as pd

import pathpool as pp
from demo.common import ROOT, Section, cell, mbps, pct

SCENARIO = ROOT / "scenarios" / "demo" / "mmtp-failover.toml"
FLOW = "dl"


@dataclass
class Download:
    """What the demo needs from one download: per-source goodput over time and figures."""

    results: pp.Results
    per_source: pd.DataFrame  # index time_s, one column per source: goodput in bit/s
    completion_s: float
    path_rate_bps: dict[str, float]  # each source's path bottleneck (link rate)
    capacity_bps: dict[str, float]  # the same as chunk payload bit/s


def byte_count(text: str) -> float:
    """A size in bytes written as in a scenario: '1460B'."""
    if not text.endswith("B") or not text[:-1].isdigit():
        raise ValueError(f"{text!r}: expected a whole number of bytes, e.g. '1460B'")
    return float(text[:-1])


def source_of(path: str) -> str:
    """A subflow's publisher: the first node of its path ('p1>g>s')."""
    return path.split(">")[0]


def path_capacity_bps(links: pd.DataFrame, path: str) -> float:
    """The slowest link direction along `path`."""
    hops = path.split(">")
    rates = [
        float(links[(links["from"] == a) & (links["to"] == b)]["rate_bps"].iloc[0])
        for a, b in zip(hops, hops[1:])
    ]
    return min(rates)


def download(results: pp.Results, payload_fraction: float) -> Download:
    sub = results.subflows[results.subflows["flow"] == FLOW]
    paths = dict(zip(sub["subflow"].astype(int), sub["path"].astype(str)))
    source = {subflow: source_of(path) for subflow, path in paths.items()}
    rate = {source_of(path): path_capacity_bps(results.links, path) for path in paths.values()}
    capacity = {s: payload_fraction * r for s, r in rate.items()}
    ts = results.subflow_timeseries
    ts = ts[ts["flow"] == FLOW].copy()
    ts["source"] = ts["subflow"].map(source)
    acked = ts.pivot_table(index="time_s", columns="source", values="acked_bytes", aggfunc="sum")
    acked = acked.reindex(columns=sorted(capacity)).ffill().fillna(0.0)
    dt = acked.index.to_series().diff()
    per_source = (8 * acked.diff()).div(dt, axis=0).iloc[1:]
    fct_s = cell(results.flows.set_index("id"), FLOW, "fct_s")
    return Download(results, per_source, fct_s, rate, capacity)


def timeouts(d: Download, source: str) -> int:
    """Retransmission timeouts of `source`'s subflow over the whole run."""
    sub = d.results.subflows
    rows = sub[(sub["flow"] == FLOW) & (sub["path"].map(source_of) == source)]
    return int(rows["timeouts"].sum())


def mean_between(d: Download, start_s: float, stop_s: float) -> pd.Series:
    """Each source's mean goodput over (start_s, stop_s]."""
    idx = d.per_source.index
    return d.per_source[(idx > start_s) & (idx <= stop_s)].mean()


@dataclass
class Failover:
    """The figures part 3 compares the overlay with."""

    failed: str
    fail_s: float
    size_bytes: float
    before: pd.Series
    after: pd.Series
    completion_s: float
    healthy_completion_s: float
    path_rate_bps: dict[str, float]


def section() -> tuple[Section, Failover]:
    sec = Section("2. An mmTP download from three publishers, one failing mid-transfer")
    say = sec.say
    say(f"== {sec.title} ==\n")
    sc = pp.load(SCENARIO)
    spec = sc.to_dict()
    flow = next(f for f in spec["flows"] if f["id"] == FLOW)
    outage = flow["outages"][0]
    failed = str(outage["source"])
    fail_s = float(pd.Timedelta(outage["start"]).total_seconds())
    # A chunk is tcp.mss bytes in a packet of tcp.mss + tcp.header (docs/scenario-reference.md,
    # whose defaults these are: the scenario sets neither).
    mss_bytes = byte_count(spec["tcp"]["mss"] or "1460B")
    payload_fraction = mss_bytes / (mss_bytes + byte_count(spec["tcp"]["header"] or "40B"))
    failing = download(pp.run(sc, progress=False), payload_fraction)
    healthy = download(pp.run(sc, set={"flows.dl.outages": []}, progress=False), payload_fraction)
    size_bytes = cell(failing.results.flows.set_index("id"), FLOW, "size_bytes")
    say(
        f"scenarios/demo/mmtp-failover.toml: {size_bytes / 1e6:.0f} MB from "
        f"{', '.join(failing.capacity_bps)}; {failed} stops answering at {fail_s:g} s."
    )
    say(f"Each source has a path of its own; a chunk is {pct(payload_fraction)} of its packet.\n")
    end = failing.completion_s
    before = mean_between(failing, fail_s - 2.0, fail_s)
    after = mean_between(failing, fail_s + 1.0, end - 0.2)
    say(
        f"{'source':8} {'path capacity':>14} {'2 s before the failure':>21}"
        f" {'from 1 s after to the end':>27}"
    )
    for src, cap in failing.capacity_bps.items():
        exp_after = 0.0 if src == failed else cap
        say(
            f"{src:8} {mbps(cap):>14} {mbps(before[src]):>12} ({pct(before[src] / cap):>6})"
            f" {mbps(after[src]):>11} (expected {mbps(exp_after)})"
        )
    survivors = sum(c for s, c in failing.capacity_bps.items() if s != failed)
    everyone = sum(failing.capacity_bps.values())
    delivered_at_fail = float(
        failing.results.timeseries.query("flow == @FLOW and time_s <= @fail_s")[
            "delivered_bytes"
        ].max()
    )
    ideal_end = fail_s + 8 * (size_bytes - delivered_at_fail) / survivors
    say(
        f"\ncompletion: {end:.2f} s. Expected, were {failed}'s share taken over at once at the"
        f" other paths'\ncapacity ({mbps(survivors)}) from {fail_s:g} s, with"
        f" {delivered_at_fail / 1e6:.1f} MB in by then: {ideal_end:.2f} s"
        f" ({end - ideal_end:+.2f} s)."
    )
    say(
        f"Without the failure: {healthy.completion_s:.2f} s (at full capacity,"
        f" {mbps(everyone)}: {8 * size_bytes / everyone:.2f} s plus the start-up)."
    )
    sec.highlights.append(
        f"failover (simulated): {failed} failed at {fail_s:g} s; the download completed at"
        f" {end:.2f} s,\n  {end - ideal_end:+.2f} s after the ideal (the others' capacity from"
        f" the failure on),\n  at {mbps(after.sum())} after it ({mbps(survivors)} possible)"
    )
    say(
        f"The failure cost {end - ideal_end:+.2f} s against that ideal: the other paths never"
        f" stopped; {failed}'s\noutstanding chunks went to them after its two timeouts, and"
        " their own queue overflows cost\neach a retransmission timeout (mmTP detects losses"
        f" by timer; docs/mmtp.md). {failed}'s subflow timed\nout {timeouts(failing, failed)}"
        f" times, {timeouts(healthy, failed)} without the failure (after it: give back, then"
        " probe, at least every 2 s).\n"
    )
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, (name, d) in zip(axes, (("all sources up", healthy), (f"{failed} fails", failing))):
        smooth = d.per_source.rolling(5, min_periods=1).mean() / 1e6
        for column in smooth:
            ax.plot(smooth.index, smooth[column], label=str(column))
        ax.plot(smooth.index, smooth.sum(axis=1), "k", lw=1, label="total")
        ax.set_title(f"simulated mmTP download, {name}")
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
    axes[1].axvline(fail_s, color="r", ls="--", lw=1, label=f"{failed} fails")
    axes[0].set_ylabel("goodput per source (Mb/s, 0.5 s mean)")
    axes[1].legend(fontsize=8)
    sec.save(fig, "mmtp-failover-sim")
    plt.close(fig)
    say()
    return sec, Failover(
        failed, fail_s, size_bytes, before, after, end, healthy.completion_s, failing.path_rate_bps
    )
