"""Data-level freezes of E8's MPTCP connections, from the samples of stalls.sh.

Usage: stalls.py FILE... [--show SECONDS]

Per bed (one file): the freezes (a connection's MPTCP-level snd_una unchanged for 5 s or
more: the stalls `pathpool-linux e8` reports as "no byte taken"), the subflow samples
holding more than 1 MB of unsent data and their windows, the largest queue of a server
MPTCP socket, and how much the MPTCP counters rose. With --show, the state of both ends
through each freeze of at least SECONDS (docs/linux.md, "Why the coupled programs'
connections stall").
"""

import re
import sys
from dataclasses import dataclass, field

FREEZE_S = 5.0
BIG_UNSENT = 1_000_000
TOKEN = re.compile(r"token:([0-9a-f]+)")
SUBFLOW_TOKENS = re.compile(r"token:([0-9a-f]+)\(id:\d+\)/([0-9a-f]+)\(id:\d+\)")
SND_UNA = re.compile(r"snd_una:([0-9a-f]+)")
COUNTERS = (
    ("D", "MPTcpExtDuplicateData"),
    ("D", "MPTcpExtNoDSSInWindow"),
    ("D", "MPTcpExtRcvPruned"),
    ("MP", "MPTcpExtMPTCPRetrans"),
    ("MP", "MPTcpExtSubflowStale"),
    ("MP", "TcpExtTCPTimeouts"),
)
SHOWN = (
    "cwnd",
    "ssthresh",
    "rto",
    "backoff",
    "unacked",
    "lost",
    "notsent",
    "lastsnd",
    "lastack",
    "delivered",
    "skmem",
)

Socket = tuple[list[str], str]


@dataclass
class Sample:
    """One pass of stalls.sh over one bed."""

    t: float
    sections: dict[str, list[Socket]] = field(default_factory=dict)
    counters: dict[str, dict[str, int]] = field(default_factory=dict)


def value(info: str, name: str) -> str | None:
    """The value of `name:` (or `name(`) in an `ss` info line."""
    m = re.search(r"(?:^|\s)" + name + r"[:(]([^\s]+)", info)
    return m.group(1) if m else None


def number(info: str, name: str) -> int:
    v = value(info, name)
    return int(v) if v is not None and v.isdigit() else 0


def parse(path: str) -> list[Sample]:
    samples: list[Sample] = []
    lines = open(path).read().split("\n")
    section: str | None = None
    for i, line in enumerate(lines):
        if line.startswith("@ "):
            samples.append(Sample(float(line[2:]), {"C": [], "M": [], "D": [], "DM": []}))
            section = "C"
        elif line in ("@M", "@D", "@DM"):
            section = line[1:]
        elif line.startswith("@NSTAT-"):
            section = "N" + line[len("@NSTAT-") :]
            samples[-1].counters[section[1:]] = {}
        elif not samples or not line.strip() or line.startswith("\t"):
            continue
        elif section in ("C", "M", "D", "DM"):
            nxt = lines[i + 1] if i + 1 < len(lines) and lines[i + 1].startswith("\t") else ""
            samples[-1].sections[section].append((line.split(), nxt))
        elif section is not None:
            name, count = line.split()[:2]
            samples[-1].counters[section[1:]][name] = int(count)
    return samples


def freezes(samples: list[Sample]) -> list[tuple[str, float, float]]:
    """(client token, from, to) of each freeze, times in seconds since the first sample."""
    t0 = samples[0].t
    last: dict[str, tuple[str, float]] = {}
    found = []
    for s in samples:
        for _, info in s.sections["M"]:
            tok, una = TOKEN.search(info), SND_UNA.search(info)
            if not tok or not una:
                continue
            prev = last.get(tok.group(1))
            if prev is None or prev[0] != una.group(1):
                if prev is not None and s.t - prev[1] >= FREEZE_S:
                    found.append((tok.group(1), prev[1] - t0, s.t - t0))
                last[tok.group(1)] = (una.group(1), s.t)
    return found


def summary(path: str, samples: list[Sample]) -> None:
    frozen = freezes(samples)
    subflows = [info for s in samples for _, info in s.sections["C"]]
    big = [info for info in subflows if number(info, "notsent") > BIG_UNSENT]
    small_window = sum(1 for info in big if number(info, "cwnd") <= 8)
    queue = max((int(h[1]) for s in samples for h, _ in s.sections["DM"]), default=0)
    with_counters = [s.counters for s in samples if "D" in s.counters and "MP" in s.counters]
    rises = (
        {
            name: with_counters[-1][side].get(name, 0) - with_counters[0][side].get(name, 0)
            for side, name in COUNTERS
        }
        if len(with_counters) > 1
        else {}
    )
    lengths = [b - a for _, a, b in frozen]
    print(f"{path}: {len(samples)} samples over {samples[-1].t - samples[0].t:.0f} s")
    print(
        f"  freezes of {FREEZE_S:.0f} s or more: {len(frozen)}, {sum(lengths):.0f} "
        f"connection-seconds, the longest {max(lengths, default=0):.0f} s"
    )
    print(
        f"  subflow samples with more than 1 MB unsent: {len(big)} of {len(subflows)}"
        f" ({small_window} of them with a window of at most 8 packets); the largest "
        f"{max((number(i, 'notsent') for i in subflows), default=0) / 1e6:.2f} MB"
    )
    print(f"  largest server MPTCP socket queue: {queue / 1e6:.2f} MB")
    print("  counters' rise: " + ", ".join(f"{k} {v}" for k, v in rises.items()))


def show(samples: list[Sample], at_least_s: float) -> None:
    t0 = samples[0].t
    for token, a, b in freezes(samples):
        if b - a < at_least_s:
            continue
        print(f"== connection {token}: snd_una unchanged from {a:.0f} s to {b:.0f} s")
        for s in samples:
            if not a - 2 <= s.t - t0 <= b + 2:
                continue
            print(f"  t={s.t - t0:.0f}")
            peer = None
            for head, info in s.sections["C"]:
                m = SUBFLOW_TOKENS.search(info)
                if m and token in m.groups():
                    peer = m.group(1) if m.group(2) == token else m.group(2)
                    shown = " ".join(f"{k}={value(info, k)}" for k in SHOWN if value(info, k))
                    print(f"    client subflow {head[2]}: Send-Q {head[1]} {shown}")
            for head, info in s.sections["DM"]:
                if peer and f"token:{peer}" in info:
                    print(f"    server MPTCP socket: Recv-Q {head[1]} skmem {value(info, 'skmem')}")


def main(argv: list[str]) -> None:
    at_least = None
    if "--show" in argv:
        i = argv.index("--show")
        at_least = float(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    for path in argv:
        samples = parse(path)
        if not samples:
            sys.exit(f"{path}: no samples (is it a file of stalls.sh?)")
        summary(path, samples)
        if at_least is not None:
            show(samples, at_least)


if __name__ == "__main__":
    main(sys.argv[1:])
