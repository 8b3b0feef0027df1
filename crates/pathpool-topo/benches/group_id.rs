//! `group_id` assignment: the thesis's O(k·h) hash-table method (`shared_link_groups`) against
//! the naive O(h²·k²) pairwise comparison (thesis §5.3, paper §4.1.3), for k = 2..8 paths of
//! 6 to 40 hops. Prints nanoseconds per assignment of one path set.
//!
//! Two kinds of path sets: *disjoint* (no link in common: every pair is compared in full,
//! the naive method's worst case and the case greedy friendliness is for) and *overlapping*
//! (each link drawn from a pool of k·h ids, so most pairs share a link and the naive
//! comparison of a pair usually stops early).
//!
//! Run with `cargo bench -p pathpool-topo --bench group_id`.

#[path = "../tests/common/naive_group.rs"]
mod naive;

use std::hint::black_box;
use std::time::{Duration, Instant};

use naive::naive_shared_link_groups;
use pathpool_topo::shared_link_groups;

/// Path sets per measurement: the methods cycle through them so that no single set's branch
/// pattern is learnt.
const SETS: usize = 32;
/// Each timed round lasts at least this long; the best of `ROUNDS` rounds is reported.
const ROUND: Duration = Duration::from_millis(20);
const ROUNDS: usize = 5;

/// xorshift64* (Vigna 2016): a fixed seed, so every run times the same path sets.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// `k` paths of `hops` links. Disjoint sets use distinct random ids; overlapping sets draw
/// every link from `k · hops` random ids.
fn path_set(rng: &mut Rng, k: usize, hops: usize, disjoint: bool) -> Vec<Vec<u32>> {
    let pool: Vec<u32> = (0..k * hops).map(|_| rng.next() as u32).collect();
    (0..k)
        .map(|p| {
            (0..hops)
                .map(|h| {
                    if disjoint {
                        pool[p * hops + h]
                    } else {
                        pool[rng.next() as usize % pool.len()]
                    }
                })
                .collect()
        })
        .collect()
}

/// Nanoseconds per call of `f` on one path set: the best of `ROUNDS` rounds, each cycling
/// through `sets` until `ROUND` has passed.
fn time(sets: &[Vec<Vec<u32>>], f: impl Fn(&[Vec<u32>]) -> Vec<u32>) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut calls = 0u64;
        while start.elapsed() < ROUND {
            for s in sets {
                black_box(f(black_box(s)));
            }
            calls += sets.len() as u64;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / calls as f64);
    }
    best
}

fn main() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    println!("group_id assignment, ns per path set (best of {ROUNDS} rounds of {ROUND:?})");
    println!(
        "{:>2} {:>5} | {:>9} {:>9} {:>7} | {:>9} {:>9} {:>7}",
        "k", "hops", "naive", "hash", "speedup", "naive", "hash", "speedup"
    );
    println!("{:>8} | {:^27} | {:^27}", "", "disjoint", "overlapping");
    for k in 2..=8 {
        for hops in [6, 8, 16, 40] {
            let mut row = format!("{k:>2} {hops:>5}");
            for disjoint in [true, false] {
                let sets: Vec<Vec<Vec<u32>>> = (0..SETS)
                    .map(|_| path_set(&mut rng, k, hops, disjoint))
                    .collect();
                for s in &sets {
                    assert_eq!(shared_link_groups(s), naive_shared_link_groups(s));
                }
                let slow = time(&sets, naive_shared_link_groups);
                let fast = time(&sets, shared_link_groups);
                row += &format!(" | {slow:>9.0} {fast:>9.0} {:>7.2}", slow / fast);
            }
            println!("{row}");
        }
    }
}
