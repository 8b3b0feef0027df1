#!/usr/bin/env python3
"""The htsim validation suite of pathpool's TCP model (issue 17, docs/validation.md).

Each scenario of SCENARIOS runs in htsim (the `suite` driver of this directory) and in
pathpool (its twin under scenarios/validation/htsim/, which `write` generates from the same
table), for the same seeds; the table compares the multipath connection's mean share of all
throughput, with Student-t 95% confidence intervals, against a tolerance of +-0.04 of share
stated before any run.

    validate.py write                       # (re)generate the pathpool scenario files
    validate.py run --htsim /tmp/csg-htsim/sim [--seeds 10] [--jobs 2] [--only NAME ...]

`run` builds the driver with this directory's Makefile, needs target/release/pathpool (or
--pathpool), writes each run's figures to results/htsim-validation/runs.csv and prints the
markdown table. Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SCENARIO_DIR = REPO / "scenarios" / "validation" / "htsim"
TOLERANCE = 0.04  # of share, stated in issue 17 before any run
DURATION_S = 1000
WINDOW_START_S = 200
PACKET_BYTES = 1500  # on the wire in both simulators (pathpool: 1460 B MSS + 40 B header)


@dataclass(frozen=True)
class PathSpec:
    """One path: a drop-tail queue, i.i.d. loss after it, a one-way delay each way."""

    rate_mbps: float
    rtt_ms: float
    buffer_bdp: float
    loss: float = 0.0
    competitors: int = 1

    @property
    def buffer_pkts(self) -> int:
        """The buffer in packets: buffer_bdp bandwidth-delay products, rounded."""
        bdp = self.rate_mbps * 1e6 * self.rtt_ms / 1e3 / (8 * PACKET_BYTES)
        return max(1, round(self.buffer_bdp * bdp))

    def describe(self) -> str:
        """Rate, RTT, buffer, loss and competitors, for the table."""
        text = f"{fmt(self.rate_mbps)} Mb/s, {fmt(self.rtt_ms)} ms, {fmt(self.buffer_bdp)} BDP"
        text += f" ({self.buffer_pkts} pkts)"
        if self.loss:
            text += f", loss {fmt(100 * self.loss)}%"
        return text + f", {self.competitors} NewReno"


@dataclass(frozen=True)
class Scenario:
    """A two-subflow connection (cc) over one shared path or two disjoint ones."""

    name: str
    cc: str
    paths: tuple[PathSpec, ...]
    feeder_mbps: float = 0.0  # each source's access link; 0: none (a wire)

    @property
    def topology(self) -> str:
        """`shared` (both subflows on one path) or `disjoint` (one on each)."""
        return "shared" if len(self.paths) == 1 else "disjoint"


def fmt(x: float) -> str:
    """A number without a trailing `.0`."""
    return f"{x:g}"


# The suite: rates 2.4-100 Mb/s, RTTs 10-200 ms, buffers 0.5-4 BDP, loss 0-4%, LIA and
# uncoupled, a shared bottleneck and two disjoint paths with RTT, capacity and loss mismatch.
# The first two disjoint rows are issue 17's scenario (runaway.toml, 1 Gb/s access links).
SCENARIOS = (
    Scenario("shared-lia", "lia", (PathSpec(12, 100, 1),)),
    Scenario("shared-uncoupled", "uncoupled", (PathSpec(12, 100, 1),)),
    Scenario("shared-lia-slow-long", "lia", (PathSpec(2.4, 200, 4),)),
    Scenario("shared-lia-fast-short", "lia", (PathSpec(100, 10, 0.5, competitors=2),)),
    Scenario("shared-lia-loss", "lia", (PathSpec(20, 40, 2, loss=0.01),)),
    Scenario("shared-uncoupled-loss", "uncoupled", (PathSpec(5, 20, 4, 0.04, competitors=2),)),
    Scenario("disjoint-lia-rtt", "lia", (PathSpec(20, 10, 1), PathSpec(20, 100, 1)), 1000),
    Scenario(
        "disjoint-uncoupled-rtt", "uncoupled", (PathSpec(20, 10, 1), PathSpec(20, 100, 1)), 1000
    ),
    Scenario("disjoint-lia-capacity", "lia", (PathSpec(100, 20, 1), PathSpec(10, 20, 1))),
    Scenario(
        "disjoint-uncoupled-capacity", "uncoupled", (PathSpec(2.4, 80, 2), PathSpec(24, 80, 2))
    ),
    Scenario("disjoint-lia-loss", "lia", (PathSpec(10, 60, 1), PathSpec(10, 60, 1, 0.02))),
    Scenario(
        "disjoint-uncoupled-loss",
        "uncoupled",
        (PathSpec(5, 30, 2, 0.04), PathSpec(5, 150, 0.5, 0.005)),
    ),
    Scenario(
        "disjoint-lia-mixed",
        "lia",
        (PathSpec(50, 20, 0.5, competitors=2), PathSpec(5, 200, 4, 0.01)),
    ),
    Scenario("disjoint-lia-slow", "lia", (PathSpec(2.4, 10, 4), PathSpec(2.4, 200, 1))),
)


# ---------------------------------------------------------------------------------------------
# The pathpool twin


def link(frm: str, to: str, rate: str, delay_ms: float = 0, extra: str = "") -> str:
    """One one-way link."""
    text = f'[[links]]\nfrom = "{frm}"\nto = "{to}"\nrate = "{rate}"\ndelay = "{fmt(delay_ms)}ms"\n'
    return text + extra


def access(src: str, router: str, feeder_mbps: float) -> str:
    """A source's access link (htsim's feeder queue, or a wire) and the wire back."""
    if feeder_mbps:
        out = link(src, router, f"{fmt(feeder_mbps)}Mbps", 0, QUEUE_2000)
    else:
        out = link(src, router, "inf")
    return out + link(router, src, "inf")


QUEUE_2000 = 'queue = { type = "droptail", size = "2000pkts" }\n'


def path_links(i: int, a: str, b: str, p: PathSpec) -> str:
    """Path i from a to b (its queue, loss and delay) and the ACKs' way back (delay only)."""
    extra = f'queue = {{ type = "droptail", size = "{p.buffer_pkts}pkts" }}\n'
    if p.loss:
        extra += f"loss = {p.loss:g}\n"
    head = f'[[links]]\nid = "path{i}"\n'
    fwd = link(a, b, f"{fmt(p.rate_mbps)}Mbps", p.rtt_ms / 2, extra).replace("[[links]]\n", head)
    back = link(b, a, "inf", p.rtt_ms / 2).replace(
        "[[links]]\n", f'[[links]]\nid = "path{i}-ack"\n'
    )
    return fwd + back


def wire(a: str, b: str) -> str:
    """A zero-delay infinite-rate link both ways."""
    return f'[[links]]\nbetween = ["{a}", "{b}"]\nrate = "inf"\ndelay = "0ms"\n'


def flow(fid: str, src: str, route: list[str]) -> str:
    """A NewReno flow on an explicit route."""
    nodes = ", ".join(f'"{n}"' for n in route)
    return (
        f'[[flows]]\nid = "{fid}"\nfrom = "{src}"\nto = "{route[-1]}"\nroute = [{nodes}]\n'
        'start_spread = "1s"\n'
    )


TCP = """[tcp]
# htsim's TcpSrc (sim/tcp.cpp): initial window 10 and ssthresh 100 segments, cwnd +=
# MSS*MSS/cwnd per ACK, every new ACK restarting the timer, RTO floor 250 ms and 3 s before the
# first sample, timers checked every 10 ms (TcpRtxTimerScanner), fast recovery left with
# cwnd = min(ssthresh, FlightSize + MSS) (RFC 6582 option 1, D16); LIA's alpha recomputed when the
# acknowledged subflow's window grows across a segment and after a timeout, as COUPLED_INC does
# (D138). 1460-byte segments + 40 bytes of header = htsim's 1500-byte packets; ACKs 40 bytes in
# both.
initial_ssthresh = 100
recovery_exit = "flight-size"
ca_increase = "per-ack"
partial_ack_timer = "slow-but-steady"
min_rto = "250ms"
initial_rto = "3s"
timer_granularity = "10ms"
lia = { alpha_update = "on-segment-growth" }
"""


def scenario_toml(s: Scenario) -> str:
    """The pathpool scenario of s, as `suite` runs it in htsim."""
    desc = "; ".join(f"path {i + 1}: {p.describe()}" for i, p in enumerate(s.paths))
    out = [
        "# Generated by tools/htsim-crosscheck/validate.py from its SCENARIOS table: edit\n"
        "# the table and run `validate.py write`, not this file. htsim's twin:\n"
        f"#   suite {s.cc} SEED {' '.join(htsim_args(s))}\n"
        "# Each path: one-way data link (drop-tail queue, loss after it), an infinite-rate\n"
        "# reverse link of the same delay for the ACKs; every source starts in the first\n"
        "# second.\n",
        f'name = "htsim-{s.name}"\n',
        f'description = "{s.cc} {s.topology}: {desc}"\n',
        f'duration = "{DURATION_S}s"\nseed = 1\n\n',
        f'[measure]\nstart = "{WINDOW_START_S}s"\ninterval = "1s"\n\n',
        TCP,
        "\n",
    ]
    hosts = ["mp", "d"]
    routers: list[str] = []
    links: list[str] = []
    flows: list[str] = []
    if s.topology == "shared":
        # Both subflows enter the bottleneck r->q from their own access router, so that their
        # routes differ and each source has its own access link, as in htsim.
        routers = ["a1", "a2", "r", "q"]
        links += [access("mp", "a1", s.feeder_mbps), access("mp", "a2", s.feeder_mbps)]
        links += [wire("a1", "r"), wire("a2", "r"), path_links(1, "r", "q", s.paths[0])]
        links.append(wire("q", "d"))
        mp_routes = [["mp", "a1", "r", "q", "d"], ["mp", "a2", "r", "q", "d"]]
        for k in range(s.paths[0].competitors):
            host = f"c1_{k}"
            hosts.append(host)
            links.append(access(host, "r", s.feeder_mbps))
            flows.append(flow(f"tcp1_{k}", host, [host, "r", "q", "d"]))
    else:
        mp_routes = []
        for i, p in enumerate(s.paths, start=1):
            a, b = f"a{i}", f"b{i}"
            routers += [a, b]
            links += [access("mp", a, s.feeder_mbps), path_links(i, a, b, p), wire(b, "d")]
            mp_routes.append(["mp", a, b, "d"])
            for k in range(p.competitors):
                host = f"c{i}_{k}"
                hosts.append(host)
                links.append(access(host, a, s.feeder_mbps))
                flows.append(flow(f"tcp{i}_{k}", host, [host, a, b, "d"]))
    out.append(f"[nodes]\nhosts = {quoted(hosts)}\nrouters = {quoted(routers)}\n\n")
    out.append("\n".join(links) + "\n")
    routes = ", ".join(quoted(r) for r in mp_routes)
    out.append(
        f'[[flows]]\nid = "mp"\nfrom = "mp"\nto = "d"\ncc = "{s.cc}"\nstart_spread = "1s"\n'
        f"paths = [{routes}]\n\n"
    )
    out.append("\n".join(flows))
    return "".join(out)


def quoted(names: list[str]) -> str:
    """A TOML array of strings."""
    return "[" + ", ".join(f'"{n}"' for n in names) + "]"


def htsim_args(s: Scenario) -> list[str]:
    """The `suite` driver's arguments after CC and SEED."""
    args = [s.topology, fmt(DURATION_S), fmt(WINDOW_START_S), fmt(s.feeder_mbps)]
    for p in s.paths:
        args.append(
            f"{fmt(p.rate_mbps)},{fmt(p.rtt_ms / 2)},{p.buffer_pkts},{p.loss:g},{p.competitors}"
        )
    return args


def scenario_file(s: Scenario) -> Path:
    """Where the twin of s lives."""
    return SCENARIO_DIR / f"{s.name}.toml"


# ---------------------------------------------------------------------------------------------
# Running


@dataclass
class Run:
    """One run's figures: the share and, per path, the connection's and competitors' Mb/s
    (1500-byte packets) over the window and their timeouts over the whole run (pathpool's
    counters count from the start; the htsim driver counts the same)."""

    sim: str
    scenario: str
    seed: int
    share: float
    per_path: list[tuple[float, float, int, int]]


def run_htsim(driver: Path, s: Scenario, seed: int, options: list[str]) -> Run:
    """One htsim run of s, with the driver's variant options."""
    proc = subprocess.run(
        [str(driver), *options, s.cc, str(seed), *htsim_args(s)],
        stdout=subprocess.DEVNULL,  # htsim's line per timeout
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    fields = dict(f.split("=", 1) for f in proc.stderr.split() if "=" in f)
    per_path = [
        (
            float(fields[f"p{i}_mp"]),
            float(fields[f"p{i}_tcp"]),
            int(fields[f"p{i}_mp_rto"]),
            int(fields[f"p{i}_tcp_rto"]),
        )
        for i in range(1, len(s.paths) + 1)
    ]
    return Run("htsim", s.name, seed, float(fields["share"]), per_path)


def table_rows(text: str, first: str) -> list[dict[str, str]]:
    """The rows of pathpool's summary table whose header starts with `first`, by column."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == [first])
    header: list[str] = []
    for token in lines[start].split():
        if token in ("%", "s") and header:
            header[-1] += " " + token  # "share %", "FCT s", "of flow %"
        elif header and header[-1] == "of":
            header[-1] += " " + token
        else:
            header.append(token)
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        rows.append(dict(zip(header, line.split())))
    return rows


def run_pathpool(binary: Path, s: Scenario, seed: int, sets: list[str]) -> Run:
    """One pathpool run of s's twin, with --set overrides."""
    cmd = [str(binary), "run", str(scenario_file(s)), "--seed", str(seed), "--no-write"]
    for kv in sets:
        cmd += ["--set", kv]
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    flows = table_rows(text, "flow")
    subflows = table_rows(text, "subflow")
    wire_scale = PACKET_BYTES / (PACKET_BYTES - 40)  # goodput -> 1500-byte packets, as htsim
    mbps = {f["flow"]: float(f["Mb/s"]) * wire_scale for f in flows}
    rtos = {f["flow"]: int(f["RTOs"]) for f in flows}
    share = mbps["mp"] / sum(mbps.values())
    per_path = []
    for i in range(1, len(s.paths) + 1):
        subs = subflows if len(s.paths) == 1 else [subflows[i - 1]]
        mp = sum(float(r["Mb/s"]) * wire_scale for r in subs)
        mp_rto = sum(int(r["RTOs"]) for r in subs)
        tcp_ids = [f for f in mbps if f.startswith(f"tcp{i}_")]
        per_path.append((mp, sum(mbps[f] for f in tcp_ids), mp_rto, sum(rtos[f] for f in tcp_ids)))
    return Run("pathpool", s.name, seed, share, per_path)


# Two-sided 95% quantiles of Student's t for 1-30 degrees of freedom.
T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
       2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def mean_ci(xs: list[float]) -> tuple[float, float]:
    """Mean and half-width of its Student-t 95% confidence interval."""
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, math.nan
    t = T95[len(xs) - 2] if len(xs) - 1 <= len(T95) else 1.96
    return m, t * statistics.stdev(xs) / math.sqrt(len(xs))


def markdown(runs: list[Run], scenarios: list[Scenario]) -> str:
    """The side-by-side table, and one of the connection's Mb/s and timeouts per path."""
    out = [
        "| scenario | cc | paths | htsim share | pathpool share | difference "
        f"| within ±{TOLERANCE} |",
        "|---|---|---|---|---|---|---|",
    ]
    detail = [
        "| scenario | path | htsim mp Mb/s | pathpool mp Mb/s | htsim NewReno Mb/s | "
        "pathpool NewReno Mb/s | htsim mp / NewReno RTOs | pathpool mp / NewReno RTOs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    within = 0
    for s in scenarios:
        by_sim = {sim: [r for r in runs if r.scenario == s.name and r.sim == sim]
                  for sim in ("htsim", "pathpool")}  # fmt: skip
        (hm, hc), (pm, pc) = (mean_ci([r.share for r in by_sim[k]]) for k in by_sim)
        ok = abs(pm - hm) <= TOLERANCE
        within += ok
        paths = "; ".join(p.describe() for p in s.paths)
        if s.feeder_mbps:
            paths += f"; {fmt(s.feeder_mbps)} Mb/s access links"
        out.append(
            f"| {s.name} | {s.cc} | {paths} | {hm:.3f} ± {hc:.3f} | {pm:.3f} ± {pc:.3f} | "
            f"{pm - hm:+.3f} | {'yes' if ok else '**no**'} |"
        )
        for i in range(len(s.paths)):
            cells = []
            for col in range(4):
                for sim in ("htsim", "pathpool"):
                    xs = [r.per_path[i][col] for r in by_sim[sim]]
                    cells.append(f"{statistics.fmean(xs):.{2 if col < 2 else 1}f}")
            rto = f"{cells[4]} / {cells[6]} | {cells[5]} / {cells[7]}"
            detail.append(f"| {s.name} | {i + 1} | {' | '.join(cells[:4])} | {rto} |")
    n = len(runs) // (2 * len(scenarios)) if scenarios else 0
    out.append("")
    out.append(f"{within} of {len(scenarios)} rows within ±{TOLERANCE} ({n} seeds each).")
    return "\n".join(out) + "\n\n" + "\n".join(detail) + "\n"


def write(_args: argparse.Namespace) -> int:
    """Generate the pathpool scenario files."""
    SCENARIO_DIR.mkdir(parents=True, exist_ok=True)
    for s in SCENARIOS:
        scenario_file(s).write_text(scenario_toml(s))
    print(f"wrote {len(SCENARIOS)} scenarios to {SCENARIO_DIR.relative_to(REPO)}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run both simulators and print the table."""
    chosen = [s for s in SCENARIOS if not args.only or s.name in args.only]
    unknown = set(args.only or ()) - {s.name for s in SCENARIOS}
    if unknown:
        sys.exit(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    for s in chosen:
        f = scenario_file(s)
        if not f.exists() or f.read_text() != scenario_toml(s):
            sys.exit(f"{f} is missing or out of date: run `validate.py write`")
    if not args.pathpool_only:
        if not args.htsim:
            sys.exit("--htsim DIR is needed (htsim's sim directory with libhtsim.a built)")
        make = ["make", "-s", "-C", str(HERE), f"HTSIM={args.htsim}", "suite"]
        subprocess.run(make, check=True)
    driver = HERE / "suite"
    pathpool = Path(args.pathpool)
    if not pathpool.exists():
        sys.exit(f"{pathpool} not found: cargo build --release -p pathpool-cli")
    print(f"tolerance: |pathpool - htsim| <= {TOLERANCE} of the mean share", flush=True)
    jobs = []
    for s in chosen:
        for seed in range(1, args.seeds + 1):
            if not args.pathpool_only:
                jobs.append((run_htsim, (driver, s, seed, args.htsim_option)))
            jobs.append((run_pathpool, (pathpool, s, seed, args.set)))
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(lambda job: job[0](*job[1]), jobs))
    out = REPO / "results" / "htsim-validation"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"runs{'-' + args.tag if args.tag else ''}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sim", "scenario", "seed", "share", "path", "mp_mbps", "tcp_mbps",
                    "mp_rtos", "tcp_rtos"])  # fmt: skip
        for r in runs:
            for i, p in enumerate(r.per_path, start=1):
                w.writerow([r.sim, r.scenario, r.seed, f"{r.share:.5f}", i, *p])
    if args.pathpool_only:
        for s in chosen:
            m, c = mean_ci([r.share for r in runs if r.scenario == s.name])
            print(f"{s.name}: pathpool share {m:.3f} ± {c:.3f}")
        return 0
    print(markdown(runs, chosen))
    return 0


def main() -> int:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="generate scenarios/validation/htsim/*.toml")
    w.set_defaults(fn=write)
    r = sub.add_parser("run", help="run both simulators and print the table")
    r.add_argument("--htsim", help="htsim's sim directory, built (libhtsim.a)")
    r.add_argument("--pathpool", default=str(REPO / "target" / "release" / "pathpool"))
    r.add_argument("--seeds", type=int, default=10)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--only", nargs="*", help="scenario names (default: all)")
    r.add_argument("--set", action="append", default=[], help="pathpool --set KEY=VALUE (variants)")
    r.add_argument("--htsim-option", action="append", default=[], help="suite's variant options")
    r.add_argument("--pathpool-only", action="store_true", help="skip htsim (pathpool variants)")
    r.add_argument("--tag", default="", help="runs-TAG.csv instead of runs.csv")
    r.set_defaults(fn=run)
    args = ap.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
