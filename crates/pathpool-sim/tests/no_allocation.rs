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

#[test]
fn no_allocation_per_packet_in_steady_state() {
    let toml = r#"
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
    let loaded = LoadedScenario::from_toml(toml, "test.toml", &[]).unwrap();
    let mut sim = loaded.compile(Some(1)).unwrap();
    // Warm up: rings and reassembly buffers reach their working size.
    sim.run_until(Time::from_secs(20));
    let packets_before = sim.stats().packets_delivered;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    sim.run_until(Time::from_secs(60));
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    let packets = sim.stats().packets_delivered - packets_before;
    println!("{allocations} allocations for {packets} packets delivered");
    assert!(packets > 500_000, "{packets}");
    // What remains is amortised growth of the time-series columns (40 samples here).
    assert!(
        allocations * 10_000 < packets,
        "{allocations} allocations for {packets} packets"
    );
}
