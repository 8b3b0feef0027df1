"""The parts of ``docs/reproductions.md`` that the HTML reports show, and a Markdown renderer
for them.

Each reproduction's section marks what a report quotes with HTML comments, which Markdown
viewers do not display, so the document's text stays as it is (D210)::

    <!-- report:setup ID -->          what was run: the set-up and the parameters
    <!-- report:setup ID scenarios="A.toml B.toml" -->   ... run from these files of
                                      scenarios/reproductions/
    <!-- report:misses ID -->         why figures miss their published values
    <!-- report:misses ID metric="REGEX" -->   ... only for the metrics REGEX finds
    <!-- /report -->                  ends the block

A marker names the reproduction id, so a report picks its paragraphs by id, not by heading
text or position.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

BlockKind = Literal["setup", "misses"]

_OPEN = re.compile(
    r"^<!--\s*report:(?P<kind>\S+)\s+(?P<id>[a-z0-9][a-z0-9-]*)"
    r'(?:\s+(?P<attr>[a-z]+)="(?P<value>[^"]*)")?\s*-->\s*$'
)
# The one attribute each kind of block may carry.
_ATTRIBUTE = {"setup": "scenarios", "misses": "metric"}
_CLOSE = re.compile(r"^<!--\s*/report\s*-->\s*$")
_ANY_MARKER = re.compile(r"^<!--\s*/?report\b")


class DocsError(ValueError):
    """A malformed ``report:`` marker; the message names the file and line."""


@dataclass(frozen=True)
class DocBlock:
    """The Markdown between one ``report:`` marker and its ``/report``."""

    kind: BlockKind
    experiment: str
    markdown: str
    metric: re.Pattern[str] | None
    line: int
    """1-based line of the opening marker in the file."""
    scenarios: tuple[str, ...] = ()
    """Scenario files (names in ``scenarios/reproductions/``) a setup block names."""

    def explains(self, metric: str) -> bool:
        """Whether this block is about ``metric`` (every metric when the marker has no
        ``metric=`` pattern)."""
        return self.metric is None or self.metric.search(metric) is not None


@dataclass(frozen=True)
class ReproductionDocs:
    """Every marked block of one ``reproductions.md``."""

    path: Path
    blocks: tuple[DocBlock, ...]

    def setup(self, experiment: str) -> list[DocBlock]:
        """The experiment's set-up blocks, in document order."""
        return [b for b in self.blocks if b.kind == "setup" and b.experiment == experiment]

    def misses(self, experiment: str) -> list[DocBlock]:
        """The experiment's explanation blocks, in document order."""
        return [b for b in self.blocks if b.kind == "misses" and b.experiment == experiment]

    def scenarios(self, experiment: str) -> list[Path]:
        """The scenario files the experiment's setup blocks name, as paths beside the docs
        directory (``DOCS/../scenarios/reproductions/NAME``), in document order."""
        base = self.path.resolve().parent.parent / "scenarios" / "reproductions"
        return [base / name for b in self.setup(experiment) for name in b.scenarios]


def parse_docs(text: str, path: Path) -> ReproductionDocs:
    """Finds the marked blocks of ``text`` (the contents of ``path``, named in errors).

    Raises:
        DocsError: an unknown block kind, a bad ``metric=`` pattern, a marker inside a
            block, a ``/report`` without its opening marker, or a block never closed.
    """
    blocks: list[DocBlock] = []
    current: tuple[BlockKind, str, re.Pattern[str] | None, int, tuple[str, ...]] | None = None
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{path}:{number}"
        opened = _OPEN.match(line.strip())
        if _CLOSE.match(line.strip()):
            if current is None:
                raise DocsError(f"{where}: <!-- /report --> without an opening report: marker")
            kind_open, experiment, metric, start, files = current
            text_md = "\n".join(body).strip()
            blocks.append(DocBlock(kind_open, experiment, text_md, metric, start, files))
            current, body = None, []
        elif opened is not None:
            if current is not None:
                raise DocsError(
                    f"{where}: report: marker inside the block opened on line {current[3]}"
                    " (close it with <!-- /report --> first)"
                )
            kind_text = opened["kind"]
            if kind_text not in ("setup", "misses"):
                raise DocsError(
                    f"{where}: unknown block kind report:{kind_text}; allowed: setup, misses"
                )
            kind: BlockKind = "setup" if kind_text == "setup" else "misses"
            pattern: re.Pattern[str] | None = None
            scenarios: tuple[str, ...] = ()
            attr, value = opened["attr"], opened["value"]
            if attr is not None and attr != _ATTRIBUTE[kind]:
                raise DocsError(f"{where}: report:{kind} takes {_ATTRIBUTE[kind]}=, not {attr}=")
            if attr == "metric":
                try:
                    pattern = re.compile(value)
                except re.error as e:
                    raise DocsError(f"{where}: metric=: not a regular expression: {e}") from e
            elif attr == "scenarios":
                scenarios = tuple(value.split())
                bad = [n for n in scenarios if "/" in n or not n.endswith(".toml")]
                if bad or not scenarios:
                    raise DocsError(
                        f"{where}: scenarios=: expected file names ending in .toml "
                        f"(in scenarios/reproductions/), got {value!r}"
                    )
            current = (kind, opened["id"], pattern, number, scenarios)
        elif _ANY_MARKER.match(line.strip()):
            raise DocsError(
                f"{where}: malformed report marker {line.strip()!r}; expected "
                '<!-- report:setup ID -->, <!-- report:misses ID [metric="REGEX"] --> '
                "or <!-- /report -->"
            )
        elif current is not None:
            body.append(line)
    if current is not None:
        raise DocsError(f"{path}:{current[3]}: report: block never closed with <!-- /report -->")
    return ReproductionDocs(path, tuple(blocks))


def read_docs(path: str | Path) -> ReproductionDocs:
    """Reads and parses ``reproductions.md`` (see :func:`parse_docs`)."""
    p = Path(path)
    return parse_docs(p.read_text(encoding="utf-8"), p)


# --- Markdown: the subset reproductions.md uses (paragraphs, tables, lists, headings, code
# blocks; code, bold, italic and links inline). Links become their text: a report is one
# self-contained file, and the documents they point to are not in it.

_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?![\s*])(.+?)(?<![\s*])\*(?![\w*])")
_LINK = re.compile(r"\[([^\]]+)\]\([^)\s]+\)")
_LIST_ITEM = re.compile(r"^(\s*)(?:[*-]|\d+\.)\s+(.*)$")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def render_inline(text: str) -> str:
    """One line or paragraph of Markdown as HTML (escaped)."""
    out: list[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_render_plain(text[pos : m.start()]))
        out.append(f"<code>{html.escape(m.group(2).strip())}</code>")
        pos = m.end()
    out.append(_render_plain(text[pos:]))
    return "".join(out)


def _render_plain(text: str) -> str:
    s = html.escape(text.replace("\\|", "|").replace("\\*", "\x00"), quote=False)
    s = _LINK.sub(r"\1", s)
    s = _BOLD.sub(r"<strong>\1</strong>", s)
    s = _ITALIC.sub(r"<em>\1</em>", s)
    return s.replace("\x00", "*")


def _cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def _table(lines: list[str]) -> str:
    head = _cells(lines[0])
    body = [_cells(r) for r in lines[2:]]
    th = "".join(f"<th>{render_inline(c)}</th>" for c in head)
    rows = "".join(
        "<tr>" + "".join(f"<td>{render_inline(c)}</td>" for c in r) + "</tr>" for r in body
    )
    return f'<table class="doc"><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table>'


def _list(lines: list[str]) -> str:
    ordered = re.match(r"^\s*\d+\.", lines[0]) is not None
    items: list[str] = []
    for line in lines:
        m = _LIST_ITEM.match(line)
        if m is not None and len(m.group(1)) <= 1:
            items.append(m.group(2))
        elif items:
            items[-1] += " " + line.strip()
    tag = "ol" if ordered else "ul"
    return f"<{tag}>" + "".join(f"<li>{render_inline(i)}</li>" for i in items) + f"</{tag}>"


def render_markdown(text: str) -> str:
    """A block of Markdown (the subset above) as HTML."""
    parts: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or (stripped.startswith("<!--") and stripped.endswith("-->")):
            i += 1
        elif stripped.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            parts.append(f"<pre>{html.escape(chr(10).join(lines[i + 1 : j]))}</pre>")
            i = j + 1
        elif stripped.startswith("#"):
            level = min(len(stripped) - len(stripped.lstrip("#")) + 2, 6)
            parts.append(f"<h{level}>{render_inline(stripped.lstrip('#').strip())}</h{level}>")
            i += 1
        elif stripped.startswith("|") and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                j += 1
            parts.append(_table(lines[i:j]))
            i = j
        elif _LIST_ITEM.match(line):
            j = i + 1
            while j < len(lines) and lines[j].strip() and not lines[j].startswith("#"):
                j += 1
            parts.append(_list(lines[i:j]))
            i = j
        else:
            j = i + 1
            while (
                j < len(lines)
                and lines[j].strip()
                and not lines[j].strip().startswith(("|", "#", "```"))
                and not _LIST_ITEM.match(lines[j])
            ):
                j += 1
            joined = " ".join(x.strip() for x in lines[i:j])
            parts.append(f"<p>{render_inline(joined)}</p>")
            i = j
    return "\n".join(parts)
