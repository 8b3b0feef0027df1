"""Multipath flows from Python: builders, subflow tables, traces and plots."""

from __future__ import annotations

import matplotlib
import pytest

import pathpool as pp

matplotlib.use("Agg")


def two_paths(flows: list[dict]) -> pp.Scenario:
    return pp.Scenario(
        duration="20s",
        hosts=["s", "d"],
        routers=["a", "b", "c"],
        links=[
            pp.link("s", "a", rate="1Gbps", delay="0s"),
            pp.link("a", "b", rate="10Mbps", delay="5ms", queue=pp.droptail("50KB"), id="via-b"),
            pp.link("a", "c", rate="10Mbps", delay="10ms", queue=pp.droptail("50KB"), id="via-c"),
            pp.link("b", "d", rate="1Gbps", delay="0s"),
            pp.link("c", "d", rate="1Gbps", delay="0s"),
        ],
        flows=flows,
        measure=pp.measure(start="5s", interval="1s", trace_cwnd=True),
    )


def test_a_multipath_flow_uses_both_paths_and_reports_its_subflows():
    sc = two_paths(
        [
            pp.flow(
                "s",
                "d",
                id="mp",
                cc="nmcc",
                subflows=[
                    pp.subflow(["s", "a", "b", "d"]),
                    pp.subflow(["s", "a", "c", "d"], group=1),
                ],
            )
        ]
    )
    res = pp.run(sc, seed=1)
    sf = res.subflows
    assert list(sf["subflow"]) == [0, 1]
    assert list(sf["group"]) == [0, 1]
    assert list(sf["path"]) == ["s>a>b>d", "s>a>c>d"]
    # Separate groups run uncoupled: each fills its 10 Mb/s path.
    assert (sf["throughput_bps"] > 8e6).all()
    assert sf["share_of_flow"].sum() == pytest.approx(1.0)
    ts = res.subflow_timeseries
    assert {"cwnd_bytes", "ssthresh_bytes", "srtt_s", "alg_var", "alg_value"} <= set(ts)
    assert set(ts["alg_var"]) == {"m"}
    assert (ts["alg_value"] >= 1.0).all()
    ax = res.plot.subflows(column="alg_value")
    assert len(ax.lines) == 2


def test_paths_shorthand_and_scheduler_error():
    sc = two_paths(
        [pp.flow("s", "d", id="mp", cc="lia", paths=[["s", "a", "b", "d"], ["s", "a", "c", "d"]])]
    )
    res = pp.run(sc, seed=1)
    assert len(res.subflows) == 2
    bad = two_paths([pp.flow("s", "d", scheduler="fastest", paths=[["s", "a", "b", "d"]])])
    try:
        bad.check()
    except pp.ScenarioError as e:
        assert "lowest-rtt, round-robin" in str(e)
    else:
        raise AssertionError("expected a ScenarioError")


def test_saved_results_keep_the_subflow_tables(tmp_path):
    sc = two_paths([pp.flow("s", "d", paths=[["s", "a", "b", "d"], ["s", "a", "c", "d"]])])
    res = pp.run(sc, seed=2)
    back = pp.read_results(res.save(tmp_path / "out"))
    assert list(back.subflows["path"]) == list(res.subflows["path"])
    assert len(back.subflow_timeseries) == len(res.subflow_timeseries)


def test_an_mmtp_download_from_two_sources_with_an_outage():
    sc = pp.Scenario(
        duration="30s",
        hosts=["s", "p1", "p2"],
        routers=["r"],
        links=[
            pp.link("p1", "r", rate="10Mbps", delay="10ms", queue=pp.droptail("50KB")),
            pp.link("p2", "r", rate="10Mbps", delay="20ms", queue=pp.droptail("50KB")),
            pp.link("r", "s", rate="1Gbps", delay="1ms"),
        ],
        flows=[
            pp.flow(
                ["p1", "p2"],
                "s",
                id="dl",
                kind="mmtp",
                size="5MB",
                outages=[{"source": "p2", "start": "1s", "stop": "3s"}],
            )
        ],
    )
    res = pp.run(sc, seed=1)
    flows = res.flows
    assert list(flows["kind"]) == ["mmtp"]
    assert bool(flows["completed"][0])
    assert int(flows["bytes_delivered"][0]) == 5_000_000
    sf = res.subflows
    assert list(sf["path"]) == ["p1>r>s", "p2>r>s"]
    assert int(sf["bytes_acked"].sum()) == 5_000_000
    assert (sf["bytes_acked"] > 0).all()


def test_an_on_path_cache_serves_a_second_download_of_the_same_content(tmp_path):
    def scenario(caches: list[dict]) -> pp.Scenario:
        return pp.Scenario(
            duration="20s",
            hosts=["p", "s1", "s2"],
            routers=["r1", "r2"],
            links=[
                pp.link("p", "r1", rate="10Mbps", delay="20ms", queue=pp.droptail("60KB")),
                pp.link("r1", "r2", rate="100Mbps", delay="5ms"),
                pp.link("r2", "s1", rate="100Mbps", delay="1ms"),
                pp.link("r2", "s2", rate="100Mbps", delay="1ms"),
            ],
            flows=[
                pp.flow("p", "s1", id="a", kind="mmtp", size="4MB", content="/talk"),
                pp.flow("p", "s2", id="b", kind="mmtp", size="4MB", content="/talk", start="6s"),
            ],
            caches=caches,
        )

    plain = pp.run(scenario([]), seed=1)
    cached = pp.run(scenario([pp.cache("r2", "10MB")]), seed=1)
    assert plain.caches.empty
    row = cached.caches.iloc[0]
    assert row["node"] == "r2"
    assert int(row["hits"]) > 2700  # every chunk of the second download (4 MB / 1460 B)
    fct = {r.id: r.fct_s for r in cached.flows.itertuples()}
    fct_plain = {r.id: r.fct_s for r in plain.flows.itertuples()}
    assert fct["b"] < fct_plain["b"] / 2
    # Saved and read back, the table is there.
    back = pp.read_results(cached.save(tmp_path / "run"))
    assert int(back.caches["hits"].iloc[0]) == int(row["hits"])
