//! `[rcp]`: the constants of RCP (issue 21; spec 001 §4), used by every link an RCP flow
//! (`cc = "rcp"`) crosses. Every field is optional; the defaults are the RCP paper's α and
//! β and the RCP authors' code for what the paper leaves open (D293).

use pathpool_core::{Dur, Rate};
use serde::{Deserialize, Serialize};

/// `[rcp]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RcpSpec {
    /// α, the weight of spare capacity (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// β, the weight of the queue (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// The longest control period; the period is min(interval, d) (default 10ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    /// R at the start, as a fraction of the link's rate (default 0.05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rate: Option<f64>,
    /// The smallest rate a link offers (default 128kbps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rate: Option<Rate>,
    /// A link's d before any packet carries an RTT (default 200ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rtt: Option<Dur>,
    /// The RTT a sender's packets carry before its first sample (default 0s: none, and
    /// links leave them out of d, as the RCP authors' code does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_rtt: Option<Dur>,
}
