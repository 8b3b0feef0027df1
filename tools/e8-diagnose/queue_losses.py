"""Per-flow losses at one emulated queue, from captures of both its sides.

Usage: queue_losses.py IN.pcap OUT.pcap. A data packet offered to the queue and not seen
leaving it within 0.2 s (the queue holds at most about 100 ms) was dropped there. Trains are
runs of one flow's packets less than 0.3 ms apart.
"""

import collections
import struct
import sys

Packet = tuple[float, str, int]


def read(path: str) -> list[Packet]:
    """(time, source address:port, TCP sequence) of every IPv4 TCP packet with payload."""
    packets: list[Packet] = []
    with open(path, "rb") as f:
        header = f.read(24)
        nanoseconds = struct.unpack("<I", header[:4])[0] == 0xA1B23C4D
        while len(record := f.read(16)) == 16:
            seconds, fraction, captured, _ = struct.unpack("<IIII", record)
            frame = f.read(captured)
            when = seconds + fraction * (1e-9 if nanoseconds else 1e-6)
            if len(frame) < 34 or struct.unpack("!H", frame[12:14])[0] != 0x0800:
                continue
            ip = frame[14:]
            ip_header = (ip[0] & 15) * 4
            if ip[9] != 6:
                continue
            tcp = ip[ip_header:]
            payload = struct.unpack("!H", ip[2:4])[0] - ip_header - (tcp[12] >> 4) * 4
            if payload > 0:
                source = ".".join(map(str, ip[12:16]))
                port = struct.unpack("!H", tcp[0:2])[0]
                packets.append((when, f"{source}:{port}", struct.unpack("!I", tcp[4:8])[0]))
    return packets


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
    for kind, (count, dropped, trains) in sorted(totals.items()):
        print(
            f"{kind} total offered {count:.0f} dropped {dropped:.0f} "
            f"({100 * dropped / count:.2f}%), mean train {count / trains:.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
