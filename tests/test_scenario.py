"""Scenario builders: quantities, structure, round trips through the Rust parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pathpool as pp


def test_builders_produce_file_structure():
    sc = pp.Scenario(
        duration=30,
        hosts=["a", "b"],
        links=[pp.link("a", "b", rate=10e6, delay=0.01, queue=pp.red(100, 10, 30), loss=0.01)],
        flows=[pp.flow("a", "b", size="30pkts"), pp.udp_onoff("a", "b", "1Mbps", on=1, off=2)],
        traffic=[pp.poisson("a", "b", size=pp.pareto("30pkts", 1.2), load=0.5, max_flows=10)],
        tcp=pp.tcp(mss=1000, min_rto="1s", rwnd="64KB"),
    )
    d = sc.to_dict()
    assert d["duration"] == "30s"
    assert d["links"][0]["rate"] == "10Mbps"
    assert d["links"][0]["queue"]["type"] == "red"
    assert d["tcp"]["mss"] == "1KB"
    info = sc.check()
    assert info.links == 2
    assert info.flows == 2 + 10


def test_random_drop_queue_and_per_ack_increase_reach_the_simulator():
    def run(queue, increase):
        sc = pp.Scenario(
            duration=20,
            hosts=["a", "b"],
            links=[pp.link("a", "b", rate="10Mbps", delay="20ms", queue=queue, id="l")],
            flows=[pp.flow("a", "b", count=4, start_spread=1)],
            tcp=pp.tcp(ca_increase=increase),
        )
        return pp.run(sc, seed=1).links.set_index("id").loc["l:a->b"]

    random = run(pp.random_drop(40), "per-ack")
    droptail = run(pp.droptail(40), "per-ack")
    assert random["queue"].startswith("random 40pkts")
    assert random["drops"] > 0
    assert random["drops"] != droptail["drops"]
    assert run(pp.random_drop(40, p=0.0), "per-ack")["drops"] == droptail["drops"]
    assert run(pp.droptail(40), "byte-counting")["drops"] != droptail["drops"]
    with pytest.raises(pp.ScenarioError, match="band"):
        run(pp.random_drop(40, band=41), "per-ack")


@given(bps=st.integers(min_value=1, max_value=10**12))
@settings(max_examples=50, deadline=None)
def test_numeric_rates_round_trip(bps):
    sc = pp.Scenario(
        duration="1s",
        hosts=["a", "b"],
        links=[pp.link("a", "b", rate=bps, delay=0)],
    )
    shown = sc.to_dict()["links"][0]["rate"]
    # The normalised text parses back to the same number of bit/s.
    again = pp.Scenario(
        duration="1s", hosts=["a", "b"], links=[pp.link("a", "b", rate=shown, delay=0)]
    )
    assert again.to_dict()["links"][0]["rate"] == shown


@given(ms=st.integers(min_value=0, max_value=10**7))
@settings(max_examples=50, deadline=None)
def test_numeric_times_are_seconds(ms):
    sc = pp.Scenario(duration=(ms + 1) / 1000, hosts=["a"], links=[])
    assert sc.check().duration_s == pytest.approx((ms + 1) / 1000, abs=1e-12)
