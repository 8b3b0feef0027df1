//! Reading a flow table in one pass: each value with its own type (so that a bad value's error
//! names its field), and a field the flow's kind does not take refused by the reader itself —
//! at its key when `kind` came before it, else once the table has been read (the message then
//! names the field, and `crate::diagnose` points the error at it). Compiling a flow therefore
//! never sees a field that does not apply (issue 19, D190).

use pathpool_cc::CcKind;
use pathpool_core::{BufferSize, ByteSize, Dur, Rate};
use pathpool_proto::mptcp::Scheduler;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::{
    FlowCc, FlowCommon, FlowKind, FlowSpec, MmtpFlowSpec, NdnFlowSpec, PeriodDist, TcpFlowSpec,
    TfrcFlowSpec, UdpFlowSpec, UdpOnoffFlowSpec, FIELDS,
};
use crate::spec::{
    MmtpSpec, NdnTransport, OutageSpec, PtpSpec, SdnSpec, SubflowSpec, TcpSpec, TfrcSpec, TmSpec,
    WindowLimit,
};

/// The reader's message for a field that a flow of kind `kind` does not take: `field `x`: `
/// and then what a person reads at the field (see [`NotTaken`]).
/// A download's `cc` (mmTP's, or mmTP over NDN's): a window controller, not INRPP's or
/// RCP's, which are single-path TCP's.
fn window_cc<E: de::Error>(cc: Option<FlowCc>) -> Result<Option<CcKind>, E> {
    match cc {
        Some(c @ (FlowCc::Inrpp | FlowCc::Rcp)) => Err(E::custom(format!(
            "field `cc`: \"{}\" is for single-path TCP flows, not mmTP downloads",
            c.name()
        ))),
        other => Ok(other.and_then(FlowCc::window)),
    }
}

fn not_taken(field: &str, kind: FlowKind) -> String {
    let why = kind
        .why_not(field)
        .map_or(String::new(), |w| format!(" ({w})"));
    let takers: Vec<String> = FlowKind::ALL
        .iter()
        .filter(|k| k.takes(field))
        .map(|k| format!("{:?}", k.name()))
        .collect();
    let takers = match takers.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    let fields: Vec<String> = kind.fields().map(|f| format!("`{f}`")).collect();
    format!(
        "field `{field}`: not allowed in a kind = {:?} flow{why}: only for kind = {takers} flows; \
         a kind = {:?} flow takes {}",
        kind.name(),
        kind.name(),
        fields.join(", ")
    )
}

/// A reader's message about a field the flow's kind does not take, split into the field and
/// what to show at it.
pub(crate) struct NotTaken<'a> {
    /// The field.
    pub(crate) field: &'a str,
    /// The message without the field's name, for an error whose path names the field.
    pub(crate) message: &'a str,
}

impl<'a> NotTaken<'a> {
    /// Reads a message [`not_taken`] wrote; `None` for any other.
    pub(crate) fn parse(message: &'a str) -> Option<Self> {
        let rest = message.strip_prefix("field `")?;
        let (field, rest) = rest.split_once('`')?;
        let message = rest.strip_prefix(": ")?;
        message
            .starts_with("not allowed in a kind = ")
            .then_some(NotTaken { field, message })
    }
}

/// The values of a flow table as read, before its kind sorts them; one slot per field of
/// [`FIELDS`], each read with its own type.
macro_rules! read_fields {
    ($($name:ident: $ty:ty),* $(,)?) => {
        #[derive(Default)]
        struct Read {
            $($name: Option<$ty>,)*
            /// The fields given, in the table's order.
            given: Vec<&'static str>,
        }

        impl Read {
            /// Reads the value of `field`, whose key was just read.
            fn value<'de, A: MapAccess<'de>>(
                &mut self,
                field: &'static str,
                map: &mut A,
            ) -> Result<(), A::Error> {
                match field {
                    $(stringify!($name) => {
                        if self.$name.is_some() {
                            return Err(de::Error::duplicate_field(field));
                        }
                        self.$name = Some(map.next_value()?);
                    })*
                    _ => return Err(de::Error::unknown_field(field, &FIELDS)),
                }
                self.given.push(field);
                Ok(())
            }
        }
    };
}

read_fields! {
    id: String,
    kind: FlowKind,
    from: String,
    to: String,
    start: Dur,
    start_spread: Dur,
    stop: Dur,
    size: BufferSize,
    count: u32,
    route: Vec<String>,
    paths: Vec<Vec<String>>,
    subflows: Vec<SubflowSpec>,
    k_paths: u32,
    tm: TmSpec,
    sdn: SdnSpec,
    scheduler: Scheduler,
    receive_buffer: WindowLimit,
    opportunistic_retransmission: bool,
    penalisation: bool,
    cc: FlowCc,
    tcp: TcpSpec,
    rate: Rate,
    packet_size: ByteSize,
    on: Dur,
    off: Dur,
    periods: PeriodDist,
    sources: Vec<String>,
    outages: Vec<OutageSpec>,
    mmtp: MmtpSpec,
    content: String,
    tfrc: TfrcSpec,
    transport: NdnTransport,
    ptp: PtpSpec,
}

impl Read {
    /// The flow these values describe; a field its kind does not take is an error.
    fn flow<E: de::Error>(self) -> Result<FlowSpec, E> {
        let kind = self.kind.unwrap_or_default();
        if let Some(field) = FIELDS
            .iter()
            .find(|&&f| self.given.contains(&f) && !kind.takes(f))
        {
            return Err(E::custom(not_taken(field, kind)));
        }
        let common = FlowCommon {
            id: self.id,
            from: self.from.unwrap_or_default(),
            to: self.to.ok_or_else(|| E::missing_field("to"))?,
            start: self.start.unwrap_or_default(),
            start_spread: self.start_spread.unwrap_or_default(),
            count: self.count.unwrap_or(1),
        };
        let udp = UdpFlowSpec {
            common,
            stop: self.stop,
            route: self.route,
            rate: self.rate,
            packet_size: self.packet_size,
        };
        Ok(match kind {
            FlowKind::Tcp => FlowSpec::Tcp(TcpFlowSpec {
                common: udp.common,
                stop: udp.stop,
                size: self.size,
                route: udp.route,
                paths: self.paths,
                subflows: self.subflows,
                k_paths: self.k_paths,
                tm: self.tm,
                sdn: self.sdn,
                scheduler: self.scheduler,
                receive_buffer: self.receive_buffer,
                opportunistic_retransmission: self.opportunistic_retransmission,
                penalisation: self.penalisation,
                cc: self.cc,
                tcp: self.tcp,
            }),
            FlowKind::UdpCbr => FlowSpec::UdpCbr(udp),
            FlowKind::UdpOnoff => FlowSpec::UdpOnoff(UdpOnoffFlowSpec {
                udp,
                on: self.on,
                off: self.off,
                periods: self.periods.unwrap_or_default(),
            }),
            FlowKind::Mmtp => FlowSpec::Mmtp(MmtpFlowSpec {
                common: udp.common,
                size: self.size,
                tm: self.tm,
                cc: window_cc(self.cc)?,
                tcp: self.tcp,
                sources: self.sources,
                outages: self.outages,
                mmtp: self.mmtp,
                content: self.content,
            }),
            FlowKind::Tfrc => FlowSpec::Tfrc(TfrcFlowSpec {
                common: udp.common,
                stop: udp.stop,
                route: udp.route,
                paths: self.paths,
                subflows: self.subflows,
                packet_size: udp.packet_size,
                tfrc: self.tfrc,
            }),
            FlowKind::Ndn => FlowSpec::Ndn(NdnFlowSpec {
                common: udp.common,
                size: self.size,
                content: self.content,
                transport: self.transport,
                ptp: self.ptp,
                cc: window_cc(self.cc)?,
                mmtp: self.mmtp,
            }),
        })
    }
}

/// Reads a flow table's key: a field of [`FIELDS`], which the kind, when already read, takes.
/// An error here is at the key (`serde_path_to_error` records it), as derived readers' are.
struct Key {
    kind: Option<FlowKind>,
}

impl<'de> DeserializeSeed<'de> for Key {
    type Value = &'static str;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl Visitor<'_> for Key {
    type Value = &'static str;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a flow field")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        let Some(&field) = FIELDS.iter().find(|f| **f == v) else {
            return Err(E::unknown_field(v, &FIELDS));
        };
        match self.kind {
            Some(kind) if !kind.takes(field) => Err(E::custom(not_taken(field, kind))),
            _ => Ok(field),
        }
    }
}

struct FlowVisitor;

impl<'de> Visitor<'de> for FlowVisitor {
    type Value = FlowSpec;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a flow table")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FlowSpec, A::Error> {
        let mut read = Read::default();
        while let Some(field) = map.next_key_seed(Key { kind: read.kind })? {
            read.value(field, &mut map)?;
        }
        read.flow()
    }
}

impl<'de> Deserialize<'de> for FlowSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(FlowVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<FlowSpec, String> {
        let value: toml::Value = toml::from_str(text).unwrap();
        serde_path_to_error::deserialize(value)
            .map_err(|e| format!("{}: {}", e.path(), e.inner().message()))
    }

    #[test]
    fn each_kind_reads_its_own_fields() {
        let f = read("from = \"a\"\nto = \"b\"\nsize = \"1MB\"\npaths = [[\"a\", \"b\"]]").unwrap();
        let FlowSpec::Tcp(t) = &f else {
            panic!("{f:?}")
        };
        assert_eq!((t.common.from.as_str(), t.common.count), ("a", 1));
        assert_eq!(t.size, Some(BufferSize::Bytes(1_000_000)));
        let f = read("kind = \"udp-onoff\"\nto = \"b\"\nrate = \"1Mbps\"\non = \"1s\"\noff = \"2s\"\nperiods = \"constant\"\ncount = 3").unwrap();
        let FlowSpec::UdpOnoff(u) = &f else {
            panic!("{f:?}")
        };
        assert_eq!(u.udp.rate, Some(Rate::from_mbps(1)));
        assert_eq!((u.periods, u.udp.common.count), (PeriodDist::Constant, 3));
        assert_eq!(f.common().count, 3);
        let f = read("kind = \"mmtp\"\nsources = [\"p\"]\nto = \"s\"\ncontent = \"/x\"").unwrap();
        assert_eq!(f.kind(), FlowKind::Mmtp);
    }

    #[test]
    fn a_field_of_another_kind_is_refused_at_its_key_or_named_when_it_came_first() {
        // `kind` is read before `rate`: the error is at the key.
        let e = read("kind = \"tcp\"\nto = \"b\"\nrate = \"1Mbps\"").unwrap_err();
        assert!(e.starts_with("rate: field `rate`: not allowed in a kind = \"tcp\" flow (TCP rates are set by congestion control): only for kind = \"udp-cbr\" and \"udp-onoff\" flows; a kind = \"tcp\" flow takes `id`, `kind`"), "{e}");
        // `content` comes before `kind` in a table's (sorted) order: named once the table is read.
        let e = read("kind = \"tcp\"\nto = \"b\"\ncontent = \"/x\"").unwrap_err();
        assert!(
            e.starts_with(".: field `content`: not allowed in a kind = \"tcp\" flow"),
            "{e}"
        );
        let nt = NotTaken::parse(e.split_once(": ").unwrap().1).expect("parses");
        assert_eq!(nt.field, "content");
        assert!(nt.message.starts_with("not allowed in a kind = \"tcp\" flow: only for kind = \"mmtp\" and \"ndn\" flows; a kind = \"tcp\" flow takes `id`"), "{}", nt.message);
        // Without `kind`, a flow is TCP.
        let e = read("to = \"b\"\nperiods = \"constant\"").unwrap_err();
        assert!(e.contains("field `periods`: not allowed in a kind = \"tcp\" flow: only for kind = \"udp-onoff\" flows"), "{e}");
        let e = read("kind = \"udp-cbr\"\nto = \"b\"\nsize = \"1MB\"").unwrap_err();
        assert!(
            e.contains(
                "(UDP flows send until they stop): only for kind = \"tcp\", \"mmtp\" and \"ndn\" flows"
            ),
            "{e}"
        );
        // TFRC fields on a TCP flow (issue 20, acceptance 6).
        let e = read("kind = \"tcp\"\nto = \"b\"\ntfrc = { nack_expiry_rtts = 1.0 }").unwrap_err();
        assert!(e.starts_with("tfrc: field `tfrc`: not allowed in a kind = \"tcp\" flow (TFRC parameters are for TFRC flows): only for kind = \"tfrc\" flows"), "{e}");
        let e = read("kind = \"tcp\"\nto = \"b\"\npacket_size = \"1000B\"").unwrap_err();
        assert!(e.starts_with("packet_size: field `packet_size`: not allowed in a kind = \"tcp\" flow (TCP segments are sized by tcp.mss)"), "{e}");
        let e = read("kind = \"mmtp\"\nto = \"b\"\nstop = \"1s\"").unwrap_err();
        assert!(e.contains("(a download ends when its content has arrived): only for kind = \"tcp\", \"udp-cbr\", \"udp-onoff\" and \"tfrc\" flows"), "{e}");
    }

    #[test]
    fn unknown_missing_and_bad_values_are_reported_as_derived_readers_do() {
        let e = read("form = \"a\"\nto = \"b\"").unwrap_err();
        assert!(
            e.starts_with("form: unknown field `form`, expected one of `id`, `kind`, `from`"),
            "{e}"
        );
        let e = read("from = \"a\"").unwrap_err();
        assert!(e.trim_end().ends_with(".: missing field `to`"), "{e}");
        let e = read("to = \"b\"\ntcp = { mss = \"x\" }").unwrap_err();
        assert!(e.starts_with("tcp.mss: "), "{e}");
        let e = read("to = \"b\"\nkind = \"tpc\"").unwrap_err();
        assert!(e.starts_with("kind: unknown variant `tpc`"), "{e}");
    }

    #[test]
    fn the_field_lists_agree_with_the_types() {
        // Every kind's list is in the reference's order, and a flow of each kind with every
        // field it takes set writes exactly those fields.
        for kind in FlowKind::ALL {
            let fields: Vec<&str> = kind.fields().collect();
            let mut at = FIELDS.iter();
            assert!(fields.iter().all(|f| at.any(|g| g == f)), "{kind:?}");
            let mut text = format!("kind = {:?}\n", kind.name());
            for f in fields.iter().filter(|f| **f != "kind") {
                let v = match *f {
                    "id" | "from" | "to" | "content" => "\"x\"",
                    "start" | "start_spread" | "stop" | "on" | "off" => "\"1s\"",
                    "size" | "receive_buffer" | "packet_size" => "\"1000B\"",
                    "count" | "k_paths" => "2",
                    "route" | "sources" => "[\"x\"]",
                    "paths" => "[[\"x\"]]",
                    "subflows" | "outages" => "[]",
                    "tm" | "sdn" | "tcp" | "mmtp" | "tfrc" | "ptp" => "{}",
                    "transport" => "\"icp\"",
                    "scheduler" => "\"round-robin\"",
                    "opportunistic_retransmission" | "penalisation" => "true",
                    "cc" => "\"lia\"",
                    "rate" => "\"1Mbps\"",
                    "periods" => "\"constant\"",
                    other => panic!("no test value for {other}"),
                };
                text.push_str(&format!("{f} = {v}\n"));
            }
            let flow = read(&text).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
            assert_eq!(flow.kind(), kind);
            let written = serde_json::to_value(&flow).unwrap();
            let mut keys: Vec<&str> = written
                .as_object()
                .unwrap()
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, _)| k.as_str())
                .collect();
            let mut want = fields.to_vec();
            keys.sort_unstable();
            want.sort_unstable();
            assert_eq!(keys, want, "{kind:?}");
        }
    }
}
