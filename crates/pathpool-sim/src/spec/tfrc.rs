//! A scenario's `[tfrc]` table: the defaults of every TFRC flow (`kind = "tfrc"`).

use pathpool_core::ByteSize;
use serde::{Deserialize, Serialize};

/// Which arrival history a TFRC receiver keeps (spec §4.3.4, decision D232).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TfrcHistory {
    /// Sequence-tagged slots: an old pass never answers for a new packet.
    #[default]
    WrapSafe,
    /// ns-2's fixed array, whose wrap-around hides losses (Tse §3.2.3).
    FixedArray,
}

/// `[tfrc]`: RFC 3448's parameters for every TFRC flow; every field is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfrcSpec {
    /// Packet size s on the wire (default 1000B); a flow's `packet_size` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<ByteSize>,
    /// The receiver's arrival history (default `"wrap-safe"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<TfrcHistory>,
    /// Slots of the arrival history (default 100000, ns-2's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_slots: Option<u64>,
    /// Loss intervals averaged, n (default 8; even, at least 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_intervals: Option<u32>,
}

impl TfrcSpec {
    /// Whether nothing is set (the table is then left out when a scenario is written).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == TfrcSpec::default()
    }
}
