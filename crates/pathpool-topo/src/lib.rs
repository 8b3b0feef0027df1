//! Graphs and path computation.
//!
//! The simulator uses this crate to turn a topology into routes; the real topology manager
//! will use the same code, so a path computed in simulation is the path used in deployment.
//! Everything here is deterministic: ties are broken by edge insertion order.

pub mod census;
pub mod detour;
mod disjoint;
mod graph;
mod group;
mod lipsin;
mod maxflow;
mod placement;
mod shortest;
mod yen;
mod zoo;

pub use disjoint::{disjoint_only, disjoint_pair, k_edge_disjoint_paths, k_node_disjoint_paths};
pub use graph::{EdgeId, Graph, NodeIx};
pub use group::{bottleneck_groups, shared_link_groups, FbFactor};
pub use lipsin::{
    ttl_after_hop, Fid, LinkTags, LipsinError, TagSpace, DEFAULT_K, DEFAULT_TTL, MAX_K,
};
pub use maxflow::{max_flow, MaxFlow};
pub use placement::{place, Client, Placement, PlacementError, PlacementRules};
pub use shortest::shortest_path;
pub use yen::k_shortest_paths;
pub use zoo::{
    great_circle_km, parse_gml, parse_rocketfuel, parse_topohub_json, DelayModel, ImportError,
    RocketfuelMap, TopoLink, TopoNode, Topology, EARTH_RADIUS_KM,
};
