"""Reading the IPv4 TCP segments of an Ethernet pcap, for the e8-diagnose scripts."""

import struct
from pathlib import Path
from typing import NamedTuple


class Segment(NamedTuple):
    """One captured TCP segment."""

    when: float
    source: str
    destination: str
    seq: int
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
            seq = struct.unpack("!I", tcp[4:8])[0]
            segments.append(Segment(when, source, destination, seq, payload))
    return segments
