"""The Dask half of ``pathpool sweep --cluster``: ``python -m pathpool._cluster DIR ADDRESS``.

The ``pathpool`` binary validates and prepares the sweep directory, then runs this module,
which opens the sweep from its manifest, runs its pending runs on the Dask scheduler at
``ADDRESS`` (storing each as it finishes, as ``pp.sweep(..., cluster=...)`` does) and exits;
the binary then gathers the table. Exit status: 0 done, 1 some runs failed (the others are
kept), 2 bad input, 130 interrupted (finished runs are kept).
"""

from __future__ import annotations

import argparse
import sys

from . import _pathpool
from ._sweep import _run_on_cluster


def main(argv: list[str] | None = None) -> int:
    """Runs the pending runs of the prepared sweep ``DIR`` on the cluster ``ADDRESS``."""
    parser = argparse.ArgumentParser(
        prog="python -m pathpool._cluster",
        description="Run the pending runs of a prepared sweep directory on a Dask cluster.",
    )
    parser.add_argument("dir", help="the sweep directory (prepared by `pathpool sweep`)")
    parser.add_argument("address", help="the Dask scheduler, e.g. tcp://10.0.0.1:8786")
    parser.add_argument("--progress", action="store_true", help="print a progress line")
    args = parser.parse_args(argv)
    try:
        plan = _pathpool.sweep_plan_open(args.dir)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        _run_on_cluster(plan, plan.pending(), args.address, args.progress)
    except KeyboardInterrupt:
        return 130
    except (RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
