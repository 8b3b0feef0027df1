"""The documents' reproductions from Python: run one, get its comparisons and observations as
DataFrames, its figures, and an HTML page.

::

    import pathpool as pp

    pp.reproductions()                      # id, title, source of each
    rep = pp.reproduce("nmcc-shared-bottleneck", quick=True)
    rep.comparisons                         # one row per compared figure, as `--json` prints
    rep.observations                        # figures measured with no published value
    rep.to_html("results/html")             # one self-contained page

The runs happen in Rust (``pathpool-lab``) with the GIL released, exactly as
``pathpool reproduce ID`` runs them, and the same output directory is written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from . import _pathpool

__all__ = ["Reproduction", "reproduce", "reproductions"]

_COMPARISON_COLUMNS = [
    "experiment",
    "metric",
    "unit",
    "published",
    "measured",
    "ci95",
    "runs",
    "tolerance",
    "within",
    "verdict",
    "source",
]
_OBSERVATION_COLUMNS = ["metric", "unit", "measured", "ci95", "runs"]


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    """The rows as a DataFrame through Arrow (typed columns even when there are no rows)."""
    if not rows:
        return pd.DataFrame({c: [] for c in columns})
    return pa.Table.from_pylist(rows).select(columns).to_pandas()


@dataclass(frozen=True)
class Reproduction:
    """What one reproduction produced."""

    id: str
    """The experiment id."""
    out: Path
    """The directory it wrote (``comparisons.jsonl``, ``observations.json``, figures, tables)."""
    quick: bool
    """Whether it was the reduced version."""
    rows: list[dict[str, Any]] = field(repr=False)
    """The comparisons as the objects ``pathpool reproduce ID --json`` prints."""
    observation_rows: list[dict[str, Any]] = field(repr=False)
    """The observations as ``observations.json`` holds them."""

    @property
    def comparisons(self) -> pd.DataFrame:
        """One row per figure measured against a published one: published, measured, its 95%
        interval, the tolerance, ``within`` (the mean alone) and ``verdict`` (the interval
        against the tolerance band: ``within``, ``overlaps`` or ``outside``)."""
        return _frame(self.rows, _COMPARISON_COLUMNS)

    @property
    def observations(self) -> pd.DataFrame:
        """Figures measured that the documents give no number for."""
        return _frame(self.observation_rows, _OBSERVATION_COLUMNS)

    @property
    def figures(self) -> list[Path]:
        """The figure files the reproduction wrote (SVG)."""
        return sorted(self.out.glob("*.svg"))

    @property
    def within(self) -> int:
        """Figures whose 95% interval lies in the tolerance band."""
        return sum(1 for r in self.rows if r["verdict"] == "within")

    def to_html(self, out_dir: str | os.PathLike[str]) -> Path:
        """Writes this reproduction's HTML page (self-contained: figures embedded) into
        ``out_dir``; returns its path."""
        from .report_html import write_reports

        pages = write_reports(
            self.rows,
            Path(out_dir),
            results_dir=self.out,
            quick=self.quick,
            experiments=[self.id],
        )
        return pages[0]

    def __str__(self) -> str:
        return (
            f"{self.id}{' (quick)' if self.quick else ''}: {self.within} of {len(self.rows)} "
            f"figures within tolerance by their 95% interval; outputs in {self.out}"
        )


def reproductions() -> pd.DataFrame:
    """Every reproduction: ``id``, ``title`` and ``source`` (the documents' section and
    figure), in documentation order, then those run on this machine's kernel (root; not part
    of ``all``)."""
    rows = _pathpool.reproductions()
    return pd.DataFrame(rows, columns=["id", "title", "source"])


def reproduce(
    id: str,
    *,
    quick: bool = True,
    seeds: int | None = None,
    jobs: int | None = None,
    out: str | os.PathLike[str] | None = None,
    overrides: dict[str, str] | None = None,
    zoo_dir: str | os.PathLike[str] | None = None,
    server_quickack: bool = False,
    settings: list[str] | None = None,
    progress: bool = False,
) -> Reproduction:
    """Runs reproduction ``id`` (see :func:`reproductions`) as ``pathpool reproduce ID``
    does and returns what it produced.

    Args:
        quick: the reduced version (fewer seeds, shorter runs, same conclusions).
        seeds: repetitions per configuration (default: the experiment's).
        jobs: worker threads (default: every core).
        out: the output directory (default ``results/reproduce/<id>``).
        overrides: scenario fields set in every run (``{"tcp.min_rto": "1s"}``): a what-if;
            the published values stay the documents'.
        zoo_dir: domain-scale only: a directory of Topology Zoo GML files.
        server_quickack: convergence-linux only: the kernel server acknowledges every
            segment at once (no delayed ACKs), which removes Linux MPTCP's receiver effect
            on the subflows (docs/linux.md); the published values stay the thesis's.
        settings: convergence-linux only: run only these E8 settings, by name
            (``["rtt-200ms"]``; default: every one, or the default setting with ``quick``).
        progress: show the runs' progress on standard error.

    Raises:
        ValueError: an unknown id or a bad option.
        RuntimeError: the experiment could not run or write its outputs.
    """
    out_dir = Path(out) if out is not None else Path("results/reproduce") / id
    comparisons, observations = _pathpool.reproduce(
        id,
        str(out_dir),
        quick=quick,
        seeds=seeds,
        jobs=jobs,
        overrides=[(k, str(v)) for k, v in (overrides or {}).items()],
        zoo_dir=None if zoo_dir is None else str(zoo_dir),
        server_quickack=server_quickack,
        settings=list(settings or []),
        progress=progress,
    )
    rows = [json.loads(line) for line in comparisons.splitlines() if line]
    return Reproduction(
        id=id,
        out=out_dir,
        quick=quick,
        rows=rows,
        observation_rows=json.loads(observations),
    )
