"""The README says what the commands do (issue 16, defect 5): its sample output is what
`pathpool run scenarios/dumbbell.toml` prints, and its sweep example's replicates differ."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import pandas as pd
import pytest

import pathpool as pp

WALL_CLOCK = re.compile(r"simulated in [0-9.]+ s \((\d+) events, [0-9.]+ M data packets/s\)")


def pathpool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pathpool", *args], capture_output=True, text=True, check=False
    )


def readme_block(root, after: str) -> list[str]:
    text = (root / "README.md").read_text(encoding="utf-8")
    start = text.index("```\n", text.index(after)) + 4
    return text[start : text.index("```\n", start)].splitlines()


def test_the_readme_sample_table_is_what_the_command_prints(root):
    sample = readme_block(root, "`pathpool run scenarios/dumbbell.toml` prints")
    r = pathpool("run", str(root / "scenarios" / "dumbbell.toml"), "--no-write")
    assert r.returncode == 0, r.stderr
    printed = r.stdout.splitlines()
    assert sample[-1].strip() == "...", "the sample ends with an ellipsis line"
    shown = sample[:-1]
    assert len(shown) >= 9
    for i, (want, got) in enumerate(zip(shown, printed)):
        if i == 0:
            # Only the wall time and the packet rate depend on the machine.
            want, got = WALL_CLOCK.sub(r"(\1 events)", want), WALL_CLOCK.sub(r"(\1 events)", got)
        assert want == got, f"README line {i + 1}"


def test_the_dumbbell_comment_holds_the_shortest_flow_gets_the_most(root):
    res = pp.run(root / "scenarios" / "dumbbell.toml")
    shares = res.flows.set_index("id")["share"]
    assert list(shares.sort_values(ascending=False).index) == ["rtt20", "rtt40", "rtt80", "rtt160"]


def test_the_readme_sweep_has_replicates_that_differ(root, tmp_path):
    """`--reps 5` on the shipped dumbbell: replicates differ (no warning); without its
    randomness every seed gives the same result and the sweep says so."""
    assert "--reps 5" in (root / "README.md").read_text(encoding="utf-8")
    scenario = str(root / "scenarios" / "dumbbell.toml")
    grid = ["--grid", "links.bottleneck.rate=10Mbps,20Mbps", "--reps", "5"]
    short = ["--set", "duration=20s", "--set", "measure.start=5s"]
    r = pathpool("sweep", scenario, *grid, *short, "--out", str(tmp_path / "rates"))
    assert r.returncode == 0, r.stderr
    assert "identical" not in r.stderr, r.stderr
    df = pd.read_parquet(tmp_path / "rates" / "sweep.parquet")
    spread = df.groupby(["links.bottleneck.rate", "id"])["throughput_bps"].std()
    assert (spread > 0).all(), spread

    off = [*short, "--set", "tcp.send_overhead=0s"]
    off += [
        a
        for f in ("rtt20", "rtt40", "rtt80", "rtt160")
        for a in ("--set", f"flows.{f}.start_spread=0s")
    ]
    r = pathpool("sweep", scenario, *grid, *off, "--out", str(tmp_path / "fixed"))
    assert r.returncode == 0, r.stderr
    assert "warning: at every grid point the 5 replicates are identical" in r.stderr, r.stderr
    assert "tcp.send_overhead" in r.stderr


def test_pp_sweep_warns_when_replicates_are_identical(root):
    fixed = {"tcp.send_overhead": "0s", "duration": "15s"}
    fixed |= {f"flows.{f}.start_spread": "0s" for f in ("rtt20", "rtt40", "rtt80", "rtt160")}
    with pytest.warns(pp.IdenticalReplicatesWarning, match="2 replicates are identical"):
        pp.sweep(root / "scenarios" / "dumbbell.toml", reps=2, set=fixed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pp.IdenticalReplicatesWarning)
        pp.sweep(root / "scenarios" / "dumbbell.toml", reps=2, set={"duration": "15s"})
