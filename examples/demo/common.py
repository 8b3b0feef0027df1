"""What the demo's parts share: where results go, and the report each part adds to."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import matplotlib
import pandas as pd

matplotlib.use("Agg")
from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "results" / "demo"


@dataclasses.dataclass
class Section:
    """One part of the demo: its title, the lines it printed and the plots it saved."""

    title: str
    lines: list[str] = dataclasses.field(default_factory=list)
    figures: list[Path] = dataclasses.field(default_factory=list)
    wall_s: float = 0.0
    # One or two lines for the demo's closing summary: the main figure against its expectation.
    highlights: list[str] = dataclasses.field(default_factory=list)

    def say(self, line: str = "") -> None:
        """Prints a line and keeps it for the report and the index page."""
        print(line, flush=True)
        self.lines.append(line)

    def save(self, fig: Figure, name: str) -> Path:
        """Saves `fig` as results/demo/NAME.png and lists it under this section."""
        path = OUT / f"{name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        self.figures.append(path)
        self.say(f"plot: {path.relative_to(ROOT)}")
        return path


def pct(x: float) -> str:
    """A fraction as a percentage with one decimal: 0.523 -> '52.3%'."""
    return f"{100 * x:.1f}%"


def mbps(bps: float) -> str:
    """A rate in bit/s as '12.34 Mb/s'."""
    return f"{bps / 1e6:.2f} Mb/s"


def cell(table: pd.DataFrame, row: str, column: str) -> float:
    """One number of a results table indexed by id: the `column` of row `row`."""
    return float(table[column].loc[row])
