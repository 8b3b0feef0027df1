"""Part 1: multipath congestion control against single-path TCP (friendliness and aggregation).

A two-subflow connection runs NMCC, LIA or Uncoupled against single-path NewReno, on one
shared bottleneck (scenarios/demo/shared-bottleneck.toml) and on two disjoint paths
(scenarios/demo/disjoint-paths.toml), its paths and coupling groups given by the topology
manager with assistance (`shared-link`: only paths that share a link are coupled) and
without (`none`: one group).

What to expect is computed from each run's coupling groups (the subflows table), with the
fluid model of long-lived Reno flows that share a drop-tail bottleneck equally:
- a coupled group is meant to take what one TCP flow would on the best of its paths (RFC
  6356's goal; NMCC's too): on a shared bottleneck with n TCP flows a group counts as one
  flow, and subflows of different groups (or of Uncoupled) each as one flow;
- on k equal disjoint paths with one TCP flow each, a coupled group of k subflows takes as
  much in total as each TCP flow, x, spread over its k paths, so x + x/k fills a path: the
  group gets k/(k+1) of one path, 1/(k+1) of the k paths' total; a subflow alone in its
  group is a TCP flow and gets half of its path.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import pathpool as pp
from demo.common import ROOT, Section, cell, pct

SCENARIOS = ROOT / "scenarios" / "demo"
CONTROLLERS = ("nmcc", "lia", "uncoupled")
LABEL = {"nmcc": "NMCC", "lia": "LIA", "uncoupled": "Uncoupled"}
ASSISTANCE = {"shared-link": "with TM groups", "none": "without TM groups"}
SEEDS = (1, 2, 3)
MP = "mp"


@dataclass(frozen=True)
class Topology:
    """A demo scenario and how its bottlenecks are laid out."""

    key: str
    title: str
    file: str
    # True: every subflow and every TCP flow cross one bottleneck. False: each subflow has a
    # path of its own, shared with one TCP flow.
    shared: bool


TOPOLOGIES = (
    Topology("shared", "one shared bottleneck (friendliness)", "shared-bottleneck.toml", True),
    Topology("disjoint", "two disjoint paths (aggregation)", "disjoint-paths.toml", False),
)


# The drop-tail variant of the shared bottleneck: one bandwidth-delay product of buffer.
DROPTAIL = '{ type = "droptail", size = "80KB" }'


@dataclass(frozen=True)
class Case:
    topology: Topology
    cc: str
    assistance: str
    droptail: bool = False  # the bottleneck's RED queue replaced by DROPTAIL


@dataclass
class Outcome:
    """One case over every seed."""

    case: Case
    shares: list[float]  # the connection's share of all flows' goodput, per seed
    mp_bps: list[float]
    tcp_bps: list[float]  # mean single-path flow goodput, per seed
    groups: list[int]  # coupling group of each subflow (seed 1)
    expected: float
    example: pp.Results  # seed 1's run, for the time-series plot
    tcp_cuts: float  # window reductions (fast recoveries and timeouts) per TCP flow
    subflow_cuts: float  # the same per subflow


def group_sizes(cc: str, groups: Sequence[int]) -> list[int]:
    """Sizes of the sets of subflows that are coupled; Uncoupled couples none."""
    if cc == "uncoupled":
        return [1] * len(groups)
    return [list(groups).count(g) for g in sorted(set(groups))]


def expected_share(topology: Topology, sizes: Sequence[int], n_tcp: int) -> float:
    """The connection's share of all goodput the fluid model above predicts."""
    if topology.shared:
        return len(sizes) / (len(sizes) + n_tcp)
    return sum(k / (k + 1) for k in sizes) / sum(sizes)


def run_case(case: Case, seed: int) -> pp.Results:
    overrides = {"flows.mp.cc": case.cc, "flows.mp.tm.assistance": case.assistance}
    if case.droptail:
        overrides["links.bottleneck.queue"] = DROPTAIL
    return pp.run(SCENARIOS / case.topology.file, seed=seed, set=overrides, progress=False)


def run_all(cases: Sequence[Case]) -> list[Outcome]:
    """Runs every case with every seed, as many at once as there are cores (the runs release
    the GIL)."""
    jobs = [(c, s) for c in cases for s in SEEDS]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda job: run_case(*job), jobs))
    by_case: dict[Case, list[pp.Results]] = {}
    for (case, _), res in zip(jobs, results):
        by_case.setdefault(case, []).append(res)
    outcomes = []
    for case, runs in by_case.items():
        flows = [r.flows.set_index("id") for r in runs]
        tcp_ids = [f for f in flows[0].index if f != MP]
        sub = runs[0].subflows
        groups = [int(g) for g in sub[sub["flow"] == MP]["group"]]
        outcomes.append(
            Outcome(
                case=case,
                shares=[cell(f, MP, "share") for f in flows],
                mp_bps=[cell(f, MP, "throughput_bps") for f in flows],
                tcp_bps=[float(f.loc[tcp_ids, "throughput_bps"].mean()) for f in flows],
                groups=groups,
                expected=expected_share(case.topology, group_sizes(case.cc, groups), len(tcp_ids)),
                example=runs[0],
                tcp_cuts=mean([cuts(f.loc[tcp_ids]) for f in flows]),
                subflow_cuts=mean([cuts(r.subflows[r.subflows["flow"] == MP]) for r in runs]),
            )
        )
    return outcomes


def cuts(rows: pd.DataFrame) -> float:
    """Mean window reductions per row: fast recoveries and retransmission timeouts."""
    return float((rows["fast_recoveries"] + rows["timeouts"]).mean())


def why(o: Outcome) -> str:
    sizes = group_sizes(o.case.cc, o.groups)
    if o.case.cc == "uncoupled":
        return "uncoupled: each subflow is one TCP flow"
    if len(sizes) == 1:
        return "one coupled group: one TCP flow's worth"
    return "each subflow alone in its group: a TCP flow"


def table(sec: Section, outcomes: Sequence[Outcome]) -> None:
    sec.say(
        f"{'controller':10} {'TM groups':17} {'groups':>6} {'measured share':>22}"
        f" {'expected':>9}  why"
    )
    for o in outcomes:
        lo, hi = min(o.shares), max(o.shares)
        measured = f"{pct(float(np.mean(o.shares)))} ({pct(lo)}-{pct(hi)})"
        groups = ",".join(map(str, o.groups))
        sec.say(
            f"{LABEL[o.case.cc]:10} {ASSISTANCE[o.case.assistance]:17} {groups:>6}"
            f" {measured:>22} {pct(o.expected):>9}  {why(o)}"
        )
    sec.say()


def section() -> Section:
    sec = Section("1. Multipath congestion control against single-path TCP")
    say = sec.say
    say(f"== {sec.title} ==\n")
    say("A 2-subflow connection (NMCC, LIA or Uncoupled) against NewReno flows, 20 Mb/s RED")
    say("bottlenecks, 32 ms round trips, 150 s runs (the last 120 s measured), seeds 1-3.")
    say("Its paths and coupling groups come from the topology manager (TM), with assistance")
    say("('shared-link': only paths sharing a link are coupled) or without (one group).")
    say("Share: the connection's goodput over all flows' goodput, mean of the seeds (range);")
    say("expected: the fluid model of long-lived Reno flows (examples/demo/multipath.py).\n")
    cases = [Case(t, cc, a) for t in TOPOLOGIES for cc in CONTROLLERS for a in ASSISTANCE]
    shared = TOPOLOGIES[0]
    cases += [Case(shared, cc, "shared-link", droptail=True) for cc in CONTROLLERS]
    outcomes = run_all(cases)
    for topology in TOPOLOGIES:
        say(f"-- {topology.title}: scenarios/demo/{topology.file}")
        table(sec, [o for o in outcomes if o.case.topology == topology and not o.case.droptail])
    say("-- the shared bottleneck with a drop-tail queue of one bandwidth-delay product")
    table(sec, [o for o in outcomes if o.case.droptail])
    explain(sec, outcomes)
    plot_shares(sec, outcomes)
    plot_timeseries(sec, outcomes)
    say()
    return sec


def find(
    outcomes: Sequence[Outcome], topology: str, cc: str, assistance: str, droptail: bool = False
) -> Outcome:
    return next(
        o
        for o in outcomes
        if (o.case.topology.key, o.case.cc, o.case.assistance, o.case.droptail)
        == (topology, cc, assistance, droptail)
    )


def mean(values: Sequence[float]) -> float:
    return float(np.mean(values))


def explain(sec: Section, outcomes: Sequence[Outcome]) -> None:
    """The conclusions a newcomer should draw, with this run's figures."""
    say = sec.say
    nmcc = find(outcomes, "shared", "nmcc", "shared-link")
    unc = find(outcomes, "shared", "uncoupled", "shared-link")
    say(
        f"Friendliness: on the shared bottleneck NMCC took {pct(mean(nmcc.shares))} (expected"
        f" {pct(nmcc.expected)}: {mean(nmcc.mp_bps) / 1e6:.1f} Mb/s against\nthe TCP flow's"
        f" {mean(nmcc.tcp_bps) / 1e6:.1f}); Uncoupled, two TCP flows in one,"
        f" {pct(mean(unc.shares))} (expected {pct(unc.expected)})."
    )
    no_tm = find(outcomes, "shared", "nmcc", "none")
    if no_tm.groups == nmcc.groups and no_tm.shares == nmcc.shares:
        say(
            "The TM couples the two paths because they share the bottleneck, so with and"
            " without\nits assistance the runs are the same."
        )
    with_tm = find(outcomes, "disjoint", "nmcc", "shared-link")
    without = find(outcomes, "disjoint", "nmcc", "none")
    say(
        "Aggregation: on disjoint paths the subflows harm nobody by taking half of each path.\n"
        f"With TM groups ({','.join(map(str, with_tm.groups))}) NMCC's subflows run as"
        f" Reno and took {mean(with_tm.mp_bps) / 1e6:.1f} Mb/s, each TCP flow"
        f" {mean(with_tm.tcp_bps) / 1e6:.1f};\nin one coupled group it took"
        f" {mean(without.mp_bps) / 1e6:.1f} Mb/s, each TCP flow"
        f" {mean(without.tcp_bps) / 1e6:.1f}: topological assistance gave"
        f" {mean(with_tm.mp_bps) / mean(without.mp_bps):.2f} times as much."
    )
    gain = mean(with_tm.shares) / mean(without.shares)
    sec.highlights += [
        f"friendliness: against one TCP flow on a shared bottleneck NMCC took"
        f" {pct(mean(nmcc.shares))} (expected\n  {pct(nmcc.expected)}), Uncoupled"
        f" {pct(mean(unc.shares))} ({pct(unc.expected)})",
        f"aggregation: on two disjoint paths NMCC with TM groups took {pct(mean(with_tm.shares))}"
        f" of all goodput,\n  {gain:.2f} times its share in one coupled group (expected"
        f" {with_tm.expected / without.expected:.2f}: {pct(with_tm.expected)} against"
        f" {pct(without.expected)})",
    ]
    dt = find(outcomes, "shared", "nmcc", "shared-link", droptail=True)
    dt_unc = find(outcomes, "shared", "uncoupled", "shared-link", droptail=True)
    say(
        f"Drop-tail: NMCC took {pct(mean(dt.shares))} and Uncoupled {pct(mean(dt_unc.shares))}"
        " of the same bottleneck. The fluid model\nassumes that every flow loses in proportion"
        " to what it sends, as RED makes it; a full drop-tail\nqueue drops bursts, and with"
        f" Uncoupled the TCP flow's window was cut {dt_unc.tcp_cuts:.0f} times, each"
        f" subflow's\n{dt_unc.subflow_cuts:.0f} (with RED: {unc.tcp_cuts:.0f} and"
        f" {unc.subflow_cuts:.0f}). docs/reproductions.md (nmcc-shared-bottleneck) reports\n"
        "the same excess of NMCC under drop-tail; D216.\n"
    )


def plot_shares(sec: Section, outcomes: Sequence[Outcome]) -> None:
    panels = [
        (t.title, [o for o in outcomes if o.case.topology == t and not o.case.droptail])
        for t in TOPOLOGIES
    ]
    panels.append(("the shared bottleneck, drop-tail", [o for o in outcomes if o.case.droptail]))
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True, width_ratios=[6, 6, 3])
    for ax, (title, mine) in zip(axes, panels):
        x = np.arange(len(mine))
        means = [100 * mean(o.shares) for o in mine]
        err = np.array(
            [[m - 100 * min(o.shares), 100 * max(o.shares) - m] for m, o in zip(means, mine)]
        ).T
        colours = ["tab:blue" if o.case.assistance != "none" else "tab:orange" for o in mine]
        ax.bar(x, means, yerr=err, color=colours, capsize=3)
        ax.scatter(x, [100 * o.expected for o in mine], marker="_", s=900, color="k", zorder=3)
        ax.set_xticks(x)
        ax.set_xticklabels(
            [
                f"{LABEL[o.case.cc]}\n{'TM' if o.case.assistance != 'none' else 'no TM'}"
                for o in mine
            ]
        )
        ax.set_title(title, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("connection's share of all goodput (%)")
    axes[0].bar([0], [0], color="tab:blue", label="with TM groups")
    axes[0].bar([0], [0], color="tab:orange", label="without TM groups")
    axes[0].scatter([], [], marker="_", s=200, color="k", label="expected (fluid model)")
    axes[0].legend(loc="upper left", fontsize=8)
    sec.save(fig, "multipath-shares")
    plt.close(fig)


def plot_timeseries(sec: Section, outcomes: Sequence[Outcome]) -> None:
    shown = [
        find(outcomes, "shared", "nmcc", "shared-link"),
        find(outcomes, "shared", "uncoupled", "shared-link"),
        find(outcomes, "disjoint", "nmcc", "shared-link"),
        find(outcomes, "disjoint", "nmcc", "none"),
    ]
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True, sharey=True)
    for ax, o in zip(axes.flat, shown):
        o.example.plot.throughput(ax=ax)
        ax.set_title(
            f"{LABEL[o.case.cc]}, {o.case.topology.title},\n{ASSISTANCE[o.case.assistance]}"
            " (seed 1)",
            fontsize=9,
        )
    sec.save(fig, "multipath-goodput")
    plt.close(fig)
