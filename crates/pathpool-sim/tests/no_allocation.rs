//! A run in steady state performs no heap allocation per packet.
//!
//! A counting global allocator (the only `unsafe` in the workspace: implementing
//! `GlobalAlloc` requires it) counts allocations while the simulation runs.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use pathpool_core::Time;
use pathpool_sim::LoadedScenario;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and delivered packets while `toml` runs from 20 s to 60 s, after a warm-up in
/// which rings and reassembly buffers reach their working size.
fn steady_state(toml: &str) -> (u64, u64) {
    let loaded = LoadedScenario::from_toml(toml, "test.toml", &[]).unwrap();
    let mut sim = loaded.compile(Some(1)).unwrap();
    sim.run_until(Time::from_secs(20));
    let packets_before = sim.stats().packets_delivered;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    sim.run_until(Time::from_secs(60));
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    (allocations, sim.stats().packets_delivered - packets_before)
}

/// Two hosts joined by one link, 20 NewReno flows.
const SINGLE_PATH: &str = r#"
    duration = "60s"
    [measure]
    interval = "1s"
    [nodes]
    hosts = ["a", "b"]
    [[links]]
    between = ["a", "b"]
    rate = "100Mbps"
    delay = "20ms"
    queue = { type = "droptail", size = "300pkts" }
    loss = 0.0001
    [[flows]]
    from = "a"
    to = "b"
    count = 20
    start_spread = "1s"
"#;

/// Two disjoint paths from `a` to `d`, 10 multipath connections with a subflow on each and
/// both subflows in one coupling group; `CC` is replaced by the controller.
const TWO_PATHS: &str = r#"
    duration = "60s"
    [measure]
    interval = "1s"
    [nodes]
    hosts = ["a", "d"]
    routers = ["b", "c"]
    [[links]]
    between = ["a", "b"]
    rate = "100Mbps"
    delay = "10ms"
    queue = { type = "droptail", size = "200pkts" }
    loss = 0.0001
    [[links]]
    between = ["a", "c"]
    rate = "50Mbps"
    delay = "20ms"
    queue = { type = "droptail", size = "200pkts" }
    loss = 0.0001
    [[links]]
    between = ["b", "d"]
    rate = "1Gbps"
    delay = "1ms"
    [[links]]
    between = ["c", "d"]
    rate = "1Gbps"
    delay = "1ms"
    [[flows]]
    from = "a"
    to = "d"
    cc = "CC"
    count = 10
    start_spread = "1s"
    [[flows.subflows]]
    route = ["a", "b", "d"]
    [[flows.subflows]]
    route = ["a", "c", "d"]
"#;

/// One test for every case, run one after the other: the counting allocator is global, so
/// cases in parallel threads would count each other's allocations.
#[test]
fn no_allocation_per_packet_in_steady_state() {
    let cases = [
        ("newreno, single path", SINGLE_PATH.to_string()),
        ("nmcc, two paths", TWO_PATHS.replace("CC", "nmcc")),
        ("lia, two paths", TWO_PATHS.replace("CC", "lia")),
    ];
    for (name, toml) in cases {
        let (allocations, packets) = steady_state(&toml);
        println!("{name}: {allocations} allocations for {packets} packets delivered");
        assert!(packets > 500_000, "{name}: {packets}");
        // What remains is amortised growth of the time-series columns (40 samples here).
        assert!(
            allocations * 10_000 < packets,
            "{name}: {allocations} allocations for {packets} packets"
        );
    }
}
