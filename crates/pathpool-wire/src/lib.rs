//! The wire format of pathpool's PSI overlay, version 2 (`docs/wire.md`; issues 5 and 18).
//!
//! Every packet is a LIPSIN packet (thesis §3.4): a fixed header (magic `pp`, version, message
//! type, hop limit, FID width, body length) and the FID it is forwarded on, then one message
//! body. A forwarding node reads and rewrites the header alone ([`peek`],
//! [`decrement_hop_limit`]); endpoints decode whole packets ([`Packet::decode`]) into values
//! that convert to and from the in-memory messages of `pathpool-psi` (PUBLISH, SUBSCRIBE,
//! FID_SET, errors) and `pathpool-proto::mmtp` (requests and replies), so a UDP runtime drives
//! the same state machines as the simulator.
//!
//! Decoding borrows from the datagram (a chunk's payload is a slice of it) and allocates
//! nothing for requests and chunks; encoding writes into the caller's buffer, and
//! [`encode_chunk_header`] writes a chunk's header around a payload already in place.
//! Parsers never panic: every read is bounds-checked, indexing, `unwrap`, `expect` and `panic!`
//! are denied by lint outside tests, and every rejection is a [`DecodeError`] variant a node
//! counts ([`DropCounters`]). Accepted packets are canonical: encoding a decoded packet gives
//! back the same bytes (checked by the fuzz targets and `tests/robustness.rs`).

#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo
    )
)]

pub mod auth;
mod control;
mod control_auth;
mod cursor;
mod data;
mod error;
pub mod hash_tree;
mod header;
mod metadata;
mod packet;
mod ticket;

pub use control::{
    ControlError, ErrorCode, FidSetMsg, PathFids, Publish, Subscribe, MAX_ERROR_TEXT_BYTES,
    MAX_PATHS,
};
pub use control_auth::{
    is_control, open_control, seal_control, ControlAuth, ControlAuthError, FreshnessGuard,
    CONTROL_TRAILER_BYTES,
};
pub use data::{
    ChunkMsg, ChunkRequestMsg, DataErrorMsg, DataPrefix, MetadataReplyMsg, MetadataRequestMsg,
    CHUNK_FIELDS_BYTES, DATA_ERROR_BODY_BYTES, DATA_PREFIX_BYTES,
};
pub use error::{DecodeError, DropCounters, EncodeError, Field, DROP_NAMES};
pub use header::{
    decrement_hop_limit, header_bytes, peek, ForwardingHeader, MsgType, FIXED_HEADER_BYTES,
    HOP_LIMIT_OFFSET, MAGIC, MAX_PACKET_BYTES, VERSION,
};
pub use metadata::{
    version_of, MetadataError, SignedMetadata, MAX_DESCRIPTION_BYTES, SIGNATURE_CONTEXT,
};
pub use packet::{
    chunk_payload_offset, data_error_authentic, encode_chunk_header, seal_data_error, Message,
    Packet,
};
pub use pathpool_psi::MAX_NAME_BYTES;
pub use ticket::{Ticket, TicketError, TICKET_BYTES};

#[cfg(test)]
mod tests;
