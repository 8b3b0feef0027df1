"""The ``pathpool`` console command: the Rust command line, plus ``pathpool plot``."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from . import _pathpool

PLOT_KINDS = ("throughput", "cwnd", "subflows", "queue")


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
    from .plot import SUBFLOW_COLUMNS

    parser = argparse.ArgumentParser(
        prog="pathpool plot",
        description="Plot a results directory written by `pathpool run`: goodput per flow, "
        "congestion windows (a multipath or mmTP flow's is the sum of its subflows'), each "
        "subflow of the multipath and mmTP flows, or queue lengths.",
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
        type=_choice("subflow column", list(SUBFLOW_COLUMNS)),
        default="cwnd_bytes",
        metavar="{" + ",".join(SUBFLOW_COLUMNS) + "}",
        help="--kind subflows: what to draw (default cwnd_bytes)",
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
            res.plot.subflows(ax=ax, flows=args.flows, column=args.column)
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


def _sweep(argv: list[str]) -> int:
    """``pathpool sweep``: the Rust command, which hands ``--cluster`` runs to Dask here.

    Python keeps its Ctrl-C handling: the command asks it between steps and stops cleanly.
    """
    from ._sweep import _run_on_cluster

    if any(a == "--cluster" or a.startswith("--cluster=") for a in argv):
        try:
            import distributed  # noqa: F401
        except ImportError:
            print(
                "error: --cluster needs dask.distributed: pip install 'pathpool[dask]'",
                file=sys.stderr,
            )
            return 2
    return _pathpool.cli_main(["pathpool", *argv[1:]], _run_on_cluster)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pathpool`` command."""
    argv = list(sys.argv if argv is None else argv)
    if len(argv) > 1 and argv[1] == "plot":
        return _plot(argv[2:])
    if len(argv) > 1 and argv[1] == "sweep":
        return _sweep(argv)
    # Ctrl-C ends the process at once, as for the native binary (results are written
    # atomically, so nothing half-written is left under the output name).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # `pathpool bench` starts itself again for each case.
    os.environ.setdefault("PATHPOOL_SELF", json.dumps([sys.executable, "-m", "pathpool"]))
    return _pathpool.cli_main(["pathpool", *argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
