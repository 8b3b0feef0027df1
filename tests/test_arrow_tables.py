"""Tables cross from Rust as Arrow (Parquet bytes read by pyarrow, D205) and become exactly
the DataFrames of the earlier private column protocol.

``fixtures/frames-before-arrow.json`` was written by the column protocol (commit 4ab6efb,
``python tests/test_arrow_tables.py --write`` with that build): every table of four runs and
two sweeps, each column's dtype and every value exactly (``_frames_fixture``). Columns added
to a table since are listed in ``ADDED_SINCE`` and left out of the comparison; every other
column must be as it was, in the same order.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from _frames_fixture import frame_doc, results_doc

import pathpool as pp

ADDED_SINCE = {
    # Issue 22: CE marks of REM queues.
    "links": ["ce_marks"],
}

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "frames-before-arrow.json"


def _small() -> pp.Scenario:
    """As ``conftest.small``: TCP, a finite flow (FCT, size), CBR (missing cwnd)."""
    return pp.Scenario(
        name="small",
        duration="10s",
        hosts=["a", "b", "c"],
        routers=["r"],
        links=[
            pp.link("r", "b", rate="5Mbps", delay="10ms", queue=pp.droptail(40), id="bottleneck"),
            pp.link("a", "r", rate_bps=50e6, delay_s=0.005),
            pp.link("c", "r", rate="50Mbps", delay="20ms"),
        ],
        flows=[
            pp.flow("a", "b", id="long", start_spread="0.5s"),
            pp.flow("c", "b", id="finite", size="500KB", start="1s"),
            pp.udp_cbr("c", "b", rate="1Mbps", id="cbr", start="2s", stop="8s"),
        ],
        measure=pp.measure(interval="100ms", trace_cwnd=True),
    )


def _runs() -> dict[str, Any]:
    """Runs covering every table and every kind of column (optional numbers, strings and
    booleans; empty tables)."""
    sc = ROOT / "scenarios"
    return {
        "small": pp.run(_small(), seed=1),
        "multipath": pp.run(
            sc / "multipath.toml",
            seed=2,
            set={"duration": "10s", "measure.start": "2s", "measure.trace_cwnd": True},
        ),
        "mmtp-cache": pp.run(sc / "mmtp-cache.toml", seed=1, set={"measure.interval": "1s"}),
        "poisson-pareto": pp.run(sc / "poisson-pareto.toml", seed=3, set={"duration": "12s"}),
    }


def _sweeps() -> dict[str, Any]:
    grid = {"links.bottleneck.rate": ["5Mbps", "10Mbps"]}
    return {
        "sweep-flows": pp.sweep(_small(), grid, reps=2, progress=False),
        "sweep-summary": pp.sweep(_small(), grid, table="summary", progress=False),
    }


def _document() -> dict[str, Any]:
    doc: dict[str, Any] = {name: results_doc(res) for name, res in _runs().items()}
    doc.update({name: frame_doc(df) for name, df in _sweeps().items()})
    return doc


def _without_wall_time(doc: dict[str, Any]) -> dict[str, Any]:
    """The summary table of a sweep has each run's wall-clock time: not a result."""
    out = json.loads(json.dumps(doc))
    for col in out["sweep-summary"]["columns"]:
        if col["name"] == "wall_time_s":
            col["values"] = None
    return out


def test_tables_equal_those_of_the_column_protocol():
    before = json.loads(FIXTURE.read_text(encoding="utf-8"))
    now = _without_wall_time(_document())
    assert set(now) == set(before)
    for name in before:
        if isinstance(before[name], dict) and "columns" in before[name]:
            assert now[name] == before[name], name
            continue
        for table in before[name]:
            added = ADDED_SINCE.get(table, [])
            cols = now[name][table]["columns"]
            assert [c["name"] for c in cols if c["name"] in added] == added, f"{name}.{table}"
            kept = dict(now[name][table], columns=[c for c in cols if c["name"] not in added])
            assert kept == before[name][table], f"{name}.{table}"


def test_results_read_back_have_the_dtypes_of_the_run(tmp_path):
    """`pp.read_results` reads the files as the run's tables cross (D205): equal frames,
    dtypes included (it used `pandas.read_parquet`, which gave optional counts as floats)."""
    res = pp.run(ROOT / "scenarios" / "mmtp-cache.toml", seed=1, set={"measure.interval": "1s"})
    back = pp.read_results(res.save(tmp_path / "run"))
    assert results_doc(back) == results_doc(res)
    assert str(back.flows["size_bytes"].dtype) == "UInt64"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_arrow_tables.py --write")
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(_without_wall_time(_document())) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}")
