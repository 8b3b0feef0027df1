"""The overlay testbed through the Python entry point (issue 16, defect 2), on the shipped
overlay files (item 7): every node starts, a download completes, ``down`` stops every node."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# The command installed beside the interpreter (`.venv/bin/pathpool`, the Rust binary).
PATHPOOL = Path(sys.executable).parent / "pathpool"
SIZE_BYTES = 4_000_000


def cli(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PATHPOOL), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.fixture
def content(tmp_path: Path) -> Path:
    f = tmp_path / "content.bin"
    f.write_bytes(hashlib.shake_256(b"pathpool").digest(SIZE_BYTES))
    return f


@pytest.mark.parametrize("overlay", ["diamond.toml", "diamond-lossy.toml"])
def test_the_testbed_downloads_through_the_python_entry_point(root, tmp_path, content, overlay):
    assert PATHPOOL.exists(), f"{PATHPOOL}: the package's console script"
    bed = tmp_path / "tb"
    publish = [a for p in ("p1", "p2", "p3") for a in ("--publish", f"{p}={content}=/demo/file")]
    up = cli("testbed", "up", root / "scenarios" / "overlay" / overlay, "--dir", bed, *publish)
    try:
        assert up.returncode == 0, up.stderr
        assert "8 processes serving" in up.stderr, up.stderr
        pids = [int(line.split()[0]) for line in (bed / "pids").read_text().splitlines()]
        assert len(pids) == 8 and all(running(p) for p in pids)
        # The nodes run the installed command itself (it starts copies of itself).
        cmdline = Path(f"/proc/{pids[0]}/cmdline").read_bytes().split(b"\0")
        assert cmdline[:2] == [str(PATHPOOL.resolve()).encode(), b"rv"], cmdline
        out = tmp_path / "copy.bin"
        get = cli("testbed", "get", "/demo/file", "-o", out, "--node", "s", "--dir", bed, "-q")
        assert get.returncode == 0, get.stderr
        assert out.read_bytes() == content.read_bytes()
        assert "verified chunk by chunk" in get.stderr
    finally:
        down = cli("testbed", "down", "--dir", bed)
    assert down.returncode == 0, down.stderr
    assert "8 of 8 processes stopped" in down.stderr, down.stderr
    deadline = time.monotonic() + 3
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running(p) for p in pids)


def test_a_node_that_cannot_start_fails_up_with_its_name_and_log(root, tmp_path, content):
    """A port taken by another program: `up` exits 1 naming the node and its log, and stops
    the nodes it had started."""
    import socket

    taken = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    taken.bind(("127.0.0.1", 47103))  # `right` in diamond.toml
    bed = tmp_path / "tb"
    try:
        up = cli("testbed", "up", root / "scenarios" / "overlay" / "diamond.toml", "--dir", bed)
    finally:
        taken.close()
    assert up.returncode == 1, up.stderr
    assert "node right (fn)" in up.stderr and "right.log" in up.stderr, up.stderr
    assert "Address already in use" in up.stderr, up.stderr
    assert not (bed / "pids").exists()


def test_down_names_a_node_that_had_died(root, tmp_path, content):
    bed = tmp_path / "tb"
    up = cli(
        "testbed",
        "up",
        root / "scenarios" / "overlay" / "diamond.toml",
        "--dir",
        bed,
        "--publish",
        f"p1={content}=/demo/file",
    )
    assert up.returncode == 0, up.stderr
    p1 = next(int(ln.split()[0]) for ln in (bed / "pids").read_text().splitlines() if " p1 " in ln)
    os.kill(p1, signal.SIGKILL)
    deadline = time.monotonic() + 3
    while running(p1) and time.monotonic() < deadline:
        time.sleep(0.05)
    down = cli("testbed", "down", "--dir", bed)
    assert down.returncode == 0, down.stderr
    assert "5 of 6 processes stopped" in down.stderr, down.stderr
    assert "node p1 (publish) had already exited" in down.stderr, down.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_a_netns_testbed_through_the_python_entry_point(tmp_path, content):
    """`--netns` runs each node with `ip netns exec` and the same entry point."""
    overlay = tmp_path / "ov.toml"
    overlay.write_text(
        'rendezvous = "rv"\n'
        'nodes = [{ id = "rv" }, { id = "f1" }, { id = "p1", transit = false },'
        ' { id = "s", transit = false }]\n'
        'links = [{ between = ["p1", "f1"], rate = "50Mbps", delay = "2ms" },'
        ' { between = ["f1", "s"] }, { between = ["f1", "rv"] }]\n'
    )
    bed = tmp_path / "tb"
    up = cli("testbed", "up", overlay, "--netns", "--dir", bed, "--publish", f"p1={content}=/t/c")
    try:
        assert up.returncode == 0, up.stderr
        assert "3 processes serving" in up.stderr, up.stderr
        out = tmp_path / "copy.bin"
        get = cli("testbed", "get", "/t/c", "-o", out, "--node", "s", "--dir", bed, "-q")
        assert get.returncode == 0, get.stderr
        assert out.read_bytes() == content.read_bytes()
    finally:
        down = cli("testbed", "down", "--dir", bed)
    assert down.returncode == 0 and "3 of 3 processes stopped" in down.stderr, down.stderr
    assert "network namespaces deleted" in down.stderr
