//! Coupled congestion control for the subflows of Linux's own MPTCP (issue 23, part A).
//!
//! NMCC, LIA, OLIA and BALIA run in the kernel as BPF `struct_ops` congestion-control
//! programs (`bpf/pp_cc.bpf.c`), registered as `pp_nmcc`, `pp_lia`, `pp_olia` and `pp_balia`
//! and usable like any kernel algorithm (`setsockopt(TCP_CONGESTION)`, `ip route ... congctl`,
//! or a namespace's default once allowed). The subflows of one MPTCP connection couple
//! through a map keyed by the connection's token; coupling groups, the thesis's path-overlap
//! information, come from user space ([`groups`]). Without an entry a connection's subflows
//! form one group, fully friendly, as the thesis says endpoints default to.
//!
//! This crate is the only one that knows BPF. It has its own binary, `pathpool-linux`, which
//! `pathpool linux` runs, so that the `pathpool` command never links libbpf (D330).
//!
//! The window arithmetic is one C header (`bpf/pp_coupled.h`, on the software floating point
//! of `bpf/pp_fixed.h`) that the programs include and the host tests ([`arith`]) compile, so
//! the tests check the code the kernel runs against pathpool-cc's controllers.

#![warn(missing_docs)]

pub mod arith;
pub mod bed;
pub mod bench;
pub mod e8;
pub mod emu_bench;
pub mod error;
pub mod groups;
pub mod loader;
pub mod maps;
pub mod share;
pub mod status;
pub mod steal;
pub mod transfer;
pub mod wire;

pub use error::LinuxError;
pub use loader::{load, unload, Algorithm, LoadReport, UnloadReport, PIN_DIR};
