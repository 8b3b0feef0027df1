//! mmTP, the multipath multisource transport protocol of PSI (thesis §4.1), as sans-IO state
//! machines.
//!
//! A content is cut into self-named chunks (`/content/index`) described by a metadata chunk
//! (`/content/mm`: size, chunk size, count, SHA-256). The [`Subscriber`] does all the control
//! (thesis §4.5): it asks for the metadata, then pulls chunks over one subflow per FID pair
//! the topology manager gave, each subflow with its own window (a path of a shared
//! [`MultipathController`]), RTT estimator and retransmission timer; which subflow requests
//! which chunk is decided by Algorithm 1 on a shared chunk-state array (thesis §4.6,
//! [`ChunkArray`]). Chunks are requested in ascending order and accepted in any order. The
//! [`Publisher`] is stateless: a reply is a function of the request and a [`ContentStore`].
//!
//! Nothing here holds payload bytes, a socket, a clock or a thread. Messages are in-memory
//! values ([`Request`], [`Reply`]); the driver (the simulator, or a UDP runtime) carries them, maps each
//! [`PathIndex`] to its forward and reverse FIDs, stores the payload of every chunk the
//! subscriber reports as new, and checks the reassembled content with [`verify`] at the end.
//! See `docs/mmtp.md` for the state machine, and `docs/decisions.md` D53-D60 for the choices
//! where the thesis is silent or ambiguous.
//!
//! [`MultipathController`]: pathpool_cc::MultipathController

mod cache;
mod chunks;
mod integrity;
mod message;
mod publisher;
mod subflow;
mod subscriber;
#[cfg(test)]
mod tests;

pub use cache::{CacheStats, ChunkCache, Hit};
pub use chunks::{ChunkArray, ChunkState, Scan};
pub use integrity::{sha256, verify, verify_reader, IntegrityError};
pub use message::{
    Chunk, ChunkId, ChunkRequest, ContentId, Echo, ErrorKind, ErrorReply, Metadata, MetadataError,
    MetadataReply, MetadataRequest, Part, PathIndex, Reply, Request, METADATA_SUFFIX,
};
pub use publisher::{ContentStore, MemoryStore, Publisher};
pub use subflow::{Subflow, SubflowState, SubflowStats};
pub use subscriber::{
    Delivery, Progress, Selection, Subscriber, SubscriberConfig, SubscriberStats,
    DEFAULT_BACKOFF_LIMIT,
};

/// Timer expiries after which a chunk requested on a subflow may be requested by any subflow
/// (thesis §4.5: "if two subscriptions for the same data packet expire"; D57).
pub const EXPIRIES_BEFORE_RELEASE: u32 = 2;
