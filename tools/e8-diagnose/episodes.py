"""Overflow episodes at path 1's queue: who loses how much, how fast each flow reacts, and
how bunched each flow's arrivals are on the queue's own time scale.

Usage: episodes.py RUN_DIR (from clocking.sh; reads in.pcap and out.pcap, both sides of
path 1's emulator). Which copies the queue dropped: `pcap.dropped`.
Drops less than EPISODE_GAP_S apart form one overflow episode.

Per flow kind (MPTCP subflows, Reno flows) it prints:
- episodes a flow was hit in, and packets it lost per hit;
- its packets offered during the episodes it was hit in, against its rate before them: a
  flow that keeps sending at its full rate for longer loses more;
- reaction: from a flow's first drop of an episode to the retransmission of that packet,
  and the new packets it offered in between;
- its packets' rate at the queue;
- drop rates in the episodes by an arrival's place: the first since a departure freed
  room, or the second of its flow's back-to-back pair;
- arrival bunching: for windows of 1.5 ms (one packet's service at 8 Mb/s) and up, the
  variance-to-mean ratio of each flow's arrivals per window (1 for a Poisson stream,
  below 1 for a paced one, above for bunched arrivals).
"""

import bisect
import collections
import statistics
import sys
from pathlib import Path

import pcap

EPISODE_GAP_S = 0.3
# The emulated path's one-way delay after its queue (half of clocking.sh's 100 ms): a
# packet left the queue this long before out.pcap saw it.
ONE_WAY_S = 0.05
PAIR_GAP_S = 20e-6
WINDOWS_S = (0.0015, 0.003, 0.006, 0.012, 0.05)


def kind_of(flow: str) -> str:
    """The client a flow comes from, by its source address."""
    return "MPTCP subflows" if flow.startswith("10.10.") else "Reno flows"


def print_positions(
    offered: list[pcap.Segment],
    delivered: list[pcap.Segment],
    episodes: list[list[pcap.Segment]],
    window: tuple[float, float],
) -> None:
    """Drop rates in the episodes by an arrival's place: the first since the queue last
    sent a packet (room was just freed), the second of its flow's back-to-back pair (less
    than PAIR_GAP_S after the flow's previous packet), or another."""
    departures = sorted(s.when - ONE_WAY_S for s in delivered)
    counts: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    previous: pcap.Segment | None = None
    for s, was_dropped in zip(offered, pcap.dropped(offered, delivered), strict=True):
        before = previous
        previous = s
        if before is None or not window[0] <= s.when <= window[1]:
            continue
        if not any(e[0].when - 0.005 <= s.when <= e[-1].when + 0.005 for e in episodes):
            continue
        i = bisect.bisect_right(departures, s.when) - 1
        if i >= 0 and departures[i] > before.when:
            place = "first since a departure"
        elif before.source == s.source and s.when - before.when < PAIR_GAP_S:
            place = "second of a pair"
        else:
            place = "other"
        cell = counts[(kind_of(s.source), place)]
        cell[0] += 1
        cell[1] += was_dropped
    print("\ndrops in the episodes by an arrival's place:")
    for (kind, place), (n, lost) in sorted(counts.items()):
        print(f"  {kind:>14}, {place:>24}: {n:5d} arrivals, {100 * lost / n:5.1f}% dropped")


def main(run: Path) -> None:
    offered = [s for s in pcap.read(run / "in.pcap") if s.payload > 0]
    delivered = [s for s in pcap.read(run / "out.pcap") if s.payload > 0]
    start, end = offered[0].when + 1, offered[-1].when - 1
    drops: list[pcap.Segment] = []
    per_flow: dict[str, list[pcap.Segment]] = collections.defaultdict(list)
    for s, was_dropped in zip(offered, pcap.dropped(offered, delivered), strict=True):
        if start <= s.when <= end - 0.2:
            per_flow[s.source].append(s)
            if was_dropped:
                drops.append(s)
    episodes: list[list[pcap.Segment]] = []
    for d in drops:
        if episodes and d.when - episodes[-1][-1].when < EPISODE_GAP_S:
            episodes[-1].append(d)
        else:
            episodes.append([d])
    span = end - 0.2 - start
    print(f"{len(drops)} drops in {len(episodes)} episodes over {span:.1f} s")
    lengths = [1000 * (e[-1].when - e[0].when) for e in episodes]
    print(f"episode length: median {statistics.median(lengths):.0f} ms, max {max(lengths):.0f}")

    rows: dict[str, dict[str, list[float]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    for episode in episodes:
        first, last = episode[0].when, episode[-1].when
        lost = collections.Counter(d.source for d in episode)
        for flow, packets in per_flow.items():
            row = rows[kind_of(flow)]
            row["episodes"].append(1.0)
            if not lost[flow]:
                continue
            row["hits"].append(1.0)
            row["lost per hit"].append(lost[flow])
            before = sum(1 for p in packets if first - 1.0 <= p.when < first)
            during = sum(1 for p in packets if first <= p.when <= last)
            row["rate before (pkt/s)"].append(before)
            row["offered during hit episode"].append(during)
            row["offered during / rate x length"].append(during / max(before * (last - first), 1))
            own_first = next(d for d in episode if d.source == flow)
            retransmit = next(
                (p for p in packets if p.when > own_first.when and p.seq == own_first.seq), None
            )
            if retransmit is None:
                continue
            row["reaction (ms)"].append(1000 * (retransmit.when - own_first.when))
            highest = max(p.seq for p in packets if p.when <= own_first.when)
            row["new packets before retransmission"].append(
                sum(
                    1
                    for p in packets
                    if own_first.when < p.when < retransmit.when and p.seq > highest
                )
            )
    for kind, row in sorted(rows.items()):
        print(f"\n{kind}:")
        print(
            f"  hit in {100 * len(row['hits']) / len(row['episodes']):.0f}% of "
            "(flow, episode) pairs"
        )
        for name, values in row.items():
            if name in ("episodes", "hits") or not values:
                continue
            quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
            print(
                f"  {name:>34}: mean {statistics.mean(values):7.2f}  "
                f"median {quartiles[1]:7.2f}  IQR {quartiles[0]:.2f}-{quartiles[2]:.2f}  "
                f"(n={len(values)})"
            )
    print("\nper-flow rate at path 1's queue (packets offered per second):")
    rates = {
        kind: statistics.mean(len(p) / span for f, p in per_flow.items() if kind_of(f) == kind)
        for kind in sorted({kind_of(f) for f in per_flow})
    }
    print("  " + ", ".join(f"{kind} {rate:.1f}" for kind, rate in rates.items()))
    print_positions(offered, delivered, episodes, (start, end - 0.2))
    print("\narrival bunching (variance/mean of a flow's arrivals per window):")
    for window in WINDOWS_S:
        ratios: dict[str, list[float]] = collections.defaultdict(list)
        for flow, packets in per_flow.items():
            counts = collections.Counter(int((p.when - start) / window) for p in packets)
            slots = [counts.get(i, 0) for i in range(int(span / window))]
            mean = statistics.mean(slots)
            if mean > 0:
                ratios[kind_of(flow)].append(statistics.pvariance(slots) / mean)
        cells = "  ".join(
            f"{kind} {statistics.mean(values):.2f}" for kind, values in sorted(ratios.items())
        )
        print(f"  {1000 * window:5.1f} ms: {cells}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
