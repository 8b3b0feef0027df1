"""Whether a flow's ACKs stay in step with its back-to-back pairs, and what it costs when not.

Usage: parity.py RUN_DIR... (from clocking.sh; reads path 1's in.pcap and out.pcap and the
clients' m1.pcap and s1.pcap).

A receiver with delayed ACKs acknowledges every second segment. A sender in congestion
avoidance answers each such ACK with two back-to-back packets, which reach the bottleneck
queue together and, when both get in, leave it one after the other. Their ACK then
acknowledges the two, and the queue slot before the one that released it was the pair's own
first packet, which released nothing: the new pair finds room for two. If the receiver's
every-second-segment count is out of step with the pairs, an ACK acknowledges the second
packet of one pair and the first of the next, which left the queue apart, with another
flow's packet between them that may have released a pair of its own: the new pair more
often finds room for one. An ACK of an odd number of segments puts the count back in (or
out of) step.

Per kind of flow on path 1 (MPTCP subflows, Reno flows) it prints:
- ACKs by the number of segments they acknowledge (odd or even) and by what sent them: the
  arrival at the receiver of one of the flow's own segments within the 10 ms before
  ("own data"), or anything else ("other": a timer, or, for a subflow, the MPTCP
  connection's reading of data that came on the other path, `mptcp_cleanup_rbuf`);
- the second packets of the pairs each ACK released, by whether the two segments that ACK
  acknowledged left the queue one after the other ("compact") or apart ("split"), and how
  often the queue dropped them.
"""

import bisect
import collections
import sys
from pathlib import Path

import pcap

# The emulated path's one-way delay: a segment reached the receiver when out.pcap saw it,
# and its ACK reached the client this long after the receiver sent it.
ONE_WAY_S = 0.05
# An ACK sent within this long of one of the flow's own segments reaching the receiver was
# sent for it.
OWN_DATA_S = 0.01
# A packet the client sent within this long of an ACK was released by it.
RELEASE_S = 0.001
SEQ = 1 << 32


def kind_of(flow: str) -> str:
    """The client a flow comes from, by its source address."""
    return "MPTCP subflows" if flow.startswith("10.10.") else "Reno flows"


def main(run: Path) -> None:
    offered = [s for s in pcap.read(run / "in.pcap") if s.payload > 0]
    delivered = [s for s in pcap.read(run / "out.pcap") if s.payload > 0]
    fates: dict[tuple[str, int], list[tuple[float, bool]]] = collections.defaultdict(list)
    for s, was_dropped in zip(offered, pcap.dropped(offered, delivered), strict=True):
        fates[(s.source, s.seq)].append((s.when, was_dropped))
    arrivals: dict[str, list[float]] = collections.defaultdict(list)
    departure_of_end: dict[tuple[str, int], int] = {}
    for i, s in enumerate(delivered):
        arrivals[s.source].append(s.when)
        departure_of_end[(s.source, (s.seq + s.payload) % SEQ)] = i
    acks: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    pairs: dict[str, dict[str, list[int]]] = collections.defaultdict(
        lambda: collections.defaultdict(lambda: [0, 0])
    )
    for client in ("m1", "s1"):
        segments = pcap.read(run / f"{client}.pcap")
        mss: collections.Counter[str] = collections.Counter()
        for s in segments:
            mss[s.source] = max(mss[s.source], s.payload)
        previous_ack: dict[str, int] = {}
        # Per flow: the last ACK's time, the class of the pair it releases, packets released.
        last: dict[str, tuple[float, str, list[int]]] = {}
        for s in segments:
            if s.source.startswith("10.12.") and s.payload == 0:
                flow = s.destination
                times = arrivals.get(flow)
                before = previous_ack.get(flow)
                previous_ack[flow] = s.ack
                if not times or not mss[flow] or before is None:
                    continue
                acked = round(((s.ack - before) % SEQ) / mss[flow])
                if acked == 0 or acked > 1 << 20:
                    continue
                i = bisect.bisect_right(times, s.when - ONE_WAY_S) - 1
                own = i >= 0 and s.when - ONE_WAY_S - times[i] <= OWN_DATA_S
                parity = "odd" if acked % 2 else "even"
                acks[kind_of(flow)][f"{parity}, {'own data' if own else 'other'}"] += 1
                last[flow] = (s.when, pair_class(delivered, departure_of_end, flow, s.ack), [0])
            elif s.payload > 0 and s.destination.startswith("10.12."):
                released = last.get(s.source)
                if released is None or s.when - released[0] > RELEASE_S:
                    continue
                released[2][0] += 1
                if released[2][0] != 2:
                    continue
                copies = [d for t, d in fates.get((s.source, s.seq), []) if 0 <= t - s.when < 0.005]
                if copies:
                    cell = pairs[kind_of(s.source)][released[1]]
                    cell[0] += 1
                    cell[1] += copies[0]
    print(run)
    for kind in sorted(acks):
        counts = acks[kind]
        total = sum(counts.values())
        cells = ", ".join(f"{name} {100 * n / total:.1f}%" for name, n in sorted(counts.items()))
        print(f"  {kind}: {total} ACKs: {cells}")
        released_pairs = pairs[kind]
        in_all = sum(n for n, _ in released_pairs.values())
        for name, (n, dropped) in sorted(released_pairs.items()):
            print(
                f"    pairs released by an ACK of {name:>8} departures: {n:5d} "
                f"({100 * n / in_all:4.1f}%), second packet dropped {100 * dropped / n:5.2f}%"
            )


def pair_class(
    delivered: list[pcap.Segment], departure_of_end: dict[tuple[str, int], int], flow: str, ack: int
) -> str:
    """Whether the last two segments an ACK acknowledged left the queue one after the other."""
    i = departure_of_end.get((flow, ack))
    if i is None:
        return "unseen"
    for j in range(i - 1, max(i - 64, -1), -1):
        if delivered[j].source == flow:
            return "compact" if j == i - 1 else "split"
    return "split"


if __name__ == "__main__":
    for directory in sys.argv[1:]:
        main(Path(directory))
