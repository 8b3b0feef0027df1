"""NDN runs through the Python API (issue 22): the consumer's flow row and the
``ndn_nodes`` and ``ndn_paths`` tables, also after a save."""

from __future__ import annotations

import pathpool as pp

TREE = """
duration = "5s"
[nodes]
routers = ["1", "2", "3", "4", "5", "6", "7", "8"]
[ndn]
"""


#: The PTP paper's tree: links and rates (5 ms each).
TREE_LINKS = [
    ("1", "2", "100Mbps"),
    ("2", "3", "100Mbps"),
    ("2", "4", "100Mbps"),
    ("3", "5", "10Mbps"),
    ("3", "6", "20Mbps"),
    ("4", "7", "30Mbps"),
    ("4", "8", "40Mbps"),
]


def _tree() -> pp.Scenario:
    text = TREE
    for a, b, rate in TREE_LINKS:
        text += f'[[links]]\nbetween = ["{a}", "{b}"]\nrate = "{rate}"\ndelay = "5ms"\n'
    for p in ["5", "6", "7", "8"]:
        text += f'[[ndn.producers]]\nnode = "{p}"\nprefix = "/c"\n'
    text += '[[flows]]\nkind = "ndn"\nto = "1"\ncontent = "/c/A"\nsize = "100000pkts"\n'
    return pp.Scenario.from_toml(text)


def test_a_ptp_consumer_on_the_tree_has_its_four_paths_in_the_tables(tmp_path) -> None:
    r = _tree().run(seed=1, progress=False)
    assert list(r.flows["kind"]) == ["ndn"]
    assert list(r.flows["cc"]) == ["ptp"]
    assert sorted(r.ndn_paths["nodes"]) == ["1>2>3>5", "1>2>3>6", "1>2>4>7", "1>2>4>8"]
    nodes = r.ndn_nodes.set_index("node")
    produced = nodes.loc[["5", "6", "7", "8"], "produced"]
    # Each leaf produced in proportion to its link's rate, the slowest least.
    assert list(produced.sort_values().index) == ["5", "6", "7", "8"]
    r.save(tmp_path / "out")
    back = pp.read_results(tmp_path / "out")
    assert list(back.ndn_paths["nodes"]) == list(r.ndn_paths["nodes"])
    assert list(back.ndn_nodes["produced"]) == list(r.ndn_nodes["produced"])


def test_runs_without_ndn_have_no_ndn_tables() -> None:
    s = pp.Scenario(
        duration="2s",
        hosts=["a", "b"],
        links=[pp.link("a", "b", rate="10Mbps", delay="5ms")],
        flows=[pp.flow("a", "b")],
    )
    r = s.run(seed=1, progress=False)
    assert r.ndn_nodes.empty and r.ndn_paths.empty


def _tree_built(flows: list[pp.types.Flow]) -> pp.Scenario:
    """The tree of :func:`_tree`, with the builders."""
    links = [pp.link(a, b, rate=rate, delay="5ms") for a, b, rate in TREE_LINKS]
    return pp.Scenario(
        duration="5s",
        routers=[str(k) for k in range(1, 9)],
        links=links,
        ndn=pp.ndn(producers=[pp.ndn_producer(p, "/c") for p in ["5", "6", "7", "8"]]),
        flows=flows,
    )


def test_the_builders_describe_the_files_scenario() -> None:
    built = _tree_built([pp.ndn_consumer("1", "/c/A", size="100000pkts")])
    a = built.run(seed=1, progress=False)
    b = _tree().run(seed=1, progress=False)
    assert a.flows["bytes_delivered"].tolist() == b.flows["bytes_delivered"].tolist()
    assert a.ndn_paths["nodes"].tolist() == b.ndn_paths["nodes"].tolist()


def _diamond(transport: pp.types.NdnTransport, label: bool) -> pp.Scenario:
    """The PTP paper's diamond (case I) with its explicit FIB."""
    rates = {"12": 20, "23": 3, "24": 1, "25": 5, "34": 2, "35": 1, "46": 10, "56": 10, "67": 20}
    fib = {"1": ["2"], "2": ["3", "4", "5"], "3": ["4", "5"], "4": ["6"], "5": ["6"], "6": ["7"]}
    return pp.Scenario(
        duration="30s",
        routers=[str(k) for k in range(1, 8)],
        links=[pp.link(k[0], k[1], rate=f"{r}Mbps", delay="5ms") for k, r in rates.items()],
        ndn=pp.ndn(
            routing="explicit",
            strategy="equal-weight",
            label="branching-postfix" if label else None,
            producers=[pp.ndn_producer("7", "/c")],
            fib=[pp.ndn_fib(n, "/c", nexts) for n, nexts in fib.items()],
        ),
        flows=[pp.ndn_consumer("1", "/c/A", size_packets=3000, transport=transport)],
    )


def test_mmtp_over_ndn_on_the_diamond_has_a_row_per_subflow() -> None:
    r = _diamond("mmtp", label=True).run(seed=1, progress=False)
    assert r.flows["completed"].tolist() == [True]
    paths = r.ndn_paths
    assert paths["tag"].iloc[0] == ""
    assert sorted(paths["nodes"].iloc[1:]) == [
        "1>2>3>4>6>7",
        "1>2>3>5>6>7",
        "1>2>4>6>7",
        "1>2>5>6>7",
    ]
    assert int(paths["payload_bytes"].sum()) == 3000 * 1024
    assert r.ndn_nodes.set_index("node").loc["2", "route_info_bytes"] > 0


def test_mmtp_over_ndn_without_route_labels_is_refused_naming_the_field() -> None:
    try:
        _diamond("mmtp", label=False).check()
    except pp.ScenarioError as e:
        assert "flows[0].transport" in str(e)
        assert 'ndn.label = "branching-postfix"' in str(e)
    else:
        raise AssertionError("expected a ScenarioError")


def test_the_ndn_builders_examples_hold() -> None:
    import doctest

    import pathpool._ndn

    result = doctest.testmod(pathpool._ndn)
    assert result.attempted > 0 and result.failed == 0


def test_traced_ndn_paths_have_a_time_series_and_a_plot(tmp_path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import subprocess
    import sys

    traced = _tree().set("measure.trace_cwnd", True)
    r = traced.run(seed=1, progress=False)
    ts = r.ndn_path_timeseries
    assert sorted(ts["path"].unique()) == [0, 1, 2, 3]
    # Every path's payload only grows, and never past what ndn_paths counts at the end.
    final = r.ndn_paths.set_index("path")["payload_bytes"]
    for p, d in ts.groupby("path"):
        assert d["payload_bytes"].is_monotonic_increasing
        assert d["payload_bytes"].iloc[-1] <= final[p]
        assert d["cwnd"].min() >= 1.0
    ax = r.plot.ndn_paths(column="goodput_bps")
    assert len(ax.lines) == 4
    assert all("1>2>" in str(line.get_label()) for line in ax.lines)
    r.save(tmp_path / "out")
    png = tmp_path / "paths.png"
    args = ["plot", str(tmp_path / "out"), "--kind", "ndn-paths", "-o", str(png)]
    cli = subprocess.run(
        [sys.executable, "-m", "pathpool", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert _tree().run(seed=1, progress=False).ndn_path_timeseries.empty
