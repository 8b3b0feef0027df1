"""``python -m pathpool``: the ``pathpool`` command, which is the Rust binary the wheel installs
beside this interpreter; ``pathpool plot`` is drawn here (the binary runs
``python -m pathpool plot ...``)."""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path

PLOT_KINDS = ("throughput", "cwnd", "subflows", "ndn-paths", "queue")


def _choice(what: str, allowed: Sequence[str]) -> Callable[[str], str]:
    """An argparse type for one of ``allowed``, whose error reads as the Rust command's do
    (no Python quotes), with the nearest choice."""

    def check(value: str) -> str:
        if value in allowed:
            return value
        near = difflib.get_close_matches(value, allowed, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise argparse.ArgumentTypeError(
            f"{value}: not a {what}{hint}; choose from {', '.join(allowed)}"
        )

    return check


def _plot(argv: list[str]) -> int:
    from .plot import NDN_PATH_COLUMNS, SUBFLOW_COLUMNS

    columns = list(SUBFLOW_COLUMNS) + [c for c in NDN_PATH_COLUMNS if c not in SUBFLOW_COLUMNS]

    parser = argparse.ArgumentParser(
        prog="pathpool plot",
        description="Plot a results directory written by `pathpool run`: goodput per flow, "
        "congestion windows (a multipath or mmTP flow's is the sum of its subflows'), each "
        "subflow of the multipath and mmTP flows, each path of the NDN consumers, or queue "
        "lengths.",
    )
    parser.add_argument("results", type=Path, help="results directory")
    parser.add_argument("-o", "--out", type=Path, help="image file (default: RESULTS/KIND.png)")
    parser.add_argument(
        "--kind",
        type=_choice("plot kind", PLOT_KINDS),
        default="throughput",
        metavar="{" + ",".join(PLOT_KINDS) + "}",
    )
    parser.add_argument("--flows", nargs="*", help="only these flows")
    parser.add_argument(
        "--column",
        type=_choice("column", columns),
        metavar="{" + ",".join(columns) + "}",
        help="--kind subflows: what to draw (default cwnd_bytes; "
        f"{', '.join(SUBFLOW_COLUMNS)}); --kind ndn-paths: the same (default cwnd; "
        f"{', '.join(NDN_PATH_COLUMNS)})",
    )
    parser.add_argument(
        "--links", nargs="*", help="--kind queue: these links (default: the busiest)"
    )
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .results import Results

    try:
        res = Results.read(args.results)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    fig, ax = plt.subplots(figsize=(8, 4.5))
    try:
        if args.kind == "throughput":
            res.plot.throughput(ax=ax, flows=args.flows)
        elif args.kind == "cwnd":
            res.plot.cwnd(ax=ax, flows=args.flows)
        elif args.kind == "subflows":
            res.plot.subflows(ax=ax, flows=args.flows, column=args.column or "cwnd_bytes")
        elif args.kind == "ndn-paths":
            res.plot.ndn_paths(ax=ax, flows=args.flows, column=args.column or "cwnd")
        else:
            res.plot.queue(ax=ax, links=args.links)
    except ValueError as e:
        print(f"error: {args.results}: --kind {args.kind}: {e}", file=sys.stderr)
        return 2
    out = args.out or args.results / f"{args.kind}.png"
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)
    return 0


def _binary() -> Path | None:
    """The ``pathpool`` binary installed with this package: in this interpreter's scripts
    directory (where pip puts the wheel's ``pathpool.data/scripts``), else on ``PATH``. A
    Python script of that name (an older install's entry point) is passed over: running it
    would come back here."""
    candidates = [Path(sysconfig.get_path("scripts")) / "pathpool"]
    candidates.append(Path(sys.executable).parent / "pathpool")
    found = shutil.which("pathpool")
    if found:
        candidates.append(Path(found))
    for c in candidates:
        try:
            with c.open("rb") as f:
                if f.read(2) != b"#!" and os.access(c, os.X_OK):
                    return c
        except OSError:
            continue
    return None


def main(argv: list[str] | None = None) -> int:
    """``python -m pathpool ARGS``: ``pathpool plot`` here, every other command by the binary
    (this process becomes it, so its exit status and Ctrl-C handling are the binary's)."""
    argv = list(sys.argv if argv is None else argv)
    if len(argv) > 1 and argv[1] == "plot":
        return _plot(argv[2:])
    binary = _binary()
    if binary is None:
        print(
            "error: the pathpool binary is not installed beside this Python "
            f"({sysconfig.get_path('scripts')}) nor on PATH: install the wheel "
            "(pip install pathpool), or run `make setup` in a checkout",
            file=sys.stderr,
        )
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(binary, [str(binary), *argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
