//! A deterministic packet-level discrete-event simulator.
//!
//! Design (after htsim, in Rust ownership):
//! * integer time in picoseconds ([`pathpool_core::Time`]);
//! * one event queue ordered by (time, element) — ties never depend on anything but the
//!   scenario, so the same scenario and seed give byte-identical results on every machine;
//! * elements (links, TCP and UDP endpoints, the sampler) with at most one pending event each;
//! * packets carry their source route and a hop index; links compute queueing lazily, so a
//!   packet costs one event per link it crosses;
//! * transport endpoints are the sans-IO state machines of `pathpool-proto`, the same code a
//!   real runtime drives.
//!
//! Entry points: [`LoadedScenario::from_toml`] / [`LoadedScenario::from_json`], then
//! [`LoadedScenario::compile`] to a [`Simulation`], [`Simulation::run`], then
//! [`Simulation::results`].

mod build;
mod cache;
mod diagnose;
mod domain;
#[cfg(test)]
mod echo;
mod element;
mod error;
mod event;
mod fairness;
mod inrpp_router;
mod interarrival;
mod kinds;
mod link;
pub mod load;
pub mod metrics;
mod mmtp_flow;
mod mp_flow;
mod mp_reference;
mod mptfrc_flow;
mod multi;
mod ndn_node;
mod network;
mod overhead;
mod packet;
mod random_queue;
mod rate_flow;
mod rcp_link;
mod red;
pub mod results;
mod router_series;
mod sack_channel;
mod sampler;
mod sdn;
mod seq_trace;
mod sim;
pub mod spec;
pub mod table;
mod tcp_flow;
mod tfrc_flow;
mod tm_control;
mod udp_flow;

pub use domain::read_topology;
pub use load::{apply_override, LoadedScenario, ScenarioError};
pub use results::mp_fairness::{MpFairness, MpFairnessPath};
pub use results::{
    CacheResult, FlowResult, LinkResult, Results, RouterResult, SubflowResult, Summary,
};
pub use sim::{RunStats, Simulation};
pub use spec::Scenario;
pub use table::{Column, Table};
