"""HTML reports of ``pathpool reproduce``: one self-contained page per reproduction and an
index page linking them.

Input: the rows that ``pathpool reproduce ID --json`` prints (one object per compared
figure; ``docs/reproductions.md``, "The ``--json`` interface") and, optionally, the
directory the reproduction wrote with ``-o DIR`` (``observations.json``, ``runs.csv``).
A page shows what was run, measured next to published with the tolerance and a pass or miss
mark, the explanation of each miss from ``docs/reproductions.md`` (its ``report:`` blocks,
:mod:`pathpool.report_docs`), and figures drawn with matplotlib. CSS and figures are inside
the page: it loads nothing else.

From Python::

    from pathpool.report_html import write_reports
    write_reports(rows, "results/html", results_dir="results/reproduce", quick=True)

From the shell (``python -m pathpool.report_html --help``)::

    pathpool reproduce all --quick --json -o results/reproduce > rows.jsonl
    python -m pathpool.report_html --json rows.jsonl --results results/reproduce \\
        --quick -o results/html
"""

from __future__ import annotations

import argparse
import base64
import csv
import html
import json
import math
import numbers
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .report_docs import DocBlock, DocsError, ReproductionDocs, read_docs, render_markdown
from .report_figures import (
    LINE_CHARTS,
    Deviation,
    deviation_chart,
    line_chart,
    runs_chart,
    split_runs,
)

Verdict = Literal["within", "overlaps", "outside"]
VERDICTS: tuple[Verdict, ...] = ("within", "overlaps", "outside")
MARKS: dict[Verdict, str] = {"within": "✓ pass", "overlaps": "~ undecided", "outside": "✗ miss"}


class ReportError(ValueError):
    """Bad input for a report; the message names the file or row and the field."""


@dataclass(frozen=True)
class Comparison:
    """One row of ``pathpool reproduce --json``."""

    experiment: str
    metric: str
    unit: str
    published: float
    measured: float
    ci95: float
    runs: int
    tolerance: float
    within: bool
    verdict: Verdict
    source: str

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], where: str) -> Comparison:
        """Checks one row's fields; ``where`` (file and line, or row number) names it in
        errors."""

        # Booleans are numbers to Python and NumPy; neither is a number here. NumPy scalars
        # are accepted so that DataFrame records (`df.to_dict("records")`) pass.
        booleans = (bool, np.bool_)
        kinds: dict[str, tuple[str, Callable[[object], bool]]] = {
            "string": ("a string", lambda v: isinstance(v, str)),
            "number": (
                "a number",
                lambda v: isinstance(v, numbers.Real) and not isinstance(v, booleans),
            ),
            "whole": (
                "a whole number",
                lambda v: isinstance(v, numbers.Integral) and not isinstance(v, booleans),
            ),
            "bool": ("true or false", lambda v: isinstance(v, booleans)),
        }

        def get(key: str, kind: str) -> Any:
            what, ok = kinds[kind]
            if key not in obj:
                raise ReportError(f"{where}: missing field {key!r} ({what})")
            value = obj[key]
            if not ok(value):
                raise ReportError(f"{where}: field {key!r} must be {what}, not {value!r}")
            return value

        verdict = get("verdict", "string")
        if verdict not in VERDICTS:
            raise ReportError(
                f"{where}: field 'verdict' is {verdict!r}; allowed: {', '.join(VERDICTS)}"
            )
        return cls(
            experiment=get("experiment", "string"),
            metric=get("metric", "string"),
            unit=get("unit", "string"),
            published=float(get("published", "number")),
            measured=float(get("measured", "number")),
            ci95=float(get("ci95", "number")),
            runs=int(get("runs", "whole")),
            tolerance=float(get("tolerance", "number")),
            within=bool(get("within", "bool")),
            verdict=verdict,
            source=get("source", "string"),
        )


@dataclass(frozen=True)
class Observation:
    """One entry of ``observations.json``: measured, with no published value."""

    metric: str
    unit: str
    measured: float
    ci95: float
    runs: int


def read_rows(lines: Iterable[str], where: str) -> list[Comparison]:
    """Parses ``--json`` output (one object per line; blank lines skipped)."""
    rows: list[Comparison] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ReportError(f"{where}:{number}: not a JSON object: {e}") from e
        if not isinstance(obj, dict):
            raise ReportError(f"{where}:{number}: expected a JSON object, got {line.strip()!r}")
        rows.append(Comparison.from_json(obj, f"{where}:{number}"))
    return rows


def read_observations(path: Path) -> list[Observation]:
    """Reads ``observations.json`` (a list of objects) written by ``pathpool reproduce``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not JSON: {e}") from e
    if not isinstance(data, list):
        raise ReportError(f"{path}: expected a list of observations")
    out: list[Observation] = []
    for i, o in enumerate(data, start=1):
        try:
            out.append(
                Observation(
                    str(o["metric"]),
                    str(o["unit"]),
                    float(o["measured"]),
                    float(o["ci95"]),
                    int(o["runs"]),
                )
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ReportError(
                f"{path}: observation {i}: needs metric, unit, measured, ci95, runs ({e})"
            ) from e
    return out


def default_docs() -> Path | None:
    """``docs/reproductions.md`` of the checkout this package is in, if there is one."""
    candidate = Path(__file__).resolve().parents[2] / "docs" / "reproductions.md"
    return candidate if candidate.is_file() else None


def _num(x: float) -> str:
    """Three significant figures at most, as the docs' tables give them."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:.{min(digits, 4)}f}"


def _e(text: object) -> str:
    return html.escape(str(text))


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="figure" alt="{_e(alt)}" src="data:image/png;base64,{data}">'


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:70em;
 padding:0 1em;color:#222;line-height:1.45}
h1{margin-bottom:.1em}.sub{color:#555;margin-top:0}
.score{display:inline-block;padding:.3em .7em;border-radius:.4em;background:#eef;margin:.2em 0}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top}
th{background:#f3f3f3;text-align:left}td.num{text-align:right;white-space:nowrap}
tr.within td.mark{background:#dcf0dc}tr.overlaps td.mark{background:#fbe7cf}
tr.outside td.mark{background:#f6d0d0}td.mark{white-space:nowrap;font-weight:600}
.doc{font-size:.88em}.explain{border-left:4px solid #ccc;padding:.1em 1em;margin:1em 0;
 background:#fafafa}.explain.missing{border-color:#d62728}
img.figure{max-width:100%;height:auto;display:block;margin:.8em 0}
code{background:#f3f3f3;padding:0 .2em}details.scenario{margin:.4em 0}
details.scenario pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.82em}
.note{color:#555;font-size:.9em}
a{color:#1f5fa8}
"""


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ReportError(f"{path}: empty table (expected a header line)")
    return rows[0], rows[1:]


def _setup_section(
    experiment: str,
    rows: Sequence[Comparison],
    docs: ReproductionDocs | None,
    results_dir: Path | None,
    quick: bool | None,
    command: str | None,
) -> str:
    facts = [
        ("command", f"<code>{_e(command)}</code>" if command else "not given to the report"),
        (
            "version",
            "quick (<code>--quick</code>)"
            if quick
            else ("full" if quick is not None else "not given to the report"),
        ),
        (
            "source",
            _e(rows[0].source) if rows else "the documents give no numbers: measured only",
        ),
    ]
    if rows:
        runs = ", ".join(str(r) for r in sorted({c.runs for c in rows}))
        facts.append(("runs per figure", _e(runs)))
    runs_csv = results_dir / "runs.csv" if results_dir is not None else None
    if runs_csv is not None and runs_csv.is_file():
        header, data = _read_csv(runs_csv)
        table = split_runs(header, data)
        for c in table.config:
            values = sorted({rec.get(c, "") for rec in table.rows}, key=_sort_key)
            facts.append((f"varied: <code>{_e(c)}</code>", _e(", ".join(values))))
        seeds = sorted({rec["seed"] for rec in table.rows if "seed" in rec}, key=_sort_key)
        if seeds:
            facts.append(("seeds", _e(", ".join(seeds))))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    out = [f'<h2 id="setup">What was run</h2><table class="facts">{body}</table>']
    blocks = docs.setup(experiment) if docs is not None else []
    if blocks:
        out.append(f'<p class="note">From {_e(_docs_name(docs))}:</p>')
        out += [f'<div class="doc">{render_markdown(b.markdown)}</div>' for b in blocks]
    else:
        out.append(
            f'<p class="note">{_no_docs(docs, "setup", experiment)}: the set-up is not '
            "described here.</p>"
        )
    for scenario in docs.scenarios(experiment) if docs is not None else []:
        name = f"scenarios/reproductions/{scenario.name}"
        if scenario.is_file():
            out.append(
                f'<details class="scenario"><summary>Scenario file <code>{_e(name)}</code> '
                "(the command varies it with overrides)</summary>"
                f"<pre>{_e(scenario.read_text(encoding='utf-8'))}</pre></details>"
            )
        else:
            out.append(f'<p class="note">Scenario file <code>{_e(name)}</code> not found.</p>')
    return "\n".join(out)


def _no_docs(docs: ReproductionDocs | None, kind: str, experiment: str) -> str:
    """Why a page has no paragraph of the docs: none found, or no matching block."""
    if docs is None:
        return (
            "docs/reproductions.md was not found (the package does not run from a checkout; "
            "give <code>docs=</code> or <code>--docs</code>)"
        )
    return (
        f"{_e(_docs_name(docs))} has no matching <code>report:{kind} {_e(experiment)}</code> block"
    )


def _docs_name(docs: ReproductionDocs | None) -> str:
    if docs is None:
        return "docs/reproductions.md"
    parent = docs.path.parent.name
    return f"{parent}/{docs.path.name}" if parent else docs.path.name


def _sort_key(v: str) -> tuple[int, float, str]:
    try:
        return (0, float(v), "")
    except ValueError:
        return (1, 0.0, v)


def _explanations(
    experiment: str, rows: Sequence[Comparison], docs: ReproductionDocs | None
) -> tuple[dict[str, list[int]], str]:
    """Which explanation blocks (by index) each missed metric has, and the section's HTML."""
    blocks: list[DocBlock] = docs.misses(experiment) if docs is not None else []
    missed = [r for r in rows if r.verdict != "within"]
    links: dict[str, list[int]] = {}
    out = ['<h2 id="misses">Why the misses</h2>']
    if not missed:
        out.append("<p>Every figure's interval lies in its tolerance band: nothing to explain.</p>")
        return links, "\n".join(out)
    for r in missed:
        links[r.metric] = [i for i, b in enumerate(blocks) if b.explains(r.metric)]
    for i, b in enumerate(blocks):
        about = [r for r in missed if i in links[r.metric]]
        if not about:
            continue
        names = "".join(
            f'<li>{_e(r.metric)} <span class="note">({_e(MARKS[r.verdict])})</span></li>'
            for r in about
        )
        out.append(
            f'<div class="explain" id="explain-{i}"><p class="note">{_e(_docs_name(docs))}, '
            f"line {b.line}, explains:</p><ul>{names}</ul>{render_markdown(b.markdown)}</div>"
        )
    unexplained = [r for r in missed if not links[r.metric]]
    if unexplained:
        names = "".join(f"<li>{_e(r.metric)}</li>" for r in unexplained)
        out.append(
            f'<div class="explain missing" id="unexplained"><p>No explanation: '
            f"{_no_docs(docs, 'misses', experiment)} for:</p><ul>{names}</ul></div>"
        )
    return links, "\n".join(out)


def _comparison_table(rows: Sequence[Comparison], links: Mapping[str, list[int]]) -> str:
    head = (
        "<tr><th>#</th><th>metric</th><th>published</th><th>tolerance band</th>"
        "<th>measured (mean ± 95% CI)</th><th>runs</th><th>mean in band</th><th>verdict</th>"
        "<th>why</th></tr>"
    )
    body: list[str] = []
    for n, r in enumerate(rows, start=1):
        unit = _e(r.unit)
        why = ""
        if r.verdict != "within":
            targets = links.get(r.metric, [])
            why = (
                " ".join(f'<a href="#explain-{i}">docs</a>' for i in targets)
                if targets
                else '<a href="#unexplained">none</a>'
            )
        attrs = "".join(
            f' data-{k}="{_e(v)}"'
            for k, v in (
                ("metric", r.metric),
                ("published", repr(r.published)),
                ("measured", repr(r.measured)),
                ("ci95", repr(r.ci95)),
                ("tolerance", repr(r.tolerance)),
                ("runs", r.runs),
                ("verdict", r.verdict),
            )
        )
        body.append(
            f'<tr class="comparison {r.verdict}"{attrs}><td class="num">{n}</td>'
            f'<td>{_e(r.metric)}</td><td class="num">{_num(r.published)}{unit}</td>'
            f'<td class="num">{_num(r.published - r.tolerance)} … '
            f"{_num(r.published + r.tolerance)}{unit} (±{_num(r.tolerance)})</td>"
            f'<td class="num">{_num(r.measured)}{unit} ± {_num(r.ci95)}</td>'
            f'<td class="num">{r.runs}</td><td>{"yes" if r.within else "no"}</td>'
            f'<td class="mark">{_e(MARKS[r.verdict])}</td><td>{why}</td></tr>'
        )
    return (
        '<h2 id="comparisons">Measured against published</h2>'
        '<p class="note">✓ pass: the whole 95% interval of the mean lies in the tolerance band; '
        "~ undecided: it meets the band without lying in it (more seeds could decide); "
        '✗ miss: it lies outside the band. "Mean in band" is the mean alone.</p>'
        f'<table id="comparisons-table"><thead>{head}</thead><tbody>{"".join(body)}</tbody>'
        "</table>"
    )


def _observations_section(observations: Sequence[Observation]) -> str:
    if not observations:
        return ""
    body = "".join(
        f'<tr><td>{_e(o.metric)}</td><td class="num">{_num(o.measured)}{_e(o.unit)} ± '
        f'{_num(o.ci95)}</td><td class="num">{o.runs}</td></tr>'
        for o in observations
    )
    return (
        '<h2 id="observations">Measured only (no published value)</h2><table>'
        "<thead><tr><th>metric</th><th>measured (mean ± 95% CI)</th><th>runs</th></tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def _svg(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img class="figure" alt="{_e(path.name)}" src="data:image/svg+xml;base64,{data}">'


def _figures_section(experiment: str, rows: Sequence[Comparison], results_dir: Path | None) -> str:
    out = ['<h2 id="figures">Figures</h2>']
    if not rows:
        # Nothing to compare: the figures the reproduction drew itself are its results.
        svgs = sorted(results_dir.glob("*.svg")) if results_dir is not None else []
        out += [_svg(p) for p in svgs]
        if not svgs:
            out.append('<p class="note">The reproduction drew no figure.</p>')
        return "\n".join(out)
    devs = [
        Deviation(r.metric, r.published, r.measured, r.ci95, r.tolerance, r.verdict) for r in rows
    ]
    out.append(
        _img(deviation_chart(devs, f"{experiment}: measured against published"), "deviations")
    )
    if results_dir is not None and (results_dir / "runs.csv").is_file():
        header, data = _read_csv(results_dir / "runs.csv")
        table = split_runs(header, data)
        png = runs_chart(table, f"{experiment}: every run (runs.csv; bar: mean)")
        if png is not None:
            out.append(_img(png, "runs"))
            if len(table.measured) > 4:
                rest = ", ".join(table.measured[4:])
                out.append(f'<p class="note">Not drawn from runs.csv: {_e(rest)}.</p>')
    elif results_dir is None:
        out.append('<p class="note">No results directory given: per-run figures omitted.</p>')
    for spec in LINE_CHARTS:
        if results_dir is not None and (results_dir / spec.file).is_file():
            header, data = _read_csv(results_dir / spec.file)
            png = line_chart(spec, header, data)
            if png is not None:
                out.append(_img(png, spec.file))
    return "\n".join(out)


def _score(rows: Sequence[Comparison]) -> tuple[int, int, int]:
    """(within by the interval, within by the mean, total)."""
    return (
        sum(r.verdict == "within" for r in rows),
        sum(r.within for r in rows),
        len(rows),
    )


def write_html(
    rows: Sequence[Mapping[str, Any] | Comparison],
    out_dir: str | Path,
    *,
    results_dir: str | Path | None = None,
    observations: Sequence[Observation] | None = None,
    quick: bool | None = None,
    command: str | None = None,
    docs: str | Path | ReproductionDocs | None = None,
    index_link: bool = False,
    experiment: str | None = None,
) -> Path:
    """Writes ``OUT_DIR/ID.html`` for one reproduction and returns its path.

    Args:
        rows: the ``--json`` rows of one experiment (dicts as parsed, or :class:`Comparison`);
            empty for an experiment the documents give no numbers for (give ``experiment``).
        out_dir: the directory for the page (created).
        results_dir: the reproduction's ``-o`` directory: ``observations.json`` and
            ``runs.csv`` are read from it when there.
        observations: measured-only figures (default: ``results_dir/observations.json``).
        quick: whether the run was ``--quick`` (``None``: the page says it was not given).
        command: the command that ran it, shown as given.
        docs: ``reproductions.md`` (path or parsed); default: the checkout's, if any.
        index_link: link to ``index.html`` beside the page (:func:`write_reports` sets it
            when it writes one).
        experiment: the experiment's id (default: the rows'); required without rows.

    Raises:
        ReportError: no rows and no ``experiment``, rows of several experiments or of another
            experiment, or a malformed row or file.
        DocsError: a malformed ``report:`` marker in the docs.
    """
    comps = [
        r if isinstance(r, Comparison) else Comparison.from_json(r, f"row {i}")
        for i, r in enumerate(rows, start=1)
    ]
    if not comps and experiment is None:
        raise ReportError("no comparison rows: nothing to report")
    ids = sorted({c.experiment for c in comps} | ({experiment} if experiment else set()))
    if len(ids) > 1:
        raise ReportError(
            f"rows of several experiments ({', '.join(ids)}): use write_reports for them"
        )
    experiment = ids[0]
    res = Path(results_dir) if results_dir is not None else None
    if observations is None and res is not None and (res / "observations.json").is_file():
        observations = read_observations(res / "observations.json")
    parsed_docs = _load_docs(docs)
    links, misses_html = _explanations(experiment, comps, parsed_docs)
    within, mean_within, total = _score(comps)
    body = "\n".join(
        [
            '<p class="note"><a href="index.html">all reproductions</a></p>' if index_link else "",
            f"<h1>{_e(experiment)}</h1>",
            f'<p class="sub">{_e(comps[0].source)}</p>' if comps else "",
            f'<p class="score" id="score">{within} of {total} figures pass (95% interval in '
            f"the tolerance band); {mean_within} of {total} means in the band</p>"
            if comps
            else '<p class="score" id="score">The documents give no numbers for this '
            "experiment: every figure is measured only.</p>",
            _setup_section(experiment, comps, parsed_docs, res, quick, command),
            _comparison_table(comps, links) if comps else "",
            misses_html if comps else "",
            _figures_section(experiment, comps, res),
            _observations_section(observations or []),
        ]
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{experiment}.html"
    path.write_text(_page(f"{experiment}: reproduction report", body), encoding="utf-8")
    return path


def _load_docs(docs: str | Path | ReproductionDocs | None) -> ReproductionDocs | None:
    if isinstance(docs, ReproductionDocs):
        return docs
    path = Path(docs) if docs is not None else default_docs()
    return read_docs(path) if path is not None else None


def write_index(pages: Sequence[tuple[Path, Sequence[Comparison]]], out_dir: str | Path) -> Path:
    """Writes ``OUT_DIR/index.html`` linking each page with its pass count (a page without
    comparisons, of an experiment the documents give no numbers for, is named by its file)."""
    rows: list[str] = []
    totals = [0, 0, 0]
    for page, comps in pages:
        within, mean_within, total = _score(comps)
        totals = [totals[0] + within, totals[1] + mean_within, totals[2] + total]
        experiment = comps[0].experiment if comps else page.stem
        source = comps[0].source if comps else "no published figures: measured only"
        rows.append(
            f'<tr data-experiment="{_e(experiment)}" data-within="{within}" '
            f'data-total="{total}"><td><a href="{_e(page.name)}">{_e(experiment)}</a></td>'
            f'<td>{_e(source)}</td><td class="num">{within} / {total}</td>'
            f'<td class="num">{mean_within} / {total}</td></tr>'
        )
    body = (
        "<h1>Reproductions</h1>"
        f'<p class="score" id="score">{totals[0]} of {totals[2]} figures pass over '
        f"{len(pages)} reproductions ({totals[1]} means in the band)</p>"
        '<table id="index-table"><thead><tr><th>reproduction</th><th>source</th>'
        "<th>pass (interval in band)</th><th>mean in band</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(_page("pathpool reproductions", body), encoding="utf-8")
    return path


def write_reports(
    rows: Sequence[Mapping[str, Any] | Comparison],
    out_dir: str | Path,
    *,
    results_dir: str | Path | None = None,
    quick: bool | None = None,
    command: str | None = None,
    docs: str | Path | ReproductionDocs | None = None,
    experiments: Sequence[str] = (),
) -> list[Path]:
    """Writes one page per experiment in ``experiments``, then per other experiment in
    ``rows`` (in their order), and, for more than one, ``index.html``; returns the paths
    written (the index last). An experiment of ``experiments`` without rows (the documents
    give no numbers for it) gets a page of its measured figures.

    ``results_dir`` is the ``-o`` directory of the run: for one experiment, its own
    directory; for several (``reproduce all -o DIR``), the parent of one directory per id.
    """
    comps = [
        r if isinstance(r, Comparison) else Comparison.from_json(r, f"row {i}")
        for i, r in enumerate(rows, start=1)
    ]
    if not comps and not experiments:
        raise ReportError("no comparison rows: nothing to report")
    groups: dict[str, list[Comparison]] = {e: [] for e in experiments}
    for c in comps:
        groups.setdefault(c.experiment, []).append(c)
    parsed_docs = _load_docs(docs)
    res = Path(results_dir) if results_dir is not None else None
    pages: list[tuple[Path, Sequence[Comparison]]] = []
    for experiment, group in groups.items():
        own: Path | None = None
        if res is not None:
            own = res / experiment if (res / experiment).is_dir() else res
            if len(groups) > 1 and own == res:
                raise ReportError(
                    f"{res}: no directory {experiment}/ for experiment {experiment} "
                    "(several experiments need one directory each, as `reproduce all -o` writes)"
                )
        page = write_html(
            group,
            out_dir,
            results_dir=own,
            quick=quick,
            command=command,
            docs=parsed_docs,
            index_link=len(groups) > 1,
            experiment=experiment,
        )
        pages.append((page, group))
    paths = [p for p, _ in pages]
    if len(pages) > 1:
        paths.append(write_index(pages, out_dir))
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pathpool.report_html``: exit 0, or 2 with a message for bad input."""
    parser = argparse.ArgumentParser(
        prog="python -m pathpool.report_html",
        description="Write HTML reports of `pathpool reproduce`: one page per reproduction, "
        "and index.html when there are several.",
    )
    parser.add_argument(
        "--json",
        type=Path,
        help="the rows printed by `pathpool reproduce ... --json` ('-': standard input; "
        "default: RESULTS/comparisons.jsonl, or RESULTS/*/comparisons.jsonl)",
    )
    parser.add_argument("--results", type=Path, help="the reproduction's -o directory")
    parser.add_argument("-o", "--out", type=Path, required=True, help="directory for the pages")
    parser.add_argument("--quick", action="store_true", help="the run was --quick")
    parser.add_argument("--full", action="store_true", help="the run was not --quick")
    parser.add_argument("--command", help="the command that ran the reproduction (shown)")
    parser.add_argument("--docs", type=Path, help="reproductions.md (default: the checkout's)")
    parser.add_argument(
        "--experiment",
        action="append",
        default=[],
        help="an experiment to give a page even without rows (repeatable; the documents give "
        "no numbers for some)",
    )
    args = parser.parse_args(argv)
    quick: bool | None = True if args.quick else (False if args.full else None)
    try:
        rows = _rows_from_args(args.json, args.results)
        paths = write_reports(
            rows,
            args.out,
            results_dir=args.results,
            quick=quick,
            command=args.command,
            docs=args.docs,
            experiments=args.experiment,
        )
    except (ReportError, DocsError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    return 0


def _rows_from_args(json_path: Path | None, results: Path | None) -> list[Comparison]:
    if json_path is not None:
        if str(json_path) == "-":
            return read_rows(sys.stdin, "<stdin>")
        with json_path.open(encoding="utf-8") as f:
            return read_rows(f, str(json_path))
    if results is None:
        raise ReportError("give --json FILE or --results DIR (where comparisons.jsonl is)")
    files = [results / "comparisons.jsonl"]
    if not files[0].is_file():
        files = sorted(results.glob("*/comparisons.jsonl"))
    if not files:
        raise ReportError(f"{results}: no comparisons.jsonl here or in its subdirectories")
    rows: list[Comparison] = []
    for path in files:
        with path.open(encoding="utf-8") as fh:
            rows += read_rows(fh, str(path))
    return rows


if __name__ == "__main__":
    sys.exit(main())
