"""Per-flow losses at one emulated queue, from captures of both its sides.

Usage: queue_losses.py IN.pcap OUT.pcap. A data packet offered to the queue and not seen
leaving it within 0.2 s (the queue holds at most about 100 ms) was dropped there. Trains are
runs of one flow's packets less than 0.3 ms apart.
"""

import collections
import sys
from pathlib import Path

import pcap

Packet = tuple[float, str, int]


def read(path: str) -> list[Packet]:
    """(time, source address:port, TCP sequence) of every IPv4 TCP packet with payload."""
    return [(s.when, s.source, s.seq) for s in pcap.read(Path(path)) if s.payload > 0]


def main(offered_path: str, delivered_path: str) -> None:
    offered_all, delivered_all = read(offered_path), read(delivered_path)
    start = max(offered_all[0][0], delivered_all[0][0]) + 1
    end = min(offered_all[-1][0], delivered_all[-1][0]) - 1
    delivered = collections.Counter((flow, seq) for _, flow, seq in delivered_all)
    offered: dict[str, list[tuple[float, int]]] = collections.defaultdict(list)
    for when, flow, seq in offered_all:
        if start <= when <= end - 0.2:
            offered[flow].append((when, seq))
    totals: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0, 0])
    for flow, packets in sorted(offered.items()):
        seen: collections.Counter[int] = collections.Counter()
        dropped = 0
        for _, seq in packets:
            seen[seq] += 1
            dropped += seen[seq] > delivered[(flow, seq)]
        gaps = [b[0] - a[0] for a, b in zip(packets, packets[1:], strict=False)]
        trains = 1 + sum(1 for gap in gaps if gap >= 0.0003)
        kind = "MP" if flow.startswith("10.10.") else "SP"
        for i, value in enumerate((len(packets), dropped, trains)):
            totals[kind][i] += value
        print(
            f"{kind} {flow:>22} offered {len(packets):6d} dropped {dropped:4d} "
            f"({100 * dropped / len(packets):4.2f}%) mean train {len(packets) / trains:4.2f} pkts"
        )
    for kind, (count, lost, train_count) in sorted(totals.items()):
        print(
            f"{kind} total offered {count:.0f} dropped {lost:.0f} "
            f"({100 * lost / count:.2f}%), mean train {count / train_count:.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
