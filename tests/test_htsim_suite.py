"""The htsim validation suite's pathpool twins (tools/htsim-crosscheck/validate.py, D135).

CI has no htsim: these check what can be checked without it, that every committed twin is what
the suite's table generates and loads in pathpool, and that the table spans issue 17's ranges.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

import pathpool as pp

ROOT = Path(__file__).resolve().parent.parent


def _suite() -> ModuleType:
    path = ROOT / "tools" / "htsim-crosscheck" / "validate.py"
    spec = importlib.util.spec_from_file_location("htsim_validate", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


SUITE = _suite()


@pytest.mark.parametrize("s", SUITE.SCENARIOS, ids=lambda s: s.name)
def test_each_twin_is_what_the_table_generates_and_loads(s: object) -> None:
    f = SUITE.scenario_file(s)
    assert f.read_text() == SUITE.scenario_toml(s), "run validate.py write"
    pp.load(f).check()


def test_the_suite_spans_issue_17s_ranges() -> None:
    scenarios = SUITE.SCENARIOS
    paths = [p for s in scenarios for p in s.paths]
    assert len(scenarios) >= 12
    assert {s.cc for s in scenarios} == {"lia", "uncoupled"}
    assert {s.topology for s in scenarios} == {"shared", "disjoint"}
    assert (min(p.rate_mbps for p in paths), max(p.rate_mbps for p in paths)) == (2.4, 100)
    assert (min(p.rtt_ms for p in paths), max(p.rtt_ms for p in paths)) == (10, 200)
    assert (min(p.buffer_bdp for p in paths), max(p.buffer_bdp for p in paths)) == (0.5, 4)
    assert (min(p.loss for p in paths), max(p.loss for p in paths)) == (0, 0.04)
    disjoint = [s.paths for s in scenarios if s.topology == "disjoint"]
    assert any(a.rtt_ms != b.rtt_ms for a, b in disjoint)
    assert any(a.rate_mbps != b.rate_mbps for a, b in disjoint)
    assert any(a.loss != b.loss for a, b in disjoint)


def test_confidence_interval_is_student_t() -> None:
    m, half = SUITE.mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0
    assert half == pytest.approx(4.303 / math.sqrt(3))
