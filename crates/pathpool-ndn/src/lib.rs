//! Named Data Networking's forwarding tables, as the PTP paper (spec 004 §2–§3, issue 22)
//! uses them, free of I/O: the simulator drives them in virtual time, a runtime could drive
//! them with sockets.
//!
//! * [`Name`]: hierarchical names compared component by component; a packet's *flow name* is
//!   its name without the last component (the sequence number).
//! * [`Fib`]: name prefixes to next-hop faces, longest-prefix match component-wise.
//! * [`Fab`]: the Forwarding Acceleration Base, a bounded least-recently-used map from flow
//!   names to FIB entries that spares active flows the longest-prefix match (spec 004 §3.4).
//! * [`Pit`]: pending Interests with their incoming faces, aggregation and duplicate-nonce
//!   detection, and the 1-bit "from an intermediate node" flag of PTP's Data.
//! * [`ContentStore`]: a least-recently-used cache of Data by full name, with an admission
//!   probability.
//! * [`Forwarder`]: one node's faces and tables, the strategies that need no measurement
//!   (best-route, multicast, equal-weight) and PTP's path tags.

mod fab;
mod fib;
mod forwarder;
mod lru;
mod name;
mod packet;
mod paf;
mod pit;
mod rfa;
mod shaper;
mod store;

pub use fab::{Fab, FabKey, FabStats};
pub use fib::{Fib, FibEntry, FibEntryId, NextHop};
pub use forwarder::{
    Forwarder, ForwarderConfig, ForwarderStats, Labeling, Packet, Strategy, TagFallback,
};
pub use name::{route_rank, Name, NameError};
pub use packet::{Data, FaceId, Interest, Nack, NackReason, DEFAULT_LIFETIME};
pub use paf::{Paf, PafConfig};
pub use pit::{InterestOutcome, Pit, PitStats, DEAD_NONCE_LIFETIME};
pub use rfa::{Rfa, RFA_ALPHA, RFA_AVG_FLOOR};
pub use shaper::{Shaper, SHAPER_FLOW_LIMIT};
pub use store::{ContentStore, CsStats};
