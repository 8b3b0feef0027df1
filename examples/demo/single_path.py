"""Part 4: single-path TCP against two classic results: the RTT bias of flows sharing a
drop-tail or RED bottleneck, and the Mathis formula under random loss."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt

import pathpool as pp
from demo.common import OUT, ROOT, Section, cell

RTT_MS = {"rtt20": 20, "rtt40": 40, "rtt80": 80, "rtt160": 160}


def dumbbell(sec: Section) -> None:
    say = sec.say
    say("-- Four NewReno flows, RTT 20/40/80/160 ms, one 10 Mb/s bottleneck\n")
    dumbbell = ROOT / "scenarios" / "dumbbell.toml"
    no_randomness = {"tcp.send_overhead": "0s"}
    no_randomness |= {f"flows.{f}.start_spread": "0s" for f in RTT_MS}
    runs = {
        "drop-tail, deterministic": pp.run(dumbbell, seed=1, set=no_randomness, progress=False),
        "drop-tail, send overhead": pp.run(dumbbell, seed=1, progress=False),
        "RED": pp.run(ROOT / "scenarios" / "dumbbell-red.toml", seed=1, progress=False),
    }
    for name, res in runs.items():
        res.save(OUT / name.replace(", ", "-").replace(" ", "-"))
    say(f"{'flow':8} {'RTT ms':>7}" + "".join(f" {name:>26}" for name in runs))
    flows = {name: res.flows.set_index("id") for name, res in runs.items()}
    for fid, rtt in RTT_MS.items():
        cells = "".join(
            f" {cell(f, fid, 'throughput_bps') / 1e6:>12.2f} Mb/s"
            f" {100 * cell(f, fid, 'share'):>5.1f} %"
            for f in flows.values()
        )
        say(f"{fid:8} {rtt:>7}{cells}")
    for name, res in runs.items():
        util = cell(res.links.set_index("id"), "bottleneck:r1->r2", "utilization")
        say(f"{name:26} Jain index {res.jain_index:.3f}, bottleneck utilisation {100 * util:.1f}%")
    say(
        "\nWith RED, or with a random per-packet send delay at the senders (ns-2's overhead_,\n"
        "tcp.send_overhead, which scenarios/dumbbell.toml sets), throughput falls with the RTT.\n"
        "Drop-tail with deterministic flows shows the 'phase effect' of Floyd & Jacobson\n"
        "(1992): which flow loses depends on exact packet timing at the full queue, and every\n"
        "seed gives the same run.\n"
    )
    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    for ax, (name, res) in zip(axes, runs.items()):
        res.plot.throughput(ax=ax)
        ax.set_title(f"{name}: per-flow goodput")
    sec.save(fig, "dumbbell-throughput")
    plt.close(fig)


def random_loss(sec: Section) -> None:
    say = sec.say
    say("\n-- One NewReno flow, 100 ms RTT, Bernoulli loss p on the data path\n")
    sc = pp.load(ROOT / "scenarios" / "random-loss.toml")
    rows = []
    say(f"{'p':>7} {'measured Mb/s':>14} {'Mathis Mb/s':>12} {'error %':>8} {'RTOs':>5}")
    for p in (0.001, 0.002, 0.005, 0.01, 0.02):
        res = pp.run(sc, seed=1, set={"links.forward.loss": p}, progress=False)
        f = res.flows.iloc[0]
        mathis = 1.22 * 1460 * 8 / (0.100 * math.sqrt(p))
        rows.append((p, f["throughput_bps"], mathis))
        err = 100 * (f["throughput_bps"] / mathis - 1)
        tput = f["throughput_bps"] / 1e6
        say(f"{p:>7.3f} {tput:>14.3f} {mathis / 1e6:>12.3f} {err:>+8.1f} {f['timeouts']:>5}")
    errors = [100 * (r[1] / r[2] - 1) for r in rows]
    sec.highlights.append(
        f"single-path TCP under random loss: {min(errors):+.1f}% to {max(errors):+.1f}% off the"
        f" Mathis formula for p = {rows[0][0]:g} to {rows[-1][0]:g}"
    )
    say(
        "\nMathis et al. (1997): throughput = 1.22 MSS / (RTT sqrt(p)). The model ignores\n"
        "timeouts, which grow with p, so measured throughput falls below it at high loss.\n"
    )
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ps = [r[0] for r in rows]
    ax.loglog(ps, [r[1] / 1e6 for r in rows], "o-", label="pathpool (NewReno)")
    ax.loglog(ps, [r[2] / 1e6 for r in rows], "k--", label="Mathis formula")
    ax.set_xlabel("loss probability p")
    ax.set_ylabel("throughput (Mb/s)")
    ax.set_title("TCP throughput under random loss, RTT 100 ms")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    sec.save(fig, "random-loss")
    plt.close(fig)


def section() -> Section:
    sec = Section("4. Single-path TCP against two classic results")
    sec.say(f"== {sec.title} ==\n")
    dumbbell(sec)
    random_loss(sec)
    sec.say()
    return sec
