"""pp.reproduce runs a reproduction as `pathpool reproduce ID --json` does (issue 19,
acceptance 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import pathpool as pp

QUICK_ID = "nmcc-shared-bottleneck"
# One seed per configuration: the comparison is of the two paths through the code, not of the
# figures, and the experiment's quick default (several seeds) took a minute per side.
SEEDS = 1


def test_reproductions_lists_every_experiment_of_the_command() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "pathpool", "reproduce", "--list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    ids = [line.split()[0] for line in listed if line.strip()]
    table = pp.reproductions()
    assert list(table["id"]) == ids
    assert list(table.columns) == ["id", "title", "source"]


def test_comparisons_equal_the_commands_json_rows(tmp_path: Path) -> None:
    rep = pp.reproduce(QUICK_ID, quick=True, seeds=SEEDS, out=tmp_path / "py")
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "pathpool",
            "reproduce",
            QUICK_ID,
            "--quick",
            "--seeds",
            str(SEEDS),
            "--json",
            "-q",
            "-o",
            str(tmp_path / "cli"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [json.loads(line) for line in cli.stdout.splitlines() if line]
    assert rows, "the command printed no rows"
    expected = pd.DataFrame(rows)[list(rep.comparisons.columns)]
    pd.testing.assert_frame_equal(rep.comparisons, expected)
    # The same files as the command's output directory, byte for byte.
    for name in ("comparisons.jsonl", "observations.json"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert rep.figures and all(f.suffix == ".svg" for f in rep.figures)
    assert 0 <= rep.within <= len(rows)
    assert QUICK_ID in str(rep)


def test_observations_are_a_frame(tmp_path: Path) -> None:
    rep = pp.reproduce("nmcc-partial-congestion", quick=True, out=tmp_path)
    obs = rep.observations
    assert list(obs.columns) == ["metric", "unit", "measured", "ci95", "runs"]
    stored = json.loads((tmp_path / "observations.json").read_text())
    assert len(obs) == len(stored)


def test_bad_ids_and_options_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown experiment"):
        pp.reproduce("no-such", out=tmp_path)
    with pytest.raises(ValueError, match="one experiment id"):
        pp.reproduce("all", out=tmp_path)
    with pytest.raises(ValueError, match="seeds must be at least 1"):
        pp.reproduce(QUICK_ID, seeds=0, out=tmp_path)
    with pytest.raises(ValueError, match="applies to convergence-linux only"):
        pp.reproduce(QUICK_ID, server_quickack=True, out=tmp_path)
    with pytest.raises(ValueError, match="settings= applies to convergence-linux only"):
        pp.reproduce(QUICK_ID, settings=["default"], out=tmp_path)
    # Checked before anything runs, so this needs neither root nor the kernel programs.
    with pytest.raises(ValueError, match=r'no E8 setting is named "rtt-9ms".*mismatch-rtt'):
        pp.reproduce("convergence-linux", settings=["rtt-9ms"], out=tmp_path)
