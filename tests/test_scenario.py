"""Scenario builders: quantities, structure, round trips through the Rust parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pathpool as pp


def test_builders_produce_file_structure():
    sc = pp.Scenario(
        duration="30s",
        hosts=["a", "b"],
        links=[
            pp.link("a", "b", rate_bps=10e6, delay_s=0.01, queue=pp.red(100, 10, 30), loss=0.01)
        ],
        flows=[
            pp.flow("a", "b", size="30pkts"),
            pp.udp_onoff("a", "b", "1Mbps", on="1s", off="2s"),
        ],
        traffic=[pp.poisson("a", "b", size=pp.pareto("30pkts", 1.2), load=0.5, max_flows=10)],
        tcp=pp.tcp(mss="1000B", min_rto="1s", rwnd="64KB"),
    )
    d = sc.to_dict()
    assert d["duration"] == "30s"
    assert d["links"][0]["rate"] == "10Mbps"
    assert d["links"][0]["queue"]["type"] == "red"
    assert d["tcp"]["mss"] == "1KB"
    info = sc.check()
    assert info.links == 2
    assert info.flows == 2 + 10


def test_a_bare_number_is_refused_as_in_a_scenario_file():
    """Issue 16, defect 4: `rate=10` is not 10 bit/s in silence; the file format's error,
    naming the field."""
    sc = pp.Scenario(
        duration="5s", hosts=["a", "b"], links=[pp.link("a", "b", rate=10, delay=5)], flows=[]
    )
    with pytest.raises(pp.ScenarioError) as e:
        sc.check()
    assert len(e.value.errors) == 2, "the rate and the delay"
    message = str(e.value)
    assert "links[0].rate: the number 10 has no unit" in message, message
    assert "links[0].delay: the number 5 has no unit" in message, message
    assert "rate_bps=" in message, message
    toml = 'duration = "5s"\nnodes = { hosts = ["a", "b"] }\n[[links]]\nbetween = ["a", "b"]\n'
    with pytest.raises(pp.ScenarioError) as f:
        pp.Scenario.from_toml(toml + "rate = 10\ndelay = 5\n").check()
    assert "links[0].rate: the number 10 has no unit" in str(f.value)
    assert "links[0].delay: the number 5 has no unit" in str(f.value)
    for bad in (
        pp.flow("a", "b", start=1),
        pp.flow("a", "b", size=1_000_000),
        pp.udp_cbr("a", "b", rate=1e6),
    ):
        ok = pp.link("a", "b", rate="1Mbps", delay="1ms")
        with pytest.raises(pp.ScenarioError, match="has no unit"):
            pp.Scenario(duration="5s", hosts=["a", "b"], links=[ok], flows=[bad]).check()
    with pytest.raises(pp.ScenarioError, match="duration: the number 5 has no unit"):
        pp.Scenario(duration=5).check()


def test_numbers_go_in_through_keywords_that_name_their_unit():
    link = pp.link("a", "b", rate_bps=2.5e6, delay_s=0.005)
    assert (link["rate"], link["delay"]) == ("2500000bps", "0.005s")
    f = pp.flow("a", "b", start_s=1, stop_s=2.5, size_bytes=1500, start_spread_s=0.5)
    assert (f["start"], f["stop"], f["size"], f["start_spread"]) == ("1s", "2.5s", "1500B", "0.5s")
    assert pp.udp_cbr("a", "b", rate=None, rate_bps=1e6)["rate"] == "1000000bps"
    sc = pp.Scenario(duration_s=12, hosts=["a", "b"], links=[link], flows=[f])
    assert sc.check().duration_s == 12
    with pytest.raises(ValueError, match="give rate or rate_bps, not both"):
        pp.link("a", "b", rate="1Mbps", rate_bps=1e6)
    with pytest.raises(TypeError, match="delay_s must be a number"):
        pp.link("a", "b", rate="1Mbps", delay_s="5ms")  # type: ignore[arg-type]


def test_random_drop_queue_and_per_ack_increase_reach_the_simulator():
    def run(queue, increase):
        sc = pp.Scenario(
            duration="20s",
            hosts=["a", "b"],
            links=[pp.link("a", "b", rate="10Mbps", delay="20ms", queue=queue, id="l")],
            flows=[pp.flow("a", "b", count=4, start_spread="1s")],
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
        links=[pp.link("a", "b", rate_bps=bps, delay="0s")],
    )
    shown = sc.to_dict()["links"][0]["rate"]
    # The normalised text parses back to the same number of bit/s.
    again = pp.Scenario(
        duration="1s", hosts=["a", "b"], links=[pp.link("a", "b", rate=shown, delay="0s")]
    )
    assert again.to_dict()["links"][0]["rate"] == shown


@given(ms=st.integers(min_value=0, max_value=10**7))
@settings(max_examples=50, deadline=None)
def test_numeric_times_are_seconds(ms):
    sc = pp.Scenario(duration_s=(ms + 1) / 1000, hosts=["a"], links=[])
    assert sc.check().duration_s == pytest.approx((ms + 1) / 1000, abs=1e-12)


def test_whole_segment_windows_reach_the_simulator_and_a_bad_unit_is_named():
    def run(unit: str):
        sc = pp.Scenario(
            duration="20s",
            hosts=["a", "b"],
            links=[pp.link("a", "b", rate="2Mbps", delay="5ms", queue=pp.droptail(8), id="l")],
            flows=[pp.flow("a", "b", count=4, start_spread="1s")],
            tcp=pp.tcp(window_unit=unit),  # type: ignore[arg-type]
        )
        return pp.run(sc, seed=1).links.set_index("id").loc["l:a->b"]

    # Windows of a few segments: dropping each loss's fraction changes when the queue
    # overflows, so the drops differ.
    assert run("segment")["drops"] != run("byte")["drops"]
    with pytest.raises(pp.ScenarioError, match="window_unit"):
        run("packet")
