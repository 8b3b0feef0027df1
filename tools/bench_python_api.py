"""What the Python API's boundary costs: parsing a scenario once against on every run, and
handing a run's tables to pandas (D205, D206). Prints figures; asserts nothing.

    .venv/bin/python tools/bench_python_api.py [--runs 1000]
"""

from __future__ import annotations

import argparse
import json
import time

import pathpool as pp
from pathpool import _pathpool
from pathpool.results import _frames


def _tiny() -> pp.Scenario:
    return pp.Scenario(
        duration="20ms",
        hosts=["a", "b"],
        links=[pp.link("a", "b", rate="10Mbps", delay="1ms")],
        flows=[pp.flow("a", "b")],
        measure=pp.measure(interval="10ms"),
    )


def _big() -> pp.Scenario:
    """Many flows sampled often: large time-series tables."""
    return pp.Scenario(
        duration="60s",
        hosts=["a", "b"],
        links=[pp.link("a", "b", rate="100Mbps", delay="10ms", queue=pp.droptail(500))],
        flows=[pp.flow("a", "b", count=50, start_spread="1s")],
        measure=pp.measure(interval="10ms", trace_cwnd=True),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()

    sc = _tiny()
    d = sc.to_dict()
    t0 = time.perf_counter()
    for seed in range(1, args.runs + 1):
        sc.run(seed=seed, progress=False)
    once = time.perf_counter() - t0
    t0 = time.perf_counter()
    for seed in range(1, args.runs + 1):
        pp.run(d, seed=seed, progress=False)
    each = time.perf_counter() - t0
    print(
        f"{args.runs} runs of a 20 ms scenario: parsed once (sc.run) {once:.3f} s, "
        f"parsed on every run (pp.run(dict)) {each:.3f} s"
    )
    # The same without building DataFrames: the extension's run alone, parsed once or anew.
    text = json.dumps(d)
    rust = sc._rust()
    t0 = time.perf_counter()
    for seed in range(1, args.runs + 1):
        rust.run(seed, False)
    once = time.perf_counter() - t0
    t0 = time.perf_counter()
    for seed in range(1, args.runs + 1):
        _pathpool.CompiledScenario(text, "json", "<scenario>", []).run(seed, False)
    each = time.perf_counter() - t0
    print(
        f"  without the tables: parsed once {once * 1e3 / args.runs:.3f} ms per run, "
        f"parsed on every run {each * 1e3 / args.runs:.3f} ms per run"
    )

    handle = _big()._rust().run(1, False)
    t0 = time.perf_counter()
    frames = _frames(handle)
    tables = time.perf_counter() - t0
    rows = sum(len(f) for f in frames.values())
    cells = sum(f.size for f in frames.values())
    print(
        f"tables of a 60 s run of 50 flows sampled every 10 ms: {rows} rows, {cells} cells, "
        f"to DataFrames in {tables * 1e3:.1f} ms (simulation: {handle.wall_time_s * 1e3:.0f} ms)"
    )


if __name__ == "__main__":
    main()
