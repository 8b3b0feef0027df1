"""pp.sweep: the gathered table, resuming, bad input, sweep files, Ctrl-C, and a Dask
cluster giving the same table as local threads."""

from __future__ import annotations

import _thread
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import pathpool as pp

GRID = {"links.bottleneck.rate": ["5Mbps", "10Mbps"], "flows.finite.size": ["200KB", "500KB"]}


def _markers(out: Path) -> dict[str, float]:
    return {p.parent.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*/done.json")}


def test_sweep_gathers_runs_with_parameters_and_seeds(small, tmp_path):
    out = tmp_path / "s"
    df = pp.sweep(small, GRID, reps=2, jobs=2, out=out, progress=False)
    assert list(df.columns[:6]) == [
        "run_id",
        "point",
        "rep",
        "seed",
        "links.bottleneck.rate",
        "flows.finite.size",
    ]
    assert "throughput_bps" in df.columns
    assert len(df) == 4 * 2 * 3, "4 points x 2 reps x 3 flows"
    assert df["run_id"].nunique() == 8
    assert sorted(df["seed"].unique()) == [1, 2]
    assert list(df["flows.finite.size"].unique()) == ["200KB", "500KB"]
    # Each run is exactly the run pp.run gives with the same overrides and seed.
    row = df[(df["links.bottleneck.rate"] == "10Mbps") & (df["rep"] == 1)].iloc[:3]
    res = pp.run(
        small,
        seed=int(row["seed"].iloc[0]),
        set={"links.bottleneck.rate": "10Mbps", "flows.finite.size": row.iloc[0, 5]},
        progress=False,
    )
    assert list(row["id"]) == list(res.flows["id"])
    assert list(row["throughput_bps"]) == list(res.flows["throughput_bps"])
    assert list(row["retransmissions"]) == list(res.flows["retransmissions"])
    # The files: the same table in Parquet and CSV, a manifest, one directory per run.
    on_disk = pd.read_parquet(out / "sweep.parquet")
    assert list(on_disk.columns) == list(df.columns)
    assert on_disk["throughput_bps"].equals(df["throughput_bps"])
    assert len(pd.read_csv(out / "sweep.csv")) == len(df)
    assert (out / "manifest.json").is_file()
    assert len(_markers(out)) == 8
    run_dir = out / "runs" / df["run_id"].iloc[0]
    assert pp.read_results(run_dir).seed == 1


def test_a_second_sweep_reuses_finished_runs(small, tmp_path):
    out = tmp_path / "s"
    first = pp.sweep(small, GRID, reps=2, out=out, progress=False)
    before = _markers(out)
    lost = sorted(before)[3]
    (out / "runs" / lost / "done.json").unlink()
    again = pp.sweep(small, GRID, reps=2, out=out, progress=False)
    after = _markers(out)
    assert set(after) == set(before)
    rerun = {k for k in after if after[k] != before.get(k)}
    assert rerun == {lost}, "only the run without its marker ran again"
    pd.testing.assert_frame_equal(first, again)


def test_summary_table_and_metrics(small):
    df = pp.sweep(small, {"flows.long.count": [1, 2]}, reps=3, table="summary", progress=False)
    assert len(df) == 6, "one row per run"
    assert df["flows.long.count"].dtype == "uint64"
    assert {"jain_index", "events", "sim_time_s"} <= set(df.columns)
    df = pp.sweep(small, {"flows.long.count": [1, 2]}, metrics=["share"], progress=False)
    assert list(df.columns) == ["run_id", "point", "rep", "seed", "flows.long.count", "id", "share"]


def test_bad_sweeps_fail_before_running(small, tmp_path):
    out = tmp_path / "never"
    with pytest.raises(pp.ScenarioError, match=r"links\.bottleneck\.rat = 5Mbps"):
        pp.sweep(small, {"links.bottleneck.rat": ["5Mbps"]}, out=out)
    with pytest.raises(pp.ScenarioError, match=r"links\.bottleneck\.rate = fast"):
        pp.sweep(small, {"links.bottleneck.rate": ["5Mbps", "fast"]}, out=out)
    with pytest.raises(pp.ScenarioError, match="empty list of values"):
        pp.sweep(small, {"flows.long.count": []}, out=out)
    with pytest.raises(pp.ScenarioError, match="reps: must be at least 1"):
        pp.sweep(small, reps=0, out=out)
    with pytest.raises(pp.ScenarioError, match="is not a column of the flows table"):
        pp.sweep(small, metrics=["goodput"], out=out)
    with pytest.raises(TypeError, match="expected a list of values"):
        pp.sweep(small, {"flows.long.count": 2}, out=out)
    assert not out.exists()


def test_sweep_file(tmp_path, root):
    (tmp_path / "rates.toml").write_text(
        f'scenario = "{root / "scenarios" / "dumbbell.toml"}"\n'
        'reps = 2\nseed = 5\ntable = "links"\nmetrics = ["utilization"]\n'
        'set = { duration = "12s" }\n'
        '[grid]\n"links.bottleneck.rate" = ["10Mbps", "20Mbps"]\n'
    )
    df = pp.sweep(tmp_path / "rates.toml", progress=False)
    assert sorted(df["seed"].unique()) == [5, 6]
    assert list(df.columns[-2:]) == ["id", "utilization"]
    assert df["run_id"].nunique() == 4


def _long_scenario() -> pp.Scenario:
    return pp.Scenario(
        duration="600s",
        hosts=["a", "b"],
        links=[pp.link("a", "b", rate="1Gbps", delay="10ms", queue=pp.droptail(2000), id="l")],
        flows=[pp.flow("a", "b", count=10)],
        measure=pp.measure(interval="10s"),
    )


def test_ctrl_c_stops_a_sweep_and_keeps_unfinished_runs_pending(tmp_path):
    stop = threading.Event()
    pressed: list[int] = []

    def on_sigint(signum: int, frame: object) -> None:
        if not pressed:
            pressed.append(signum)
            raise KeyboardInterrupt

    def press() -> None:
        while not stop.wait(0.25):
            _thread.interrupt_main()

    out = tmp_path / "s"
    previous = signal.signal(signal.SIGINT, on_sigint)
    presser = threading.Thread(target=press, daemon=True)
    start = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            presser.start()
            pp.sweep(_long_scenario(), {"links.l.delay": ["10ms", "20ms"]}, jobs=1, out=out)
    finally:
        stop.set()
        presser.join()
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - start < 30
    assert len(_markers(out)) < 2
    assert not (out / "sweep.parquet").exists()


def test_dask_cluster_gives_the_local_table(root, tmp_path):
    pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'pathpool[dask]')"
    )
    from distributed import LocalCluster

    scenario = root / "scenarios" / "dumbbell.toml"
    grid = {"links.bottleneck.rate": ["10Mbps", "20Mbps"], "tcp.delayed_ack": [False, True]}
    fixed = {"duration": "12s"}
    local = pp.sweep(scenario, grid, reps=2, set=fixed, jobs=2, out=tmp_path / "local")
    cli = [sys.executable, "-m", "pathpool", "sweep", str(scenario), "-q", "--reps", "2"]
    cli += ["--set", "duration=12s", "--grid", "links.bottleneck.rate=10Mbps,20Mbps"]
    cli += ["--grid", "tcp.delayed_ack=false,true"]
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        remote = pp.sweep(
            scenario,
            grid,
            reps=2,
            set=fixed,
            out=tmp_path / "dask",
            cluster=cluster.scheduler_address,
        )
        # The command line's --cluster goes through the Python entry point.
        r = subprocess.run(
            [*cli, "--out", str(tmp_path / "cli"), "--cluster", cluster.scheduler_address],
            capture_output=True,
            text=True,
            check=False,
        )
        assert r.returncode == 0, r.stderr
    assert len(local) == 4 * 2 * 4, "4 points x 2 reps x 4 flows"
    pd.testing.assert_frame_equal(local, remote)
    csv = (tmp_path / "local" / "sweep.csv").read_bytes()
    assert (tmp_path / "dask" / "sweep.csv").read_bytes() == csv
    assert (tmp_path / "cli" / "sweep.csv").read_bytes() == csv


def test_the_local_cluster_example_runs_and_matches_local_threads(root, tmp_path):
    """docs/sweeps.md's LocalCluster example, as a script (its `__main__` guard included)."""
    pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'pathpool[dask]')"
    )
    r = subprocess.run(
        [sys.executable, str(root / "examples" / "sweep_local_cluster.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "byte-identical to the local threads': True" in r.stdout, r.stdout
