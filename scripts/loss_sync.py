"""Does drop-tail loss synchronisation explain the E5b and E5c misses? (issue 17, item 7)

Runs a reproduction's scenario under four queue conditions that keep everything else
(buffer, rates, delays, flows, seeds): drop-tail; drop-tail with ns-2's random send overhead
of one bottleneck packet time (Floyd and Jacobson's remedy for phase effects, D123); htsim's
random drop at the top of the same buffer (D120); RED. From 100-ms samples it measures, per
run, the bottleneck's congestion episodes and which loss-responding units (each single-path
flow, each NMCC subflow) reduced their window in each, next to the NMCC connection's share.

Definitions (D146): a congestion episode at a link is a maximal run of 100-ms samples with
queue drops, samples at most 0.25 s apart merged; a unit takes part in an episode when its
ssthresh takes a new value between the episode's first sample - 0.1 s and its last + 0.5 s
(a loss is noticed about one RTT, 100 ms, after the drop, a timeout later). "All lose" is the
fraction of episodes in which every unit crossing the link took part.

Usage (from the repository root, with pandas installed, e.g. the .venv of scripts/bootstrap.sh):

    python scripts/loss_sync.py e5c --seeds 6 --out results/loss-sync/e5c
    python scripts/loss_sync.py e5b --seeds 6 --out results/loss-sync/e5b

Resumable: finished runs are kept in OUT/results.jsonl. Set PATHPOOL to the binary (default
target/release/pathpool).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess

import numpy as np
import pandas as pd

RED = (
    '{ type = "red", size = "1170KB", min_th = "195KB", max_th = "585KB", '
    "max_p = 0.1, weight = 0.002 }"
)
RANDOM = '{ type = "random", size = "1174500B", band = "4500B", p = 0.1 }'
PAPER = "flows.nmcc.tcp={ nmcc = { loss_time_factor = false } }"
WITH_MT = "flows.nmcc.tcp={ nmcc = { loss_time_factor = true } }"


def conditions(links: list[str]) -> dict[str, list[str]]:
    """The four conditions, as --set overrides on the given queue links."""
    return {
        "drop-tail": [],
        "drop-tail + send jitter": ["tcp.send_overhead=128us"],
        "random drop at the top": [f"links.{link}.queue={RANDOM}" for link in links],
        "RED": [f"links.{link}.queue={RED}" for link in links],
    }


# E5c: nmcc-shared-bottleneck, where the published shares are 53 (1 Reno) and 37 (2 Reno).
# E5b: tm-assistance-lan without TM, published 54.6 (1 Reno) and 38.5 (2 Reno).
SPECS = {
    "e5c": {
        "scenario": "scenarios/reproductions/nmcc-shared-bottleneck.toml",
        "queues": ["bottleneck"],
        "members": {"bottleneck:r->q": "all"},
        "configs": {
            "paper NMCC, 1 Reno": [PAPER],
            "NMCC + m_t, 1 Reno": [WITH_MT],
            "paper NMCC, 2 Reno": [PAPER, "flows.sp2.count=1"],
        },
    },
    "e5b": {
        "scenario": "scenarios/reproductions/tm-assistance-lan.toml",
        "queues": ["path1", "path2"],
        "members": {
            "path1:p1->qa": ["nmcc/0", "sp1"],
            "path2:p2->qb": ["nmcc/1", "sp2"],
        },
        "configs": {
            "without TM, 2 Reno": ['flows.nmcc.tm.assistance="none"'],
            "without TM, 1 Reno": ['flows.nmcc.tm.assistance="none"', "flows.sp2.count=0"],
        },
    },
}
FROM_S = 30.0  # skip slow start
MP = "nmcc"


def run(binary: str, scenario: str, seed: int, sets: list[str], out: str) -> None:
    """One run with 100-ms samples of windows and queues."""
    cmd = [binary, "run", scenario, "--seed", str(seed), "-q", "-o", out, "--force"]
    for s in [
        "measure.trace_cwnd=true",
        "measure.trace_queues=true",
        "measure.interval=100ms",
        *sets,
    ]:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)


def loss_times(out: str) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Per unit (flow, or flow/subflow), the sample times at which ssthresh took a new value."""
    ft = pd.read_parquet(f"{out}/flow_timeseries.parquet")
    st = pd.read_parquet(f"{out}/subflow_timeseries.parquet")
    series = {
        f: g.set_index("time_s")["ssthresh_bytes"] for f, g in ft[ft.flow != MP].groupby("flow")
    }
    for (f, s), g in st.groupby(["flow", "subflow"]):
        series[f"{f}/{s}"] = g.set_index("time_s")["ssthresh_bytes"]
    cuts = {}
    for unit, ser in series.items():
        ser = ser.fillna(np.inf)
        changed = ser.ne(ser.shift(1)) & ser.shift(1).notna() & np.isfinite(ser)
        cuts[unit] = np.array(ser.index[changed])
    return ft, cuts


def episodes(lt: pd.DataFrame, link: str) -> list[tuple[float, float]]:
    """(first, last) sample time of each congestion episode at a link after FROM_S."""
    d = lt[(lt.link == link) & (lt.time_s > FROM_S)].sort_values("time_s")
    times = d.time_s.values[d.drops.values > 0]
    if len(times) == 0:
        return []
    found, start, prev = [], times[0], times[0]
    for t in times[1:]:
        if t - prev > 0.25:
            found.append((start, prev))
            start = t
        prev = t
    found.append((start, prev))
    return found


def analyse(out: str, members: dict) -> dict:
    """The run's synchronisation figures and the NMCC connection's shares."""
    ft, cuts = loss_times(out)
    lt = pd.read_parquet(f"{out}/link_timeseries.parquet")
    flows = pd.read_parquet(f"{out}/flows.parquet").set_index("id")
    eps = []
    for link, units in members.items():
        # A flow with count = 0 is absent from the run: only present units can take part.
        units = list(cuts) if units == "all" else [u for u in units if u in cuts]
        for a, b in episodes(lt, link):
            took_part = [
                u
                for u in units
                if ((cuts[u] >= a - 0.1 - 1e-9) & (cuts[u] <= b + 0.5 + 1e-9)).any()
            ]
            eps.append((took_part, units))
    delivered = {}
    for f, g in ft.groupby("flow"):
        g = g.set_index("time_s")["delivered_bytes"]
        before = g[g.index <= FROM_S + 1e-9]
        delivered[f] = g.iloc[-1] - (before.iloc[-1] if len(before) else 0)
    tend = ft.time_s.max()

    def subflows(units: list[str]) -> list[str]:
        return [u for u in units if u.startswith(MP + "/")]

    def single(units: list[str]) -> list[str]:
        return [u for u in units if not u.startswith(MP + "/")]

    hit_mp = [(h, m) for h, m in eps if subflows(h)]
    return {
        "share": 100 * flows["share"].get(MP, np.nan),
        "share_long": 100 * delivered.get(MP, 0) / sum(delivered.values()),
        "episodes": len(eps),
        "all": float(np.mean([len(h) == len(m) for h, m in eps])) if eps else math.nan,
        "mp_both": float(np.mean([len(subflows(h)) == len(subflows(m)) for h, m in hit_mp]))
        if hit_mp
        else math.nan,
        "sp_all": float(np.mean([len(single(h)) == len(single(m)) for h, m in eps]))
        if eps
        else math.nan,
        "cuts_per_100s": {
            u: float((c > FROM_S).sum()) * 100 / (tend - FROM_S) for u, c in cuts.items()
        },
    }


T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def mean_ci(values: list[float]) -> tuple[float, float]:
    """Mean and Student-t 95% half-width (as the reproductions print them)."""
    v = [x for x in values if not math.isnan(x)]
    if len(v) < 2:
        return (v[0] if v else math.nan), 0.0
    t = T975[len(v) - 2] if len(v) - 2 < len(T975) else 1.96
    return statistics.mean(v), t * statistics.stdev(v) / math.sqrt(len(v))


def summary(rows: list[dict]) -> str:
    """A Markdown table: one line per configuration and condition."""
    groups = {}
    for r in rows:
        groups.setdefault((r["config"], r["condition"]), []).append(r)
    lines = [
        "| configuration | queue | runs | episodes / run | all lose | both NMCC subflows "
        "| every single-path flow | share 240-300 s | share 30-300 s "
        "| losses / 100 s: single-path / NMCC subflow |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (config, cond), rs in groups.items():

        def m(key: str, rs: list[dict] = rs) -> tuple[float, float]:
            return mean_ci([x[key] for x in rs])

        def per_unit(is_sub: bool, rs: list[dict] = rs) -> float:
            return statistics.mean(
                statistics.mean([v for u, v in x["cuts_per_100s"].items() if ("/" in u) == is_sub])
                for x in rs
            )

        share, share_long = m("share"), m("share_long")
        lines.append(
            f"| {config} | {cond} | {len(rs)} | {m('episodes')[0]:.1f} | {100 * m('all')[0]:.0f}% "
            f"| {100 * m('mp_both')[0]:.0f}% | {100 * m('sp_all')[0]:.0f}% "
            f"| {share[0]:.1f} ± {share[1]:.1f} | {share_long[0]:.1f} ± {share_long[1]:.1f} "
            f"| {per_unit(False):.1f} / {per_unit(True):.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Run what is missing, then print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec", choices=sorted(SPECS))
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    spec = SPECS[args.spec]
    binary = os.environ.get("PATHPOOL", "target/release/pathpool")
    os.makedirs(args.out, exist_ok=True)
    results = os.path.join(args.out, "results.jsonl")
    rows = [json.loads(line) for line in open(results)] if os.path.exists(results) else []
    done = {(r["config"], r["condition"], r["seed"]) for r in rows}
    for config, sets in spec["configs"].items():
        for cond, csets in conditions(spec["queues"]).items():
            for seed in range(1, args.seeds + 1):
                if (config, cond, seed) in done:
                    continue
                out = os.path.join(args.out, "run")
                run(binary, spec["scenario"], seed, sets + csets, out)
                r = analyse(out, spec["members"])
                r.update(config=config, condition=cond, seed=seed)
                rows.append(r)
                with open(results, "a") as f:
                    f.write(json.dumps(r) + "\n")
    print(summary([r for r in rows if r["seed"] <= args.seeds]))


if __name__ == "__main__":
    main()
