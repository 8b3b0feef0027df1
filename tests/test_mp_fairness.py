"""Tse's multipath-fairness metrics through the Python API (docs/metrics.md)."""

from __future__ import annotations

from pathlib import Path

import pathpool as pp

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "multipath-fairness.toml"


def test_analytic_bounds_of_two_symmetric_paths() -> None:
    r = pp.Scenario.load(SCENARIO).run(seed=1, progress=False)
    table = r.mp_fairness
    assert list(table["path"]) == ["s>a1>b1>d", "s>a2>b2>d"]
    total = 2 * 5e6 * 960 / 1000
    row = table.iloc[0]
    assert abs(row["stringent_bound_bps"] / total - 0.25) < 1e-12
    assert abs(row["lenient_bound_bps"] / total - 0.5) < 1e-12
    assert list(table["competitors"]) == [1, 1]
    summary = r.summary["mp_fairness"][0]
    assert summary["flow"] == "mp"
    assert summary["stringent_fair"] == bool(row["stringent_fair"])


def test_runs_without_the_setting_have_no_table() -> None:
    text = SCENARIO.read_text(encoding="utf-8").replace('mp_fairness = "analytic"\n', "")
    r = pp.Scenario.from_toml(text).run(seed=1, progress=False)
    assert r.mp_fairness.empty
    assert "mp_fairness" not in r.summary


def test_a_multipath_tfrc_flow_built_in_python_runs() -> None:
    def path(router: str) -> list[str]:
        return ["s", router, "d"]

    sc = pp.Scenario(
        duration="20s",
        hosts=["s", "d"],
        routers=["r1", "r2"],
        links=[pp.link("s", r, rate="5Mbps", delay="10ms") for r in ("r1", "r2")]
        + [pp.link(r, "d", rate="100Mbps", delay="1ms") for r in ("r1", "r2")],
        flows=[
            pp.flow(
                "s",
                "d",
                id="bilevel",
                kind="tfrc",
                paths=[path("r1"), path("r2")],
                tfrc={"multipath": "fractional", "nack_expiry_rtts": 2.0},
            )
        ],
        tfrc={"packet_size": "1000B"},
        measure=pp.measure(start="5s"),
    )
    assert sc.to_dict()["flows"][0]["tfrc"]["multipath"] == "fractional"
    r = sc.run(seed=1, progress=False)
    assert r.flows.loc[0, "throughput_bps"] > 5e6, "both paths used"
