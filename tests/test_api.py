"""The Python API: running scenarios, result tables, saving, plotting, the GIL."""

from __future__ import annotations

import _thread
import json
import signal
import threading
import time

import numpy as np
import pandas as pd
import pytest

import pathpool as pp


def test_run_returns_tidy_tables(small):
    res = pp.run(small, seed=1)
    assert list(res.flows["id"]) == ["long", "finite", "cbr"]
    assert set(res.flows["kind"]) == {"tcp", "udp-cbr"}
    finite = res.flows.set_index("id").loc["finite"]
    assert finite["completed"]
    assert finite["bytes_delivered"] == 500_000
    assert 0 < finite["fct_s"] < 9
    long = res.flows.set_index("id").loc["long"]
    assert pd.isna(long["fct_s"]) and pd.isna(long["size_bytes"])
    assert res.flows["share"].sum() == pytest.approx(1.0)
    bottleneck = res.links.set_index("id").loc["bottleneck:r->b"]
    assert 0.5 < bottleneck["utilization"] <= 1.0
    # Time series: one row per active flow per 100 ms sample, goodput in bit/s.
    ts = res.timeseries
    assert {"time_s", "flow", "goodput_bps", "cwnd_bytes", "ssthresh_bytes", "srtt_s"} <= set(ts)
    assert ts["time_s"].max() == pytest.approx(10.0)
    cbr = ts[ts["flow"] == "cbr"]
    mid = cbr[(cbr["time_s"] > 3) & (cbr["time_s"] <= 7)]
    assert mid["goodput_bps"].mean() == pytest.approx(1e6 * 1472 / 1500, rel=0.05)
    assert len(res.link_timeseries) > 0
    assert res.jain_index is not None and 0 < res.jain_index <= 1
    assert res.seed == 1


def test_summary_and_repr(small):
    res = pp.run(small, seed=2)
    assert res.summary["schema"] == "pathpool.summary/1"
    assert res.summary["seed"] == 2
    assert "Jain index" in repr(res)


def test_same_seed_same_frames_other_seed_differs(small):
    a, b, c = pp.run(small, seed=5), pp.run(small, seed=5), pp.run(small, seed=6)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.timeseries, b.timeseries)
    assert not a.timeseries.equals(c.timeseries)


def test_file_scenario_and_overrides(root):
    res = pp.run(root / "scenarios" / "random-loss.toml", set={"duration": "60s"}, seed=1)
    assert res.sim_time_s == 60.0
    sc = pp.load(root / "scenarios" / "random-loss.toml").set("links.forward.loss", 0.02)
    assert sc.to_dict()["links"][0]["loss"] == 0.02


def test_save_and_read_back(small, tmp_path):
    res = pp.run(small, seed=3)
    out = res.save(tmp_path / "run")
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "caches.parquet",
        "flow_timeseries.parquet",
        "flows.parquet",
        "link_timeseries.parquet",
        "links.parquet",
        "provenance.json",
        "subflow_timeseries.parquet",
        "subflows.parquet",
        "summary.json",
    ]
    back = pp.read_results(out)
    pd.testing.assert_frame_equal(back.flows.reset_index(drop=True), res.flows, check_dtype=False)
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["seed"] == 3 and prov["scenario"]["name"] == "small"


def test_save_never_deletes_the_users_files(small, tmp_path):
    """Issue 16, defect 1: ``save`` into a directory of other files refuses and touches
    nothing; forced, it writes beside them; over an earlier result it replaces only its own."""
    res = pp.run(small, seed=3)
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "paper.tex").write_text("x\n")
    with pytest.raises(FileExistsError, match=r"paper\.tex.*force=True"):
        res.save(exp)
    assert sorted(p.name for p in exp.iterdir()) == ["paper.tex"]
    res.save(exp, force=True)
    (exp / "notes.md").write_text("mine\n")
    pp.run(small, seed=4).save(exp)
    assert (exp / "paper.tex").read_text() == "x\n"
    assert (exp / "notes.md").read_text() == "mine\n"
    assert pp.read_results(exp).seed == 4


def test_plots_draw_lines(small):
    import matplotlib

    matplotlib.use("Agg")
    res = pp.run(small, seed=1)
    ax = res.plot.throughput(total=True)
    assert len(ax.get_lines()) == 4  # three flows and the total
    assert ax.get_ylabel() == "goodput (Mb/s)"
    ax = res.plot.cwnd(flows=["long"])
    assert len(ax.get_lines()) == 1
    ys = ax.get_lines()[0].get_ydata()
    assert np.nanmax(ys) > 0
    ax = res.plot.queue()
    assert ax.get_lines()[0].get_label() == "bottleneck:r->b"
    with pytest.raises(ValueError, match="unknown flows: nope"):
        res.plot.throughput(flows=["nope"])


def _long_scenario() -> pp.Scenario:
    return pp.Scenario(
        duration="3000s",
        hosts=["a", "b"],
        links=[pp.link("a", "b", rate="1Gbps", delay="10ms", queue=pp.droptail(2000))],
        flows=[pp.flow("a", "b", count=10)],
        measure=pp.measure(interval="10s"),
    )


def test_run_releases_the_gil():
    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    t = threading.Thread(target=count)
    t.start()
    start = time.perf_counter()
    pp.run(_long_scenario().set("duration", "20s"), progress=False)
    elapsed = time.perf_counter() - start
    stop.set()
    t.join()
    # A Python thread that cannot get the GIL would barely count; with the GIL released it
    # counts throughout the run.
    assert elapsed > 0.2
    assert ticks > 100_000


def test_ctrl_c_interrupts_a_run():
    # Ctrl-C every 0.25 s until the run stops, so that the test does not depend on when the
    # first one lands on a loaded machine (the run is a minute of work if not interrupted);
    # only the first press raises, so a late one cannot escape the test.
    stop = threading.Event()
    pressed: list[int] = []

    def on_sigint(signum: int, frame: object) -> None:
        if not pressed:
            pressed.append(signum)
            raise KeyboardInterrupt

    def press() -> None:
        while not stop.wait(0.25):
            _thread.interrupt_main()

    previous = signal.signal(signal.SIGINT, on_sigint)
    presser = threading.Thread(target=press, daemon=True)
    start = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            presser.start()
            pp.run(_long_scenario(), progress=False)
    finally:
        stop.set()
        presser.join()
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - start < 30
