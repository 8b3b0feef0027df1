"""The demo's index page: one self-contained HTML file (plots embedded as PNG data URIs),
each part's printed summary and its plots, so the results can be mailed or opened offline."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from demo.common import ROOT, Section

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1150px; margin: 2em auto; padding: 0 1em;
       color: #222; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 12.5px; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.4em 0; }
nav a { margin-right: 1em; }
.meta { color: #666; font-size: 0.9em; }
"""


def image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    alt = html.escape(path.name)
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{alt}">'
        f"<figcaption>{alt}</figcaption></figure>"
    )


def write(path: Path, sections: Sequence[Section], total_s: float, stamp: str) -> None:
    """Writes the index page of `sections` to `path`."""
    nav = " ".join(f'<a href="#part{i}">{html.escape(s.title)}</a>' for i, s in enumerate(sections))
    parts = []
    for i, s in enumerate(sections):
        lines = [ln for ln in s.lines if not ln.startswith(("== ", "plot: "))]
        took = f'<p class="meta">{s.wall_s:.1f} s</p>' if s.wall_s else ""
        parts.append(
            f'<section id="part{i}"><h2>{html.escape(s.title)}</h2>{took}'
            f"<pre>{html.escape(chr(10).join(lines).strip())}</pre>"
            + "".join(image(f) for f in s.figures)
            + "</section>"
        )
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>pathpool demo</title>"
        f"<style>{STYLE}</style></head><body>"
        "<h1>pathpool demo</h1>"
        f'<p class="meta">{html.escape(stamp)}; {total_s:.0f} s in all. Produced by'
        f" <code>make demo</code> (examples/demo/); the tables and run directories are beside"
        f" this page in {html.escape(str(path.parent.relative_to(ROOT)))}/.</p>"
        f"<nav>{nav}</nav>" + "".join(parts) + "</body></html>\n"
    )
    path.write_text(page, encoding="utf-8")
