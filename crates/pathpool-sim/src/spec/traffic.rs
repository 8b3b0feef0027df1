//! A scenario's `[[traffic]]` generators and the `[[host_groups]]` they may draw their end
//! hosts from.

use pathpool_core::{BufferSize, Dur, Rate};
use serde::{Deserialize, Serialize};

use super::{FlowCc, QueueSpec, TcpSpec};

/// A generator of finite TCP (or INRPP) flows with Poisson arrivals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    /// Name prefix of the generated flows (`<id>.<k>`); defaults to `traffic<i>`.
    #[serde(default)]
    pub id: Option<String>,
    /// Generator type; only `"poisson"`.
    pub kind: TrafficKind,
    /// Sending host, or the hosts and host groups each flow draws its sender from.
    pub from: HostNames,
    /// Receiving host, or the hosts and host groups each flow draws its receiver from.
    pub to: HostNames,
    /// First possible arrival.
    #[serde(default)]
    pub start: Dur,
    /// No arrivals after this (default: the scenario duration).
    #[serde(default)]
    pub stop: Option<Dur>,
    /// Mean arrivals per second.
    #[serde(default)]
    pub arrival_rate: Option<f64>,
    /// Offered load ρ = λ·E[size]/C relative to the slowest link C of the route (or of
    /// `load_link`); sets λ.
    #[serde(default)]
    pub load: Option<f64>,
    /// The link (its `id`) whose rate `load` is relative to; required with `load` when
    /// `from` or `to` has more than one host, since the flows then take many routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_link: Option<String>,
    /// Flow size distribution.
    pub size: SizeDist,
    /// Stop after this many flows.
    #[serde(default)]
    pub max_flows: Option<u64>,
    /// Congestion control (shortcut for `tcp.cc`), or `"inrpp"`.
    #[serde(default)]
    pub cc: Option<FlowCc>,
    /// Multipath connections with one subflow on each of these routes (node lists from
    /// `from` to `to`, as a `[[flows]]` entry's `paths`); needs a multipath `cc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<Vec<String>>>,
    /// TCP parameters overriding the scenario's `[tcp]` table.
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
}

/// Generator types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrafficKind {
    /// Poisson arrivals (with Pareto sizes: the Poisson Pareto Burst Process).
    Poisson,
}

/// A flow-size distribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SizeDist {
    /// Pareto (type I) with shape α > 1 and the given mean (scale = mean·(α−1)/α).
    Pareto {
        /// Mean size, in bytes or full segments (`"30pkts"`).
        mean: BufferSize,
        /// Shape α.
        shape: f64,
    },
    /// Exponential with the given mean.
    Exponential {
        /// Mean size.
        mean: BufferSize,
    },
    /// Every flow has the same size.
    Constant {
        /// The size.
        value: BufferSize,
    },
}

/// A generator's `from` or `to`: one name (`"a"`) or a list (`["s1", "s2"]`), each a host or
/// a host group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostNames {
    /// One host or group.
    One(String),
    /// Several hosts or groups.
    Many(Vec<String>),
}

impl HostNames {
    /// The names, in order.
    #[must_use]
    pub fn names(&self) -> &[String] {
        match self {
            HostNames::One(n) => std::slice::from_ref(n),
            HostNames::Many(v) => v,
        }
    }
}

impl Serialize for HostNames {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HostNames::One(n) => s.serialize_str(n),
            HostNames::Many(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for HostNames {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Names;
        impl<'de> serde::de::Visitor<'de> for Names {
            type Value = HostNames;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a host or host group name, or a list of them")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<HostNames, E> {
                Ok(HostNames::One(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<HostNames, A::Error> {
                let mut v = Vec::new();
                while let Some(n) = seq.next_element::<String>()? {
                    v.push(n);
                }
                Ok(HostNames::Many(v))
            }
        }
        d.deserialize_any(Names)
    }
}

/// `count` hosts named `<name>.0` … `<name>.<count − 1>`, each joined to the node `attach`
/// by a duplex access link of its own with these parameters (named `<host>-<attach>`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostGroupSpec {
    /// The group's name, which generators' `from` and `to` use.
    pub name: String,
    /// Number of hosts.
    pub count: u32,
    /// The router every host's access link goes to.
    pub attach: String,
    /// Rate of each access link.
    pub rate: Rate,
    /// One-way propagation delay of each access link.
    pub delay: Dur,
    /// Output queue of each direction of each access link.
    #[serde(default)]
    pub queue: QueueSpec,
}
