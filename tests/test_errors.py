"""Invalid scenarios raise ScenarioError naming the field, line and what is allowed."""

from __future__ import annotations

import pytest

import pathpool as pp


def base(**over):
    d = {
        "duration": "10s",
        "nodes": {"hosts": ["a", "b"]},
        "links": [{"between": ["a", "b"], "rate": "10Mbps", "delay": "5ms"}],
        "flows": [{"from": "a", "to": "b"}],
    }
    d.update(over)
    return d


@pytest.mark.parametrize(
    ("scenario", "expect"),
    [
        (base(colour="blue"), ["colour: unknown field; expected one of"]),
        (base(duration="10 parsecs"), ["duration", "unknown unit"]),
        (
            base(links=[{"between": ["a", "b"], "rate": "-1Mbps", "delay": "5ms"}]),
            ["links[0].rate", "negative"],
        ),
        (
            base(links=[{"between": ["a", "zz"], "rate": "1Mbps", "delay": "5ms"}]),
            ["links[0].between[1]", 'unknown node "zz"'],
        ),
        (base(flows=[{"from": "a", "to": "a"}]), ["flows[0].to", "two different hosts"]),
        (base(flows=[{"from": "a", "to": "b", "size": 10}]), ["flows[0].size", "no unit"]),
        (base(measure={"start": "20s"}), ["measure"]),
        (
            base(flows=[{"from": "a", "to": "b", "kind": "udp-cbr"}]),
            ["flows[0].rate", "needs a rate"],
        ),
        (base(tcp={"cc": "bbr"}), ["tcp.cc", "unknown congestion control", "newreno"]),
        # Issue 16, defect 4: a multipath controller on a single path is refused, where set.
        (
            base(flows=[{"from": "a", "to": "b", "cc": "lia"}]),
            ["flows[0].cc", '"lia" is a multipath controller', "single path", "paths ="],
        ),
        (
            base(flows=[{"from": "a", "to": "b", "tcp": {"cc": "nmcc"}}]),
            ["flows[0].tcp.cc", '"nmcc" is a multipath controller'],
        ),
        (base(tcp={"cc": "olia"}), ["tcp.cc", "every TCP flow inherits"]),
        (
            base(
                flows=[],
                traffic=[
                    {
                        "kind": "poisson",
                        "from": "a",
                        "to": "b",
                        "arrival_rate": 1.0,
                        "size": {"dist": "constant", "value": "10KB"},
                        "cc": "balia",
                    }
                ],
            ),
            ["traffic[0].cc", "one path each"],
        ),
    ],
)
def test_invalid_dicts(scenario, expect):
    with pytest.raises(pp.ScenarioError) as e:
        pp.run(scenario)
    msg = str(e.value)
    for part in expect:
        assert part in msg, msg
    assert isinstance(e.value, ValueError)


def test_file_errors_carry_the_line(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(
        'duration = "10s"\n[nodes]\nhosts = ["a", "b"]\n'
        '[[links]]\nbetween = ["a", "b"]\nrate = "10 Mbps"\ndelay = "5 weeks"\n'
    )
    with pytest.raises(pp.ScenarioError, match=r"bad\.toml:7:\d+: links\[0\]\.delay"):
        pp.load(p).check()


def test_bad_override_names_the_key():
    with pytest.raises(pp.ScenarioError, match=r"links\.nope"):
        pp.Scenario.from_dict(base()).set("links.nope.rate", "1Mbps").check()


def test_every_problem_is_reported_with_suggestions():
    """Issue 16, item 6: three mistakes, three problems, one per line and in `errors`."""
    bad = base(
        links=[{"between": ["a", "b"], "rate": "10mbps", "delay": "5ms"}],
        flows=[{"form": "a", "to": "b"}, {"from": "a", "to": "bb"}],
    )
    with pytest.raises(pp.ScenarioError) as e:
        pp.Scenario.from_dict(bad).check()
    errors = e.value.errors
    assert len(errors) == 3, errors
    assert str(e.value).splitlines() == errors
    assert 'links[0].rate: "10mbps": unknown unit "mbps" (did you mean "10Mbps"?)' in errors[0]
    assert "flows[0].form: unknown field (did you mean `from`?)" in errors[1]
    assert 'flows[1].to: unknown node "bb" (did you mean "b"?)' in errors[2]


def test_a_multipath_controller_runs_on_one_subflow_when_asked_for():
    one = {"from": "a", "to": "b", "cc": "lia", "paths": [["a", "b"]]}
    assert pp.Scenario.from_dict(base(flows=[one])).check().flows == 1


def test_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="Scenario"):
        pp.run(42)  # type: ignore[arg-type]
