"""Reading the IPv4 TCP segments of an Ethernet pcap, for the e8-diagnose scripts."""

import collections
import struct
from pathlib import Path
from typing import NamedTuple


class Segment(NamedTuple):
    """One captured TCP segment."""

    when: float
    source: str
    destination: str
    seq: int
    ack: int
    payload: int


def read(path: Path) -> list[Segment]:
    """Every IPv4 TCP segment of an Ethernet pcap."""
    segments: list[Segment] = []
    with path.open("rb") as f:
        header = f.read(24)
        nanoseconds = struct.unpack("<I", header[:4])[0] == 0xA1B23C4D
        while len(record := f.read(16)) == 16:
            seconds, fraction, captured, _ = struct.unpack("<IIII", record)
            frame = f.read(captured)
            when = seconds + fraction * (1e-9 if nanoseconds else 1e-6)
            if len(frame) < 54 or struct.unpack("!H", frame[12:14])[0] != 0x0800:
                continue
            ip = frame[14:]
            ip_header = (ip[0] & 15) * 4
            if ip[9] != 6:
                continue
            tcp = ip[ip_header:]
            payload = struct.unpack("!H", ip[2:4])[0] - ip_header - (tcp[12] >> 4) * 4
            ports = struct.unpack("!HH", tcp[0:4])
            source = ".".join(map(str, ip[12:16])) + f":{ports[0]}"
            destination = ".".join(map(str, ip[16:20])) + f":{ports[1]}"
            seq, ack = struct.unpack("!II", tcp[4:12])
            segments.append(Segment(when, source, destination, seq, ack, payload))
    return segments


# The longest an emulated path 1 held a packet in the runs of clocking.sh: its one-way
# propagation (50 ms) and a full 100-kB queue at 8 Mb/s (100 ms); measured 62-153 ms.
MAX_SOJOURN_S = 0.16


def dropped(offered: list[Segment], delivered: list[Segment]) -> list[bool]:
    """For each data segment offered to a queue, whether the queue dropped that copy.

    A copy counts as delivered when a copy of the same flow and sequence number left within
    MAX_SOJOURN_S after it and was not already matched to an earlier copy. Counting copies
    instead ("the second copy of a sequence number is the dropped one") charges the drop of
    an original to its retransmission, a round trip later.
    """
    left: dict[tuple[str, int], list[float]] = collections.defaultdict(list)
    for s in delivered:
        left[(s.source, s.seq)].append(s.when)
    fates = []
    for s in offered:
        times = left.get((s.source, s.seq), [])
        while times and times[0] < s.when:
            times.pop(0)
        if times and times[0] <= s.when + MAX_SOJOURN_S:
            times.pop(0)
            fates.append(False)
        else:
            fates.append(True)
    return fates
