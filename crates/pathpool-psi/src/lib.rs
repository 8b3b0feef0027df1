//! The control plane of a PSI (Publish-Subscribe Internetworking) network, thesis §3.1–3.3:
//!
//! * [`Rendezvous`] keeps the publications and matches a subscription with the publishers of
//!   an item, one (multipath) or many (multisource);
//! * [`TopologyManager`] holds the network view, computes paths from each publisher to the
//!   subscriber under a [`PathPolicy`], builds their forward and reverse LIPSIN identifiers
//!   and tags them with `group_id`s ([`Assistance`], thesis §5);
//! * [`Psi`] ties the two together: a subscription in, the subscriber's [`FidSet`] out.
//!
//! Everything is deterministic and free of I/O: the simulator calls it when it builds a
//! scenario or a link fails, the overlay's `rv` node when a SUBSCRIBE datagram arrives.

mod name;
mod rendezvous;
mod settings;
mod tm;

pub use name::{ContentName, NameError, MAX_NAME_BYTES, METADATA_SUFFIX};
pub use rendezvous::{Matching, Refusal, Rendezvous, RvCounters, RvError, RvLimits};
pub use settings::{FbFactorSpec, TmAssistance, TmMetric, TmPolicy, TmSpec, TmSpecError};
pub use tm::{
    Assistance, FidSet, Metric, PathInfo, PathPolicy, TmConfig, TmError, TopologyManager,
};

use pathpool_topo::NodeIx;

/// Rendezvous and topology manager together: the slow path of thesis §4.2 (steps 1–3).
#[derive(Clone, Debug)]
pub struct Psi {
    /// The rendezvous function.
    pub rendezvous: Rendezvous,
    /// The topology manager.
    pub tm: TopologyManager,
}

/// Why a subscription got no paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubscribeError {
    /// The rendezvous knows no publisher of the item.
    Rendezvous(RvError),
    /// The topology manager found no usable path.
    Paths(TmError),
}

impl std::fmt::Display for SubscribeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubscribeError::Rendezvous(e) => e.fmt(f),
            SubscribeError::Paths(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SubscribeError {}

impl Psi {
    /// A subscription of `subscriber` to `name`: the rendezvous matches it with publishers
    /// (`matching`), the topology manager computes their paths (thesis §4.2, slow path).
    ///
    /// # Errors
    /// No publisher of `name`, or no path from any of them to the subscriber.
    pub fn subscribe(
        &self,
        name: &ContentName,
        subscriber: NodeIx,
        matching: Matching,
    ) -> Result<FidSet, SubscribeError> {
        let publishers = self
            .rendezvous
            .resolve(name, matching)
            .map_err(SubscribeError::Rendezvous)?;
        self.tm
            .paths(&publishers, subscriber)
            .map_err(SubscribeError::Paths)
    }
}
