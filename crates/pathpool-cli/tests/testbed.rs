//! `pathpool testbed up / get / down` and `pathpool get`'s failures, end to end with real
//! processes on loopback (issue 5).

use std::fs;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::thread;
use std::time::Duration;

fn pathpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pathpool"))
        .args(args)
        .output()
        .expect("runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_testbed_comes_up_serves_a_download_and_goes_down() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("pathpool-testbed-test-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    // Free loopback ports: bound and released (another process could take one in between;
    // then `up` fails loudly rather than silently).
    let ports: Vec<u16> = (0..6)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect::<Vec<_>>()
        .iter()
        .map(|s| s.local_addr().unwrap().port())
        .collect();
    let overlay = format!(
        r#"
rendezvous = "rv"
nodes = [
  {{ id = "rv", addr = "127.0.0.1:{}" }}, {{ id = "f1", addr = "127.0.0.1:{}" }},
  {{ id = "f2", addr = "127.0.0.1:{}" }},
  {{ id = "p1", addr = "127.0.0.1:{}", transit = false }},
  {{ id = "p2", addr = "127.0.0.1:{}", transit = false }},
  {{ id = "s", addr = "127.0.0.1:{}", transit = false }},
]
links = [
  {{ between = ["p1", "f1"], rate = "50Mbps", delay = "2ms" }},
  {{ between = ["p2", "f2"], rate = "50Mbps", delay = "2ms", loss = 0.01 }},
  {{ between = ["f1", "s"] }}, {{ between = ["f2", "s"] }}, {{ between = ["f1", "rv"] }},
]
"#,
        ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
    );
    let ov = dir.join("overlay.toml");
    fs::write(&ov, overlay).unwrap();
    let file = dir.join("content.bin");
    let data: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    fs::write(&file, &data).unwrap();
    let bed = dir.join("bed");
    let (ov, file, bed) = (
        ov.display().to_string(),
        file.display().to_string(),
        bed.display().to_string(),
    );
    let up = pathpool(&[
        "testbed",
        "up",
        &ov,
        "--dir",
        &bed,
        "--publish",
        &format!("p1={file}=/t/content"),
        "--publish",
        &format!("p2={file}=/t/content"),
    ]);
    assert!(up.status.success(), "{}", text(&up));
    let pids: Vec<u32> = fs::read_to_string(format!("{bed}/pids"))
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 5, "rv, f1, f2, p1, p2");
    // A second `up` in the same directory is refused.
    let again = pathpool(&["testbed", "up", &ov, "--dir", &bed]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    // No wait: `up` returns once every node serves and the rendezvous knows the name.
    let out = dir.join("got.bin").display().to_string();
    let log = dir.join("progress.csv").display().to_string();
    let get = pathpool(&[
        "testbed",
        "get",
        "/t/content",
        "-o",
        &out,
        "--node",
        "s",
        "--dir",
        &bed,
        "--progress-log",
        &log,
    ]);
    let progress = fs::read_to_string(&log).unwrap_or_default();
    let get_text = text(&get);
    // An unknown name: exit 1 with the rendezvous's reason, and no file.
    let missing = dir.join("missing.bin").display().to_string();
    let unknown = pathpool(&[
        "testbed", "get", "/t/other", "-o", &missing, "--node", "s", "--dir", &bed,
    ]);
    let down = pathpool(&["testbed", "down", "--dir", &bed]);
    thread::sleep(Duration::from_millis(300));
    let alive: Vec<u32> = pids
        .iter()
        .copied()
        // A process that exited but was not reaped (its parent, `testbed up`, is gone) is a
        // zombie: state Z in /proc/PID/stat.
        .filter(|p| {
            fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|st| {
                st.rsplit_once(')')
                    .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
            })
        })
        .collect();
    let rv_log = fs::read_to_string(format!("{bed}/rv.log")).unwrap_or_default();
    let _ = fs::remove_dir_all(&dir);
    assert!(get.status.success(), "{get_text}");
    assert!(get_text.contains("verified chunk by chunk"), "{get_text}");
    // The progress log: a header, rows per path, and at the end the paths' bytes add up to
    // the file.
    let mut rows = progress.lines();
    assert_eq!(
        rows.next(),
        Some("unix_time_s,elapsed_s,source,path,bytes,requests,lost")
    );
    let rows: Vec<Vec<&str>> = rows.map(|r| r.split(',').collect()).collect();
    assert!(
        rows.len() >= 2 && rows.iter().all(|r| r.len() == 7),
        "{progress}"
    );
    // Each path's last row: the final one written at the end. (Grouping by the elapsed
    // column, as this did, counted twice when a periodic row fell in the same millisecond
    // as the final one: CI, 2026-11-27, 5,997,762 for 3,000,000.)
    let mut last: Vec<(&str, &str, u64)> = Vec::new();
    for r in &rows {
        let bytes = r[4].parse::<u64>().unwrap();
        match last.iter_mut().find(|l| l.0 == r[2] && l.1 == r[3]) {
            Some(l) => l.2 = bytes,
            None => last.push((r[2], r[3], bytes)),
        }
    }
    let at_end: u64 = last.iter().map(|l| l.2).sum();
    assert_eq!(at_end, data.len() as u64, "{progress}");
    assert_eq!(unknown.status.code(), Some(1), "{}", text(&unknown));
    assert!(
        text(&unknown).contains("no publisher of /t/other"),
        "{}",
        text(&unknown)
    );
    assert!(!std::path::Path::new(&missing).exists());
    assert!(down.status.success(), "{}", text(&down));
    assert!(alive.is_empty(), "still running: {alive:?}");
    // `up`'s check subscribed too (answered with a FID set, or refused while no publisher
    // had announced the name or when the first publisher has no path to the node it asks
    // as), then the download (a FID set) and the unknown name (refused).
    let counters = rv_log
        .lines()
        .find_map(|l| l.strip_prefix("publishes "))
        .unwrap_or_else(|| panic!("{rv_log}"));
    let count = |what: &str| -> u64 {
        counters
            .split(", ")
            .find_map(|c| c.strip_prefix(what))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{what} in {counters}"))
    };
    assert!(
        count("FID sets ") >= 1 && count("refused ") >= 1,
        "{rv_log}"
    );
    assert!(count("FID sets ") + count("refused ") >= 3, "{rv_log}");
}

fn is_root() -> bool {
    fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            == Some("0")
    })
}

fn namespaces() -> String {
    String::from_utf8_lossy(
        &Command::new("ip")
            .args(["netns", "list"])
            .output()
            .expect("ip runs")
            .stdout,
    )
    .into_owned()
}

#[test]
fn a_netns_testbed_puts_each_node_in_its_namespace_and_removes_them_all() {
    if !is_root() {
        eprintln!("SKIPPED: `testbed up --netns` needs root (run `make test` as root)");
        return;
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("pathpool-testbed-netns-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    // No addresses: --netns gives each node one.
    let overlay = r#"
rendezvous = "rv"
[[nodes]]
id = "rv"
[[nodes]]
id = "f1"
[[nodes]]
id = "p1"
transit = false
[[nodes]]
id = "s"
transit = false
[[links]]
between = ["p1", "f1"]
rate = "50Mbps"
delay = "2ms"
[[links]]
between = ["f1", "s"]
[[links]]
between = ["f1", "rv"]
"#;
    let ov = dir.join("overlay.toml");
    fs::write(&ov, overlay).unwrap();
    let file = dir.join("content.bin");
    let data: Vec<u8> = (0..2_000_000u32)
        .map(|i| (i.wrapping_mul(2_246_822_519) >> 7) as u8)
        .collect();
    fs::write(&file, &data).unwrap();
    let (ov, file, bed) = (
        ov.display().to_string(),
        file.display().to_string(),
        dir.join("bed").display().to_string(),
    );
    let up = pathpool(&[
        "testbed",
        "up",
        &ov,
        "--netns",
        "--dir",
        &bed,
        "--publish",
        &format!("p1={file}=/t/content"),
    ]);
    let made: Vec<String> = fs::read_to_string(format!("{bed}/netns"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let listed = namespaces();
    let copy = fs::read_to_string(format!("{bed}/overlay.toml")).unwrap_or_default();
    let out = dir.join("got.bin").display().to_string();
    let get = pathpool(&[
        "testbed",
        "get",
        "/t/content",
        "-o",
        &out,
        "--node",
        "s",
        "--dir",
        &bed,
    ]);
    let got = fs::read(&out).unwrap_or_default();
    let down = pathpool(&["testbed", "down", "--dir", &bed]);
    let after = namespaces();
    let _ = fs::remove_dir_all(&dir);
    assert!(up.status.success(), "{}", text(&up));
    assert_eq!(made.len(), 5, "the hub and four nodes: {made:?}");
    for ns in &made {
        assert!(
            listed
                .lines()
                .any(|l| l.split_whitespace().next() == Some(ns)),
            "{ns}"
        );
    }
    assert!(copy.contains("addr = \"10.77.0.4:7000\""), "{copy}");
    assert!(get.status.success(), "{}", text(&get));
    assert!(got == data, "the download differs from the file");
    assert!(down.status.success(), "{}", text(&down));
    for ns in &made {
        assert!(
            !after
                .lines()
                .any(|l| l.split_whitespace().next() == Some(ns)),
            "{ns} still there"
        );
    }
}
