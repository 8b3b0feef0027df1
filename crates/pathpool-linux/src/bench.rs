//! `pathpool linux bench`: the CPU the BPF controllers cost, against the kernel's Reno
//! (issue 23, acceptance 6; printed, never asserted).
//!
//! One two-subflow MPTCP transfer over two veth pairs at full speed per algorithm, in a
//! fresh [`TwoPaths`] bed; the machine's busy CPU time over the transfer (all CPUs, from
//! /proc/stat: sender, receiver and the kernel's network stack) per gigabyte delivered.

use std::fs;

use serde::Serialize;

use crate::bed::{must, TwoPaths};
use crate::transfer;
use crate::LinuxError;

/// One algorithm's figures.
#[derive(Clone, Debug, Serialize)]
pub struct BenchLine {
    /// The congestion control of both subflows.
    pub cc: String,
    /// Delivered, Gb/s.
    pub gbps: f64,
    /// Busy CPU seconds (all CPUs) per gigabyte delivered.
    pub cpu_s_per_gb: f64,
}

/// Busy and total jiffies of all CPUs.
fn cpu_jiffies() -> Result<(u64, u64), LinuxError> {
    let stat = fs::read_to_string("/proc/stat")
        .map_err(|e| LinuxError::Unsupported(format!("cannot read /proc/stat: {e}")))?;
    let line = stat.lines().next().unwrap_or_default();
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 5 {
        return Err(LinuxError::Unsupported(format!(
            "unexpected /proc/stat: {line}"
        )));
    }
    let total: u64 = v.iter().take(8).sum();
    // idle and iowait are the 4th and 5th fields.
    Ok((total - v[3] - v[4], total))
}

fn clock_ticks() -> f64 {
    must(&["getconf", "CLK_TCK"])
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Runs the transfer with each of `algorithms` for `seconds`.
///
/// # Errors
/// Not root, no MPTCP, an algorithm not registered.
pub fn bench(
    program: &str,
    algorithms: &[String],
    seconds: f64,
) -> Result<Vec<BenchLine>, LinuxError> {
    let hz = clock_ticks();
    let mut lines = Vec::new();
    for cc in algorithms {
        let bed = TwoPaths::new("bench", None)?;
        let before = cpu_jiffies()?;
        let (sink, send) = bed.transfer(program, cc, seconds, false)?;
        let t = transfer::report_of(send, "sender")?;
        let _ = sink.wait_with_output();
        let after = cpu_jiffies()?;
        let busy_s = (after.0 - before.0) as f64 / hz;
        let gb = t.bytes as f64 / 1e9;
        lines.push(BenchLine {
            cc: cc.clone(),
            gbps: t.mbps / 1000.0,
            cpu_s_per_gb: busy_s / gb,
        });
    }
    Ok(lines)
}
