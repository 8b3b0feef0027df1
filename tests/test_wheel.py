"""The wheel (issue 19, item 7): `scripts/wheel.sh` (what `make wheel` runs) builds it with
maturin; installed into a fresh virtualenv, with no Rust on PATH, its `pathpool` command runs
a scenario and plots it, and `import pathpool` imports the installed package.

After `make setup` the Rust builds are current, so building the wheel here only packs them
(decision D227). The fresh virtualenv takes the wheel's dependencies (numpy, pandas,
matplotlib, pyarrow) from this environment's site-packages through a `.pth` line, so the test
needs no network; pathpool itself comes from the wheel only (asserted).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

CARGO_BIN = Path.home() / ".cargo" / "bin"


def _build_path() -> str:
    """PATH for building: this one, with rustup's directory in case it lacks it."""
    return os.pathsep.join([os.environ.get("PATH", ""), str(CARGO_BIN)])


def _path_without_rust(venv: Path) -> str:
    """The fresh venv's scripts, then PATH without Rust's and this environment's directories."""
    ours = Path(sys.executable).parent.resolve()
    kept = [
        p
        for p in os.environ.get("PATH", "").split(os.pathsep)
        if p and ".cargo" not in Path(p).parts and Path(p).resolve() != ours
    ]
    return os.pathsep.join([str(venv / "bin"), *kept])


def test_the_wheel_installs_and_runs_without_rust(root, tmp_path):
    maturin = Path(sys.executable).parent / "maturin"
    if not maturin.exists() or shutil.which("cargo", path=_build_path()) is None:
        pytest.skip("building the wheel needs maturin in this venv and cargo (make setup)")
    dist = tmp_path / "dist"
    build_env = {**os.environ, "PATH": _build_path(), "VENV": str(Path(sys.prefix))}
    r = subprocess.run(
        [str(root / "scripts" / "wheel.sh"), str(dist)],
        capture_output=True,
        text=True,
        env=build_env,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    (wheel,) = dist.glob("pathpool-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".data/scripts/pathpool") for n in names), names
    assert not any(n.endswith("entry_points.txt") for n in names), "the command is the binary"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(py), "install", "-q"]
    subprocess.run([*install, "--no-deps", "--no-index", str(wheel)], check=True)
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (Path(site) / "_pathpool_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PATHPOOL_PYTHON", "PYTHONPATH", "PYTHONHOME")
    }
    env["PATH"] = _path_without_rust(venv)
    for tool in ("cargo", "rustc"):
        assert shutil.which(tool, path=env["PATH"]) is None, f"{tool} is on the test's PATH"

    def run(*args: str | Path, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, check=False
        )

    pathpool = venv / "bin" / "pathpool"
    assert pathpool.read_bytes()[:4] == b"\x7fELF", "the installed command is the binary"
    out = tmp_path / "res"
    r = run(pathpool, "run", "scenarios/dumbbell.toml", "-o", out, cwd=root)
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert {f["id"] for f in summary["flows"]} == {"rtt20", "rtt40", "rtt80", "rtt160"}
    assert (out / "flows.parquet").stat().st_size > 0

    r = run(py, "-c", "import pathpool; print(pathpool.__file__)")
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).resolve().is_relative_to(venv.resolve()), r.stdout

    # The binary hands `plot` to the interpreter beside it, which imports the package.
    r = run(pathpool, "plot", out, "-o", tmp_path / "t.png")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # `python -m pathpool` becomes the binary.
    r = run(py, "-m", "pathpool", "check", root / "scenarios" / "dumbbell.toml")
    assert r.returncode == 0, r.stderr
