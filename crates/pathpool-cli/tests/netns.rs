//! Issue 5, acceptance 5: a 2-path mmTP download against one Linux kernel TCP flow (Reno)
//! through a `tbf`-limited bottleneck, in network namespaces this test creates.
//!
//! Three namespaces joined by veth pairs: `L` (the publisher, three forwarding nodes and the
//! TCP sender), `M` (a router, its egress towards `R` limited by `tbf`: 20 Mb/s, 150 KB) and
//! `R` (the rendezvous, a forwarding node, the subscriber and the TCP receiver). Both overlay
//! paths (`p-a-f1-f2-s1`, `p-b-f1-f2-s1`) cross the bottleneck, and the overlay says so: they
//! share the link `f1-f2`, so the topology manager puts them in one group. Needs root, `ip`,
//! `tc` and `python3` (for the kernel TCP flow); without root it says so and checks nothing.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// The bottleneck: `tbf` on the router's egress towards the receivers.
const RATE: &str = "20mbit";
const BURST: &str = "10kb";
const QUEUE: &str = "150kb";
/// Shares are measured from this many seconds after the subscription.
const WARM_UP_S: f64 = 5.0;
/// Length of the sub-windows whose shares are printed beside a run's whole-window share.
const SUB_WINDOW_S: f64 = 30.0;
/// Length of NMCC's measurement window. Which flow a drop-tail overflow hits varies, so the
/// share of a 30 s window varies from run to run: 16 such windows on an idle machine had a
/// standard deviation of about 5 points (42.8–61.3%, the first after the start a little
/// higher), so the mean of two, as this test first took, fell outside 50 ± 10 in a few
/// percent of runs. 120 s brings the deviation to about 2.5 points (parts of 30 s are not
/// independent: the share swings in phases of about a minute), 3 deviations inside 50 ± 10 from
/// the mean of about 52%; the test measured 180 s until 2026-11-26, when CI's length did not
/// allow it.
const NMCC_WINDOW_S: f64 = 120.0;
/// Length of Uncoupled's measurement window. Its 30 s windows vary more than NMCC's (55.5–72.7%
/// in nine windows), and over 60 s CI once read 56.2% against NMCC's 53.7% over 180 s, where
/// most runs are 12 points apart: 120 s halves the variance of a 60 s window.
const UNCOUPLED_WINDOW_S: f64 = 120.0;

const OVERLAY: &str = r#"
rendezvous = "rv"
tm = { policy = "k-shortest", k = 2, assistance = "shared-link" }
nodes = [
  { id = "p", addr = "10.201.1.1:7001", transit = false },
  { id = "a", addr = "10.201.1.1:7002" },
  { id = "b", addr = "10.201.1.1:7003" },
  { id = "f1", addr = "10.201.1.1:7004" },
  { id = "f2", addr = "10.201.2.1:7005" },
  { id = "s1", addr = "10.201.2.1:7006", transit = false },
  { id = "rv", addr = "10.201.2.1:7000" },
]
links = [
  { between = ["p", "a"] }, { between = ["p", "b"] },
  { between = ["a", "f1"] }, { between = ["b", "f1"] },
  { between = ["f1", "f2"] },
  { between = ["f2", "s1"] }, { between = ["f2", "rv"] },
]
"#;

/// The kernel TCP receiver: prints `ready`, then `unix_time_s,bytes` every 100 ms.
const TCP_RX: &str = r#"
import socket, sys, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((sys.argv[1], int(sys.argv[2])))
l.listen(1)
print("ready", flush=True)
c, _ = l.accept()
n, nxt = 0, 0.0
while True:
    d = c.recv(1 << 20)
    if not d:
        break
    n += len(d)
    t = time.time()
    if t >= nxt:
        print(f"{t:.3f},{n}", flush=True)
        nxt = t + 0.1
"#;

/// The kernel TCP sender, with the congestion control asked for; prints the one it got.
const TCP_TX: &str = r#"
import socket, sys
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, sys.argv[3].encode())
s.connect((sys.argv[1], int(sys.argv[2])))
got = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
print(f"cc {got}", flush=True)
buf = bytes(65536)
while True:
    s.sendall(buf)
"#;

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Three namespaces `ppL<tag>`, `ppM<tag>`, `ppR<tag>`; deleted on drop.
struct Namespaces {
    tag: String,
}

impl Namespaces {
    fn create() -> Result<Self, String> {
        let ns = Namespaces {
            tag: std::process::id().to_string(),
        };
        let (l, m, r) = (ns.name('L'), ns.name('M'), ns.name('R'));
        for n in [&l, &m, &r] {
            run("ip", &["netns", "add", n])?;
            run("ip", &["-n", n, "link", "set", "lo", "up"])?;
        }
        // Interface names must fit in 15 bytes.
        let (vl, vml, vmr, vr) = (ns.veth("l"), ns.veth("ml"), ns.veth("mr"), ns.veth("r"));
        run(
            "ip",
            &[
                "link", "add", &vl, "netns", &l, "type", "veth", "peer", "name", &vml, "netns", &m,
            ],
        )?;
        run(
            "ip",
            &[
                "link", "add", &vr, "netns", &r, "type", "veth", "peer", "name", &vmr, "netns", &m,
            ],
        )?;
        for (n, dev, addr) in [
            (&l, &vl, "10.201.1.1/24"),
            (&m, &vml, "10.201.1.2/24"),
            (&m, &vmr, "10.201.2.2/24"),
            (&r, &vr, "10.201.2.1/24"),
        ] {
            run("ip", &["-n", n, "addr", "add", addr, "dev", dev])?;
            run("ip", &["-n", n, "link", "set", dev, "up"])?;
        }
        run(
            "ip",
            &["-n", &l, "route", "add", "default", "via", "10.201.1.2"],
        )?;
        run(
            "ip",
            &["-n", &r, "route", "add", "default", "via", "10.201.2.2"],
        )?;
        run(
            "ip",
            &[
                "netns",
                "exec",
                &m,
                "sysctl",
                "-qw",
                "net.ipv4.ip_forward=1",
            ],
        )?;
        run(
            "tc",
            &[
                "-n", &m, "qdisc", "add", "dev", &vmr, "root", "tbf", "rate", RATE, "burst", BURST,
                "limit", QUEUE,
            ],
        )?;
        Ok(ns)
    }

    fn name(&self, which: char) -> String {
        format!("pp{which}{}", self.tag)
    }

    fn veth(&self, end: &str) -> String {
        format!("pp{end}{}", self.tag)
    }

    /// `PROGRAM ARGS` inside namespace `which`.
    fn command(&self, which: char, program: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name(which), program])
            .args(args);
        c
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for which in ['L', 'M', 'R'] {
            let _ = run("ip", &["netns", "delete", &self.name(which)]);
        }
    }
}

/// Child processes, killed and reaped on drop (also when an assertion fails).
#[derive(Default)]
struct Procs(Vec<Child>);

impl Procs {
    fn spawn(&mut self, mut c: Command, log: &Path) -> Result<(), String> {
        let out = std::fs::File::create(log).map_err(|e| e.to_string())?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = c
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{c:?}: {e}"))?;
        self.0.push(child);
        Ok(())
    }

    /// Starts `c` with its standard output piped; returns the lines as they come.
    fn spawn_reading(&mut self, mut c: Command) -> Result<mpsc::Receiver<String>, String> {
        let mut child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{c:?}: {e}"))?;
        let stdout: ChildStdout = child.stdout.take().expect("piped");
        self.0.push(child);
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(rx)
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Cumulative bytes at `t` from `(time, bytes)` samples in time order: the last sample at or
/// before `t` (0 before the first).
fn bytes_at(samples: &[(f64, u64)], t: f64) -> u64 {
    samples
        .iter()
        .take_while(|(ts, _)| *ts <= t)
        .last()
        .map_or(0, |(_, b)| *b)
}

/// One path's sample of the progress log: `(unix time, bytes, requests, lost)`.
type PathSample = (f64, u64, u64, u64);

/// The subscriber's `--progress-log`.
struct Progress {
    /// `(unix time, bytes from every path)`.
    total: Vec<(f64, u64)>,
    /// Each path's `(unix time, bytes, requests, lost)`, by its nodes (`a>f1>f2`).
    paths: Vec<(String, Vec<PathSample>)>,
    /// The unix time of the subscription.
    start: f64,
}

fn read_progress(path: &Path) -> Progress {
    let text = std::fs::read_to_string(path).expect("progress log written");
    let mut p = Progress {
        total: Vec::new(),
        paths: Vec::new(),
        start: f64::NAN,
    };
    for row in text.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        let num = |k: usize| f[k].parse::<f64>().unwrap();
        let (unix, elapsed, bytes) = (num(0), num(1), f[4].parse::<u64>().unwrap());
        if p.start.is_nan() {
            p.start = unix - elapsed;
        }
        // One row per path and time: add the paths up.
        match p.total.last_mut() {
            Some((t, b)) if *t == unix => *b += bytes,
            _ => p.total.push((unix, bytes)),
        }
        let sample = (
            unix,
            bytes,
            f[5].parse::<u64>().unwrap(),
            f[6].parse::<u64>().unwrap(),
        );
        match p.paths.iter_mut().find(|(via, _)| via == f[3]) {
            Some((_, samples)) => samples.push(sample),
            None => p.paths.push((f[3].to_string(), vec![sample])),
        }
    }
    p
}

/// A path's `(bytes, requests, lost)` between unix times `a` and `b`.
fn path_between(samples: &[PathSample], a: f64, b: f64) -> (u64, u64, u64) {
    let at = |t: f64| {
        samples
            .iter()
            .take_while(|s| s.0 <= t)
            .last()
            .map_or((0, 0, 0), |s| (s.1, s.2, s.3))
    };
    let (x, y) = (at(a), at(b));
    (y.0 - x.0, y.1 - x.1, y.2 - x.2)
}

/// One download against the kernel TCP flow.
struct Run {
    cc: &'static str,
    paths: usize,
    gap_threshold: Option<u32>,
    /// Length of the measurement window, in seconds from `WARM_UP_S`.
    window_s: f64,
}

/// What one run measured in its window.
struct Measured {
    /// The download's share of the bottleneck, in percent.
    share: f64,
    /// The smallest part of the download's bytes that one path carried, in percent.
    least_path: f64,
}

/// One run: the overlay, the kernel TCP flow, then a download stopped after the window.
fn share(ns: &Namespaces, dir: &Path, run_: &Run) -> Measured {
    let Run {
        cc,
        paths,
        gap_threshold,
        window_s,
    } = *run_;
    let bin = env!("CARGO_BIN_EXE_pathpool");
    let overlay = dir.join("overlay.toml");
    let ov = overlay.display().to_string();
    let content = dir.join("content.bin").display().to_string();
    let tag = format!("{cc}-{paths}-{}", gap_threshold.unwrap_or(0));
    let log = |what: &str| dir.join(format!("{tag}-{what}.log"));
    let mut procs = Procs::default();
    procs
        .spawn(ns.command('R', bin, &["rv", &ov]), &log("rv"))
        .unwrap();
    for (which, node) in [('L', "a"), ('L', "b"), ('L', "f1"), ('R', "f2")] {
        procs
            .spawn(
                ns.command(which, bin, &["fn", "--overlay", &ov, "--node", node]),
                &log(node),
            )
            .unwrap();
    }
    procs
        .spawn(
            ns.command(
                'L',
                bin,
                &[
                    "publish",
                    &content,
                    "--name",
                    "/t/content",
                    "--overlay",
                    &ov,
                    "--node",
                    "p",
                ],
            ),
            &log("p"),
        )
        .unwrap();
    let rx = procs
        .spawn_reading(ns.command('R', "python3", &["-u", "-c", TCP_RX, "10.201.2.1", "5001"]))
        .unwrap();
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(10)).as_deref(),
        Ok("ready")
    );
    let tx = procs
        .spawn_reading(ns.command(
            'L',
            "python3",
            &["-u", "-c", TCP_TX, "10.201.2.1", "5001", "reno"],
        ))
        .unwrap();
    assert_eq!(
        tx.recv_timeout(Duration::from_secs(10)).as_deref(),
        Ok("cc reno"),
        "the kernel TCP flow must run Reno"
    );
    // The TCP flow has the bottleneck to itself for 2 s; then the download starts.
    thread::sleep(Duration::from_secs(2));
    let progress = dir.join(format!("{tag}-progress.csv"));
    let gap = gap_threshold.map(|g| g.to_string());
    let paths_arg = paths.to_string();
    // Never written: the download is stopped before it completes.
    let out = dir.join(format!("{tag}-got.bin")).display().to_string();
    let progress_arg = progress.display().to_string();
    let mut args = vec![
        "get",
        "/t/content",
        "-o",
        &out,
        "--overlay",
        &ov,
        "--node",
        "s1",
        "--cc",
        cc,
        "--paths",
        &paths_arg,
        "-q",
        "--progress-log",
        &progress_arg,
    ];
    if let Some(g) = &gap {
        args.extend(["--gap-threshold", g]);
    }
    let get = ns
        .command('R', bin, &args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_secs_f64(WARM_UP_S + window_s + 1.0));
    run("kill", &["-INT", &get.id().to_string()]).unwrap();
    let get_out = get.wait_with_output().unwrap();
    drop(procs);
    let tcp: Vec<(f64, u64)> = rx
        .try_iter()
        .filter_map(|l| {
            let (t, b) = l.split_once(',')?;
            Some((t.parse().ok()?, b.parse().ok()?))
        })
        .collect();
    let progress = read_progress(&progress);
    let (mmtp, start) = (&progress.total, progress.start);
    assert!(
        !mmtp.is_empty() && !tcp.is_empty(),
        "no progress: {}",
        String::from_utf8_lossy(&get_out.stderr)
    );
    let share_between = |a: f64, b: f64| {
        let d_mmtp = (bytes_at(mmtp, start + b) - bytes_at(mmtp, start + a)) as f64;
        let d_tcp = (bytes_at(&tcp, start + b) - bytes_at(&tcp, start + a)) as f64;
        (d_mmtp, d_tcp, 100.0 * d_mmtp / (d_mmtp + d_tcp))
    };
    let (a, b) = (WARM_UP_S, WARM_UP_S + window_s);
    let (d_mmtp, d_tcp, share) = share_between(a, b);
    let (mbps_mmtp, mbps_tcp) = (d_mmtp * 8.0 / window_s / 1e6, d_tcp * 8.0 / window_s / 1e6);
    let subs: Vec<String> = (0..(window_s / SUB_WINDOW_S) as u32)
        .map(|k| {
            let from = a + f64::from(k) * SUB_WINDOW_S;
            format!("{:.1}", share_between(from, from + SUB_WINDOW_S).2)
        })
        .collect();
    // Each subflow's part, so that a subflow shut out shows.
    let mut least_path = 100.0_f64;
    let per_path: Vec<String> = progress
        .paths
        .iter()
        .map(|(via, samples)| {
            let (bytes, requests, lost) = path_between(samples, start + a, start + b);
            least_path = least_path.min(100.0 * bytes as f64 / d_mmtp.max(1.0));
            format!(
                "{via} {:.1} MB ({requests} requests, {lost} lost)",
                bytes as f64 / 1e6
            )
        })
        .collect();
    eprintln!(
        "acceptance 5: {cc}, {paths} path(s), gap threshold {}: mmTP {mbps_mmtp:.2} Mb/s, \
         kernel TCP Reno {mbps_tcp:.2} Mb/s: share {share:.1}% (tbf {RATE}, queue {QUEUE}, \
         seconds {a}-{b}; by {SUB_WINDOW_S} s: {}; paths: {})",
        gap.as_deref().unwrap_or("off"),
        subs.join(", "),
        per_path.join(", ")
    );
    Measured { share, least_path }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            == Some("0")
    })
}

#[test]
#[ignore = "a real-time share over minutes: `make soak` runs it (D343)"]
fn a_two_path_nmcc_download_takes_half_a_tbf_bottleneck_from_kernel_tcp_reno() {
    if !is_root() {
        eprintln!("SKIPPED: network namespaces need root (run `make test` as root)");
        return;
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("pathpool-netns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("overlay.toml"), OVERLAY).unwrap();
    // Security is on by default (issue 18): the overlay's keys, as a user makes them.
    let overlay_arg = dir.join("overlay.toml").display().to_string();
    run(
        env!("CARGO_BIN_EXE_pathpool"),
        &["keygen", "--overlay", &overlay_arg],
    )
    .unwrap();
    // More than a download can fetch in the longest run at the bottleneck's 20 Mb/s.
    let content_bytes = (20e6 / 8.0 * (WARM_UP_S + NMCC_WINDOW_S + 5.0)) as u32;
    let mut content =
        std::io::BufWriter::new(std::fs::File::create(dir.join("content.bin")).unwrap());
    let mut block = vec![0u8; 1 << 20];
    for start in (0..content_bytes).step_by(block.len()) {
        let len = block.len().min((content_bytes - start) as usize);
        for (k, byte) in block[..len].iter_mut().enumerate() {
            *byte = ((start + k as u32).wrapping_mul(2_654_435_761) >> 11) as u8;
        }
        content.write_all(&block[..len]).unwrap();
    }
    content.flush().unwrap();
    drop(content);
    let ns = Namespaces::create().expect("creating the namespaces, veths and tbf");
    // Loss detected by the gap rule (D86), as TCP's fast retransmit does, so that the
    // controllers' coupling decides the shares. NMCC over `NMCC_WINDOW_S`, Uncoupled over
    // `UNCOUPLED_WINDOW_S`, and a single-path download as the reference of what one mmTP
    // path takes from this kernel flow.
    let measure = |cc, paths, gap_threshold, window_s| {
        share(
            &ns,
            &dir,
            &Run {
                cc,
                paths,
                gap_threshold,
                window_s,
            },
        )
    };
    let nmcc = measure("nmcc", 2, Some(3), NMCC_WINDOW_S);
    let uncoupled = measure("uncoupled", 2, Some(3), UNCOUPLED_WINDOW_S);
    // On request, two and a half more minutes: a single-path download (what one mmTP path
    // takes from this kernel flow) and the thesis's timer-only loss detection (the default of
    // `pathpool get`). Printed, not asserted.
    let more = std::env::var_os("PATHPOOL_NETNS_MORE").map(|_| {
        (
            measure("nmcc", 1, Some(3), SUB_WINDOW_S),
            measure("nmcc", 2, None, SUB_WINDOW_S * 2.0),
            measure("uncoupled", 2, None, SUB_WINDOW_S * 2.0),
        )
    });
    drop(ns);
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "acceptance 5 summary (gap threshold 3): NMCC {:.1}%, Uncoupled {:.1}%",
        nmcc.share, uncoupled.share
    );
    if let Some((single, n, u)) = more {
        eprintln!(
            "acceptance 5, more: one mmTP path {:.1}%; timer-only: NMCC {:.1}%, \
             Uncoupled {:.1}%",
            single.share, n.share, u.share
        );
    }
    // Both paths cross the one bottleneck with the same RTT, so each carries about half of
    // the download (45-55% in the runs seen). A path shut out, as CI found on 2026-11-27 when
    // a stalled subflow's probes were answered but dropped, carried 0.
    for (what, m) in [("NMCC", &nmcc), ("Uncoupled", &uncoupled)] {
        assert!(
            m.least_path >= 20.0,
            "{what}: one path carried {:.1}% of the download",
            m.least_path
        );
    }
    let (nmcc, uncoupled) = (nmcc.share, uncoupled.share);
    assert!((nmcc - 50.0).abs() <= 10.0, "NMCC share {nmcc:.1}%");
    // The coupling shows as Uncoupled taking more than NMCC. Their means differ by about 12
    // points (52% and 64%) and the two 120 s windows' shares by about 4 points in standard
    // deviation, so a margin would fail in a few percent of runs; "more" fails in about 0.1%.
    assert!(
        uncoupled > nmcc,
        "Uncoupled ({uncoupled:.1}%) should take more than NMCC ({nmcc:.1}%)"
    );
}
