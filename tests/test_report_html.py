"""The HTML reproduction reports (issue 19, item 6), checked in a real headless browser.

Two quick reproductions run for real (`pathpool reproduce ID --quick --json -o DIR`, about a
second each); `python -m pathpool.report_html` turns their rows and output directories into
two pages and an index, which system Chromium (Debian's, driven through chromedriver by
Selenium) loads. Each page must load without console errors, decode every figure, load
nothing from outside, and show exactly the `--json` rows. A deliberately broken page checks
that these checks can fail.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pathpool import report_html
from pathpool.report_docs import DocsError, parse_docs, read_docs, render_markdown
from pathpool.report_figures import LINE_CHARTS, line_chart, runs_chart, split_runs
from pathpool.report_html import MARKS, ReportError, write_html

IDS = ("nmcc-short-transfers", "nmcc-partial-congestion")
ROOT = Path(__file__).resolve().parent.parent


def pathpool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pathpool", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> tuple[Path, dict[str, list[dict[str, Any]]]]:
    """The pages of two real quick runs, and each run's `--json` rows."""
    base = tmp_path_factory.mktemp("reports")
    rows: dict[str, list[dict[str, Any]]] = {}
    jsonl = base / "rows.jsonl"
    with jsonl.open("w") as f:
        for id_ in IDS:
            r = pathpool("reproduce", id_, "--quick", "--json", "-q", "-o", base / "results" / id_)
            assert r.returncode == 0, r.stderr
            rows[id_] = [json.loads(line) for line in r.stdout.splitlines()]
            assert rows[id_], f"{id_} printed no rows"
            f.write(r.stdout)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        args = ["--json", jsonl, "--results", base / "results", "--quick", "-o", base / "html"]
        code = report_html.main([*map(str, args), "--command", "pathpool reproduce ID --quick"])
    assert code == 0
    written = [Path(p).name for p in out.getvalue().split()]
    assert written == [f"{i}.html" for i in IDS] + ["index.html"]
    return base / "html", rows


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless system Chromium through its chromedriver (installed by scripts/bootstrap.sh)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    assert chromium and driver_path, (
        "chromium and chromium-driver (Debian packages) are needed: run `make setup`"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    # --no-sandbox: CI runs as root; --disable-dev-shm-usage: containers with a small /dev/shm.
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1200,900",
    ):
        options.add_argument(arg)
    # Every console message, so that errors can be asserted absent.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def load(browser: Any, page: Path) -> dict[str, Any]:
    """Loads ``page`` and reports what a person would see go wrong: console errors, images
    that did not decode, resources fetched from anywhere, links to nowhere."""
    browser.get_log("browser")  # drop what an earlier page left
    browser.get(page.as_uri())
    state = browser.execute_script(
        """
        const imgs = Array.from(document.images).map(i => ({
            alt: i.alt, complete: i.complete, width: i.naturalWidth, height: i.naturalHeight,
            src: i.getAttribute('src').slice(0, 22)}));
        const resources = performance.getEntriesByType('resource').map(e => e.name);
        const links = Array.from(document.querySelectorAll('a[href]'))
            .map(a => a.getAttribute('href'));
        const broken = links.filter(h => h.startsWith('#') && !document.getElementById(h.slice(1)));
        return {ready: document.readyState, imgs, resources, links, broken};
        """
    )
    state["errors"] = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    return state


def table_rows(browser: Any) -> list[dict[str, str]]:
    return browser.execute_script(
        """
        return Array.from(document.querySelectorAll('#comparisons-table tbody tr')).map(tr =>
            Object.assign({text: tr.innerText}, tr.dataset));
        """
    )


@pytest.mark.parametrize("id_", IDS)
def test_page_loads_draws_every_figure_and_shows_the_json_rows(reports, browser, id_):
    html_dir, rows = reports
    state = load(browser, html_dir / f"{id_}.html")
    assert state["ready"] == "complete"
    assert state["errors"] == []
    # The comparison chart and the per-run chart from runs.csv, both decoded.
    assert [i["alt"] for i in state["imgs"]] == ["deviations", "runs"]
    for img in state["imgs"]:
        assert img["complete"] and img["width"] > 0 and img["height"] > 0, img
        assert img["src"].startswith("data:image/png;base64")
    assert state["resources"] == []  # self-contained: nothing fetched
    assert state["broken"] == []
    assert "index.html" in state["links"]  # written with the index, so linked to it

    shown = table_rows(browser)
    assert len(shown) == len(rows[id_])
    for tr, row in zip(shown, rows[id_]):
        assert tr["metric"] == row["metric"]
        for key in ("published", "measured", "ci95", "tolerance"):
            assert float(tr[key]) == row[key], key  # repr() round-trips exactly
        assert int(tr["runs"]) == row["runs"]
        assert tr["verdict"] == row["verdict"]
        assert MARKS[row["verdict"]] in tr["text"]
        assert ("yes" if row["within"] else "no") in tr["text"].split("\t")
        assert f"{row['runs']}" in tr["text"].split("\t")

    # The scenario files the docs name for it, each in full.
    files = browser.execute_script(
        "return Array.from(document.querySelectorAll('details.scenario pre'))"
        ".map(p => p.textContent)"
    )
    named = read_docs(ROOT / "docs" / "reproductions.md").scenarios(id_)
    assert files == [p.read_text() for p in named]

    score = browser.find_element("id", "score").text
    within = sum(r["verdict"] == "within" for r in rows[id_])
    assert score.startswith(f"{within} of {len(rows[id_])} figures pass")


def test_each_miss_links_to_its_explanation(reports, browser):
    html_dir, rows = reports
    for id_ in IDS:
        load(browser, html_dir / f"{id_}.html")
        misses = [r for r in rows[id_] if r["verdict"] != "within"]
        links = browser.execute_script(
            """
            return Array.from(document.querySelectorAll('#comparisons-table tbody tr'))
                .filter(tr => tr.dataset.verdict !== 'within')
                .map(tr => Array.from(tr.querySelectorAll('a')).map(a => a.hash));
            """
        )
        assert len(links) == len(misses)
        for hashes, row in zip(links, misses):
            # Both reproductions' sections have a report:misses block for every metric.
            assert hashes and all(h.startswith("#explain-") for h in hashes), row["metric"]
            for h in hashes:
                block = browser.find_element("css selector", h)
                assert row["metric"] in block.text


def test_index_links_every_page_with_its_pass_count(reports, browser):
    html_dir, rows = reports
    state = load(browser, html_dir / "index.html")
    assert state["errors"] == [] and state["resources"] == []
    shown = browser.execute_script(
        """
        return Array.from(document.querySelectorAll('#index-table tbody tr')).map(tr =>
            [tr.dataset.experiment, +tr.dataset.within, +tr.dataset.total,
             tr.querySelector('a').getAttribute('href'), tr.innerText]);
        """
    )
    assert [s[0] for s in shown] == list(IDS)
    for experiment, within, total, href, text in shown:
        assert within == sum(r["verdict"] == "within" for r in rows[experiment])
        assert total == len(rows[experiment])
        assert f"{within} / {total}" in text
        assert (html_dir / href).is_file()
        browser.get((html_dir / href).as_uri())
        assert browser.find_element("tag name", "h1").text == experiment


def test_a_reproduction_without_published_figures_gets_a_page_of_its_measures(tmp_path, browser):
    """ip-assistance compares nothing (the thesis gives no numbers): its page shows what was
    run, the figures it drew and every measured figure, and says why there is no table."""
    out, html_dir = tmp_path / "out", tmp_path / "html"
    env = {**os.environ, "PATHPOOL_PYTHON": sys.executable}
    command = ["reproduce", "ip-assistance", "--quick", "-q", "-o", str(out), "--html"]
    r = subprocess.run(
        [sys.executable, "-m", "pathpool", *command, str(html_dir)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    state = load(browser, html_dir / "ip-assistance.html")
    assert state["errors"] == [] and state["resources"] == [] and state["broken"] == []
    svgs = sorted(p.name for p in out.glob("*.svg"))
    assert svgs == ["friendliness.svg", "gain.svg"]
    assert [i["alt"] for i in state["imgs"]] == svgs
    assert all(i["complete"] and i["width"] > 0 for i in state["imgs"])
    text = browser.find_element("tag name", "body").text
    assert "The documents give no numbers for this experiment" in text
    assert not browser.find_elements("id", "comparisons-table")
    observations = json.loads((out / "observations.json").read_text())
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('#observations + table tbody tr'))"
        ".map(tr => tr.cells[0].innerText);"
    )
    assert shown == [o["metric"] for o in observations]


def test_the_checks_catch_a_broken_page(tmp_path, browser):
    """The negative control: a console error and an image that does not decode are seen."""
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><body><img alt="bad" src="data:image/png;base64,AAAA">'
        '<a href="#nowhere">x</a><script>console.error("deliberate")</script></body></html>'
    )
    state = load(browser, page)
    assert any("deliberate" in e["message"] for e in state["errors"])
    assert state["imgs"][0]["width"] == 0
    assert state["broken"] == ["#nowhere"]


def test_every_reproduction_has_a_setup_block_and_known_ids():
    r = pathpool("reproduce", "--list")
    assert r.returncode == 0, r.stderr
    ids = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    assert len(ids) >= 9
    docs = read_docs(ROOT / "docs" / "reproductions.md")
    assert {b.experiment for b in docs.blocks} <= ids  # no marker names an unknown id
    for id_ in sorted(ids):
        assert docs.setup(id_), f"docs/reproductions.md: no <!-- report:setup {id_} --> block"
        for scenario in docs.scenarios(id_):
            assert scenario.is_file(), f"{id_}: scenarios= names {scenario}, which is not there"


def test_metric_patterns_pick_the_paragraph_of_each_miss():
    docs = read_docs(ROOT / "docs" / "reproductions.md")
    e3 = "download time saved by a second path per source (E3)"
    e1 = "12 MB multisource download time"
    assert [b.line for b in docs.misses("mmtp-multisource") if b.explains(e3)] != [
        b.line for b in docs.misses("mmtp-multisource") if b.explains(e1)
    ]
    assert len([b for b in docs.misses("mmtp-multisource") if b.explains(e3)]) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<!-- report:setup x -->\nbody\n", "never closed"),
        ("<!-- /report -->\n", "without an opening"),
        ("<!-- report:why x -->\n<!-- /report -->\n", "unknown block kind report:why"),
        ('<!-- report:misses x metric="(" -->\n<!-- /report -->\n', "not a regular expression"),
        ("<!-- report:setup x -->\n<!-- report:setup y -->\n", "inside the block opened on line 1"),
        ("a\n<!-- report:setup -->\n", "malformed report marker"),
        ('<!-- report:setup x metric="a" -->\n', "report:setup takes scenarios=, not metric="),
        ('<!-- report:setup x scenarios="a/b.toml" -->\n', "expected file names ending in .toml"),
    ],
)
def test_malformed_markers_name_file_and_line(text, message):
    with pytest.raises(DocsError, match=re.escape(message)) as e:
        parse_docs(text, Path("r.md"))
    assert str(e.value).startswith("r.md:")


def test_markdown_subset():
    out = render_markdown(
        "*Source.* A **bold** `a|b <c>` [link](x.md#y) text\nwrapped.\n\n"
        "| h1 | h2 |\n|---|---|\n| a \\| b | *i* |\n\n* one\n  more\n* two\n"
    )
    assert "<p><em>Source.</em> A <strong>bold</strong> <code>a|b &lt;c&gt;</code> link text" in out
    assert "<td>a | b</td><td><em>i</em></td>" in out
    assert "<ul><li>one more</li><li>two</li></ul>" in out
    assert "href" not in out


def test_bad_rows_are_named(tmp_path):
    row = {
        "experiment": "x",
        "metric": "m",
        "unit": "%",
        "published": 1.0,
        "measured": 1.0,
        "ci95": 0.0,
        "runs": 3,
        "tolerance": 1.0,
        "within": True,
        "verdict": "within",
        "source": "s",
    }
    with pytest.raises(ReportError, match="row 1: field 'verdict' is 'maybe'; allowed"):
        write_html([{**row, "verdict": "maybe"}], tmp_path)
    with pytest.raises(ReportError, match="row 2: missing field 'runs'"):
        write_html([row, {k: v for k, v in row.items() if k != "runs"}], tmp_path)
    with pytest.raises(
        ReportError, match=re.escape("row 1: field 'runs' must be a whole number, not 3.5")
    ):
        write_html([{**row, "runs": 3.5}], tmp_path)
    with pytest.raises(ReportError, match="row 1: field 'published' must be a number, not True"):
        write_html([{**row, "published": True}], tmp_path)
    # DataFrame records (NumPy scalars) are rows too.
    records = pd.DataFrame([row, {**row, "metric": "n", "verdict": "outside"}]).to_dict("records")
    page = write_html(records, tmp_path, docs=parse_docs("", Path("r.md")))
    text = page.read_text()
    assert text.count('class="comparison ') == 2
    # The outside row has no block to quote, and the page says so rather than guess one.
    assert "No explanation: r.md has no matching <code>report:misses x</code> block" in text
    assert 'href="#unexplained"' in text
    with pytest.raises(ReportError, match="several experiments"):
        write_html([row, {**row, "experiment": "y"}], tmp_path)
    bad = tmp_path / "rows.jsonl"
    bad.write_text(json.dumps(row) + "\n{not json\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = report_html.main(["--json", str(bad), "-o", str(tmp_path)])
    assert code == 2
    assert f"{bad}:2: not a JSON object" in err.getvalue()


def test_runs_table_is_split_into_configuration_and_measures():
    # A long table (wischik-nsdi11's shape) is widened; a constant column varies nothing.
    header = ["case", "algorithm", "seed", "metric", "value", "completed"]
    rows = [
        [case, alg, seed, metric, f"{v:.2f}", "true"]
        for case in ("a", "b")
        for alg in ("NMCC", "LIA")
        for seed in ("1", "2")
        for metric, v in (("share", 50.5), ("utilisation", 99.0))
    ]
    table = split_runs(header, rows)
    assert table.config == ["case", "algorithm"]
    assert table.measured == ["share", "utilisation"]
    assert len(table.rows) == 8
    png = runs_chart(table, "t")
    assert png is not None and decoded_size(png)[0] > 0


def test_line_chart_draws_the_mean_over_seeds_or_nothing():
    spec = LINE_CHARTS[0]
    header = ["setting", "cc", "seed", "second", "share"]
    rows = [
        ["default", cc, s, str(t), str(40 + t)]
        for cc in ("lia", "nmcc")
        for s in "12"
        for t in range(5)
    ]
    png = line_chart(spec, header, rows)
    assert png is not None
    height, width = decoded_size(png)
    assert height > 0 and width > 0
    assert line_chart(spec, ["setting", "cc", "seed", "second"], [r[:4] for r in rows]) is None
    assert line_chart(spec, header, [[*r[:4], "n/a"] for r in rows]) is None


def decoded_size(png: bytes) -> tuple[int, int]:
    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(png)).shape[:2]
