"""Every plot kind for every flow kind, from Python and from `pathpool plot` (issue 16,
defect 3): lines with data, legends that name subflow paths, and a clear error (exit 2) when
the run has nothing to draw."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib
import numpy as np
import pytest

import pathpool as pp

if TYPE_CHECKING:
    from matplotlib.axes import Axes

matplotlib.use("Agg")

TRACED = {"measure.trace_cwnd": True, "duration": "20s"}


def pathpool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pathpool", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


def drawn(ax: Axes) -> dict[str, int]:
    """Each line's label and how many finite points it has."""
    return {
        str(line.get_label()): int(np.isfinite(np.asarray(line.get_ydata(), float)).sum())
        for line in ax.lines
    }


@pytest.fixture(scope="module")
def multipath(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mp") / "res"
    root = Path(__file__).resolve().parent.parent
    pp.run(root / "scenarios" / "multipath.toml", set=TRACED).save(out)
    return out


@pytest.fixture(scope="module")
def mmtp(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mmtp") / "res"
    root = Path(__file__).resolve().parent.parent
    pp.run(root / "scenarios" / "mmtp-link-failure.toml", set=TRACED).save(out)
    return out


def test_cwnd_of_a_multipath_run_draws_every_flow(multipath):
    lines = drawn(pp.read_results(multipath).plot.cwnd())
    assert set(lines) == {"mp (total of 2 paths)", "tcp"}
    assert all(n >= 30 for n in lines.values()), lines  # 40 samples of 0.5 s


def test_cwnd_of_an_mmtp_run_draws_the_download(mmtp):
    res = pp.read_results(mmtp)
    lines = drawn(res.plot.cwnd())
    assert lines and all(n > 10 for n in lines.values()), lines
    assert all("total of" in label for label in lines), lines


def test_subflow_lines_are_labelled_with_their_paths(multipath, mmtp):
    lines = drawn(pp.read_results(multipath).plot.subflows())
    assert set(lines) == {"mp/0 s>a>b>d", "mp/1 s>a>c>d"}
    goodput = drawn(pp.read_results(multipath).plot.subflows(column="goodput_bps"))
    assert all(n >= 30 for n in goodput.values()), goodput
    assert drawn(pp.read_results(mmtp).plot.subflows())


@pytest.mark.parametrize("kind", ["throughput", "cwnd", "subflows", "queue"])
def test_every_cli_plot_kind_works_on_multipath_and_mmtp_runs(multipath, mmtp, kind, tmp_path):
    for res in (multipath, mmtp):
        png = tmp_path / f"{res.parent.name}-{kind}.png"
        r = pathpool("plot", res, "--kind", kind, "-o", png)
        assert r.returncode == 0, r.stderr
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_a_plot_without_data_exits_2_and_says_what_is_missing(root, tmp_path):
    out = tmp_path / "res"
    untraced = {"duration": "12s", "measure.trace_cwnd": False}
    pp.run(root / "scenarios" / "dumbbell.toml", set=untraced).save(out)
    r = pathpool("plot", out, "--kind", "cwnd", "-o", tmp_path / "c.png")
    assert r.returncode == 2 and "measure.trace_cwnd" in r.stderr, r.stderr
    r = pathpool("plot", out, "--kind", "subflows", "-o", tmp_path / "s.png")
    assert r.returncode == 2 and "no multipath connection or mmTP download" in r.stderr, r.stderr
    r = pathpool("plot", out, "--flows", "nope", "-o", tmp_path / "t.png")
    assert r.returncode == 2 and "unknown flows: nope" in r.stderr, r.stderr
    assert "'" not in r.stderr, "no Python repr quotes"
    assert not any(tmp_path.glob("*.png"))


def test_the_summary_table_names_the_controller_and_the_paths(root):
    multipath = root / "scenarios" / "multipath.toml"
    r = pathpool("run", multipath, "--no-write", "--set", "duration=12s")
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if line.strip().startswith("flow "))
    assert header.split()[:5] == ["flow", "kind", "cc", "recovery", "paths"], header
    mp = next(line for line in r.stdout.splitlines() if line.strip().startswith("mp "))
    assert mp.split()[:5] == ["mp", "tcp", "nmcc", "newreno", "2"], mp
