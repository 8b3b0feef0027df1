"""`python -m demo` (with examples/ on the path): runs every part, then writes
results/demo/report.md and results/demo/index.html."""

from __future__ import annotations

import datetime
import sys
import time
from collections.abc import Callable

from demo import mmtp, multipath, overlay, page, single_path
from demo.common import OUT, ROOT, Section


def timed(part: Callable[[], Section]) -> Section:
    t0 = time.monotonic()
    sec = part()
    sec.wall_s = time.monotonic() - t0
    print(f"({sec.wall_s:.1f} s)\n", flush=True)
    return sec


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    sections = [timed(multipath.section)]
    failover: list[mmtp.Failover] = []

    def simulated() -> Section:
        sec, fail = mmtp.section()
        failover.append(fail)
        return sec

    sections.append(timed(simulated))
    sections.append(timed(lambda: overlay.section(failover[0])))
    sections.append(timed(single_path.section))
    total_s = time.monotonic() - t0
    summary = Section("In short")
    summary.say(f"== {summary.title} ==\n")
    for sec in sections:
        for line in sec.highlights:
            summary.say(f"- {line}")
    summary.say()
    sections.insert(0, summary)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    report = OUT / "report.md"
    text = "\n".join(line for s in sections for line in s.lines)
    report.write_text(f"```\n{text}\n```\n", encoding="utf-8")
    index = OUT / "index.html"
    page.write(index, sections, total_s, stamp)
    print(f"result tables (Parquet) and summaries: {OUT.relative_to(ROOT)}/")
    print(f"this report: {report.relative_to(ROOT)}; with the plots: {index.relative_to(ROOT)}")
    print(f"demo: {total_s:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
