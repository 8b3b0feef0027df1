"""The `pathpool` console command installed by the Python package."""

from __future__ import annotations

import json
import subprocess
import sys


def pathpool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pathpool", *args], capture_output=True, text=True, check=False
    )


def test_run_and_plot(root, tmp_path):
    out = tmp_path / "res"
    r = pathpool(
        "run", str(root / "scenarios" / "dumbbell.toml"), "--out", str(out), "--set", "duration=20s"
    )
    assert r.returncode == 0, r.stderr
    assert "rtt20" in r.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert {f["id"] for f in summary["flows"]} == {"rtt20", "rtt40", "rtt80", "rtt160"}
    r = pathpool("plot", str(out), "-o", str(tmp_path / "t.png"))
    assert r.returncode == 0, r.stderr
    png = (tmp_path / "t.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_bad_scenario_exits_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "1s"\nnodes = 3\nlinks = []\n')
    r = pathpool("run", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "nodes" in r.stderr
    assert not (tmp_path / "o").exists()


def test_plot_of_missing_results(tmp_path):
    r = pathpool("plot", str(tmp_path))
    assert r.returncode == 2
    assert "not a complete pathpool results directory" in r.stderr
