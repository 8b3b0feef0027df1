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


def _tree() -> pp.Scenario:
    text = TREE
    for a, b, rate in [
        ("1", "2", "100Mbps"),
        ("2", "3", "100Mbps"),
        ("2", "4", "100Mbps"),
        ("3", "5", "10Mbps"),
        ("3", "6", "20Mbps"),
        ("4", "7", "30Mbps"),
        ("4", "8", "40Mbps"),
    ]:
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
