//! Issue 23 part B: `pathpool emu` keeps its link model with kernel traffic, in a
//! [`WireBed`] this test builds. Delay within 1 ms of the emulated one (all but one frame
//! in a hundred), TCP at 100 Mb/s as through `tbf`, random losses and queue drops counted to
//! the frame, and frames longer than one MTU counted rather than lost silently. Needs root,
//! `ip`, `tc`, `ethtool` and `ping`; without root it says so and checks nothing.
//!
//! The spreads were measured before the bounds were set (`pathpool linux bench-emu`, docs/emu.md):
//! idle round trips exceed twice the delay by 0.1–0.3 ms, and at 100 Mb/s frames leave
//! 20 µs late on average, 0.3–0.7 ms at worst. The whole machine stalls now and then for up
//! to about 11 ms, so the tails are judged as shares over windows long enough for a stall or
//! two (D356, D357).

use std::process::{Child, Command, Output};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use pathpool_core::{Dur, Rate};
use pathpool_linux::emu_bench;
use pathpool_linux::steal;
use pathpool_linux::wire::{offloads_off, RunningEmu, WireBed, RIGHT};
use pathpool_net::emulation::LinkEmulation;

const BIN: &str = env!("CARGO_BIN_EXE_pathpool-linux");

/// Timing figures: one bed at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

fn link(rate: Rate, delay_ms: u64) -> LinkEmulation {
    LinkEmulation {
        rate,
        delay: Dur::from_ms(delay_ms),
        queue_bytes: 250_000,
        ..LinkEmulation::TRANSPARENT
    }
}

/// Pings of the delay test, 20 a second for 10 s. The machine sometimes stalls for a few
/// milliseconds, forwarder and all (docs/emu.md); measured on a quiet host, 2 of 5200 round
/// trips took over 42 ms (44.2 and 51.2) and 3 of 10 400 frames left over 1 ms late. So the
/// tail is judged as a share over a window long enough that one stall, or two, stay under
/// it, while a lateness that recurs still fails (D357).
const PINGS: u32 = 200;

/// At most this many in a hundred round trips over 2 ms late, or frames over 1 ms late.
const LATE_PER_HUNDRED: usize = 1;

#[test]
fn round_trips_are_within_a_millisecond_of_the_emulated_delay() {
    if !pathpool_linux::bed::running_as_root() {
        return;
    }
    let _one = serial();
    let bed = WireBed::new("emdl").unwrap();
    let d = link(Rate::INFINITE, 20);
    // Punctuality is a real-time figure, judged only in a run the host left alone (D341).
    // Early frames and lost pings are errors in any run.
    steal::until_undisturbed(2, steal::PUNCTUALITY_DISTURBED, || {
        let emu = RunningEmu::start(&bed.wire, &WireBed::config(d, d)).unwrap();
        let pings = emu_bench::ping(&bed, PINGS, 0.05).unwrap();
        let stats = emu.stop().unwrap();
        let [min, avg, max, _] = pings.summary_ms;
        // Each direction may be late by up to 1 ms.
        let over_42 = pings.at_least(42.0);
        eprintln!(
            "40 ms emulated, {PINGS} pings: min {min} avg {avg} max {max} ms, {over_42} over \
             42 ms; frames over 1 ms late {:?}",
            stats.iter().map(|s| s.late_over_1ms).collect::<Vec<_>>()
        );
        assert_eq!(pings.received, PINGS);
        assert!(
            min >= 40.0,
            "a round trip of {min} ms, shorter than the 40 ms emulated"
        );
        for s in &stats {
            assert_eq!(s.delivered, u64::from(PINGS), "{s:?}");
        }
        if avg >= 41.0 {
            return Err(format!("mean round trip {avg} ms, 40 ms emulated"));
        }
        let allowed = LATE_PER_HUNDRED * PINGS as usize / 100;
        if over_42 > allowed {
            return Err(format!(
                "{over_42} of {PINGS} round trips took 42 ms or more (longest {max} ms), 40 ms \
                 emulated"
            ));
        }
        match stats.iter().find(|s| s.late_over_1ms > allowed as u64) {
            Some(s) => Err(format!("over {allowed} frames over 1 ms late: {s:?}")),
            None => Ok(()),
        }
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

/// Length of each 100-Mb/s transfer, seconds: about 125 000 frames (D356).
const TRANSFER_S: f64 = 15.0;

#[test]
fn tcp_through_the_emulator_at_100_mbps_matches_tbf() {
    if !pathpool_linux::bed::running_as_root() {
        return;
    }
    let _one = serial();
    let hundred = Rate::from_mbps(100);
    // Throughput and punctuality are real-time figures, judged only in a run the host left
    // alone (D341). The share of late frames is judged over a window long enough that one
    // host hiccup of a few milliseconds (about 60 late frames at 100 Mb/s) stays under its
    // bound (D356).
    steal::until_undisturbed(2, steal::PUNCTUALITY_DISTURBED, || {
        let tbf = emu_bench::transfer(
            BIN,
            "tbf",
            (LinkEmulation::TRANSPARENT, Some("100mbit")),
            TRANSFER_S,
        )
        .unwrap();
        let emu = emu_bench::transfer(BIN, "emu", (link(hundred, 5), None), TRANSFER_S).unwrap();
        eprintln!(
            "tbf {:.2} Mb/s; emu {:.2} Mb/s, late mean {:.1} us, max {:.1} us, {} over 1 ms of {}",
            tbf.mbps,
            emu.mbps,
            emu.data.late_mean_us(),
            emu.data.late_max_ns as f64 / 1e3,
            emu.data.late_over_1ms,
            emu.data.delivered
        );
        assert!(emu.mbps <= 100.0, "{} Mb/s: faster than the rate", emu.mbps);
        assert_eq!(emu.data.oversize, 0);
        // 1448 bytes of payload in a 1514-byte frame: 95.6 Mb/s at most.
        if emu.mbps < 90.0 {
            return Err(format!("{} Mb/s through the emulator", emu.mbps));
        }
        if (emu.mbps - tbf.mbps).abs() >= 3.0 {
            return Err(format!("emu {} vs tbf {}", emu.mbps, tbf.mbps));
        }
        // Delay exactness under load: at most one frame in a thousand leaves over 1 ms late.
        if emu.data.late_over_1ms * 1000 > emu.data.delivered {
            return Err(format!("over 1 in 1000 frames late: {:?}", emu.data));
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn random_losses_and_queue_drops_are_counted_to_the_frame() {
    if !pathpool_linux::bed::running_as_root() {
        return;
    }
    let _one = serial();
    let bed = WireBed::new("emls").unwrap();
    // 5% loss towards the right only: every ping lost is one frame the emulator lost.
    let lossy = LinkEmulation {
        loss: 0.05,
        ..LinkEmulation::TRANSPARENT
    };
    let t = LinkEmulation::TRANSPARENT;
    let emu = RunningEmu::start(&bed.wire, &WireBed::config(lossy, t)).unwrap();
    let received = emu_bench::ping(&bed, 1000, 0.002).unwrap().received;
    let [ab, _] = emu.stop().unwrap();
    assert_eq!(u64::from(1000 - received), ab.lost, "{ab:?}");
    // Binomial(1000, 0.05): standard deviation 6.9 frames.
    assert!((22..=78).contains(&ab.lost), "{} lost of 1000", ab.lost);

    // 1 Mb/s and 4 packets of queue (waiting or being sent), offered a burst of 200
    // datagrams in about a millisecond: the first four cross, one 1442-byte frame per
    // 11.5 ms, and the rest find the queue full.
    let slow = LinkEmulation {
        rate: Rate::from_mbps(1),
        queue_packets: 4,
        ..LinkEmulation::TRANSPARENT
    };
    let emu = RunningEmu::start(&bed.wire, &WireBed::config(slow, t)).unwrap();
    udp_burst(&bed.left, 200, 1400);
    thread::sleep(Duration::from_millis(100));
    let [ab, _] = emu.stop().unwrap();
    assert_eq!(ab.offered, 200, "{ab:?}");
    assert_eq!(ab.delivered + ab.in_transit + ab.queue_drops, 200, "{ab:?}");
    assert!((4..=6).contains(&(ab.delivered + ab.in_transit)), "{ab:?}");
}

/// Sends `count` UDP datagrams of `bytes` back to back from namespace `netns` to the right
/// host (a thread of this process enters the namespace).
fn udp_burst(netns: &str, count: usize, bytes: usize) {
    let path = format!("/run/netns/{netns}");
    thread::spawn(move || {
        let ns = std::fs::File::open(&path).unwrap();
        nix::sched::setns(ns, nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
        let socket = std::net::UdpSocket::bind("10.8.0.1:0").unwrap();
        let payload = vec![0x5a; bytes];
        for _ in 0..count {
            socket.send_to(&payload, (RIGHT, 9)).unwrap();
        }
    })
    .join()
    .unwrap();
}

/// Waits for `child` up to `limit`, then kills it.
fn wait_or_kill(mut child: Child, limit: Duration) -> Option<Output> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().ok().flatten().is_some() {
            return child.wait_with_output().ok();
        }
        thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn frames_longer_than_one_mtu_are_counted_not_lost_silently() {
    if !pathpool_linux::bed::running_as_root() {
        return;
    }
    let _one = serial();
    let bed = WireBed::new("emov").unwrap();
    // Segmentation offload back on at the sender: TCP hands the device 64-kB frames.
    let out = Command::new("ip")
        .args([
            "netns", "exec", &bed.left, "ethtool", "-K", "e0", "tso", "on", "gso", "on",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let t = LinkEmulation::TRANSPARENT;
    let emu = RunningEmu::start(&bed.wire, &WireBed::config(t, t)).unwrap();
    let to = format!("{RIGHT}:5201");
    let sink = pathpool_linux::bed::sink(&bed.right, BIN, &to, 1).unwrap();
    thread::sleep(Duration::from_millis(300));
    let send = pathpool_linux::bed::sender(&bed.left, BIN, &to, ("cubic", true), 1.0).unwrap();
    let _ = wait_or_kill(send, Duration::from_secs(4));
    let _ = wait_or_kill(sink, Duration::from_secs(1));
    let [ab, _] = emu.stop().unwrap();
    assert!(ab.oversize > 0, "{ab:?}");
    assert_eq!(
        ab.offered,
        ab.oversize + ab.delivered + ab.in_transit + ab.lost + ab.queue_drops
    );
    offloads_off(&bed.left, "e0").unwrap();
}
