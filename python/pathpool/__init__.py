"""pathpool: multipath and multisource transport.

Build or load a scenario, run it, look at the results::

    import pathpool as pp

    res = pp.run("scenarios/dumbbell.toml", seed=1)
    res.flows            # pandas DataFrame, one row per flow
    res.plot.throughput()

    grid = {"links.bottleneck.rate": ["10Mbps", "20Mbps"]}
    table = pp.sweep("scenarios/dumbbell.toml", grid, reps=3)  # a row per run per flow

The simulation runs in Rust with the GIL released; a :class:`Scenario` is parsed once, however
often it runs (``sc.run(seed=s)``, ``sc.sweep(grid)``). See ``docs/python-api.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

from . import _pathpool, types
from ._ndn import ndn, ndn_consumer, ndn_cs, ndn_fib, ndn_producer, ndn_strategy, ptp, rem
from ._pathpool import ScenarioError
from ._sweep import IdenticalReplicatesWarning, sweep
from .reproduce import Reproduction, reproduce, reproductions
from .results import Results
from .scenario import (
    Scenario,
    ScenarioInfo,
    cache,
    constant,
    droptail,
    exponential,
    flow,
    host_group,
    link,
    measure,
    pareto,
    poisson,
    random_drop,
    red,
    subflow,
    tcp,
    udp_cbr,
    udp_onoff,
)

__version__ = _pathpool.__version__

ScenarioLike = Union[Scenario, Mapping[str, Any], str, "os.PathLike[str]"]


def load(path: str | os.PathLike[str]) -> Scenario:
    """Loads a scenario file (TOML)."""
    return Scenario.load(path)


def _as_scenario(scenario: ScenarioLike) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Mapping):
        return Scenario.from_dict(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario.load(Path(scenario))
    raise TypeError(
        f"expected a Scenario, a dict or a path to a scenario file, got {type(scenario).__name__}"
    )


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    *,
    set: Mapping[str, Any] | None = None,
    progress: bool | None = None,
) -> Results:
    """Runs a scenario and returns its results.

    Args:
        scenario: a :class:`Scenario`, a dict with the structure of a scenario file, or the
            path of a scenario file.
        seed: random seed (default: the scenario's ``seed``, or 1).
        set: field overrides, e.g. ``{"links.bottleneck.rate": "20Mbps"}``.
        progress: show a progress bar on runs longer than a second (default: when standard
            error is a terminal).

    Raises:
        ScenarioError: the scenario is invalid (the message names the field and line).
        KeyboardInterrupt: the run was interrupted.
    """
    sc = _as_scenario(scenario)
    for k, v in (set or {}).items():
        sc = sc.set(k, v)
    return sc.run(seed, progress=progress)


def read_results(directory: str | os.PathLike[str]) -> Results:
    """Reads a results directory written by ``pathpool run`` or :meth:`Results.save`."""
    return Results.read(directory)


__all__ = [
    "IdenticalReplicatesWarning",
    "Reproduction",
    "Results",
    "Scenario",
    "ScenarioError",
    "ScenarioInfo",
    "__version__",
    "cache",
    "constant",
    "droptail",
    "exponential",
    "flow",
    "host_group",
    "link",
    "load",
    "measure",
    "ndn",
    "ndn_consumer",
    "ndn_cs",
    "ndn_fib",
    "ndn_producer",
    "ndn_strategy",
    "pareto",
    "poisson",
    "ptp",
    "random_drop",
    "read_results",
    "red",
    "rem",
    "reproduce",
    "reproductions",
    "run",
    "subflow",
    "sweep",
    "tcp",
    "types",
    "udp_cbr",
    "udp_onoff",
]
