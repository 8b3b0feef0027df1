"""The `pathpool` command: `python -m pathpool` (which becomes the binary, except for `plot`)
and the binary installed beside the interpreter (which hands `plot` to Python)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BINARY = Path(sys.executable).parent / "pathpool"


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


def test_the_installed_command_is_the_binary_and_hands_plot_to_python(root, tmp_path):
    assert BINARY.read_bytes()[:4] == b"\x7fELF", f"{BINARY}: the Rust binary"
    out = tmp_path / "res"
    scenario = str(root / "scenarios" / "dumbbell.toml")
    r = subprocess.run(
        [BINARY, "run", scenario, "-o", out, "--set", "duration=12s"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    plot = [BINARY, "plot", out, "--kind", "cwnd", "-o", tmp_path / "c.png"]
    r = subprocess.run(plot, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Python's own errors come back with its exit status.
    r = subprocess.run([*plot, "--kind", "bars"], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "bars: not a plot kind" in r.stderr, r.stderr
    # No interpreter with the package: a clear error, not a traceback.
    env = {**os.environ, "PATHPOOL_PYTHON": str(tmp_path / "no-python")}
    r = subprocess.run(plot, capture_output=True, text=True, check=False, env=env)
    assert r.returncode == 2, r.stderr
    assert "needs the pathpool Python package" in r.stderr and "PATHPOOL_PYTHON" in r.stderr
