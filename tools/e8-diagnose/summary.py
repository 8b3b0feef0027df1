"""One line per run directory of run.sh: share, loss recoveries, timeouts, queue losses."""

import json
import subprocess
import sys
from pathlib import Path


def counters(path: Path) -> dict[str, int]:
    """An `nstat -as` listing as name → value."""
    values = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1].isdigit():
            values[fields[0]] = int(fields[1])
    return values


def summarise(run: Path) -> None:
    result = json.loads((run / "run.json").read_text())
    mp, sp = sum(result["mp_bytes"][30:]), sum(result["sp_bytes"][30:])
    clients = {name: counters(run / f"nstat.{name}") for name in ("mp", "sp")}
    recoveries = {
        name: 1000 * c.get("TcpExtTCPSackRecovery", 0) / c["TcpOutSegs"]
        for name, c in clients.items()
    }
    timeouts = {name: c.get("TcpExtTCPTimeouts", 0) for name, c in clients.items()}
    dsacks = {name: c.get("TcpExtTCPDSACKRecv", 0) for name, c in clients.items()}
    print(
        f"{run}: share (s30-) {100 * mp / (mp + sp):.1f}%  recoveries/1000 segs "
        f"mp {recoveries['mp']:.2f} sp {recoveries['sp']:.2f} "
        f"(x{recoveries['mp'] / recoveries['sp']:.2f})  timeouts {timeouts}  dsack {dsacks}"
    )
    script = Path(__file__).with_name("queue_losses.py")
    losses = subprocess.run(
        [sys.executable, str(script), str(run / "in.pcap"), str(run / "out.pcap")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in losses.strip().splitlines()[-2:]:
        print("   ", line)


if __name__ == "__main__":
    for directory in sys.argv[1:]:
        summarise(Path(directory))
