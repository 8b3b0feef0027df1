"""Per-flow losses at one emulated queue, from captures of both its sides.

Usage: queue_losses.py IN.pcap OUT.pcap. Which copies the queue dropped: `pcap.dropped`. Trains are
runs of one flow's packets less than 0.3 ms apart.
"""

import collections
import sys
from pathlib import Path

import pcap


def read(path: str) -> list[pcap.Segment]:
    """Every IPv4 TCP packet with payload."""
    return [s for s in pcap.read(Path(path)) if s.payload > 0]


def main(offered_path: str, delivered_path: str) -> None:
    offered_all, delivered_all = read(offered_path), read(delivered_path)
    start = max(offered_all[0].when, delivered_all[0].when) + 1
    end = min(offered_all[-1].when, delivered_all[-1].when) - 1
    offered: dict[str, list[tuple[float, bool]]] = collections.defaultdict(list)
    for s, was_dropped in zip(offered_all, pcap.dropped(offered_all, delivered_all), strict=True):
        if start <= s.when <= end - 0.2:
            offered[s.source].append((s.when, was_dropped))
    totals: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0, 0])
    for flow, packets in sorted(offered.items()):
        dropped = sum(was for _, was in packets)
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
