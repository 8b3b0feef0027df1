//! `pathpool linux bench-emu`: how faithful and how fast `pathpool emu` is, measured in a
//! [`WireBed`] (issue 23 part B; printed, never asserted here; the netns tests assert the
//! bounds).
//!
//! * **Delay.** Ping round trips through the emulator at several one-way delays on an idle
//!   link, next to twice the delay.
//! * **Rate.** A 10-s TCP (CUBIC) transfer through `tbf` at 100 Mb/s with a transparent
//!   emulator (the baseline: `tbf` alone on the same bed), through the emulator at 100 Mb/s,
//!   and through the emulator at 100 Mb/s with 10 ms each way, with the emulator's own
//!   figures: how late frames left against their release time, and its CPU time; then
//!   through the emulator without a rate, its ceiling.

use std::time::Duration;

use pathpool_core::{Dur, Rate};
use pathpool_net::emu::DirectionStats;
use pathpool_net::emulation::LinkEmulation;
use serde::Serialize;

use crate::bed::{must, sender, sink};
use crate::transfer::Transferred;
use crate::wire::{RunningEmu, WireBed, RIGHT};
use crate::LinuxError;

/// Round trips through the emulator at one delay.
#[derive(Clone, Debug, Serialize)]
pub struct PingLine {
    /// The emulator's one-way delay, each direction, ms.
    pub delay_ms: f64,
    /// Pings answered.
    pub received: u32,
    /// Shortest round trip, ms.
    pub min_ms: f64,
    /// Mean round trip, ms.
    pub avg_ms: f64,
    /// Longest round trip, ms.
    pub max_ms: f64,
    /// ping's mean deviation, ms.
    pub mdev_ms: f64,
}

/// One transfer's figures.
#[derive(Clone, Debug, Serialize)]
pub struct TransferLine {
    /// What limited the link.
    pub setup: String,
    /// Goodput, Mb/s.
    pub mbps: f64,
    /// The data direction's counters.
    pub data: DirectionStats,
    /// The emulator's CPU time (both directions) per second of transfer.
    pub emu_cpu_per_s: f64,
}

/// What one `ping` run saw.
#[derive(Clone, Debug, PartialEq)]
pub struct Pings {
    /// Replies received.
    pub received: u32,
    /// ping's summary: `min/avg/max/mdev`, ms.
    pub summary_ms: [f64; 4],
    /// Each reply's round trip, ms, in the order they arrived.
    pub rtts_ms: Vec<f64>,
}

impl Pings {
    /// Reads `ping`'s output (without `-q`): the received count, the summary's
    /// `min/avg/max/mdev` and each reply's `time=`; `None` when any is missing or the replies
    /// printed disagree with the count.
    #[must_use]
    pub fn parse(out: &str) -> Option<Pings> {
        let received = out
            .lines()
            .find(|l| l.contains("received"))?
            .split(',')
            .find(|p| p.contains("received"))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        let rtt = out.lines().find(|l| l.contains("min/avg/max"))?;
        let numbers = rtt.split('=').nth(1)?.split_whitespace().next()?;
        let v: Vec<f64> = numbers.split('/').filter_map(|x| x.parse().ok()).collect();
        let summary_ms = <[f64; 4]>::try_from(v).ok()?;
        let rtts_ms: Vec<f64> = out
            .lines()
            .filter_map(|l| l.split_once(" time="))
            .filter_map(|(_, t)| t.split_whitespace().next()?.parse().ok())
            .collect();
        (rtts_ms.len() == received as usize).then_some(Pings {
            received,
            summary_ms,
            rtts_ms,
        })
    }

    /// The median round trip, ms (the upper one of an even count).
    #[must_use]
    pub fn median_ms(&self) -> f64 {
        let mut sorted = self.rtts_ms.clone();
        sorted.sort_by(f64::total_cmp);
        sorted[sorted.len() / 2]
    }

    /// How many round trips took `limit_ms` or longer.
    #[must_use]
    pub fn at_least(&self, limit_ms: f64) -> usize {
        self.rtts_ms.iter().filter(|&&r| r >= limit_ms).count()
    }
}

/// Pings `count` times at `interval_s` from the left host to the right.
///
/// # Errors
/// No `ping`, or no answer at all.
pub fn ping(bed: &WireBed, count: u32, interval_s: f64) -> Result<Pings, LinuxError> {
    let (c, i) = (count.to_string(), interval_s.to_string());
    let out = must(&[
        "ip", "netns", "exec", &bed.left, "ping", "-n", "-c", &c, "-i", &i, RIGHT,
    ])?;
    Pings::parse(&out).ok_or_else(|| LinuxError::Failed(format!("unexpected ping output: {out}")))
}

fn emulation(rate: Rate, delay_ms: u64, queue_bytes: u64) -> LinkEmulation {
    LinkEmulation {
        rate,
        delay: Dur::from_ms(delay_ms),
        queue_bytes,
        ..LinkEmulation::TRANSPARENT
    }
}

/// Ping round trips through the emulator at each one-way delay of `delays_ms`.
///
/// # Errors
/// Not root, no `ping` or `ethtool`.
pub fn delays(delays_ms: &[u64]) -> Result<Vec<PingLine>, LinuxError> {
    let bed = WireBed::new("emud")?;
    let mut lines = Vec::new();
    for &d in delays_ms {
        let link = emulation(Rate::INFINITE, d, u64::MAX);
        let emu = RunningEmu::start(&bed.wire, &WireBed::config(link, link))?;
        // The first exchange resolves the neighbours (ARP): not a round trip of the link.
        ping(&bed, 1, 0.2)?;
        let pings = ping(&bed, 50, 0.05)?;
        let [min, avg, max, mdev] = pings.summary_ms;
        emu.stop()?;
        lines.push(PingLine {
            delay_ms: d as f64,
            received: pings.received,
            min_ms: min,
            avg_ms: avg,
            max_ms: max,
            mdev_ms: mdev,
        });
    }
    Ok(lines)
}

fn process_cpu_s() -> f64 {
    // utime and stime of this process (all threads), fields 14 and 15 of /proc/self/stat,
    // counted after the command name's closing parenthesis.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let f: Vec<f64> = after
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let ticks = must(&["getconf", "CLK_TCK"])
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0);
    f.get(11)
        .zip(f.get(12))
        .map_or(0.0, |(u, s)| (u + s) / ticks)
}

/// A `seconds`-long TCP transfer left to right through the emulator, `tbf` on the left host's
/// egress when `tbf` is given.
///
/// # Errors
/// A bed, emulator or transfer that fails.
pub fn transfer(
    program: &str,
    setup: &str,
    (link, tbf): (LinkEmulation, Option<&str>),
    seconds: f64,
) -> Result<TransferLine, LinuxError> {
    let bed = WireBed::new("emut")?;
    if let Some(rate) = tbf {
        must(&[
            "ip", "netns", "exec", &bed.left, "tc", "qdisc", "add", "dev", "e0", "root", "tbf",
            "rate", rate, "burst", "16kb", "limit", "250kb",
        ])?;
    }
    let back = LinkEmulation {
        rate: Rate::INFINITE,
        ..link
    };
    let emu = RunningEmu::start(&bed.wire, &WireBed::config(link, back))?;
    let to = format!("{RIGHT}:5201");
    let receiver = sink(&bed.right, program, &to, 1)?;
    std::thread::sleep(Duration::from_millis(300));
    let cpu_before = process_cpu_s();
    let send = sender(&bed.left, program, &to, ("cubic", true), seconds)?;
    let out = send
        .wait_with_output()
        .map_err(|e| LinuxError::Failed(format!("the sender: {e}")))?;
    let cpu = process_cpu_s() - cpu_before;
    let _ = receiver.wait_with_output();
    let stats = emu.stop()?;
    if !out.status.success() {
        return Err(LinuxError::Failed(format!(
            "the sender failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let t: Transferred = serde_json::from_slice(&out.stdout)
        .map_err(|e| LinuxError::Failed(format!("the sender's report: {e}")))?;
    Ok(TransferLine {
        setup: setup.into(),
        mbps: t.mbps,
        data: stats[0],
        emu_cpu_per_s: cpu / t.seconds.max(1e-9),
    })
}

/// The transfers: `tbf` alone, the emulator's rate, the emulator's rate and delay, and the
/// emulator without a rate (its ceiling).
///
/// # Errors
/// As [`transfer`].
pub fn transfers(program: &str, seconds: f64) -> Result<Vec<TransferLine>, LinuxError> {
    let hundred = Rate::from_mbps(100);
    // 250 kB: the tbf baseline's limit; with 10 ms each way, about one bandwidth-delay
    // product (100 Mb/s × 20 ms = 250 kB).
    let cases = [
        (
            "tbf 100mbit, emu transparent",
            emulation(Rate::INFINITE, 0, u64::MAX),
            Some("100mbit"),
        ),
        ("emu 100 Mb/s", emulation(hundred, 0, 250_000), None),
        (
            "emu 100 Mb/s, 10 ms each way",
            emulation(hundred, 10, 250_000),
            None,
        ),
        // The ceiling: how fast the emulator forwards with nothing to hold frames back.
        (
            "emu, no rate limit",
            emulation(Rate::INFINITE, 0, u64::MAX),
            None,
        ),
    ];
    cases
        .into_iter()
        .map(|(setup, link, tbf)| transfer(program, setup, (link, tbf), seconds))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Pings;

    #[test]
    fn reads_each_reply_and_the_summary() {
        let out = "PING 10.8.0.2 (10.8.0.2) 56(84) bytes of data.\n64 bytes from 10.8.0.2: \
                   icmp_seq=1 ttl=64 time=40.2 ms\n64 bytes from 10.8.0.2: icmp_seq=3 ttl=64 \
                   time=80.47 ms\n\n--- 10.8.0.2 ping statistics ---\n3 packets transmitted, \
                   2 received, 33.3333% packet loss, time 3810ms\nrtt min/avg/max/mdev = \
                   40.202/60.336/80.470/20.134 ms\n";
        let pings = Pings::parse(out).unwrap();
        assert_eq!(pings.received, 2);
        assert_eq!(pings.summary_ms, [40.202, 60.336, 80.470, 20.134]);
        assert_eq!(pings.rtts_ms, [40.2, 80.47]);
        assert_eq!(pings.at_least(80.47), 1);
        assert_eq!(pings.median_ms(), 80.47);
        assert_eq!(Pings::parse("nothing"), None);
        // A reply count that disagrees with the replies printed is not trusted.
        assert_eq!(Pings::parse(&out.replace("2 received", "3 received")), None);
    }
}
