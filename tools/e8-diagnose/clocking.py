"""What sets off each packet a client sends, and which of them the queue drops.

Usage: clocking.py RUN_DIR (from clocking.sh). A TCP sender sends when an ACK arrives; the
trigger of a data packet is taken as the last ACK its client received before it. Each sent
packet is classed by that ACK: one of its own flow's, one of the sibling subflow's (the
other subflow of the same MPTCP connection, by the token `ss` shows), another flow's, or
none within 1 ms (a timer or the application). Packets path 1's queue dropped are matched
to their send, and each class's drop rate is printed beside its share of the packets.
"""

import bisect
import collections
import re
import sys
from pathlib import Path

from pcap import dropped, read

LAG_S = 0.001


def siblings(ss_listing: Path) -> dict[str, str]:
    """Local address:port of each MPTCP subflow → its connection's token."""
    token_of: dict[str, str] = {}
    local = ""
    for line in ss_listing.read_text().splitlines():
        fields = line.split()
        addresses = [m for f in fields if (m := re.fullmatch(r"([\d.]+)(?:%\w+)?:(\d+)", f))]
        if len(addresses) == 2:
            # `ss` writes a bound device after the address: 10.10.2.1%m2:52429.
            local = f"{addresses[0].group(1)}:{addresses[0].group(2)}"
        # token:LOCAL(id:..)/REMOTE(id:..): the peer's token is the same on every subflow of a
        # connection (the local one shows 0000 on the first subflow).
        token = re.search(r"token:\w+\(id:\d+\)/(\w+)\(", line)
        if token and local:
            token_of[local] = token.group(1)
    return token_of


def classify(run: Path, client: str, token_of: dict[str, str]) -> dict[tuple[str, int], str]:
    """(flow, seq) of each data packet the client sent → the class of its trigger."""
    segments = sorted(s for i in (1, 2) for s in read(run / f"{client}{i}.pcap"))
    acks = [s for s in segments if s.payload == 0 and s.source.startswith("10.12.")]
    ack_times = [a.when for a in acks]
    last_own: dict[str, float] = {}
    classes: dict[tuple[str, int], str] = {}
    for s in segments:
        if s.source.startswith("10.12."):
            last_own[s.destination] = s.when
            continue
        if s.payload == 0:
            continue
        i = bisect.bisect_right(ack_times, s.when) - 1
        if i < 0 or s.when - acks[i].when > LAG_S:
            kind = "none within 1 ms"
        elif acks[i].destination == s.source:
            kind = "own ACK"
        elif token_of.get(s.source) and token_of.get(acks[i].destination) == token_of[s.source]:
            kind = "sibling's ACK"
        else:
            kind = "another flow's ACK"
        classes[(s.source, s.seq)] = kind
    return classes


def main(run: Path) -> None:
    token_of = siblings(run / "mp.ss")
    offered = [s for s in read(run / "in.pcap") if s.payload > 0]
    fates = dropped(offered, [s for s in read(run / "out.pcap") if s.payload > 0])
    start, end = offered[0].when + 1, offered[-1].when - 1
    for client, prefix in (("m", "10.10."), ("s", "10.11.")):
        classes = classify(run, client, token_of)
        sent: collections.Counter[str] = collections.Counter()
        lost_of: collections.Counter[str] = collections.Counter()
        for s, was_dropped in zip(offered, fates, strict=True):
            if not s.source.startswith(prefix) or not start <= s.when <= end - 0.2:
                continue
            kind = classes.get((s.source, s.seq), "unmatched")
            sent[kind] += 1
            lost_of[kind] += was_dropped
        total, lost = sum(sent.values()), sum(lost_of.values())
        name = "MPTCP subflows" if client == "m" else "Reno flows"
        print(
            f"{name}: {total} packets at path 1's queue, {lost} dropped ({100 * lost / total:.2f}%)"
        )
        for kind, count in sent.most_common():
            print(
                f"  {kind:>20}: {100 * count / total:5.1f}% of packets, "
                f"{100 * lost_of[kind] / max(lost, 1):5.1f}% of drops, "
                f"drop rate {100 * lost_of[kind] / count:.2f}%"
            )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
