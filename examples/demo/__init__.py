"""The pathpool demo (`make demo`): what pathpool is for, in about two minutes.

1. multipath congestion control (NMCC, LIA, Uncoupled) against single-path TCP, on a shared
   bottleneck and on disjoint paths, with and without the topology manager's groups;
2. an mmTP download from three publishers, one of which fails mid-transfer, simulated;
3. the same download over the real UDP overlay on this machine's loopback;
4. single-path TCP against two classic results (RTT bias, the Mathis formula).

Each part prints what it measured beside what one should expect and why, computed from the
run. Plots, tables and an index page (index.html) go to results/demo/. Run it with
`make demo`, or `PYTHONPATH=examples .venv/bin/python -m demo`.
"""
