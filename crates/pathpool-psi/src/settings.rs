//! The topology manager's settings as they are written in files: the `tm` table of a
//! simulator scenario and of an overlay file, read the same way by both so that a simulated
//! network and a deployed one choose the same paths and groups.

use serde::{Deserialize, Serialize};

use crate::tm::{Assistance, Metric, PathPolicy, TmConfig};
use pathpool_topo::FbFactor;

/// Topology-manager assistance for a multipath connection: paths chosen by the topology
/// manager of `pathpool-psi`, one subflow each, in the coupling groups it assigns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TmSpec {
    /// How paths are chosen (default `"k-shortest"`).
    #[serde(default)]
    pub policy: TmPolicy,
    /// Paths wanted (default 2).
    #[serde(default = "default_tm_k")]
    pub k: u32,
    /// Yen candidates examined by `"disjoint-only"` (default 10·k).
    #[serde(default)]
    pub candidates: Option<u32>,
    /// Path cost (default `"hops"`, as the thesis's TM).
    #[serde(default)]
    pub metric: TmMetric,
    /// How coupling groups are assigned (default `"shared-link"`).
    #[serde(default)]
    pub assistance: TmAssistance,
    /// The factor of the friendliness-bottleneck rule (paper eq. 2): `"paths-on-link"`
    /// (default), `"all-paths"` or a number. Only with `assistance = "bottleneck"`.
    #[serde(default)]
    pub factor: Option<FbFactorSpec>,
}

fn default_tm_k() -> u32 {
    2
}

impl Default for TmSpec {
    fn default() -> Self {
        TmSpec {
            policy: TmPolicy::default(),
            k: default_tm_k(),
            candidates: None,
            metric: TmMetric::default(),
            assistance: TmAssistance::default(),
            factor: None,
        }
    }
}

/// How the topology manager chooses paths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TmPolicy {
    /// Yen's k shortest loopless paths.
    #[default]
    KShortest,
    /// Yen's paths, each kept only if it shares no link with those kept before.
    DisjointOnly,
    /// k link-disjoint paths of least total cost (Bhandari).
    KDisjoint,
}

/// What a path costs for the topology manager.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TmMetric {
    /// Number of links.
    #[default]
    Hops,
    /// Sum of propagation delays.
    Delay,
}

/// How the topology manager assigns coupling groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TmAssistance {
    /// Paths sharing a link share a group, transitively (thesis §5.2).
    #[default]
    SharedLink,
    /// Paths sharing a friendliness bottleneck share a group (paper eq. 2).
    Bottleneck,
    /// No assistance: every subflow in group 0.
    None,
}

/// The eq. 2 factor: a name or a number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FbFactorSpec {
    /// A constant.
    Value(f64),
    /// `"paths-on-link"` or `"all-paths"`.
    Name(String),
}

/// A rejected [`TmSpec`]: the field and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmSpecError {
    /// The field of the `tm` table.
    pub field: &'static str,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl TmSpec {
    /// The topology manager's configuration and the number of paths wanted, with at most
    /// `max_k` paths.
    ///
    /// # Errors
    /// `k` outside 1..=`max_k`, `candidates` without `policy = "disjoint-only"`, a `factor`
    /// without `assistance = "bottleneck"` or one that is neither a known name nor a
    /// non-negative number.
    pub fn config(&self, max_k: usize) -> Result<(TmConfig, usize), TmSpecError> {
        let err = |field, message: &str| TmSpecError {
            field,
            message: message.to_string(),
        };
        let k = self.k as usize;
        if k == 0 || k > max_k {
            return Err(err("k", &format!("must be between 1 and {max_k}")));
        }
        let policy = match self.policy {
            TmPolicy::KShortest => PathPolicy::KShortest { k },
            TmPolicy::DisjointOnly => PathPolicy::DisjointOnly {
                k,
                candidates: self.candidates.map_or(10 * k, |c| c as usize),
            },
            TmPolicy::KDisjoint => PathPolicy::KDisjoint { k },
        };
        if self.candidates.is_some() && self.policy != TmPolicy::DisjointOnly {
            return Err(err(
                "candidates",
                "only policy = \"disjoint-only\" examines candidates",
            ));
        }
        let factor = match (&self.factor, self.assistance) {
            (None, _) => FbFactor::default(),
            (Some(_), a) if a != TmAssistance::Bottleneck => {
                return Err(err(
                    "factor",
                    "the factor is for assistance = \"bottleneck\"",
                ))
            }
            (Some(FbFactorSpec::Value(v)), _) if v.is_finite() && *v >= 0.0 => FbFactor::Fixed(*v),
            (Some(FbFactorSpec::Name(n)), _) if n == "paths-on-link" => FbFactor::PathsOnLink,
            (Some(FbFactorSpec::Name(n)), _) if n == "all-paths" => FbFactor::AllPaths,
            (Some(_), _) => {
                return Err(err(
                    "factor",
                    "expected \"paths-on-link\", \"all-paths\" or a non-negative number",
                ))
            }
        };
        let config = TmConfig {
            policy,
            metric: match self.metric {
                TmMetric::Hops => Metric::Hops,
                TmMetric::Delay => Metric::Delay,
            },
            assistance: match self.assistance {
                TmAssistance::SharedLink => Assistance::SharedLink,
                TmAssistance::Bottleneck => Assistance::Bottleneck(factor),
                TmAssistance::None => Assistance::None,
            },
            ..TmConfig::default()
        };
        Ok((config, k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> TmSpec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn defaults_are_two_shortest_paths_grouped_by_shared_links() {
        let (config, k) = spec("").config(8).unwrap();
        assert_eq!(k, 2);
        assert_eq!(config.policy, PathPolicy::KShortest { k: 2 });
        assert_eq!(config.assistance, Assistance::SharedLink);
        assert_eq!(config.metric, Metric::Hops);
    }

    #[test]
    fn every_field_reaches_the_config() {
        let (config, k) =
            spec("policy = \"disjoint-only\"\nk = 3\nmetric = \"delay\"\nassistance = \"bottleneck\"\nfactor = 1.5")
                .config(8)
                .unwrap();
        assert_eq!(k, 3);
        assert_eq!(
            config.policy,
            PathPolicy::DisjointOnly {
                k: 3,
                candidates: 30
            }
        );
        assert_eq!(config.metric, Metric::Delay);
        assert_eq!(
            config.assistance,
            Assistance::Bottleneck(FbFactor::Fixed(1.5))
        );
    }

    #[test]
    fn bad_combinations_name_the_field() {
        let field = |t: &str| spec(t).config(8).unwrap_err().field;
        assert_eq!(field("k = 0"), "k");
        assert_eq!(field("k = 9"), "k");
        assert_eq!(field("candidates = 4"), "candidates");
        assert_eq!(field("factor = 2.0"), "factor");
        assert_eq!(
            field("assistance = \"bottleneck\"\nfactor = \"most\""),
            "factor"
        );
        assert_eq!(
            field("assistance = \"bottleneck\"\nfactor = -1.0"),
            "factor"
        );
    }
}
