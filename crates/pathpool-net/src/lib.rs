//! pathpool's UDP runtime: the PSI overlay's nodes (forwarding nodes, rendezvous and topology
//! manager) and mmTP publishers and subscribers, driving the same sans-IO state machines the
//! simulator drives, with sockets and the wall clock (issue 5).
//!
//! This crate is the only one that knows sockets. Its pieces that need no socket (the link
//! emulation) are plain state machines too, so they are tested in virtual time.

pub mod cache;
pub mod content_check;
pub mod control_plane;
pub mod emu;
pub mod emulation;
pub mod forward;
pub mod get;
pub mod get_metadata;
pub mod keys;
pub mod node;
pub mod overlay;
pub mod part_file;
pub mod publisher;
pub mod publisher_key;
pub mod publisher_reads;
pub mod rv;
pub mod security;
pub mod temp_file;
pub mod udp_io;
