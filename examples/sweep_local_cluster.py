"""A sweep on a Dask cluster of this machine's cores, checked against the same sweep on local
threads (docs/sweeps.md, "On a cluster").

    python examples/sweep_local_cluster.py [OUT_DIR]

The same code runs on a real cluster: give ``cluster="tcp://scheduler:8786"`` (the address
``dask scheduler`` prints) instead of a ``LocalCluster``'s address.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import pathpool as pp

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "dumbbell.toml"
GRID: dict[str, list[Any]] = {
    "links.bottleneck.rate": ["10Mbps", "20Mbps"],
    "tcp.delayed_ack": [False, True],
}
FIXED = {"duration": "20s", "measure.start": "5s"}


def main(out: Path) -> int:
    # Imported here: dask is an optional dependency (pip install 'pathpool[dask]').
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        print(f"cluster at {cluster.scheduler_address}")
        df = pp.sweep(
            SCENARIO, GRID, reps=3, set=FIXED, out=out / "dask", cluster=cluster.scheduler_address
        )
    pp.sweep(SCENARIO, GRID, reps=3, set=FIXED, out=out / "local")
    table = df.groupby(["links.bottleneck.rate", "tcp.delayed_ack", "id"])["throughput_bps"]
    print((table.agg(["mean", "std"]) / 1e6).round(3).to_string())
    same = (out / "dask" / "sweep.csv").read_bytes() == (out / "local" / "sweep.csv").read_bytes()
    print(f"the cluster's table is byte-identical to the local threads': {same}")
    return 0 if same else 1


# The guard is needed: a LocalCluster starts worker processes, which import this file; without
# it each worker would start a cluster of its own.
if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit(main(Path(sys.argv[1])))
    with tempfile.TemporaryDirectory(prefix="pathpool-dask-") as tmp:
        sys.exit(main(Path(tmp)))
