"""`make test` builds three dependency graphs: the command with `pathpool-linux`
(scripts/wheel.sh), the extension module (maturin), and every crate's tests. Cargo compiles a
crate once per set of features it is resolved with, so a crate shared by two graphs with
different features is compiled twice, and so is everything above it: this once cost CI
minutes (the lab three times). The crate `pathpool-workspace-hack` asks for the union
(decision D350); this checks, with `cargo tree`, that every crate the graphs share is
resolved with the same features in each, so that a new dependency that breaks this is
caught here rather than as a slower CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CARGO_BIN = Path.home() / ".cargo" / "bin"

# What scripts/wheel.sh, maturin (pyproject.toml) and `make test-rust` build, with the edges
# each build follows: the tests add dev-dependencies. Build scripts' own dependencies are
# left out: they are compiled for the host apart from the rest.
GRAPHS = {
    "command": (["-p", "pathpool-cli", "-p", "pathpool-linux"], "normal"),
    "extension": (["-p", "pathpool-py"], "normal"),
    "tests": (["--workspace", "--exclude", "pathpool-py"], "normal,dev"),
}


def _features(root: Path, packages: list[str], edges: str) -> dict[str, set[str]]:
    """Each crate (name and version) of a graph, with the feature sets it is resolved with."""
    cargo = shutil.which(
        "cargo", path=os.pathsep.join([os.environ.get("PATH", ""), str(CARGO_BIN)])
    )
    if cargo is None:
        pytest.skip("needs cargo (make setup)")
    out = subprocess.run(
        [
            cargo,
            "tree",
            "--locked",
            "--offline",
            *packages,
            "-e",
            f"features,{edges}",
            "--prefix",
            "none",
            "--format",
            "{p}|{f}",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    crates: dict[str, set[str]] = {}
    for line in out.stdout.splitlines():
        if "|" not in line:
            continue  # a feature node ("serde feature \"derive\""), not a crate
        package, features = line.split("|", 1)
        name, version = package.split()[:2]
        crates.setdefault(f"{name} {version}", set()).add(features.split(" (*)")[0].strip())
    return crates


def test_the_three_builds_of_make_test_resolve_shared_crates_alike(root: Path) -> None:
    graphs = {name: _features(root, packages, edges) for name, (packages, edges) in GRAPHS.items()}
    shared = set(graphs["command"]) & set(graphs["extension"]) & set(graphs["tests"])
    # The lab and the simulator are the largest crates every graph contains.
    assert {c.split()[0] for c in shared} >= {"pathpool-lab", "pathpool-sim", "serde", "syn"}
    differing = {
        crate: {name: sorted(g[crate]) for name, g in graphs.items()}
        for crate in sorted(shared)
        if len({frozenset(g[crate]) for g in graphs.values()}) > 1
    }
    assert not differing, (
        "crates resolved with different features in the builds of `make test`, so compiled "
        f"more than once (add the union to crates/pathpool-workspace-hack): {differing}"
    )
    # Each graph resolves a crate with one set of features (else it is compiled twice there).
    for name, g in graphs.items():
        twice = {crate: sorted(f) for crate, f in g.items() if len(f) > 1}
        assert not twice, f"{name}: {twice}"
