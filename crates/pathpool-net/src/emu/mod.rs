//! `pathpool emu`: a link emulator for kernel traffic, where `tc netem` is missing (issue 23
//! part B, docs/emu.md).
//!
//! It forwards Ethernet frames between two interfaces, typically the two veth ends inside a
//! "wire" namespace with no addresses, so the hosts on either side see one link. Each
//! direction runs on its own thread through its own [`EmulatedLink`]: the simulator's link
//! (a drop-tail FIFO served at a constant rate, then a constant propagation delay) with
//! i.i.d. loss on entry, as the overlay's emulation runs it. A frame's length on the link is
//! its Ethernet frame without preamble or FCS, as `tbf` counts it, so an emulated rate and a
//! `tbf` rate carry the same traffic.
//!
//! Nothing is lost without a count: random losses, queue drops, frames longer than one MTU
//! (a sender with segmentation offload on), frames the kernel dropped before the emulator
//! read them, and failed sends each have their counter.

pub mod packet_socket;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pathpool_core::{Rng, Time};
use serde::{Deserialize, Serialize};

use crate::emulation::{EmulatedLink, EmulationError, LinkEmulation};
use packet_socket::{is_gso, raise_priority, tighten_timer_slack, PacketSocket, VNET_HDR_BYTES};

/// The receive buffer asked for each socket: a few hundred milliseconds of frames at 100 Mb/s,
/// so a forwarder that is late by a scheduling slice loses nothing.
const RECEIVE_BUFFER_BYTES: usize = 8 << 20;

/// Frames read in one go before due frames are released again: bounds how long a burst of
/// arrivals can hold back a departure.
const RECEIVE_BATCH: usize = 32;

/// The longest a forwarder sleeps without looking at the stop flag, and how often it
/// publishes its counters.
const TICK: Duration = Duration::from_millis(20);

/// What `pathpool emu` emulates.
#[derive(Debug, Clone, PartialEq)]
pub struct EmuConfig {
    /// The first interface.
    pub a: String,
    /// The second interface.
    pub b: String,
    /// The link from `a` to `b` (frames received on `a`, sent on `b`).
    pub a_to_b: LinkEmulation,
    /// The link from `b` to `a`.
    pub b_to_a: LinkEmulation,
    /// Seed of the random losses (direction a→b draws from `seed`, b→a from `seed + 1`).
    pub seed: u64,
    /// Run the forwarders at a real-time priority, so that they send on time on a busy
    /// machine (see [`packet_socket::raise_priority`]).
    pub realtime: bool,
}

/// A failure of the emulator.
#[derive(Debug)]
pub enum EmuError {
    /// Bad parameters, naming the direction and field.
    BadInput(String),
    /// A socket could not be opened or failed while running.
    Io(io::Error),
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::BadInput(m) => f.write_str(m),
            EmuError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for EmuError {}

impl From<io::Error> for EmuError {
    fn from(e: io::Error) -> Self {
        EmuError::Io(e)
    }
}

/// Counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectionStats {
    /// Whether the forwarder runs at a real-time priority.
    pub realtime: bool,
    /// Frames read from the input interface and offered to the link.
    pub offered: u64,
    /// Frames lost at random.
    pub lost: u64,
    /// Frames dropped by the full queue.
    pub queue_drops: u64,
    /// Frames longer than the output's MTU (a GSO super-frame: a sender with segmentation
    /// offload on), dropped.
    pub oversize: u64,
    /// Frames the kernel dropped because the emulator's receive buffer was full.
    pub kernel_drops: u64,
    /// Frames whose send failed (the output device's queue was full).
    pub send_errors: u64,
    /// Frames that crossed and were sent on.
    pub delivered: u64,
    /// Bytes of the frames that crossed (Ethernet header and payload).
    pub delivered_bytes: u64,
    /// Frames still on the link when the emulator stopped (not sent).
    pub in_transit: u64,
    /// Frames sent more than 1 ms after their release time.
    pub late_over_1ms: u64,
    /// The latest a frame was sent after its release time, nanoseconds.
    pub late_max_ns: u64,
    /// When that frame was sent, milliseconds after the emulator started.
    pub late_max_at_ms: u64,
    /// Sum over frames of how late each was sent, nanoseconds (with `delivered`, the mean).
    pub late_total_ns: u64,
}

impl DirectionStats {
    /// Mean lateness of a delivered frame, microseconds.
    #[must_use]
    pub fn late_mean_us(&self) -> f64 {
        if self.delivered == 0 {
            0.0
        } else {
            self.late_total_ns as f64 / self.delivered as f64 / 1e3
        }
    }
}

/// Checks both directions' parameters, naming the direction of a bad one.
///
/// # Errors
/// The first bad parameter.
pub fn validate(config: &EmuConfig) -> Result<(), EmuError> {
    let bad = |direction: &str, e: EmulationError| {
        EmuError::BadInput(format!("{direction}: {}: {}", e.field, e.message))
    };
    config.a_to_b.validate().map_err(|e| bad("a-to-b", e))?;
    config.b_to_a.validate().map_err(|e| bad("b-to-a", e))?;
    if config.a == config.b {
        return Err(EmuError::BadInput(format!(
            "the two interfaces are both {:?}: give two different interfaces",
            config.a
        )));
    }
    Ok(())
}

/// An emulator whose sockets are open: opening is separate from running, so a caller that
/// runs it on another thread (or in another network namespace) learns at once whether the
/// interfaces could be opened.
#[derive(Debug)]
pub struct Emulator {
    config: EmuConfig,
    a: PacketSocket,
    b: PacketSocket,
}

impl Emulator {
    /// Checks the parameters and opens both interfaces (in the calling thread's network
    /// namespace).
    ///
    /// # Errors
    /// Bad parameters, or an interface that cannot be opened (missing, or no `CAP_NET_RAW`).
    pub fn open(config: &EmuConfig) -> Result<Emulator, EmuError> {
        validate(config)?;
        Ok(Emulator {
            config: config.clone(),
            a: PacketSocket::open(&config.a, RECEIVE_BUFFER_BYTES)?,
            b: PacketSocket::open(&config.b, RECEIVE_BUFFER_BYTES)?,
        })
    }

    /// Runs until `stop` is set, calling `report` with both directions' counters (a→b
    /// first) about every `report_every` and once at the end; returns the final counters.
    ///
    /// # Errors
    /// A socket failing while running (the other direction is stopped too).
    pub fn run(
        self,
        stop: &AtomicBool,
        report_every: Duration,
        mut report: impl FnMut(&[DirectionStats; 2]),
    ) -> Result<[DirectionStats; 2], EmuError> {
        let Emulator { config, a, b } = self;
        let links = [
            EmulatedLink::new(config.a_to_b, Rng::seed_from_u64(config.seed))
                .map_err(|e| EmuError::BadInput(format!("a-to-b: {e}")))?,
            EmulatedLink::new(
                config.b_to_a,
                Rng::seed_from_u64(config.seed.wrapping_add(1)),
            )
            .map_err(|e| EmuError::BadInput(format!("b-to-a: {e}")))?,
        ];
        let shared = [
            Mutex::new(DirectionStats::default()),
            Mutex::new(DirectionStats::default()),
        ];
        let start = Instant::now();
        let failed = AtomicBool::new(false);
        let halt = || stop.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed);
        let outcome = std::thread::scope(|scope| {
            let [ab, ba] = links;
            let (a, b) = (&a, &b);
            let (s0, s1) = (&shared[0], &shared[1]);
            let halt = &halt;
            let failed = &failed;
            let timing = (start, config.realtime);
            let workers = [
                scope.spawn(move || {
                    forward(a, b, ab, timing, halt, s0)
                        .inspect_err(|_| failed.store(true, Ordering::Relaxed))
                }),
                scope.spawn(move || {
                    forward(b, a, ba, timing, halt, s1)
                        .inspect_err(|_| failed.store(true, Ordering::Relaxed))
                }),
            ];
            let mut last = Instant::now();
            while !halt() {
                std::thread::sleep(TICK.min(report_every));
                if last.elapsed() >= report_every {
                    last = Instant::now();
                    report(&snapshot(&shared));
                }
            }
            let [w0, w1] = workers;
            let r0 = w0.join().expect("forwarder a-to-b panicked");
            let r1 = w1.join().expect("forwarder b-to-a panicked");
            r0.and(r1)
        });
        let last = snapshot(&shared);
        report(&last);
        outcome?;
        Ok(last)
    }
}

/// [`Emulator::open`] then [`Emulator::run`].
///
/// # Errors
/// As those.
pub fn run(
    config: &EmuConfig,
    stop: &AtomicBool,
    report_every: Duration,
    report: impl FnMut(&[DirectionStats; 2]),
) -> Result<[DirectionStats; 2], EmuError> {
    Emulator::open(config)?.run(stop, report_every, report)
}

fn snapshot(shared: &[Mutex<DirectionStats>; 2]) -> [DirectionStats; 2] {
    [
        *shared[0].lock().expect("counters"),
        *shared[1].lock().expect("counters"),
    ]
}

fn now_since(start: Instant) -> Time {
    Time::from_ps(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX / 1000) * 1000)
}

/// One direction: frames received on `input` cross `link` and are sent on `output`.
fn forward(
    input: &PacketSocket,
    output: &PacketSocket,
    mut link: EmulatedLink<Vec<u8>>,
    (start, realtime): (Instant, bool),
    halt: &impl Fn() -> bool,
    shared: &Mutex<DirectionStats>,
) -> io::Result<()> {
    tighten_timer_slack();
    let realtime = realtime && raise_priority();
    let buffer_bytes = input.buffer_bytes();
    // The longest frame the output takes: Ethernet header (with a VLAN tag) and one MTU.
    let longest_frame = 18 + output.mtu_bytes();
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let mut stats = DirectionStats {
        realtime,
        ..DirectionStats::default()
    };
    let mut published = Instant::now();
    loop {
        if halt() {
            break;
        }
        // Release every frame whose time has come.
        let now = now_since(start);
        while let Some(due) = link.next_due().filter(|&due| due <= now) {
            let frame = link.pop_due(now).expect("a frame is due");
            match output.send(&frame) {
                Ok(()) => {
                    stats.delivered += 1;
                    stats.delivered_bytes += (frame.len() - VNET_HDR_BYTES) as u64;
                    let late_ns = now.saturating_since(due).as_ps() / 1000;
                    stats.late_total_ns += late_ns;
                    if late_ns > stats.late_max_ns {
                        stats.late_max_ns = late_ns;
                        stats.late_max_at_ms = now.as_ps() / 1_000_000_000;
                    }
                    stats.late_over_1ms += u64::from(late_ns > 1_000_000);
                }
                Err(e) if is_transient(&e) => stats.send_errors += 1,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("{}: sending: {e}", output.interface()),
                    ))
                }
            }
            pool.push(frame);
        }
        // Take what has arrived, a batch at a time.
        for _ in 0..RECEIVE_BATCH {
            let mut buffer = pool.pop().unwrap_or_default();
            buffer.resize(buffer_bytes, 0);
            let Some(n) = input.receive(&mut buffer)? else {
                pool.push(buffer);
                break;
            };
            if n < VNET_HDR_BYTES + 14 {
                pool.push(buffer);
                continue;
            }
            let frame_bytes = n - VNET_HDR_BYTES;
            if n > buffer_bytes || frame_bytes > longest_frame || is_gso(&buffer) {
                stats.oversize += 1;
                pool.push(buffer);
                continue;
            }
            buffer.truncate(n);
            let (_, back) = link.offer(now_since(start), frame_bytes as u64, buffer);
            if let Some(buffer) = back {
                pool.push(buffer);
            }
        }
        if published.elapsed() >= TICK {
            published = Instant::now();
            stats.kernel_drops += input.take_kernel_drops()?;
            publish(&mut stats, &link, shared);
        }
        // Sleep until the next release or the next frame, whichever is first.
        let now = now_since(start);
        let wait = match link.next_due() {
            Some(due) if due <= now => continue,
            Some(due) => Duration::from_nanos(due.saturating_since(now).as_ps() / 1000).min(TICK),
            None => TICK,
        };
        input.wait_readable(wait)?;
    }
    stats.kernel_drops += input.take_kernel_drops()?;
    publish(&mut stats, &link, shared);
    Ok(())
}

fn publish(
    stats: &mut DirectionStats,
    link: &EmulatedLink<Vec<u8>>,
    shared: &Mutex<DirectionStats>,
) {
    let l = link.stats();
    stats.offered = l.offered + stats.oversize;
    stats.lost = l.lost;
    stats.queue_drops = l.queue_drops;
    stats.in_transit = link.in_transit() as u64;
    *shared.lock().expect("counters") = *stats;
}

/// A send that failed because the device's queue was momentarily full: the frame is lost,
/// as on a real link, and counted.
fn is_transient(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock || e.raw_os_error() == Some(libc::ENOBUFS)
}
