"""The INRPP document's metrics through the Python API (spec 001 §5.1, docs/metrics.md):
Jain's index sampled over time and the AFCT per flow-size bin."""

from __future__ import annotations

import pathpool as pp


def _dumbbell(measure: pp.types.Measure, size: str | None = None) -> pp.Scenario:
    extra = {} if size is None else {"size": size}
    return pp.Scenario(
        duration="20s",
        hosts=["s1", "s2", "d"],
        routers=["a", "b"],
        links=[
            pp.link("s1", "a", rate="100Mbps", delay="1ms"),
            pp.link("s2", "a", rate="100Mbps", delay="1ms"),
            pp.link("a", "b", rate="10Mbps", delay="10ms"),
            pp.link("b", "d", rate="100Mbps", delay="1ms"),
        ],
        flows=[pp.flow("s1", "d", id="x", **extra), pp.flow("s2", "d", id="y", start="1s")],
        measure=measure,
    )


def test_sampled_jain_and_afct_bins(tmp_path) -> None:
    m = pp.measure(start="5s", fairness_interval="100ms", afct_bins_per_decade=4)
    r = _dumbbell(m, size="1MB").run(seed=1, progress=False)
    assert r.jain_sampled is None or 0.5 <= r.jain_sampled <= 1
    assert r.summary["jain_sampled_samples"] >= 0
    bins = r.afct_bins
    assert list(bins.columns) == [
        "size_lo_bytes",
        "size_hi_bytes",
        "completed",
        "mean_fct_s",
        "not_completed",
    ]
    assert list(bins["size_lo_bytes"]) == [1e6]
    assert int(bins["completed"].iloc[0]) == 1
    assert abs(bins["mean_fct_s"].iloc[0] - r.flows.loc[0, "fct_s"]) < 1e-12
    r.save(tmp_path / "out")
    back = pp.read_results(tmp_path / "out")
    assert list(back.afct_bins["size_lo_bytes"]) == [1e6]
    assert back.jain_sampled == r.jain_sampled


def test_two_long_flows_sample_fair() -> None:
    r = _dumbbell(pp.measure(start="5s", fairness_interval="100ms")).run(seed=1, progress=False)
    assert r.jain_sampled is not None and r.jain_sampled > 0.9


def test_runs_without_the_settings_have_neither() -> None:
    r = _dumbbell(pp.measure(start="5s")).run(seed=1, progress=False)
    assert r.jain_sampled is None
    assert "jain_sampled" not in r.summary
    assert r.afct_bins.empty


def test_router_series_are_frames_that_survive_a_save(tmp_path) -> None:
    sc = pp.load("scenarios/inrpp-dumbbell.toml")
    r = (
        sc.set("measure.trace_routers", True)
        .set("measure.interarrival", True)
        .set("measure.trace_sequences", ["f2"])
        .run(seed=1, progress=False)
    )
    assert list(r.interarrival.columns) == ["flow", "lo_s", "hi_s", "count"]
    assert set(r.interarrival["flow"]) == {"f1", "f2", "f3"}
    rt = r.router_timeseries
    assert list(rt.columns) == [
        "time_s",
        "node",
        "cached_bytes",
        "cache_drops",
        "detoured_bytes",
        "nonces",
        "mode",
        "states",
    ]
    assert set(rt["mode"]) == {"PR", "CLR"}
    n4 = r.routers.set_index("node").loc["n4"]
    assert n4["first_propagate_s"] > 1.0
    st = r.sequence_trace
    assert list(st.columns) == ["time_s", "flow", "point", "event", "seq", "nonce"]
    assert set(st["flow"]) == {"f2"}
    assert {"sender", "n4", "n0", "receiver"} <= set(st["point"])
    sent = st[(st["point"] == "sender") & (st["event"] == "sent")]
    assert sent["seq"].is_monotonic_increasing and sent["seq"].iloc[0] == 0
    n0 = rt[rt["node"] == "n0"]
    assert n0["cached_bytes"].max() > 1_000_000
    flows = r.router_flow_timeseries
    assert set(flows["flow"]) <= {"f1", "f2", "f3"} and len(flows) > 0
    assert r.jain_sampled_since_start is None
    r.save(tmp_path / "out")
    back = pp.read_results(tmp_path / "out")
    assert back.router_timeseries.equals(rt)
    assert len(back.router_flow_timeseries) == len(flows)
    assert back.interarrival.equals(r.interarrival)
    assert back.sequence_trace.equals(st)
