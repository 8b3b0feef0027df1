//! A scenario's `[tfrc]` table: the defaults of every TFRC flow (`kind = "tfrc"`), which a
//! flow's own `tfrc` table overrides field by field.

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

/// How a multipath TFRC flow combines its subflows' rates (Tse 2006).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TfrcMultipath {
    /// Bilevel TFRC: a master rate split in proportion to the subflows' own rates (§3.2).
    #[default]
    Bilevel,
    /// 1/N TFRC: each subflow sends 1/N of its own rate (§4.2).
    Fractional,
}

/// Which single RTT Bilevel TFRC's master uses (decision D235).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TfrcMasterRtt {
    /// Σ RTT_i·R_i / Σ R_i.
    #[default]
    RateWeightedMean,
    /// The largest subflow RTT.
    Max,
    /// The smallest subflow RTT.
    Min,
}

/// How Bilevel TFRC's master combines the subflows' loss event rates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TfrcLossCombination {
    /// Tse eq. 3.3: weighted by the subflows' rates.
    RateWeighted,
    /// The rejected Σ f_i.
    Sum,
    /// One loss history over the connection's packets (decision D264).
    #[default]
    ConnectionHistory,
}

/// Where 1/N TFRC applies the 2·X_recv cap (decision D236).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TfrcRecvCap {
    /// On what is sent; the nominal rate runs free.
    #[default]
    Sent,
    /// On the nominal rate, as plain RFC 3448.
    Nominal,
}

/// Which receive rate seeds a Bilevel subflow's first loss interval (decision D262).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TfrcFirstInterval {
    /// The connection's (every subflow's receive rate summed).
    #[default]
    Connection,
    /// The subflow's own, as a single RFC 3448 receiver.
    Subflow,
}

/// Which receive rate caps a Bilevel subflow's nominal rate (decision D263).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TfrcNominalCap {
    /// The connection's (every subflow's receive rate summed).
    #[default]
    Connection,
    /// The subflow's own, as a single RFC 3448 sender.
    Subflow,
}

/// Which subflow a NACKed packet is resent on (decision D251).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TfrcResendOn {
    /// The highest-rate subflow other than the one whose copy was lost.
    #[default]
    HighestRate,
    /// The subflow whose copy was lost.
    Same,
}

/// `[tfrc]`: RFC 3448's parameters for every TFRC flow, and multipath TFRC's; every field is
/// optional.
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
    /// A multipath flow's rate rule (default `"bilevel"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multipath: Option<TfrcMultipath>,
    /// Bilevel's master RTT (default `"rate-weighted-mean"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_rtt: Option<TfrcMasterRtt>,
    /// Bilevel's loss combination (default `"rate-weighted"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_combination: Option<TfrcLossCombination>,
    /// 1/N TFRC's receive-rate cap (default `"sent"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recv_cap: Option<TfrcRecvCap>,
    /// RTTs after a resend during which NACKs for it are ignored (default 1.5; ≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nack_expiry_rtts: Option<f64>,
    /// Which subflow a NACKed packet is resent on (default `"highest-rate"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resend_on: Option<TfrcResendOn>,
    /// Which receive rate seeds a Bilevel subflow's first loss interval (default
    /// `"connection"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_interval: Option<TfrcFirstInterval>,
    /// Which receive rate caps a Bilevel subflow's nominal rate (default `"connection"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal_cap: Option<TfrcNominalCap>,
}

impl TfrcSpec {
    /// Whether nothing is set (the table is then left out when a scenario is written).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == TfrcSpec::default()
    }

    /// This table with every field `over` sets replaced by its value.
    #[must_use]
    pub fn overridden_by(&self, over: &TfrcSpec) -> TfrcSpec {
        TfrcSpec {
            packet_size: over.packet_size.or(self.packet_size),
            history: over.history.or(self.history),
            history_slots: over.history_slots.or(self.history_slots),
            loss_intervals: over.loss_intervals.or(self.loss_intervals),
            multipath: over.multipath.or(self.multipath),
            master_rtt: over.master_rtt.or(self.master_rtt),
            loss_combination: over.loss_combination.or(self.loss_combination),
            recv_cap: over.recv_cap.or(self.recv_cap),
            nack_expiry_rtts: over.nack_expiry_rtts.or(self.nack_expiry_rtts),
            resend_on: over.resend_on.or(self.resend_on),
            first_interval: over.first_interval.or(self.first_interval),
            nominal_cap: over.nominal_cap.or(self.nominal_cap),
        }
    }

    /// The fields set, by name.
    #[must_use]
    pub fn set_fields(&self) -> Vec<&'static str> {
        [
            ("packet_size", self.packet_size.is_some()),
            ("history", self.history.is_some()),
            ("history_slots", self.history_slots.is_some()),
            ("loss_intervals", self.loss_intervals.is_some()),
            ("multipath", self.multipath.is_some()),
            ("master_rtt", self.master_rtt.is_some()),
            ("loss_combination", self.loss_combination.is_some()),
            ("recv_cap", self.recv_cap.is_some()),
            ("nack_expiry_rtts", self.nack_expiry_rtts.is_some()),
            ("resend_on", self.resend_on.is_some()),
            ("first_interval", self.first_interval.is_some()),
            ("nominal_cap", self.nominal_cap.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }
}

/// The `[tfrc]` fields that only multipath TFRC flows use.
pub const TFRC_MULTIPATH_FIELDS: [&str; 8] = [
    "multipath",
    "master_rtt",
    "loss_combination",
    "recv_cap",
    "nack_expiry_rtts",
    "resend_on",
    "first_interval",
    "nominal_cap",
];
