"""A scenario is parsed once (issue 19): `pp.Scenario` keeps what the Rust core parsed, and
every check, run and sweep starts from it. `_pathpool.parse_count()` counts the texts the
extension parses."""

from __future__ import annotations

import copy
import pickle

import pandas as pd
import pytest

import pathpool as pp
from pathpool import _pathpool


def _tiny() -> pp.Scenario:
    return pp.Scenario(
        duration="20ms",
        hosts=["a", "b"],
        links=[pp.link("a", "b", rate="10Mbps", delay="1ms")],
        flows=[pp.flow("a", "b")],
        measure=pp.measure(interval="10ms"),
    )


def test_many_runs_parse_once():
    """250 runs (tools/bench_python_api.py times 1000 both ways)."""
    sc = _tiny()
    before = _pathpool.parse_count()
    seeds = set()
    for seed in range(1, 251):
        seeds.add(sc.run(seed=seed, progress=False).seed)
    assert seeds == set(range(1, 251)), "every run ran, with its own seed"
    assert _pathpool.parse_count() - before == 1


def test_running_a_dict_or_a_file_parses_each_time(root):
    """What a loop over `pp.run(dict)` costs, and what the counter counts."""
    d = _tiny().to_dict()
    before = _pathpool.parse_count()
    for _ in range(3):
        pp.run(d, progress=False)
    pp.run(root / "scenarios" / "random-loss.toml", set={"measure.start": "0s", "duration": "1s"})
    assert _pathpool.parse_count() - before == 4


def test_check_run_sweep_and_to_dict_share_one_parse(small):
    before = _pathpool.parse_count()
    assert small.check().flows == 3
    assert small.to_dict()["name"] == "small"
    res = small.run(seed=1, progress=False)
    assert small.check().links == 6
    assert _pathpool.parse_count() - before == 1
    # The method and the function give the same results.
    pd.testing.assert_frame_equal(res.flows, pp.run(small, seed=1).flows)
    df = small.sweep({"links.bottleneck.rate": ["5Mbps", "10Mbps"]}, progress=False)
    assert len(df) == 2 * 3
    assert set(df["links.bottleneck.rate"]) == {"5Mbps", "10Mbps"}


def test_set_gives_a_copy_parsed_anew(small):
    small.check()
    before = _pathpool.parse_count()
    faster = small.set("links.bottleneck.rate", "20Mbps")
    assert faster.to_dict()["links"][0]["rate"] == "20Mbps"
    assert small.to_dict()["links"][0]["rate"] == "5Mbps"
    assert _pathpool.parse_count() - before == 1


def test_an_invalid_scenario_raises_when_first_used_and_again_later():
    bad = pp.Scenario(
        duration="1s", hosts=["a"], links=[pp.link("a", "zz", rate="1Mbps", delay="1ms")]
    )
    for _ in range(2):
        with pytest.raises(pp.ScenarioError, match='unknown node "zz"'):
            bad.run(progress=False)


def test_copies_and_pickles_parse_again(small):
    small.check()
    for other in (copy.deepcopy(small), pickle.loads(pickle.dumps(small))):
        before = _pathpool.parse_count()
        assert other.check().flows == 3
        assert _pathpool.parse_count() - before == 1
