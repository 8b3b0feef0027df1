"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

import pathpool as pp

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def small() -> pp.Scenario:
    """Two TCP flows and a CBR flow through one router; a couple of seconds to simulate."""
    return pp.Scenario(
        name="small",
        duration="10s",
        hosts=["a", "b", "c"],
        routers=["r"],
        links=[
            pp.link("r", "b", rate="5Mbps", delay="10ms", queue=pp.droptail(40), id="bottleneck"),
            pp.link("a", "r", rate_bps=50e6, delay_s=0.005),
            pp.link("c", "r", rate="50Mbps", delay="20ms"),
        ],
        flows=[
            pp.flow("a", "b", id="long", start_spread="0.5s"),
            pp.flow("c", "b", id="finite", size="500KB", start="1s"),
            pp.udp_cbr("c", "b", rate="1Mbps", id="cbr", start="2s", stop="8s"),
        ],
        measure=pp.measure(interval="100ms", trace_cwnd=True),
    )
