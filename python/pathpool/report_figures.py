"""The figures of an HTML reproduction report, drawn with matplotlib and returned as PNG bytes
(the page embeds them, so it needs no other file).

* :func:`deviation_chart`: every compared figure on one scale, (measured - published) in
  units of its tolerance, so the tolerance band is [-1, 1] for every row whatever its unit;
* :func:`runs_chart`: every run's figures from a per-run table (``runs.csv``), one panel per
  measured column, one row per configuration, one dot per seed.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

# The colours of the Rust SVG chart (crates/pathpool-cli/src/reproduce/svg.rs), so the two
# read alike: blue when the interval lies in the band, orange when it meets it, red when it
# misses it.
VERDICT_COLOURS = {"within": "#1f77b4", "overlaps": "#ff7f0e", "outside": "#d62728"}

# Deviations beyond this many tolerances are drawn at the edge (with the value written
# there): one far miss would otherwise squeeze every band to a sliver.
CLIP_TOLERANCES = 6.0


@dataclass(frozen=True)
class Deviation:
    """One compared figure, as the deviation chart draws it."""

    label: str
    published: float
    measured: float
    ci95: float
    tolerance: float
    verdict: str


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    # No "Software" entry: the same rows give the same bytes on any matplotlib version.
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def deviation_chart(rows: Sequence[Deviation], title: str) -> bytes:
    """A horizontal chart of (measured - published) / tolerance with the 95% interval."""
    if not rows:
        raise ValueError("no compared figures to draw")
    height_in = 1.3 + 0.27 * len(rows)
    fig, ax = plt.subplots(figsize=(9.5, height_in))
    ax.axvspan(-1.0, 1.0, color="#cfe8cf", zorder=0, label="tolerance band")
    ax.axvline(0.0, color="black", linewidth=1.5, zorder=1, label="published")
    for y, r in enumerate(rows):
        # A zero tolerance would make every deviation infinite: draw it as exact.
        scale = r.tolerance if r.tolerance > 0 else 1.0
        centre = (r.measured - r.published) / scale
        half = r.ci95 / scale
        colour = VERDICT_COLOURS.get(r.verdict, "grey")
        lo = max(centre - half, -CLIP_TOLERANCES)
        hi = min(centre + half, CLIP_TOLERANCES)
        shown = min(max(centre, -CLIP_TOLERANCES), CLIP_TOLERANCES)
        ax.plot([lo, hi], [y, y], color=colour, linewidth=1.5, zorder=2)
        ax.plot([shown], [y], "o", color=colour, markersize=5, zorder=3)
        if shown != centre:
            ax.annotate(
                f"{centre:+.1f}",
                (shown, y),
                xytext=(-4 if centre > 0 else 4, 0),
                textcoords="offset points",
                ha="right" if centre > 0 else "left",
                va="center",
                fontsize=7,
                color=colour,
            )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r.label for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(-CLIP_TOLERANCES - 0.3, CLIP_TOLERANCES + 0.3)
    ax.set_xlabel("(measured - published) / tolerance   (band: ±1; dot: mean; line: 95% CI)")
    ax.set_title(title, fontsize=10)
    for verdict, colour in VERDICT_COLOURS.items():
        ax.plot([], [], "o-", color=colour, label=f"measured: {verdict}")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.9 / height_in), ncol=5)
    ax.grid(axis="x", color="#eee")
    fig.tight_layout()
    return _png(fig)


@dataclass(frozen=True)
class RunsTable:
    """A per-run table split into what configures a run and what it measured."""

    config: list[str]
    """Columns naming the configuration (text, booleans, whole numbers) that take more than
    one value, without ``seed``."""
    measured: list[str]
    """Columns of measured numbers."""
    rows: list[dict[str, str]]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def split_runs(header: Sequence[str], rows: Sequence[Sequence[str]]) -> RunsTable:
    """Splits a per-run table: a column of numbers with a fraction anywhere is measured, any
    other column but ``seed`` that takes several values is configuration. A long table
    (``metric`` and ``value`` columns, as wischik-nsdi11's) is widened first: one measured
    column per metric."""
    records = [dict(zip(header, r)) for r in rows if len(r) == len(header)]
    cols = list(header)
    if "metric" in cols and "value" in cols:
        keys = [c for c in cols if c not in ("metric", "value")]
        wide: dict[tuple[str, ...], dict[str, str]] = {}
        metrics: list[str] = []
        for rec in records:
            key = tuple(rec[k] for k in keys)
            wide.setdefault(key, dict(zip(keys, key)))[rec["metric"]] = rec["value"]
            if rec["metric"] not in metrics:
                metrics.append(rec["metric"])
        records = list(wide.values())
        cols = keys + metrics
    measured: list[str] = []
    config: list[str] = []
    for c in cols:
        values = [rec.get(c, "") for rec in records]
        numeric = all(_is_number(v) for v in values if v)
        if c == "seed":
            continue
        if numeric and any("." in v or "e" in v.lower() for v in values):
            measured.append(c)
        elif len(set(values)) > 1:
            # A column with one value throughout (e.g. `completed` = true) varies nothing.
            config.append(c)
    return RunsTable(config, measured, records)


def runs_chart(table: RunsTable, title: str, max_panels: int = 4) -> bytes | None:
    """One panel per measured column (the first ``max_panels``), a row per configuration
    and a dot per run; ``None`` when the table has no measured column."""
    panels = table.measured[:max_panels]
    if not panels or not table.rows:
        return None
    groups: dict[str, list[dict[str, str]]] = {}
    for rec in table.rows:
        label = ", ".join(f"{c}={rec.get(c, '')}" for c in table.config) or "all runs"
        groups.setdefault(label, []).append(rec)
    configs = list(groups)
    height_in = 1.4 + 0.22 * len(configs)
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.0 + 2.6 * len(panels), height_in), sharey=True, squeeze=False
    )
    for ax, column in zip(axes[0], panels):
        for y, label in enumerate(configs):
            values = [float(rec[column]) for rec in groups[label] if rec.get(column)]
            if values:
                ax.plot(values, [y] * len(values), "o", color="#1f77b4", alpha=0.5, markersize=4)
                ax.plot([sum(values) / len(values)], [y], "|", color="black", markersize=10)
        ax.set_title(column, fontsize=9)
        ax.grid(axis="x", color="#eee")
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_yticks(range(len(configs)))
    axes[0][0].set_yticklabels(configs, fontsize=7)
    axes[0][0].invert_yaxis()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _png(fig)


@dataclass(frozen=True)
class LineSpec:
    """How to draw one of the other tables a reproduction writes: ``y`` against ``x``, one
    panel per value of ``panel``, one line per combination of ``lines``, the mean over the
    rows that differ only in the remaining columns (e.g. the seeds)."""

    file: str
    x: str
    y: str
    panel: str
    lines: tuple[str, ...]
    title: str


# The tables besides runs.csv that are worth a figure, by file name. convergence's is the
# thesis's own kind of figure (Figs. 5.2-5.5: the per-second share averaged over the
# repetitions); domain-scale's e7b table is Fig. 4.17's gain per topology.
LINE_CHARTS = (
    LineSpec(
        "share_per_second.csv",
        "second",
        "share",
        "setting",
        ("cc",),
        "multipath share per second (%), mean over the seeds (share_per_second.csv)",
    ),
    LineSpec(
        "e7b_gains.csv",
        "topology",
        "mean_gain_pct",
        "core_rate",
        ("paths", "tm"),
        "multipath gain per topology (%), ascending density (e7b_gains.csv)",
    ),
)


def line_chart(
    spec: LineSpec, header: Sequence[str], rows: Sequence[Sequence[str]]
) -> bytes | None:
    """The chart ``spec`` describes, or ``None`` when the table lacks one of its columns or
    has no row with a number in ``y``."""
    needed = (spec.x, spec.y, spec.panel, *spec.lines)
    if any(c not in header for c in needed):
        return None
    at = {c: header.index(c) for c in needed}
    sums: dict[str, dict[str, dict[str, list[float]]]] = {}
    xs: list[str] = []
    for r in rows:
        if len(r) != len(header) or not _is_number(r[at[spec.y]]):
            continue
        x = r[at[spec.x]]
        if x not in xs:
            xs.append(x)
        line = ", ".join(r[at[c]] for c in spec.lines)
        panel = sums.setdefault(r[at[spec.panel]], {})
        panel.setdefault(line, {}).setdefault(x, []).append(float(r[at[spec.y]]))
    if not sums:
        return None
    numeric_x = all(_is_number(x) for x in xs)
    position = {x: (float(x) if numeric_x else float(i)) for i, x in enumerate(xs)}
    columns = min(len(sums), 3)
    rows_n = -(-len(sums) // columns)
    fig, axes = plt.subplots(
        rows_n, columns, figsize=(4.2 * columns, 2.8 * rows_n + 0.6), squeeze=False, sharey=True
    )
    for ax, (name, lines) in zip(axes.flat, sums.items()):
        for label, points in lines.items():
            order = sorted(points, key=lambda x: position[x])
            ax.plot(
                [position[x] for x in order],
                [sum(points[x]) / len(points[x]) for x in order],
                linewidth=0.9,
                label=label,
            )
        ax.set_title(f"{spec.panel} = {name}", fontsize=9)
        ax.grid(color="#eee")
        ax.tick_params(labelsize=7)
        if not numeric_x:
            ax.set_xticks(range(len(xs)))
            ax.set_xticklabels(xs, rotation=60, ha="right", fontsize=6)
        ax.legend(fontsize=6, title=", ".join(spec.lines), title_fontsize=6)
    for ax in list(axes.flat)[len(sums) :]:
        ax.set_visible(False)
    fig.suptitle(spec.title, fontsize=10)
    fig.tight_layout()
    return _png(fig)
