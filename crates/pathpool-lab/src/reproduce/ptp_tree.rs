//! `ptp-tree`: the PTP paper's scenario 1 (spec 004 §7.1, Figs 12-14): one consumer, four
//! producers at the leaves of a tree, case I (different leaf bandwidths) and case II (equal
//! bandwidths, different latencies). Every byte crosses link 1-2, so its Data throughput is
//! the download rate; the max flow is the sum of the leaf links, which the 20 Mb/s trunks do
//! not limit. Run and compared as [`super::ptp_utilization`] says; observed: each leaf.

use super::ptp_utilization::{self, Overrides, Setup};
use super::{Ctx, Experiment, Report};

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "ptp-tree",
    title: "PTP and three baselines on the tree of four producers (scenario 1)",
    source: "004-ptp-ndn.md §7.1 Figs 13-14",
    run,
    compared,
};

const CASE_II: Overrides = &[
    ("links.l35.rate", "\"2Mbps\""),
    ("links.l36.rate", "\"2Mbps\""),
    ("links.l47.rate", "\"2Mbps\""),
    ("links.l48.rate", "\"2Mbps\""),
    ("links.l23.delay", "\"10ms\""),
    ("links.l35.delay", "\"10ms\""),
    ("links.l36.delay", "\"10ms\""),
    ("links.l24.delay", "\"20ms\""),
    ("links.l47.delay", "\"20ms\""),
    ("links.l48.delay", "\"20ms\""),
];

const SETUP: Setup = Setup {
    id: "ptp-tree",
    file: "scenarios/reproductions/ptp-tree.toml",
    text: include_str!("../../../../scenarios/reproductions/ptp-tree.toml"),
    links: &["l12", "l23", "l24", "l35", "l36", "l47", "l48"],
    download: "l12:2->1",
    observed: &["l35:5->3", "l36:6->3", "l47:7->4", "l48:8->4"],
    cases: &[("I", &[], 10e6), ("II", CASE_II, 8e6)],
};

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    ptp_utilization::compared(&SETUP)
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    ptp_utilization::run(&SETUP, ctx)
}
