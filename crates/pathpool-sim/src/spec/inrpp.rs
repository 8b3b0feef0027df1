//! `[inrpp]`: when present, every router of the network is an INRPP router (issue 21; spec
//! 001 §3), with these parameters; flows with `cc = "inrpp"` are INRPP hosts' flows.

use pathpool_core::{ByteSize, Dur, QueueSize};
use serde::{Deserialize, Serialize};

/// `[inrpp]`; every field is optional (defaults: the document's dumbbell, and D283's picks
/// where it gives none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InrppSpec {
    /// The cache's size (default 1.25MB; MB = 10^6 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<ByteSize>,
    /// S_high (default 1MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_high: Option<ByteSize>,
    /// S_low (default 500KB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_low: Option<ByteSize>,
    /// L_high of every output queue, in bytes or in time at the link's rate (default 40ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_high: Option<QueueSize>,
    /// L_low (default 20ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_low: Option<QueueSize>,
    /// How long Disable Backpressure lasts (default 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_duration: Option<Dur>,
    /// How long a nonce lives without a SLOW-DOWN refreshing it (default 2s, D283).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce_timeout: Option<Dur>,
    /// The period of residual-bandwidth advertisements (default 10ms, D283).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advert_interval: Option<Dur>,
    /// The newest period's weight in the traffic meters (default 0.5, D283).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_weight: Option<f64>,
    /// Whether a router's links to hosts are INRPP interfaces too (default true). With
    /// `false` a router manages only its links to other routers: packets to hosts are
    /// forwarded uncached and ACKs from hosts pass unread, which keeps an edge router with
    /// thousands of hosts small (D305).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_interfaces: Option<bool>,
}

impl InrppSpec {
    /// The cache's size.
    pub const DEFAULT_CACHE: u64 = 1_250_000;
    /// S_high.
    pub const DEFAULT_CACHE_HIGH: u64 = 1_000_000;
    /// S_low.
    pub const DEFAULT_CACHE_LOW: u64 = 500_000;
    /// L_high.
    pub const DEFAULT_QUEUE_HIGH: QueueSize = QueueSize::Time(Dur::from_ms(40));
    /// L_low.
    pub const DEFAULT_QUEUE_LOW: QueueSize = QueueSize::Time(Dur::from_ms(20));
    /// DB's duration.
    pub const DEFAULT_DB_DURATION: Dur = Dur::from_secs(1);
    /// A nonce's life without refresh.
    pub const DEFAULT_NONCE_TIMEOUT: Dur = Dur::from_secs(2);
    /// The advertisement period.
    pub const DEFAULT_ADVERT_INTERVAL: Dur = Dur::from_ms(10);
    /// The meters' weight.
    pub const DEFAULT_METER_WEIGHT: f64 = 0.5;
}
