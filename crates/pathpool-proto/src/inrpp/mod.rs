//! INRPP, the In-Network Resource Pooling Protocol (Psaras, Saino, Pavlou, HotNets 2014; the
//! UMOBILE deliverable D4.1 that `../shared/spec/001-inrpp.md` extracts): routers with a
//! shared cache and one-hop detours that push data open-loop, store and detour the excess at a
//! bottleneck, and push back hop by hop on ACKs when the cache fills.
//!
//! The router's parts, each a sans-IO state machine or a pure function driven by the caller
//! with the current time:
//! - [`interface`]: the P / S&D / B / DB machine of each output interface (§3.4);
//! - [`cache`]: the shared cache, per (interface, flow), round-robin across flows (§3.7);
//! - [`signalling`]: the notification and nonce on ACKs and Algorithm 1 (§3.5–§3.6);
//! - [`advert`]: residual-bandwidth advertisements, Algorithm 2, and detour residuals
//!   (§3.8–§3.10);
//! - [`router`]: all of them composed into one router, driven by the links' owner.
//!
//! The detour interface table comes from `pathpool_topo::detour`.

pub mod advert;
pub mod cache;
pub mod interface;
pub mod router;
pub mod signalling;
