//! Transport endpoints as sans-IO state machines: TCP, a multipath TCP connection, mmTP (the
//! receiver-driven multipath multisource transport of PSI), and the router side of INRPP and
//! RCP.
//!
//! Nothing here owns a socket, a clock or a thread: the caller passes the current [`Time`]
//! with every call, feeds received segments in, and asks what to send next. The simulator
//! drives these machines in virtual time; a real runtime can drive them with sockets and the
//! wall clock.
//!
//! Call order for a driver (after quinn-proto):
//! 1. `handle_*` for every arriving segment and expired timer;
//! 2. `poll_transmit` until it returns `None`, sending what it returns;
//! 3. `poll_timeout` to learn when to call `handle_timeout` next.
//!
//! Time passed in must never go backwards.
//!
//! [`Time`]: pathpool_core::Time

pub mod inrpp;
pub mod mmtp;
pub mod mptcp;
pub mod mptfrc;
pub mod ndn;
pub mod rate_sender;
pub mod rcp;
pub mod reassembly;
pub mod tcp;
