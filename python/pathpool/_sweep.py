"""Sweeps: a scenario run over a grid of overrides x repetitions, gathered into one table.

The runs happen in Rust: on local threads with the GIL released, or on a Dask cluster (each
Dask task runs one run in the extension and sends its result files back; this process stores
them). Either way the sweep directory and the gathered table are the same. See
``docs/sweeps.md``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Union

import pandas as pd

from . import _pathpool
from ._tables import frame
from .scenario import Scenario, _override_text
from .types import SweepTable

if TYPE_CHECKING:
    from distributed import Client

Cluster = Union[str, "Client"]


class IdenticalReplicatesWarning(UserWarning):
    """The replicates of a sweep's grid point gave identical results: nothing in the scenario
    draws from the seed (add ``tcp.send_overhead``, ``start_spread``, random loss, ...)."""


def _run_task(task: str) -> list[tuple[str, bytes]]:
    """Runs one run of a sweep (a task from ``SweepPlan.task``); what Dask workers call."""
    return _pathpool.sweep_run_task(task)


def _run_on_cluster(
    plan: _pathpool.SweepPlan, pending: Sequence[int], cluster: Cluster, progress: bool
) -> None:
    """Runs ``pending`` runs of ``plan`` on a Dask cluster and stores each as it finishes.

    ``cluster`` is a scheduler address (``"tcp://host:8786"``) or a ``distributed.Client``.
    Failed runs are reported together at the end; the others are stored.
    """
    try:
        from distributed import Client, as_completed
    except ImportError as e:
        raise ImportError(
            "running a sweep on a cluster needs dask.distributed: pip install 'pathpool[dask]'"
        ) from e
    own = not isinstance(cluster, Client)
    client = cluster if isinstance(cluster, Client) else Client(cluster)
    futures = []
    try:
        index = {}
        for i in pending:
            fut = client.submit(_run_task, plan.task(i), pure=False)
            index[fut.key] = i
            futures.append(fut)
        failures = []
        done = 0
        for fut in as_completed(futures):
            i = index[fut.key]
            try:
                plan.store(i, fut.result())
            except Exception as e:  # a failed run must not stop the others
                failures.append(f"run {plan.run_id(i)}: {e}")
            done += 1
            if progress:
                print(f"\r  {done}/{len(futures)} runs", end="", file=sys.stderr, flush=True)
        if progress and futures:
            print(file=sys.stderr)
        if failures:
            raise RuntimeError(
                f"{len(failures)} runs failed (the others are kept; run the sweep again to "
                f"retry): {'; '.join(failures)}"
            )
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        if own:
            client.close()


def grid_items(grid: Mapping[str, Sequence[Any]] | None) -> list[tuple[str, list[str]]]:
    """The grid as the extension takes it: ``(key, [value text, ...])``."""
    items = []
    for key, values in (grid or {}).items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(
                f"grid[{key!r}]: expected a list of values, got {type(values).__name__}"
            )
        items.append((key, [_override_text(v) for v in values]))
    return items


def _outside_level() -> int:
    """The ``stacklevel`` for a warning raised by this module's caller of this function that
    names the first frame outside pathpool: the user's ``pp.sweep`` or ``sc.sweep`` line."""
    level = 2
    f: FrameType | None = sys._getframe(2)
    while f is not None and str(f.f_globals.get("__name__", "")).startswith("pathpool"):
        level += 1
        f = f.f_back
    return level


def execute(
    make_plan: Callable[[str], _pathpool.SweepPlan],
    *,
    out: str | os.PathLike[str] | None,
    jobs: int | None,
    cluster: Cluster | None,
    progress: bool | None,
) -> pd.DataFrame:
    """Plans a sweep into ``out`` (default: a temporary directory, removed afterwards), runs
    what is pending (locally or on ``cluster``) and returns the gathered table."""
    if progress is None:
        progress = sys.stderr.isatty()
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="pathpool-sweep-")
        out = tmp.name
    try:
        plan = make_plan(str(out))
        plan.prepare()
        if cluster is None:
            plan.run_local(jobs, progress)
        else:
            _run_on_cluster(plan, plan.pending(), cluster, progress)
        table = frame(plan.gather())
        same = plan.identical_replicates()
        if same is not None:
            warnings.warn(same, IdenticalReplicatesWarning, stacklevel=_outside_level())
        return table
    finally:
        if tmp is not None:
            tmp.cleanup()


def sweep(
    scenario: Scenario | Mapping[str, Any] | str | os.PathLike[str],
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    reps: int | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    table: SweepTable | None = None,
    metrics: Sequence[str] | None = None,
    jobs: int | None = None,
    out: str | os.PathLike[str] | None = None,
    cluster: Cluster | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Runs a scenario over a grid of overrides x repetitions and returns one table.

    Args:
        scenario: a :class:`Scenario`, a dict, the path of a scenario file, or the path of a
            sweep file (a TOML file with a ``scenario`` key; its settings are the defaults of
            the arguments below).
        grid: ``{key: [values]}`` with the keys of ``pp.run(..., set=...)``, e.g.
            ``{"links.bottleneck.rate": ["10Mbps", "100Mbps"], "flows.mp.cc": ["lia", "nmcc"]}``;
            the first key varies slowest.
        reps: repetitions of every grid point (default 1); repetition ``r`` has seed
            ``seed + r``.
        seed: the base seed (default: the scenario's ``seed``, or 1).
        set: overrides applied to every run.
        table: the results table gathered: ``"flows"`` (default, one row per run per flow),
            ``"links"``, ``"subflows"``, ``"caches"`` or ``"summary"`` (one row per run).
        metrics: result columns to keep (default: all of the table's).
        jobs: local worker threads (default: every core); ignored with ``cluster``.
        out: the sweep directory: run results, ``manifest.json``, ``sweep.parquet``,
            ``sweep.csv``. A second call with the same ``out`` reuses the finished runs.
            Default: a temporary directory, removed afterwards.
        cluster: a Dask scheduler address (``"tcp://host:8786"``) or a
            ``distributed.Client``: run there instead of on local threads; same table.
        progress: progress bar (default: when standard error is a terminal).

    Returns:
        A DataFrame: ``run_id``, ``point``, ``rep``, ``seed``, one column per grid key, then
        the result columns; runs in grid order (repetitions innermost).

    Raises:
        ScenarioError: the sweep is invalid (before anything runs), naming the parameter.
        KeyboardInterrupt: interrupted; finished runs stay in ``out`` for a later call.
        RuntimeError: some runs failed (the others are kept).
    """
    path = Path(scenario) if isinstance(scenario, (str, os.PathLike)) else None
    if path is None or not _pathpool.is_sweep_file(path.read_text(encoding="utf-8")):
        from . import _as_scenario

        return _as_scenario(scenario).sweep(
            grid,
            reps=reps,
            seed=seed,
            set=set,
            table=table,
            metrics=metrics,
            jobs=jobs,
            out=out,
            cluster=cluster,
            progress=progress,
        )
    items = grid_items(grid)
    set_args = [f"{k}={_override_text(v)}" for k, v in (set or {}).items()]
    metric_list = None if metrics is None else list(metrics)
    return execute(
        lambda directory: _pathpool.sweep_plan_file(
            str(path), items, set_args, reps, seed, table, metric_list, directory
        ),
        out=out,
        jobs=jobs,
        cluster=cluster,
        progress=progress,
    )
