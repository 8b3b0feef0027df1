//! The FAB against the longest-prefix match it spares (issue 22, acceptance 6; the PTP
//! paper's §4.B, which evaluates neither): nanoseconds per lookup of a flow name, for FIBs of
//! 1 000 and 100 000 prefixes, names of 3 to 8 components, and flows drawn from 500 active
//! ones (all fit a FAB of 1 024 tuples, so after the first pass every FAB lookup hits) or
//! from 50 000 (most miss, and the FAB pays its LPM and an insertion on top).
//!
//! Run with `cargo bench -p pathpool-ndn --bench fab`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use pathpool_core::Rng;
use pathpool_ndn::{Fab, FabKey, Fib, Name};

/// Each timed round lasts at least this long; the best of `ROUNDS` rounds is reported.
const ROUND: Duration = Duration::from_millis(50);
const ROUNDS: usize = 5;
const FAB_CAPACITY: usize = 1024;

/// A FIB of `prefixes` prefixes of two components (`/siteN/sectionM`) and the flow names of
/// `flows` objects under them, each `depth` components long.
fn workload(rng: &mut Rng, prefixes: usize, flows: usize, depth: usize) -> (Fib, Vec<Name>) {
    let mut fib = Fib::new();
    let sites: Vec<Name> = (0..prefixes)
        .map(|k| Name::parse(&format!("/site{}/section{}", k / 10, k % 10)).unwrap())
        .collect();
    for (k, p) in sites.iter().enumerate() {
        fib.add_next_hop(p, (k % 4) as u32 + 1, 0);
    }
    let names = (0..flows)
        .map(|f| {
            let mut n = sites[rng.below(prefixes as u64) as usize].clone();
            for c in 2..depth {
                n = n.child(&format!("obj{f}c{c}"));
            }
            n
        })
        .collect();
    (fib, names)
}

/// Nanoseconds per lookup of `f` over `stream`: the best of `ROUNDS` rounds.
fn time(stream: &[Name], mut f: impl FnMut(&Name) -> bool) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < ROUND {
            for name in stream {
                black_box(f(black_box(name)));
            }
            n += stream.len() as u64;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
    }
    best
}

fn main() {
    println!("prefixes  depth  active flows  LPM ns  FAB ns  FAB hit rate");
    for prefixes in [1_000, 100_000] {
        for depth in [3, 5, 8] {
            for flows in [500, 50_000] {
                let mut rng = Rng::seed_from_u64(7);
                let (fib, names) = workload(&mut rng, prefixes, flows, depth);
                let stream: Vec<Name> = (0..4096)
                    .map(|_| names[rng.below(names.len() as u64) as usize].clone())
                    .collect();
                let lpm = time(&stream, |n| fib.lpm(n).is_some());
                let mut fab = Fab::new(FAB_CAPACITY, FabKey::Stored);
                let fab_ns = time(&stream, |n| fab.lookup(n, &fib).is_some());
                let s = fab.stats();
                let hit = s.hits as f64 / (s.hits + s.misses) as f64;
                println!(
                    "{prefixes:>8}  {depth:>5}  {flows:>12}  {lpm:>6.0}  {fab_ns:>6.0}  {:>11.1}%",
                    100.0 * hit
                );
            }
        }
    }
}
