//! `pathpool get` interrupted, end to end with real processes on loopback (issue 18, files):
//! killed with SIGKILL mid-download, it leaves a partial file that a second download to the
//! same output neither reads nor mistakes for content; stopped with Ctrl-C (SIGINT), it
//! removes its partial file, says so, and leaves the output as it was.

use std::fs;
use std::net::UdpSocket;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use pathpool_net::temp_file::leftovers;

fn pathpool(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathpool"));
    c.args(args);
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Free loopback ports: bound and released (another process could take one in between; the
/// test then fails loudly).
fn free_ports(n: usize) -> Vec<u16> {
    let sockets: Vec<UdpSocket> = (0..n)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    sockets
        .iter()
        .map(|s| s.local_addr().unwrap().port())
        .collect()
}

/// Brings the testbed down however the test ends.
struct Down(String);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = pathpool(&["testbed", "down", "--dir", &self.0]).output();
    }
}

/// Polls every 10 ms, for at most `limit`, until `f` gives something.
fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if let Some(v) = f() {
            return Some(v);
        }
        thread::sleep(Duration::from_millis(10));
    }
    None
}

/// Starts `testbed get` to `out` in the background.
fn start_get(bed: &str, out: &Path) -> Child {
    pathpool(&[
        "testbed",
        "get",
        "/t/content",
        "-o",
        out.to_str().unwrap(),
        "--node",
        "s",
        "--dir",
        bed,
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("runs")
}

/// Waits for a download to `out` to create a partial file not in `known`, and returns it.
fn new_partial_file(out: &Path, known: &[PathBuf]) -> PathBuf {
    wait_for(Duration::from_secs(10), || {
        leftovers(out)
            .into_iter()
            .map(|l| l.path)
            .find(|p| !known.contains(p))
    })
    .expect("the download created its partial file within 10 s")
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_killed_download_leaves_nothing_taken_for_content_and_ctrl_c_says_what_it_removed() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("pathpool-interrupted-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let ports = free_ports(4);
    // One publisher behind a 20 Mb/s link: 10 MB take about 4.2 s, time to interrupt.
    let overlay = format!(
        r#"
rendezvous = "rv"
nodes = [
  {{ id = "rv", addr = "127.0.0.1:{}" }}, {{ id = "f1", addr = "127.0.0.1:{}" }},
  {{ id = "p1", addr = "127.0.0.1:{}", transit = false }},
  {{ id = "s", addr = "127.0.0.1:{}", transit = false }},
]
links = [
  {{ between = ["p1", "f1"], rate = "20Mbps", delay = "2ms", queue = "100KB" }},
  {{ between = ["f1", "s"] }}, {{ between = ["f1", "rv"] }},
]
"#,
        ports[0], ports[1], ports[2], ports[3]
    );
    let ov = dir.join("overlay.toml");
    fs::write(&ov, overlay).unwrap();
    let file = dir.join("content.bin");
    let data: Vec<u8> = (0..10_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    fs::write(&file, &data).unwrap();
    let bed = dir.join("bed").display().to_string();
    let up = pathpool(&[
        "testbed",
        "up",
        ov.to_str().unwrap(),
        "--dir",
        &bed,
        "--publish",
        &format!("p1={}=/t/content", file.display()),
    ])
    .output()
    .unwrap();
    let down = Down(bed.clone());
    assert!(up.status.success(), "{}", text(&up));
    let downloads = dir.join("downloads");
    fs::create_dir_all(&downloads).unwrap();
    let out = downloads.join("got.bin");

    // 1. SIGKILL one second into the transfer: the partial file stays, under its random
    //    name, readable by the user alone; the output does not exist.
    let mut killed = start_get(&bed, &out);
    let leftover = new_partial_file(&out, &[]);
    thread::sleep(Duration::from_secs(1));
    assert!(
        killed.try_wait().unwrap().is_none(),
        "the download ended before it could be killed"
    );
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(!out.exists());
    assert_eq!(leftovers(&out).len(), 1);
    let meta = fs::metadata(&leftover).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    // What a later run finds there is not to be trusted: fill it with garbage. A run that
    // resumed from it, or took it for the output, would give a different file.
    let garbage = vec![0xAA; meta.len() as usize];
    fs::write(&leftover, &garbage).unwrap();

    // 2. A second download to the same output succeeds, bit-identical, names the leftover
    //    without reading or removing it, and leaves no partial file of its own.
    let second = start_get(&bed, &out).wait_with_output().unwrap();
    assert!(second.status.success(), "{}", text(&second));
    assert!(
        fs::read(&out).unwrap() == data,
        "the download differs from the file"
    );
    assert!(
        text(&second).contains(&format!("note: {}", leftover.display())),
        "{}",
        text(&second)
    );
    assert!(fs::read(&leftover).unwrap() == garbage);
    assert_eq!(
        leftovers(&out)
            .into_iter()
            .map(|l| l.path)
            .collect::<Vec<_>>(),
        std::slice::from_ref(&leftover)
    );

    // 3. Ctrl-C mid-transfer with an older output in place: exit 130, the partial file
    //    removed and named, the output untouched.
    let previous = b"the previous version\n";
    fs::write(&out, previous).unwrap();
    let mut stopped = start_get(&bed, &out);
    let partial = new_partial_file(&out, std::slice::from_ref(&leftover));
    thread::sleep(Duration::from_millis(500));
    assert!(stopped.try_wait().unwrap().is_none());
    signal(&stopped, "-INT");
    let stopped = stopped.wait_with_output().unwrap();
    let said = text(&stopped);
    assert_eq!(stopped.status.code(), Some(130), "{said}");
    assert!(
        said.contains(&format!("removed the partial file {}", partial.display())),
        "{said}"
    );
    assert!(
        said.contains(&format!("{} left as it was", out.display())),
        "{said}"
    );
    assert!(!said.contains("nothing written"), "{said}");
    assert!(!partial.exists());
    assert_eq!(fs::read(&out).unwrap(), previous);
    assert_eq!(leftovers(&out).len(), 1, "only the killed run's");
    eprintln!("SIGKILL left {}; Ctrl-C said: {said}", leftover.display());
    // The testbed goes down while its pid file is still there to say what to stop.
    drop(down);
    let _ = fs::remove_dir_all(&dir);
}

/// Ctrl-C before the metadata has come (here: the rendezvous never answers) has written
/// nothing, and says so.
#[test]
fn ctrl_c_before_any_partial_file_says_nothing_was_written() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("pathpool-interrupted-early-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    // The rendezvous's address is a socket of the test's that never answers.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = free_ports(1)[0];
    // Security off: this test is about the partial file, and a silent rendezvous needs no key.
    let overlay = format!(
        r#"
security = "off"
rendezvous = "rv"
nodes = [
  {{ id = "rv", addr = "{}" }},
  {{ id = "s", addr = "127.0.0.1:{port}", transit = false }},
]
links = [{{ between = ["s", "rv"] }}]
"#,
        silent.local_addr().unwrap()
    );
    let ov = dir.join("overlay.toml");
    fs::write(&ov, overlay).unwrap();
    let out = dir.join("got.bin");
    let child = pathpool(&[
        "get",
        "/t/content",
        "-o",
        out.to_str().unwrap(),
        "--overlay",
        ov.to_str().unwrap(),
        "--node",
        "s",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Subscribing: the SUBSCRIBE arrives at the silent socket.
    let mut buf = [0u8; 2048];
    silent
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    silent.recv(&mut buf).expect("a SUBSCRIBE within 3 s");
    signal(&child, "-INT");
    let o = child.wait_with_output().unwrap();
    let said = text(&o);
    assert_eq!(o.status.code(), Some(130), "{said}");
    assert!(said.contains("nothing written"), "{said}");
    assert!(
        said.contains(&format!("{} not created", out.display())),
        "{said}"
    );
    let left: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["overlay.toml"]);
    let _ = fs::remove_dir_all(&dir);
}
