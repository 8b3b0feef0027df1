//! `pathpool emu` from the command line (issue 23 part B): bad options and missing rights
//! give a clear error and a non-zero exit; in a wire namespace this test builds, pings take
//! the emulated delay and the counters printed at SIGTERM count them. The emulator's
//! faithfulness at 100 Mb/s is tested in `pathpool-linux`'s `tests/emu.rs`.

use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::Duration;

use pathpool_linux::emu_bench::Pings;

const BIN: &str = env!("CARGO_BIN_EXE_pathpool");

fn pathpool(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("pathpool runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn root() -> bool {
    let ok = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !ok {
        eprintln!("skipped: needs root (network namespaces, raw sockets)");
    }
    ok
}

fn must(args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
}

#[test]
fn bad_options_exit_2_naming_the_option_and_key() {
    let o = pathpool(&["emu", "x0", "x1", "--a-to-b", "rate=8Mbps,dealy=5ms"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--a-to-b: unknown key \"dealy\" (did you mean delay?)"),
        "{}",
        stderr(&o)
    );
    let o = pathpool(&["emu", "x0", "x1", "--loss", "1.5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--a-to-b loss: 1.5 is not a probability"));
    let o = pathpool(&["emu", "x0", "x1", "--rate", "10MBps"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bytes per second are not accepted"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_missing_interface_or_missing_rights_exit_1_saying_which() {
    let o = pathpool(&["emu", "pp-no-such0", "pp-no-such1", "--duration", "1s"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("pp-no-such0: no such interface in this network namespace"),
        "{}",
        stderr(&o)
    );
    if !root() {
        return;
    }
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
        .args(["emu", "lo", "pp-no-such1", "--duration", "1s"])
        .output()
        .expect("setpriv runs");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("raw packet sockets need root or CAP_NET_RAW"),
        "{}",
        stderr(&o)
    );
}

/// Three namespaces, deleted on drop: `l` (10.8.9.1) — `wa` | wire | `wb` — `r` (10.8.9.2).
struct Bed {
    names: [String; 3],
}

impl Bed {
    fn new() -> Bed {
        let pid = std::process::id();
        let names = ["l", "w", "r"].map(|n| format!("ppemu{n}{pid}"));
        let [l, w, r] = [&names[0], &names[1], &names[2]].map(String::as_str);
        for n in [l, w, r] {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
            must(&["ip", "netns", "add", n]);
        }
        for (host, addr, end) in [(l, "10.8.9.1/24", "wa"), (r, "10.8.9.2/24", "wb")] {
            must(&[
                "ip", "link", "add", "e0", "netns", host, "type", "veth", "peer", "name", end,
                "netns", w,
            ]);
            must(&["ip", "-n", host, "addr", "add", addr, "dev", "e0"]);
            must(&["ip", "-n", host, "link", "set", "e0", "up"]);
            must(&["ip", "-n", w, "link", "set", end, "up"]);
        }
        Bed { names }
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

#[test]
fn pings_take_the_emulated_delay_and_sigterm_prints_the_counters() {
    if !root() {
        return;
    }
    let bed = Bed::new();
    let emu = Command::new("ip")
        .args(["netns", "exec", &bed.names[1], BIN, "emu", "wa", "wb"])
        .args(["--delay", "15ms", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pathpool emu starts");
    thread::sleep(Duration::from_millis(500));
    let ping = |count: &str| {
        let out = Command::new("ip")
            .args(["netns", "exec", &bed.names[0], "ping", "-n"])
            .args(["-c", count, "-i", "0.05", "10.8.9.2"])
            .output()
            .expect("ping runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // The first resolves the neighbours.
    ping("1");
    // The round trip is a real-time figure, judged only on a run the host left alone
    // (D341: CI read 31.1 ms once, 2026-11-28); the counters below are checked always. This
    // test checks that the command applies its delay, so it judges the median: one stall of
    // the machine (up to about 11 ms) moves a mean of 20 by 0.55 ms. The emulator's tail is
    // judged in `pathpool-linux`'s emu test (D357).
    let mut pings = 1;
    pathpool_linux::steal::until_undisturbed(
        2,
        pathpool_linux::steal::PUNCTUALITY_DISTURBED,
        || {
            let out = ping("20");
            pings += 20;
            let seen = Pings::parse(&out).unwrap_or_else(|| panic!("no round trips: {out}"));
            assert_eq!(seen.received, 20, "{out}");
            let median = seen.median_ms();
            if (30.0..31.0).contains(&median) {
                Ok(())
            } else {
                Err(format!("median round trip {median} ms, 30 ms emulated"))
            }
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    must(&["kill", "-TERM", &emu.id().to_string()]);
    let out = emu.wait_with_output().expect("pathpool emu ends");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the counters as JSON");
    for direction in ["a_to_b", "b_to_a"] {
        let d = &json[direction];
        // Every ping each way, and the neighbour resolution's frames (and IPv6's own).
        let delivered = d["delivered"].as_u64().unwrap();
        assert!(delivered >= pings, "{direction}: {d}");
        assert_eq!(d["lost"], 0);
        assert_eq!(d["oversize"], 0);
        assert_eq!(
            d["offered"].as_u64().unwrap(),
            delivered + d["in_transit"].as_u64().unwrap(),
            "{direction}: {d}"
        );
    }
}
