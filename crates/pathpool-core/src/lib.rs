//! Foundations shared by every pathpool crate: integer virtual [`Time`], physical units
//! ([`Rate`], [`ByteSize`], [`BufferSize`]) with parsers for the forms people write
//! (`10Mbps`, `5ms`, `1.5MB`, `100pkts`), the RFC 6298 [`RttEstimator`] and a seeded,
//! platform-independent random number generator ([`Rng`]).
//!
//! Invariants: nothing in this crate reads a clock, touches I/O or keeps global state. Every
//! floating-point function that could differ between C libraries goes through `libm`, so the same
//! inputs give bit-identical outputs on every machine.

pub mod hash;
pub mod ids;
pub mod queue_size;
pub mod rng;
pub mod rtt;
pub mod text;
pub mod time;
pub mod units;

pub use ids::PathId;
pub use queue_size::QueueSize;
pub use rng::Rng;
pub use rtt::{RttConfig, RttEstimator};
pub use time::{Dur, Time};
pub use units::{BufferSize, ByteSize, ParseUnitError, Rate};
