//! `ptp-diamond`: the PTP paper's scenario 2 (spec 004 §7.2, Figs 15-17): one consumer, one
//! producer, four overlapping paths through a diamond (1-2-3-4-6-7, 1-2-3-5-6-7, 1-2-4-6-7,
//! 1-2-5-6-7), whose FIB the issue fixes (2 -> 3, 4, 5; 3 -> 4, 5; 4 -> 6; 5 -> 6). Case I:
//! equal latencies, 3-5 and 2-4 narrow (max flow 9 Mb/s: the cut 2-3, 2-4, 2-5); case II:
//! equal bandwidths, 1-2-3-5-6 the fastest path (max flow 6 Mb/s: the cut 4-6, 5-6). Run and
//! compared as [`super::ptp_utilization`] says; observed: the links inside the diamond.

use super::ptp_utilization::{self, Overrides, Setup};
use super::{Ctx, Experiment, Report};

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "ptp-diamond",
    title: "PTP and three baselines on the diamond of joint paths (scenario 2)",
    source: "004-ptp-ndn.md §7.2 Figs 16-17",
    run,
    compared,
};

const CASE_II: Overrides = &[
    ("links.l23.rate", "\"3Mbps\""),
    ("links.l24.rate", "\"3Mbps\""),
    ("links.l25.rate", "\"3Mbps\""),
    ("links.l34.rate", "\"3Mbps\""),
    ("links.l35.rate", "\"3Mbps\""),
    ("links.l46.rate", "\"3Mbps\""),
    ("links.l56.rate", "\"3Mbps\""),
    ("links.l23.delay", "\"2ms\""),
    ("links.l35.delay", "\"2ms\""),
    ("links.l56.delay", "\"2ms\""),
    ("links.l24.delay", "\"10ms\""),
    ("links.l25.delay", "\"10ms\""),
    ("links.l34.delay", "\"10ms\""),
    ("links.l46.delay", "\"10ms\""),
];

const SETUP: Setup = Setup {
    id: "ptp-diamond",
    file: "scenarios/reproductions/ptp-diamond.toml",
    text: include_str!("../../../../scenarios/reproductions/ptp-diamond.toml"),
    links: &[
        "l12", "l23", "l24", "l25", "l34", "l35", "l46", "l56", "l67",
    ],
    download: "l12:2->1",
    observed: &[
        "l23:3->2", "l24:4->2", "l25:5->2", "l34:4->3", "l35:5->3", "l46:6->4", "l56:6->5",
    ],
    cases: &[("I", &[], 9e6), ("II", CASE_II, 6e6)],
};

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    ptp_utilization::compared(&SETUP)
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    ptp_utilization::run(&SETUP, ctx)
}
