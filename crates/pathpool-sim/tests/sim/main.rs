//! The simulator's scenario tests, one module per subject, built as one test binary: as 27
//! binaries, each linking the simulator, they took 3.4 minutes to rebuild, as one 12 s
//! (D344). `cargo test -p pathpool-sim --test sim sack::` runs one module's tests.
//! `no_allocation` stays a binary of its own: it installs a counting global allocator.

mod common;

mod bilevel_tcp;
mod cubic;
mod exact_metrics;
mod hacker;
mod inrpp;
mod link_failure;
mod mmtp;
mod mmtp_cache;
mod mp_fairness;
mod mptcp_receive_buffer;
mod multi_priority;
mod multipath;
mod ndn;
mod nmcc_slow_start;
mod parser_robustness;
mod queues;
mod rcp;
mod sack;
mod sampled_fairness;
mod sdn;
mod sequence_trace;
mod tcp_fidelity;
mod tcp_lp;
mod tcp_validation;
mod tfrc;
mod tm_assistance_lan;
mod traffic;
