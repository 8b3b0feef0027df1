//! Graphs and path computation.
//!
//! The simulator uses this crate to turn a topology into routes; the real topology manager
//! will use the same code, so a path computed in simulation is the path used in deployment.
//! Everything here is deterministic: ties are broken by edge insertion order.

mod graph;
mod shortest;
mod yen;

pub use graph::{EdgeId, Graph, NodeIx};
pub use shortest::shortest_path;
pub use yen::k_shortest_paths;
