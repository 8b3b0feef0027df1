//! Controllers by name, with enum dispatch (no virtual call per ACK).

use std::fmt;
use std::str::FromStr;

use pathpool_core::{PathId, Time};
use serde::{Deserialize, Serialize};

use crate::balia::Balia;
use crate::bilevel_tcp::{BilevelTcp, BilevelTcpConfig};
use crate::coupled::Coupled;
use crate::cubic::Cubic;
use crate::event::{AckSample, CongestionEvent, RecoveryAck, SendView};
use crate::ewtcp::Ewtcp;
use crate::hacker::{Hacker, HackerConfig};
use crate::lia::{Lia, LiaConfig};
use crate::multi_priority::{MultiPriority, MultiPriorityConfig};
use crate::nmcc::{Nmcc, NmccConfig};
use crate::olia::Olia;
use crate::path::CcMetrics;
use crate::reno::Reno;
use crate::tcp_lp::{TcpLp, TcpLpConfig};
use crate::windows::{WindowConfig, Windows};
use crate::wvegas::{Wvegas, WvegasConfig};
use crate::MultipathController;

/// The parameters of the algorithms that have some.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcOptions {
    /// NMCC's (`tcp.nmcc` in scenario files).
    pub nmcc: NmccConfig,
    /// LIA's (`tcp.lia`).
    pub lia: LiaConfig,
    /// wVegas's (`tcp.wvegas`).
    pub wvegas: WvegasConfig,
    /// The Hacker scheme's (`tcp.hacker`).
    pub hacker: HackerConfig,
    /// Bilevel TCP's (`tcp.bilevel_tcp`).
    pub bilevel_tcp: BilevelTcpConfig,
    /// TCP-LP's (`tcp.tcp_lp`; also Multi-Priority TCP's background subflows).
    pub tcp_lp: TcpLpConfig,
    /// Multi-Priority TCP's (`tcp.multi_priority`).
    pub multi_priority: MultiPriorityConfig,
}

/// The congestion-control algorithms pathpool implements, by the name scenario files use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CcKind {
    /// TCP NewReno (RFC 5681, RFC 3465, RFC 6582).
    #[default]
    NewReno,
    /// Reno on every subflow independently.
    Uncoupled,
    /// Equally weighted TCP (a = 1/n²).
    Ewtcp,
    /// Fully coupled (Kelly–Voice, Han et al.).
    Coupled,
    /// LIA (RFC 6356).
    Lia,
    /// OLIA (Khalili et al.).
    Olia,
    /// BALIA (Peng et al.).
    Balia,
    /// NMCC (Thomas).
    Nmcc,
    /// wVegas, weighted Vegas (Cao, Xu, Fu; delay-based).
    Wvegas,
    /// CUBIC (RFC 9438), Linux's default: a single-path competitor; independent on each
    /// subflow of a multipath connection.
    Cubic,
    /// Tse's multipath "Hacker scheme": NewReno on one subflow, 1/N of Reno's increase on
    /// the others.
    Hacker,
    /// Tse's Bilevel TCP: a master window split among the subflows in the ratio of their
    /// child windows (thesis eq. 2.2).
    BilevelTcp,
    /// TCP-LP, TCP Low Priority (Kuzmanovic & Knightly 2003): yields to other traffic on
    /// one-way delay; independent on each subflow of a multipath connection.
    TcpLp,
    /// Tse's Multi-Priority TCP: NewReno on one subflow, TCP-LP on the others, probes
    /// charged to the NewReno subflow.
    MultiPriority,
}

impl CcKind {
    /// Every algorithm, in documentation order.
    pub const ALL: &'static [CcKind] = &[
        CcKind::NewReno,
        CcKind::Uncoupled,
        CcKind::Ewtcp,
        CcKind::Coupled,
        CcKind::Lia,
        CcKind::Olia,
        CcKind::Balia,
        CcKind::Nmcc,
        CcKind::Wvegas,
        CcKind::Cubic,
        CcKind::Hacker,
        CcKind::BilevelTcp,
        CcKind::TcpLp,
        CcKind::MultiPriority,
    ];

    /// The canonical name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            CcKind::NewReno => "newreno",
            CcKind::Uncoupled => "uncoupled",
            CcKind::Ewtcp => "ewtcp",
            CcKind::Coupled => "coupled",
            CcKind::Lia => "lia",
            CcKind::Olia => "olia",
            CcKind::Balia => "balia",
            CcKind::Nmcc => "nmcc",
            CcKind::Wvegas => "wvegas",
            CcKind::Cubic => "cubic",
            CcKind::Hacker => "hacker",
            CcKind::BilevelTcp => "bilevel-tcp",
            CcKind::TcpLp => "tcp-lp",
            CcKind::MultiPriority => "multi-priority",
        }
    }

    /// A fresh controller of this kind, with no paths (NMCC, LIA and wVegas with their default
    /// parameters).
    #[must_use]
    pub fn build(self, config: WindowConfig) -> AnyController {
        self.build_with(config, CcOptions::default())
    }

    /// A fresh controller of this kind with the parameters in `options` (those of other
    /// algorithms are ignored).
    #[must_use]
    pub fn build_with(self, config: WindowConfig, options: CcOptions) -> AnyController {
        let CcOptions {
            nmcc,
            lia,
            wvegas,
            hacker,
            bilevel_tcp,
            tcp_lp,
            multi_priority,
        } = options;
        match self {
            CcKind::NewReno | CcKind::Uncoupled => {
                AnyController::Reno(Windows::new(Reno::new(config.ca_increase), config))
            }
            CcKind::Ewtcp => AnyController::Ewtcp(Windows::new(Ewtcp, config)),
            CcKind::Coupled => AnyController::Coupled(Windows::new(Coupled, config)),
            CcKind::Lia => AnyController::Lia(Windows::new(Lia::new(lia), config)),
            CcKind::Olia => AnyController::Olia(Windows::new(Olia::default(), config)),
            CcKind::Balia => AnyController::Balia(Windows::new(Balia, config)),
            CcKind::Nmcc => AnyController::Nmcc(Windows::new(
                Nmcc::new(nmcc).with_reno(Reno::new(config.ca_increase)),
                config,
            )),
            CcKind::Wvegas => AnyController::Wvegas(Windows::new(Wvegas::new(wvegas), config)),
            CcKind::Cubic => AnyController::Cubic(Windows::new(Cubic::default(), config)),
            CcKind::Hacker => AnyController::Hacker(Windows::new(
                Hacker::new(hacker, Reno::new(config.ca_increase)),
                config,
            )),
            CcKind::BilevelTcp => {
                AnyController::BilevelTcp(Windows::new(BilevelTcp::new(bilevel_tcp), config))
            }
            CcKind::TcpLp => AnyController::TcpLp(Windows::new(
                TcpLp::new(tcp_lp, Reno::new(config.ca_increase)),
                config,
            )),
            CcKind::MultiPriority => {
                AnyController::MultiPriority(MultiPriority::new(multi_priority, tcp_lp, config))
            }
        }
    }
}

impl fmt::Display for CcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown algorithm name, with the list of known ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCc(pub String);

impl fmt::Display for UnknownCc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = CcKind::ALL.iter().map(|k| k.name()).collect();
        write!(f, "unknown congestion control {:?}", self.0)?;
        if let Some(meant) = pathpool_core::text::closest(&self.0, names.iter().copied()) {
            write!(f, " (did you mean {meant:?}?)")?;
        }
        write!(f, "; known: {}", names.join(", "))
    }
}

impl std::error::Error for UnknownCc {}

impl FromStr for CcKind {
    type Err = UnknownCc;
    fn from_str(s: &str) -> Result<CcKind, UnknownCc> {
        match s.to_ascii_lowercase().as_str() {
            "newreno" | "reno" | "new-reno" | "tcp" => Ok(CcKind::NewReno),
            "uncoupled" => Ok(CcKind::Uncoupled),
            "ewtcp" => Ok(CcKind::Ewtcp),
            "coupled" | "fully-coupled" => Ok(CcKind::Coupled),
            "lia" => Ok(CcKind::Lia),
            "olia" => Ok(CcKind::Olia),
            "balia" => Ok(CcKind::Balia),
            "nmcc" => Ok(CcKind::Nmcc),
            "wvegas" => Ok(CcKind::Wvegas),
            "cubic" => Ok(CcKind::Cubic),
            "hacker" => Ok(CcKind::Hacker),
            "bilevel-tcp" | "bilevel_tcp" => Ok(CcKind::BilevelTcp),
            "tcp-lp" | "tcplp" | "tcp_lp" => Ok(CcKind::TcpLp),
            "multi-priority" | "multipriority" | "multi_priority" => Ok(CcKind::MultiPriority),
            _ => Err(UnknownCc(s.to_string())),
        }
    }
}

impl Serialize for CcKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for CcKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One controller of any kind.
#[derive(Clone, Debug)]
pub enum AnyController {
    /// NewReno / Uncoupled windows.
    Reno(Windows<Reno>),
    /// EWTCP.
    Ewtcp(Windows<Ewtcp>),
    /// Fully coupled.
    Coupled(Windows<Coupled>),
    /// LIA.
    Lia(Windows<Lia>),
    /// OLIA.
    Olia(Windows<Olia>),
    /// BALIA.
    Balia(Windows<Balia>),
    /// NMCC.
    Nmcc(Windows<Nmcc>),
    /// wVegas.
    Wvegas(Windows<Wvegas>),
    /// CUBIC.
    Cubic(Windows<Cubic>),
    /// The Hacker scheme.
    Hacker(Windows<Hacker>),
    /// Bilevel TCP.
    BilevelTcp(Windows<BilevelTcp>),
    /// TCP-LP.
    TcpLp(Windows<TcpLp>),
    /// Multi-Priority TCP.
    MultiPriority(MultiPriority),
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $body:expr) => {
        match $self {
            AnyController::Reno($c) => $body,
            AnyController::Ewtcp($c) => $body,
            AnyController::Coupled($c) => $body,
            AnyController::Lia($c) => $body,
            AnyController::Olia($c) => $body,
            AnyController::Balia($c) => $body,
            AnyController::Nmcc($c) => $body,
            AnyController::Wvegas($c) => $body,
            AnyController::Cubic($c) => $body,
            AnyController::Hacker($c) => $body,
            AnyController::BilevelTcp($c) => $body,
            AnyController::TcpLp($c) => $body,
            AnyController::MultiPriority($c) => $body,
        }
    };
}

impl AnyController {
    /// Whether the controller reads [`AckSample::one_way_delay`]: its ACKs must carry the
    /// receiver's timestamp (a simulator without room for it in a packet routes them so only
    /// for these controllers).
    #[must_use]
    pub fn reads_one_way_delay(&self) -> bool {
        matches!(
            self,
            AnyController::TcpLp(_) | AnyController::MultiPriority(_)
        )
    }
}

impl MultipathController for AnyController {
    fn add_path(&mut self, mss_bytes: u64) -> PathId {
        dispatch!(self, c => c.add_path(mss_bytes))
    }
    fn remove_path(&mut self, path: PathId) {
        dispatch!(self, c => c.remove_path(path))
    }
    // Always: with only `#[inline]` LLVM kept it out of line once the endpoints sent through
    // one `Net` (+14 instructions per delivered packet on dumbbell-n100; docs/benchmarks.md).
    #[inline(always)]
    fn on_ack(&mut self, path: PathId, ack: &AckSample) {
        dispatch!(self, c => c.on_ack(path, ack))
    }
    fn on_congestion_event(&mut self, path: PathId, event: CongestionEvent) {
        dispatch!(self, c => c.on_congestion_event(path, event))
    }
    fn on_recovery_ack(&mut self, path: PathId, ack: RecoveryAck) {
        dispatch!(self, c => c.on_recovery_ack(path, ack))
    }
    fn set_group(&mut self, path: PathId, group: u32) {
        dispatch!(self, c => c.set_group(path, group))
    }
    #[inline(always)]
    fn window(&self, path: PathId) -> u64 {
        dispatch!(self, c => c.window(path))
    }
    fn limit_window(&mut self, path: PathId, max_bytes: u64) {
        dispatch!(self, c => c.limit_window(path, max_bytes))
    }
    fn penalise(&mut self, path: PathId) {
        dispatch!(self, c => c.penalise(path))
    }
    fn metrics(&self, path: PathId) -> CcMetrics {
        dispatch!(self, c => c.metrics(path))
    }
    // Only Multi-Priority TCP gates or counts what is sent: the others answer at once.
    #[inline(always)]
    fn may_send(&self, path: PathId, now: Time, view: impl Fn(PathId) -> SendView) -> bool {
        match self {
            AnyController::MultiPriority(c) => c.may_send(path, now, view),
            _ => true,
        }
    }
    #[inline(always)]
    fn on_sent(&mut self, path: PathId, now: Time) {
        if let AnyController::MultiPriority(c) = self {
            c.on_sent(path, now);
        }
    }
    #[inline(always)]
    fn gates_sending(&self) -> bool {
        match self {
            AnyController::MultiPriority(c) => c.gates_sending(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print() {
        assert_eq!("NewReno".parse::<CcKind>().unwrap(), CcKind::NewReno);
        assert_eq!("reno".parse::<CcKind>().unwrap(), CcKind::NewReno);
        let e = "bbr".parse::<CcKind>().unwrap_err().to_string();
        assert!(e.contains("bbr") && e.contains("newreno"), "{e}");
        assert_eq!("CUBIC".parse::<CcKind>().unwrap(), CcKind::Cubic);
        assert_eq!(CcKind::NewReno.to_string(), "newreno");
    }

    #[test]
    fn built_controller_dispatches() {
        let mut c = CcKind::NewReno.build(WindowConfig::default());
        let p = c.add_path(1460);
        assert_eq!(c.window(p), 14_600);
    }
}
