"""mmTP over NDN against PTP on the PTP paper's tree and diamond (issue 22; thesis §6.3;
``docs/ndn.md``, *mmTP over NDN against PTP*).

    python examples/ndn_mmtp_vs_ptp.py [SEEDS]

For each topology (case I of ``scenarios/reproductions/ptp-tree.toml`` and
``ptp-diamond.toml``, with a node 0 added behind node 1 by a 20 Mb/s, 5 ms link) and each
transport, consumer ``a`` at node 0 fetches 20,000 Data of ``/c/A``; at 40 s consumer ``b``,
also at node 0, fetches the same content. Node 1 has a content store that holds it all, and
lies between the branching routers and the receivers, where the thesis says route labels
defeat caching. mmTP over NDN runs with
``label = "branching-postfix"`` and the equal-weight strategy (its subflow 0 needs one that
spreads); PTP as the reproduction runs it. Printed per run: each consumer's goodput, the
bytes of route information (PTP's tags, mmTP's labels) sent on all links per Data that
reached a consumer, node 1's store hits, and the Data the producers made.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pandas as pd

import pathpool as pp

ROOT = Path(__file__).resolve().parent.parent
PACKETS = 20_000
SECOND_START_S = 40


def scenario(topology: str, transport: str) -> pp.Scenario:
    """Case I of the reproduction's scenario with node 0 behind node 1, two consumers of one
    content there and a store at node 1."""
    base = pp.load(ROOT / "scenarios" / "reproductions" / f"ptp-{topology}.toml").to_dict()
    d: dict[str, Any] = copy.deepcopy(base)
    d["duration"] = "90s"
    d["measure"] = {"start": "0s", "interval": "1s"}
    d["nodes"]["routers"].insert(0, "0")
    d["links"].append(dict(d["links"][0], id="l01", between=["0", "1"]))
    ndn = d["ndn"]
    if ndn.get("routing") == "explicit":
        ndn["fib"].append({"node": "0", "prefix": "/c", "next": ["1"]})
    ndn["cs"] = [{"node": "1", "capacity": 2 * PACKETS}]
    if transport == "mmtp":
        ndn["label"] = "branching-postfix"
        ndn["strategy"] = "equal-weight"
    first = d["flows"][0]
    first.update({"id": "a", "to": "0", "size": f"{PACKETS}pkts", "transport": transport})
    second = dict(first, id="b", start=f"{SECOND_START_S}s")
    d["flows"] = [first, second]
    return pp.Scenario.from_dict(d, source=f"ptp-{topology} ({transport})")


def measure(topology: str, transport: str, seed: int) -> dict[str, Any]:
    r = scenario(topology, transport).run(seed=seed, progress=False)
    flows = r.flows.set_index("id")
    nodes = r.ndn_nodes.set_index("node")
    payload = 1024
    delivered = int(flows["bytes_delivered"].sum()) // payload
    producers = [n for n in nodes.index if nodes.loc[n, "produced"] > 0]
    return {
        "topology": topology,
        "transport": transport,
        "seed": seed,
        "a_Mbps": flows.loc["a", "throughput_bps"] / 1e6,
        "b_Mbps": flows.loc["b", "throughput_bps"] / 1e6,
        "b_completed": bool(flows.loc["b", "completed"]),
        "route_bytes_per_data": nodes["route_info_bytes"].sum() / delivered,
        "node1_cs_hits": int(nodes.loc["1", "cs_hits"]),
        "produced": int(nodes.loc[producers, "produced"].sum()),
    }


def main(seeds: int) -> int:
    rows = [
        measure(topology, transport, seed)
        for topology in ("tree", "diamond")
        for transport in ("ptp", "mmtp")
        for seed in range(1, seeds + 1)
    ]
    df = pd.DataFrame(rows)
    table = df.groupby(["topology", "transport"], sort=False).mean(numeric_only=True)
    pd.set_option("display.width", 120)
    print(table.drop(columns="seed").round(2).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1))
