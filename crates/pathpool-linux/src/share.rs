//! `pathpool linux share`: issue 23's acceptance 2 on a shared bottleneck, from one command.
//!
//! One two-subflow MPTCP connection (both subflows in group 0, unless `groups set` says
//! otherwise for 10.9.1.1 or 10.9.2.1 to 10.9.3.2) and one plain TCP Reno flow from the same
//! client send through one `tbf` bottleneck for a while, in a fresh [`SharedBottleneck`] per
//! run; the share is the connection's bytes over both. docs/linux.md's table with and without
//! the server's delayed ACKs comes from it (the earlier table, from the same bed, predates it).
//! Each run reads the host's CPU steal over it (D341): a figure measured while the virtual
//! machine lost its CPUs says more about the host than about the algorithm. So does a
//! stalled flow: each run carries both senders' longest stall, and a run in which either
//! took no byte for [`STALL_REPORT_S`] or more is flagged, as E8 flags its own.

use std::thread;
use std::time::Duration;

use serde::Serialize;

use crate::bed::{self, SharedBottleneck, SharedLink, SHARED_SERVER};
pub use crate::e8::STALL_REPORT_S;
use crate::steal::CpuTicks;
use crate::transfer;
use crate::LinuxError;

/// The single-path flow the connection competes with.
pub const COMPETITOR: &str = "reno";

/// One run's figures.
#[derive(Clone, Debug, Serialize)]
pub struct ShareRun {
    /// The congestion control of both subflows (`reno`: uncoupled kernel MPTCP).
    pub cc: String,
    /// 1, 2, ... per algorithm.
    pub run: usize,
    /// The MPTCP connection's bytes over both flows' bytes.
    pub share: f64,
    /// The connection's goodput, Mb/s.
    pub mptcp_mbps: f64,
    /// The Reno flow's goodput, Mb/s.
    pub tcp_mbps: f64,
    /// The host's CPU steal over the run, % of the CPU time.
    pub steal_percent: f64,
    /// The longest time, seconds, during which the MPTCP connection's socket took no byte.
    pub mptcp_stall_s: f64,
    /// The same for the Reno flow.
    pub tcp_stall_s: f64,
}

impl ShareRun {
    /// Which flows stalled for [`STALL_REPORT_S`] or more, one phrase each (empty: none):
    /// such a run's share measures the kernel's stall, not the algorithm
    /// (docs/linux.md, "A stalled MPTCP connection").
    #[must_use]
    pub fn stalls(&self) -> Vec<String> {
        [
            ("the MPTCP connection", self.mptcp_stall_s),
            ("the TCP flow", self.tcp_stall_s),
        ]
        .into_iter()
        .filter(|(_, s)| *s >= STALL_REPORT_S)
        .map(|(who, s)| format!("{who} took no byte for {s:.1} s"))
        .collect()
    }
}

/// Checks the link and the length before anything is built.
///
/// # Errors
/// A rate, queue or length out of range, each named with what is allowed.
pub fn validate(link: &SharedLink, seconds: f64, runs: usize) -> Result<(), LinuxError> {
    if !(link.rate_mbps.is_finite() && (0.1..=10_000.0).contains(&link.rate_mbps)) {
        return Err(LinuxError::BadInput(format!(
            "--rate-mbps {}: give a rate from 0.1 to 10000 Mb/s",
            link.rate_mbps
        )));
    }
    if !(2..=1_048_576).contains(&link.queue_kib) {
        return Err(LinuxError::BadInput(format!(
            "--queue-kib {}: give a queue from 2 to 1048576 KiB",
            link.queue_kib
        )));
    }
    if !(seconds.is_finite() && seconds >= 1.0) {
        return Err(LinuxError::BadInput(format!(
            "--seconds {seconds}: give at least 1 second"
        )));
    }
    if runs == 0 {
        return Err(LinuxError::BadInput(
            "--runs 0: give at least one run".into(),
        ));
    }
    Ok(())
}

/// One run: `cc` on both subflows beside one Reno flow for `seconds`, in a fresh bed.
///
/// # Errors
/// Not root, no MPTCP, `cc` not registered, or a step of the bed failing.
pub fn run_once(
    program: &str,
    cc: &str,
    link: &SharedLink,
    seconds: f64,
) -> Result<ShareRun, LinuxError> {
    let bed = SharedBottleneck::new("share", link)?;
    let sink = bed::sink(&bed.server, program, SHARED_SERVER, 2)?;
    thread::sleep(Duration::from_millis(300));
    let before = CpuTicks::now();
    let mp = bed::sender(&bed.client, program, SHARED_SERVER, (cc, false), seconds)?;
    let tcp = bed::sender(
        &bed.client,
        program,
        SHARED_SERVER,
        (COMPETITOR, true),
        seconds,
    )?;
    let (m, t) = (
        transfer::report_of(mp, "MPTCP sender")?,
        transfer::report_of(tcp, "TCP sender")?,
    );
    let steal = match (before, CpuTicks::now()) {
        (Some(a), Some(b)) => b.steal_since(&a),
        _ => 0.0,
    };
    let _ = sink.wait_with_output();
    let total = (m.bytes + t.bytes) as f64;
    if total == 0.0 {
        return Err(LinuxError::Failed(format!(
            "nothing crossed the bottleneck in {seconds} s with {cc}"
        )));
    }
    Ok(ShareRun {
        cc: cc.to_string(),
        run: 0,
        share: m.bytes as f64 / total,
        mptcp_mbps: m.mbps,
        tcp_mbps: t.mbps,
        steal_percent: steal * 100.0,
        mptcp_stall_s: m.longest_stall_s.unwrap_or(0.0),
        tcp_stall_s: t.longest_stall_s.unwrap_or(0.0),
    })
}

/// `runs` runs of each of `algorithms`, alternating the algorithms run by run so that a
/// stretch of a busy host falls on all of them alike; `each` sees every run as it ends (and
/// stops the whole with its error).
///
/// # Errors
/// Bad input (see [`validate`]), an algorithm the kernel does not offer (named, with what
/// it offers), not root, or a failed run.
pub fn share(
    program: &str,
    algorithms: &[String],
    link: &SharedLink,
    (seconds, runs): (f64, usize),
    mut each: impl FnMut(&ShareRun) -> Result<(), LinuxError>,
) -> Result<Vec<ShareRun>, LinuxError> {
    validate(link, seconds, runs)?;
    if algorithms.is_empty() {
        return Err(LinuxError::BadInput(
            "--cc: name at least one congestion control".into(),
        ));
    }
    for cc in algorithms.iter().map(String::as_str).chain([COMPETITOR]) {
        transfer::check_available(cc)?;
    }
    if !nix::unistd::geteuid().is_root() {
        return Err(LinuxError::Unsupported(
            "the shared-bottleneck bed needs root (network namespaces and tc)".into(),
        ));
    }
    let mut all = Vec::new();
    for run in 1..=runs {
        for cc in algorithms {
            let mut r = run_once(program, cc, link, seconds)?;
            r.run = run;
            each(&r)?;
            all.push(r);
        }
    }
    Ok(all)
}

/// One algorithm's runs, summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The congestion control.
    pub cc: String,
    /// How many runs.
    pub runs: usize,
    /// The mean share.
    pub mean_share: f64,
    /// The shares' sample standard deviation (0 for one run).
    pub sd_share: f64,
    /// How many of the runs stalled.
    pub stalled_runs: usize,
}

/// Per algorithm, in the order given: the number of runs, the mean share and its sample
/// standard deviation (0 for one run), and how many of the runs stalled
/// ([`ShareRun::stalls`]). Stalled runs stay in the mean: leaving them out would hide
/// what the kernel did, so the count is shown beside it instead.
#[must_use]
pub fn summary(runs: &[ShareRun]) -> Vec<Summary> {
    let mut order: Vec<&str> = Vec::new();
    for r in runs {
        if !order.contains(&r.cc.as_str()) {
            order.push(&r.cc);
        }
    }
    order
        .into_iter()
        .map(|cc| {
            let mine: Vec<&ShareRun> = runs.iter().filter(|r| r.cc == cc).collect();
            let v: Vec<f64> = mine.iter().map(|r| r.share).collect();
            let n = v.len();
            let mean = v.iter().sum::<f64>() / n as f64;
            let sd = if n > 1 {
                (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
            } else {
                0.0
            };
            Summary {
                cc: cc.to_string(),
                runs: n,
                mean_share: mean,
                sd_share: sd,
                stalled_runs: mine.iter().filter(|r| !r.stalls().is_empty()).count(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cc: &str, share: f64) -> ShareRun {
        ShareRun {
            cc: cc.into(),
            run: 1,
            share,
            mptcp_mbps: 0.0,
            tcp_mbps: 0.0,
            steal_percent: 0.0,
            mptcp_stall_s: 0.0,
            tcp_stall_s: 0.0,
        }
    }

    #[test]
    fn the_summary_keeps_the_order_given_and_gives_the_sample_deviation() {
        let stalled = ShareRun {
            mptcp_stall_s: 12.0,
            ..run("pp_lia", 0.5)
        };
        let s = summary(&[
            run("pp_lia", 0.4),
            run("reno", 0.6),
            stalled,
            run("reno", 0.6),
        ]);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].cc.as_str(), s[0].runs), ("pp_lia", 2));
        assert!((s[0].mean_share - 0.45).abs() < 1e-12);
        assert!((s[0].sd_share - 0.05f64.hypot(0.05)).abs() < 1e-12);
        assert_eq!(s[0].stalled_runs, 1);
        assert_eq!(
            (s[1].cc.as_str(), s[1].sd_share, s[1].stalled_runs),
            ("reno", 0.0, 0)
        );
    }

    #[test]
    fn a_run_is_flagged_only_for_a_stall_of_the_reporting_length_or_more() {
        let just_under = ShareRun {
            mptcp_stall_s: STALL_REPORT_S - 0.1,
            tcp_stall_s: STALL_REPORT_S - 0.1,
            ..run("pp_nmcc", 0.4)
        };
        assert!(just_under.stalls().is_empty());
        let both = ShareRun {
            mptcp_stall_s: 7.25,
            tcp_stall_s: STALL_REPORT_S,
            ..just_under
        };
        assert_eq!(
            both.stalls(),
            [
                "the MPTCP connection took no byte for 7.2 s",
                "the TCP flow took no byte for 5.0 s"
            ]
        );
    }

    #[test]
    fn out_of_range_settings_are_named_with_what_is_allowed() {
        let ok = SharedLink::default();
        assert!(validate(&ok, 60.0, 1).is_ok());
        let bad = |link: SharedLink, seconds: f64, runs: usize, flag: &str| {
            let e = validate(&link, seconds, runs).unwrap_err();
            assert!(matches!(e, LinuxError::BadInput(_)), "{e}");
            assert!(e.to_string().contains(flag), "{e}");
        };
        let rate = |rate_mbps| SharedLink {
            rate_mbps,
            ..SharedLink::default()
        };
        bad(rate(0.0), 60.0, 1, "--rate-mbps");
        bad(rate(f64::NAN), 60.0, 1, "--rate-mbps");
        bad(
            SharedLink {
                queue_kib: 1,
                ..SharedLink::default()
            },
            60.0,
            1,
            "--queue-kib",
        );
        bad(ok.clone(), 0.5, 1, "--seconds");
        bad(ok, 60.0, 0, "--runs");
    }
}
