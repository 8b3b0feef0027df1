"""The ACKs each client receives: how much each one acknowledges and how they are spaced.

Usage: acks.py RUN_DIR (from clocking.sh; reads the clients' captures m1, m2, s1, s2). A
receiver that acknowledges every second segment at once gives its sender two segments per
ACK; one that holds its ACKs back (a delayed-ACK timer, or a window it will not advance)
acknowledges more per ACK and makes its sender send in bursts. The sizes are in segments of
the flow's largest payload.
"""

import collections
import statistics
import sys
from pathlib import Path

import pcap

BINS = ((0, 0, "duplicate"), (1, 2, "1-2"), (3, 4, "3-4"), (5, 8, "5-8"), (9, 1 << 30, "9+"))


def main(run: Path) -> None:
    for client, name in (("m", "MPTCP subflows"), ("s", "Reno flows")):
        segments = [s for i in (1, 2) for s in pcap.read(run / f"{client}{i}.pcap")]
        mss: dict[str, int] = collections.defaultdict(int)
        for s in segments:
            mss[s.source] = max(mss[s.source], s.payload)
        acks: dict[str, list[pcap.Segment]] = collections.defaultdict(list)
        for s in segments:
            if s.source.startswith("10.12.") and s.payload == 0:
                acks[s.destination].append(s)
        sizes: collections.Counter[str] = collections.Counter()
        gaps_ms: list[float] = []
        acked_by_large = 0
        acked = 0
        for flow, received in acks.items():
            received.sort()
            if not mss[flow]:
                continue
            for a, b in zip(received, received[1:], strict=False):
                segments_acked = ((b.ack - a.ack) % (1 << 32)) / mss[flow]
                if segments_acked > 1 << 20:
                    continue
                rounded = round(segments_acked)
                label = next(label for low, high, label in BINS if low <= rounded <= high)
                sizes[label] += 1
                acked += rounded
                acked_by_large += rounded if rounded >= 5 else 0
                gaps_ms.append(1000 * (b.when - a.when))
        total = sum(sizes.values())
        cells = ", ".join(f"{label} {100 * sizes[label] / total:.1f}%" for *_, label in BINS)
        print(f"{name}: {total} ACKs; segments acknowledged per ACK: {cells}")
        print(f"  segments acknowledged by ACKs of 5 or more: {100 * acked_by_large / acked:.1f}%")
        deciles = statistics.quantiles(gaps_ms, n=10)
        print(
            f"  gap to the flow's previous ACK: median {deciles[4]:.2f} ms, "
            f"90th percentile {deciles[8]:.2f} ms, mean {statistics.mean(gaps_ms):.2f} ms"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
