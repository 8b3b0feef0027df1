"""Part 3: the download of part 2 over the real UDP overlay on this machine's loopback.

The overlay file is written from the simulated scenario (scenarios/demo/mmtp-failover.toml):
its hosts become endpoints, its routers forwarding nodes, its links emulated links with the
same rate, delay and queue, plus a rendezvous beside the subscriber's router, on free
loopback ports. `pathpool testbed up` starts every node as a process, `pathpool testbed get`
downloads with a progress log, and the demo stops the failing publisher's process when the
download has run as long as the simulated one did before its failure (docs/overlay.md).
Skipped, with the reason, where the nodes cannot run (no loopback, ports, a build without
the command line).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

import pathpool as pp
from demo.common import OUT, Section, mbps, pct
from demo.mmtp import SCENARIO, Failover

# The overlay's datagrams: `pathpool publish` cuts contents into 1119-byte chunks so that a
# datagram is 1200 bytes (its --chunk-bytes default; docs/overlay.md, docs/wire.md).
CHUNK_BYTES = 1119
DATAGRAM_BYTES = 1200
NAME = "/demo/failover"
GET_TIMEOUT_S = 120.0
PATHPOOL = Path(sys.executable).parent / "pathpool"


def free_ports(n: int) -> list[int]:
    """`n` UDP ports on 127.0.0.1 that nothing holds now (the kernel's choice)."""
    held = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        held.append(s)
    ports = [s.getsockname()[1] for s in held]
    for s in held:
        s.close()
    return ports


def overlay_text(spec: dict[str, Any], subscriber: str) -> str:
    """The overlay file for the simulated scenario `spec` (its `to_dict()`)."""
    hosts = list(spec["nodes"]["hosts"])
    routers = list(spec["nodes"]["routers"])
    gateway = next(
        (a if b == subscriber else b)
        for a, b in (link["between"] for link in spec["links"])
        if subscriber in (a, b)
    )
    names = ["rv", *routers, *hosts]
    ports = free_ports(len(names))
    out = io.StringIO()
    out.write(f"# Written by the pathpool demo from {SCENARIO.name}.\n")
    out.write('rendezvous = "rv"\ntm = { k = 1 }   # one path per publisher, as simulated\n')
    for name, port in zip(names, ports):
        out.write(f'\n[[nodes]]\nid = "{name}"\naddr = "127.0.0.1:{port}"\n')
        if name in hosts:
            out.write("transit = false\n")
    out.write(f'\n[[links]]\nbetween = ["rv", "{gateway}"]\n')
    for link in spec["links"]:
        a, b = link["between"]
        out.write(f'\n[[links]]\nbetween = ["{a}", "{b}"]\n')
        out.write(f'rate = "{link["rate"]}"\ndelay = "{link["delay"]}"\n')
        queue = link.get("queue") or {}
        size = str(queue.get("size", ""))
        if queue.get("type") == "droptail" and size.endswith("B"):
            out.write(f'queue = "{size}"\n')
    return out.getvalue()


def cli(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The package's `pathpool` command (the binary beside this interpreter)."""
    return subprocess.run(
        [str(PATHPOOL), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def loopback_problem() -> str | None:
    """Why the overlay cannot run here, or None."""
    if not PATHPOOL.exists():
        return f"{PATHPOOL} not found (the package's command line)"
    try:
        free_ports(1)
    except OSError as e:
        return f"no UDP socket on 127.0.0.1: {e}"
    return None


def pid_of(bed: Path, node: str) -> int:
    """The pid `testbed up` recorded for `node` (`DIR/pids`: PID NODE ROLE START)."""
    for line in (bed / "pids").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1] == node:
            return int(fields[0])
    raise LookupError(f"{bed / 'pids'}: no node {node}")


def elapsed_in(log: Path) -> float:
    """The download's elapsed time in its progress log's last row (0 before any)."""
    try:
        rows = log.read_text().splitlines()[1:]
    except FileNotFoundError:
        return 0.0
    last = rows[-1].split(",") if rows else []
    return float(last[1]) if len(last) == 4 else 0.0


def download(bed: Path, fail: Failover, sec: Section) -> tuple[str, float | None, Path]:
    """Runs `testbed get`, stops `fail.failed`'s process at `fail.fail_s`, and returns the
    get's summary line, the elapsed time of the stop and the progress log."""
    log = bed / "progress.csv"
    copy = bed / "copy.bin"
    cmd = [str(PATHPOOL), "testbed", "get", NAME, "-o", str(copy), "--node", "s"]
    cmd += ["--dir", str(bed), "-q", "--cc", "uncoupled", "--progress-log", str(log)]
    get = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    stopped_at = None
    deadline = time.monotonic() + GET_TIMEOUT_S
    while get.poll() is None and time.monotonic() < deadline:
        if stopped_at is None and elapsed_in(log) >= fail.fail_s:
            stopped_at = elapsed_in(log)
            os.kill(pid_of(bed, fail.failed), signal.SIGTERM)
        time.sleep(0.02)
    if get.poll() is None:
        get.kill()
    _, stderr = get.communicate()
    if get.returncode != 0:
        raise RuntimeError(f"testbed get failed (exit {get.returncode}): {stderr.strip()}")
    if copy.exists():
        copy.unlink()  # `get` verified it (BLAKE3 against the signed root); not needed here
    return stderr.strip(), stopped_at, log


def per_source_bps(log: Path) -> pd.DataFrame:
    """Goodput per source over time from a `--progress-log` (bytes so far, every 100 ms)."""
    rows = pd.read_csv(log)
    got = rows.pivot_table(index="elapsed_s", columns="source", values="bytes", aggfunc="max")
    got = got.ffill().fillna(0.0)
    dt = got.index.to_series().diff()
    return (8 * got.diff()).div(dt, axis=0).iloc[1:]


def section(fail: Failover) -> Section:
    sec = Section("3. The same download over the real UDP overlay, on loopback")
    say = sec.say
    say(f"== {sec.title} ==\n")
    problem = loopback_problem()
    if problem:
        say(f"skipped: {problem}.\n")
        sec.highlights.append(f"overlay: skipped ({problem})")
        return sec
    bed = OUT / "overlay"
    if (bed / "pids").exists():  # a testbed an interrupted demo left running
        cli("testbed", "down", "--dir", bed)
    # A fresh directory: new keys and no state of an earlier run (with the keys an earlier
    # `up` left there, one publisher was sent nothing; not investigated further).
    shutil.rmtree(bed, ignore_errors=True)
    bed.mkdir(parents=True)
    spec = pp.load(SCENARIO).to_dict()
    overlay = OUT / "overlay.toml"  # `testbed up` copies it into the testbed directory
    overlay.write_text(overlay_text(spec, "s"))
    content = OUT / "overlay-content.bin"
    content.write_bytes(hashlib.shake_256(b"pathpool demo").digest(int(fail.size_bytes)))
    sources = sorted(fail.path_rate_bps)
    publish = [a for p in sources for a in ("--publish", f"{p}={content}={NAME}")]
    say(f"{overlay.relative_to(OUT.parent.parent)}: the scenario's nodes and links as UDP")
    say("processes on 127.0.0.1, each node emulating its outgoing links' rate, delay and queue;")
    say(
        f"the same {fail.size_bytes / 1e6:.0f} MB from {', '.join(sources)}, whose process"
        f" {fail.failed} is stopped {fail.fail_s:g} s into the download."
    )
    # Each node is a `python -m pathpool` process; on a busy machine they start slowly.
    up = cli("testbed", "up", overlay, "--dir", bed, "--start-timeout", "60s", *publish, timeout=90)
    if up.returncode != 0:
        say(f"skipped: `pathpool testbed up` failed:\n{up.stderr.strip()}\n")
        sec.highlights.append("overlay: skipped (`pathpool testbed up` failed; see above)")
        content.unlink()
        return sec
    failure: Exception | None = None
    try:
        summary, stopped_at, log = download(bed, fail, sec)
    except (RuntimeError, LookupError, OSError) as e:
        failure = e
    finally:  # Ctrl-C included: stop every node the testbed started
        down = cli("testbed", "down", "--dir", bed)
        content.unlink()
    if failure is not None:
        say(f"the download did not complete: {failure}")
        say("what each node said last (its log in results/demo/overlay/):")
        for node_log in sorted(bed.glob("*.log")):
            last = node_log.read_text(errors="replace").strip().splitlines()[-1:] or ["(empty)"]
            say(f"  {node_log.stem}: {last[0]}")
        say()
        sec.highlights.append("overlay: the download did not complete (see above)")
        return sec
    say("pathpool testbed get:")
    for line in summary.splitlines() or ["(no summary)"]:
        say(f"  {line}")
    if stopped_at is None:
        say(f"(the download ended before {fail.fail_s:g} s: {fail.failed} was never stopped)")
    else:
        say(f"{fail.failed}'s process stopped (SIGTERM) at {stopped_at:.2f} s into the download.")
    if down.returncode != 0:
        say(f"testbed down: {down.stderr.strip()}")
    report(sec, fail, summary, stopped_at, per_source_bps(log))
    return sec


def report(
    sec: Section,
    fail: Failover,
    summary: str,
    stopped_at: float | None,
    rates: pd.DataFrame,
) -> None:
    say = sec.say
    frac = CHUNK_BYTES / DATAGRAM_BYTES
    capacity = {s: frac * r for s, r in fail.path_rate_bps.items()}
    m = re.search(r"in ([0-9.]+) s, ([0-9.]+) Mb/s", summary)
    t_fail = stopped_at if stopped_at is not None else fail.fail_s
    idx = rates.index
    end = float(m.group(1)) if m else float(idx.max())
    before = rates[(idx > t_fail - 2.0) & (idx <= t_fail)].mean()
    after = rates[(idx > t_fail + 1.0) & (idx <= end - 0.2)].mean()
    say(
        f"\n{'source':8} {'capacity':>11} {'2 s before':>22} {'from 1 s after':>22}"
        "   simulated: before / after"
    )
    for src, cap in capacity.items():
        exp_after = 0.0 if src == fail.failed else cap
        b, a = before.get(src, 0.0), after.get(src, 0.0)
        say(
            f"{src:8} {mbps(cap):>11} {mbps(b):>12} ({pct(b / cap):>6}) {mbps(a):>12}"
            f" (exp. {exp_after / 1e6:.1f})   {mbps(fail.before[src])} / {mbps(fail.after[src])}"
        )
    after_possible = sum(c for s, c in capacity.items() if s != fail.failed)
    sec.highlights.append(
        f"failover over the UDP overlay on loopback: {mbps(after.sum())} after {fail.failed}"
        f" stopped ({mbps(after_possible)} possible,\n  simulated {mbps(fail.after.sum())})"
        + (f"; the whole download {float(m.group(2)):.1f} Mb/s in {end:.2f} s" if m else "")
    )
    if m:
        whole = float(m.group(2)) * 1e6
        say(
            f"\nwhole download: {mbps(whole)} over {end:.2f} s (simulated: "
            f"{mbps(8 * fail.size_bytes / fail.completion_s)} over {fail.completion_s:.2f} s)."
        )
    load_1min = os.getloadavg()[0]
    say(
        f"A datagram carries {CHUNK_BYTES} bytes of content in {DATAGRAM_BYTES} ({pct(frac)}),"
        f" so each capacity is {pct(frac)} of\nits link's rate. The overlay runs below the"
        " simulation when the machine is busy: its six\nprocesses share the cores with"
        " whatever else runs, and each emulated link runs on the wall\nclock of a thread"
        f" that may wait for a core (docs/overlay.md). Load average now: {load_1min:.1f}"
        f" on\n{os.cpu_count()} cores.\n"
    )
    fig, ax = plt.subplots(figsize=(7.5, 4))
    smooth = rates.rolling(5, min_periods=1).mean() / 1e6
    for column in smooth:
        ax.plot(smooth.index, smooth[column], label=str(column))
    ax.plot(smooth.index, smooth.sum(axis=1), "k", lw=1, label="total")
    if stopped_at is not None:
        ax.axvline(stopped_at, color="r", ls="--", lw=1, label=f"{fail.failed} stopped")
    ax.set_xlabel("time since the subscription (s)")
    ax.set_ylabel("goodput per source (Mb/s, 0.5 s mean)")
    ax.set_title("mmTP download over the UDP overlay on loopback")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    sec.save(fig, "mmtp-failover-overlay")
    plt.close(fig)
    sec.say()
