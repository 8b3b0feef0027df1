//! The list of element kinds, and what it generates: where each element is kept ([`Slot`]),
//! the storage of every element ([`Elements`]) and the `dispatch!` macro through which the
//! engine calls an endpoint's [`Element`](crate::element::Element) methods.
//!
//! Adding an endpoint kind is one line in the list at the bottom (and the kind's own file):
//! `docs/architecture.md` shows the diff of the example kind the tests use. The network's
//! elements (links, wires, caches) and the engine's own (the sampler, the topology manager)
//! are fixed variants of [`Slot`], handled by the engine itself.
//!
//! Each kind keeps its values in a vector of its own, not in one vector of an enum of boxes,
//! so that endpoints are stored inline and a packet reaches its endpoint with one lookup in
//! the route table (which holds the slot of each hop) and no pointer to chase.

use pathpool_core::Time;

use crate::cache::SimCache;
use crate::element::Element;
use crate::link::Link;
use crate::mmtp_flow::MmtpConn;
use crate::mp_flow::MpConn;
use crate::multi::Multi;
use crate::tcp_flow::{TcpFlow, TcpSink, TcpSource};
use crate::udp_flow::{UdpSink, UdpSource};

/// A kind's values are added to [`Elements`] with [`Elements::add`]; generated for each line
/// of the list.
pub(crate) trait Kind: Element + Sized {
    /// Stores `self` and gives its elements (one per end, in the list's order) the next
    /// element indices; returns the first.
    fn add_to(self, elements: &mut Elements) -> u32;
}

/// Generates [`Slot`], [`Elements`], the [`Kind`] impls and `dispatch!` from the list of
/// endpoint kinds: first those whose values are one element (`field: Type { Variant: End }`),
/// then those whose values are two (`field: Type { First: End, Second: End }`), each with its
/// doc comment and at most one `#[cfg(..)]`. `$d` is `$`, passed in so that the generated
/// `dispatch!` can have metavariables of its own.
macro_rules! element_kinds {
    ($d:tt
     one end: $( $(#[doc = $doc1:literal])* $(#[cfg($a1:meta)])?
         $f1:ident: $t1:ty { $v1:ident: $e1:ident } ),* ;
     two ends: $( $(#[doc = $doc2:literal])* $(#[cfg($a2:meta)])? $f2:ident: $t2:ty {
         $va:ident: $ea:ident, $vb:ident: $eb:ident } ),* $(,)?
    ) => {
        /// Where an element is kept: its kind and its index among the values of that kind.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Slot {
            Link(u32),
            /// Link `.0` is a wire ([`Link::is_wire`]): packets cross it without an event.
            /// Only route hops are marked so; the element's own slot stays [`Slot::Link`].
            Wire(u32),
            /// On-path chunk cache `.0`: a hop of mmTP routes, crossed without an event.
            Cache(u32),
            /// INRPP router `.0`: a hop of INRPP routes, crossed without an event, with a
            /// timer of its own.
            Router(u32),
            /// RCP controller `.0`: a hop of RCP data routes before its link, crossed
            /// without an event, with a timer of its own.
            Rcp(u32),
            /// The first hop of a traced flow's data route (`measure.trace_sequences`):
            /// start `.0` of the [`SequenceTrace`](crate::seq_trace::SequenceTrace), which
            /// keeps the hop's own slot. Only route hops are marked so.
            Traced(u32),
            /// NDN node `.0`: the last hop of the two-hop route of each link into it, crossed
            /// without an event, with a timer of its own (its forwarder's).
            Ndn(u32),
            /// NDN consumer `.0`: its timer (it sends through its node's forwarder).
            NdnApp(u32),
            Sampler,
            /// The topology manager's link-state element (link failures, re-sent FID sets);
            /// only in scenarios with `failures`.
            Tm,
            $( $(#[doc = $doc1])* $(#[cfg($a1)])? $v1(u32), )*
            $( $(#[doc = $doc2])* $(#[cfg($a2)])? $va(u32), $(#[cfg($a2)])? $vb(u32), )*
        }

        /// Every element (something that receives packets or has timed work, with at most
        /// one pending event), identified by its index in the order the scenario created
        /// them: that index orders simultaneous events.
        #[derive(Clone, Debug, Default)]
        pub(crate) struct Elements {
            slots: Vec<Slot>,
            /// The links as the compiler adds them; [`Simulation::prime`]
            /// (crate::Simulation) hands them to the network, which owns them while the
            /// simulation runs.
            links: Vec<Link>,
            pub(crate) caches: Vec<SimCache>,
            pub(crate) routers: Vec<crate::inrpp_router::SimRouter>,
            /// The RCP controllers while the scenario is built (then the network's).
            pub(crate) rcp_links: Vec<crate::rcp_link::SimRcpLink>,
            /// The NDN nodes and consumers (scenarios with `[ndn]`).
            pub(crate) ndn: Option<Box<crate::ndn_node::NdnNet>>,
            $( $(#[doc = $doc1])* $(#[cfg($a1)])? pub(crate) $f1: Vec<$t1>, )*
            $( $(#[doc = $doc2])* $(#[cfg($a2)])? pub(crate) $f2: Vec<$t2>, )*
        }

        $( $(#[cfg($a1)])? impl Kind for $t1 {
            fn add_to(self, elements: &mut Elements) -> u32 {
                elements.$f1.push(self);
                let i = elements.$f1.len() as u32 - 1;
                elements.push(Slot::$v1(i))
            }
        } )*
        $( $(#[cfg($a2)])? impl Kind for $t2 {
            fn add_to(self, elements: &mut Elements) -> u32 {
                elements.$f2.push(self);
                let i = elements.$f2.len() as u32 - 1;
                let first = elements.push(Slot::$va(i));
                elements.push(Slot::$vb(i));
                first
            }
        } )*

        /// `dispatch!(slot, &mut elements, |el, end| body, other => rest)`: `body` with
        /// `el` bound to the endpoint kept at `slot` (as `&mut`, or `&` with `&elements`) and
        /// `end` to its [`End`](crate::element::End); `rest` for the slots that are not
        /// endpoints. One `match`, every arm monomorphic, as `AnyController`'s.
        macro_rules! dispatch {
            ($d slot:expr, &mut $d elements:expr, |$d el:ident, $d end:ident| $d body:expr,
             $d other:pat => $d rest:expr) => {
                match $d slot {
                    $( $(#[cfg($a1)])? $crate::kinds::Slot::$v1(i) => {
                        let $d el = &mut $d elements.$f1[i as usize];
                        let $d end = $crate::element::End::$e1;
                        $d body
                    } )*
                    $(
                        $(#[cfg($a2)])? $crate::kinds::Slot::$va(i) => {
                            let $d el = &mut $d elements.$f2[i as usize];
                            let $d end = $crate::element::End::$ea;
                            $d body
                        }
                        $(#[cfg($a2)])? $crate::kinds::Slot::$vb(i) => {
                            let $d el = &mut $d elements.$f2[i as usize];
                            let $d end = $crate::element::End::$eb;
                            $d body
                        }
                    )*
                    $d other => $d rest,
                }
            };
            ($d slot:expr, & $d elements:expr, |$d el:ident, $d end:ident| $d body:expr,
             $d other:pat => $d rest:expr) => {
                match $d slot {
                    $( $(#[cfg($a1)])? $crate::kinds::Slot::$v1(i) => {
                        let $d el = &$d elements.$f1[i as usize];
                        let $d end = $crate::element::End::$e1;
                        $d body
                    } )*
                    $(
                        $(#[cfg($a2)])? $crate::kinds::Slot::$va(i) => {
                            let $d el = &$d elements.$f2[i as usize];
                            let $d end = $crate::element::End::$ea;
                            $d body
                        }
                        $(#[cfg($a2)])? $crate::kinds::Slot::$vb(i) => {
                            let $d el = &$d elements.$f2[i as usize];
                            let $d end = $crate::element::End::$eb;
                            $d body
                        }
                    )*
                    $d other => $d rest,
                }
            };
        }
        pub(crate) use dispatch;
    };
}

// The endpoint kinds, each with the vector that keeps its values and the element of each
// end. A new kind is one line here (and its own file).
element_kinds! { $
    one end:
        /// UDP sources (cross traffic).
        udp_sources: crate::udp_flow::UdpSource { UdpSource: Source },
        /// UDP sinks.
        udp_sinks: crate::udp_flow::UdpSink { UdpSink: Sink };
    two ends:
        /// TCP flows: a source and a sink, which share the SACK channel.
        tcp_flows: crate::tcp_flow::TcpFlow { TcpSource: Source, TcpSink: Sink },
        /// Multipath connections: the sending end and the receiving end.
        mp_conns: crate::mp_flow::MpConn { MpSource: Source, MpSink: Sink },
        /// mmTP downloads: the subscriber, and one element for every publisher.
        mmtp_conns: crate::mmtp_flow::MmtpConn { MmtpSub: Sink, MmtpPub: Source },
        /// The example kind of `docs/architecture.md`: probes and their echoes.
        #[cfg(test)]
        echoes: crate::echo::EchoFlow { EchoSource: Source, EchoSink: Sink },
        /// TFRC flows on one path (RFC 3448): the sender and the receiver.
        tfrc_flows: crate::tfrc_flow::TfrcFlow { TfrcSource: Source, TfrcSink: Sink },
        /// Multipath TFRC flows (Bilevel or 1/N TFRC): the sender and the receiver.
        mptfrc_flows: crate::mptfrc_flow::MpTfrcFlow { MpTfrcSource: Source, MpTfrcSink: Sink },
        /// Rate-based flows (INRPP hosts', RCP): the sender and the receiver.
        rate_flows: crate::rate_flow::RateFlow { RateSource: Source, RateSink: Sink },
}

impl Elements {
    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }
    fn push(&mut self, slot: Slot) -> u32 {
        self.slots.push(slot);
        (self.slots.len() - 1) as u32
    }
    /// Adds the elements of an endpoint kind's value (one per end, with consecutive
    /// indices) and returns the first one's index.
    pub(crate) fn add(&mut self, value: impl Kind) -> u32 {
        value.add_to(self)
    }
    /// Adds a link and returns its element index.
    pub(crate) fn add_link(&mut self, link: Link) -> u32 {
        self.links.push(link);
        self.push(Slot::Link(self.links.len() as u32 - 1))
    }
    /// Takes the RCP controllers added so far (the network keeps them while the simulation
    /// runs).
    pub(crate) fn take_rcp_links(&mut self) -> Vec<crate::rcp_link::SimRcpLink> {
        std::mem::take(&mut self.rcp_links)
    }
    /// Takes the links added so far (the network keeps them while the simulation runs).
    pub(crate) fn take_links(&mut self) -> Vec<Link> {
        std::mem::take(&mut self.links)
    }
    /// Adds a TCP flow's source and sink and returns their element indices.
    pub(crate) fn add_tcp_flow(&mut self, src: TcpSource, sink: TcpSink) -> (u32, u32) {
        let first = self.add(TcpFlow::new(src, sink));
        (first, first + 1)
    }
    /// Adds a UDP source and returns its element index.
    pub(crate) fn add_udp_source(&mut self, src: UdpSource) -> u32 {
        self.add(src)
    }
    /// Adds a UDP sink and returns its element index.
    pub(crate) fn add_udp_sink(&mut self, sink: UdpSink) -> u32 {
        self.add(sink)
    }
    /// Adds a multipath connection as two elements, its source and its sink; returns their
    /// element indices.
    pub(crate) fn add_mp_conn(&mut self, conn: MpConn) -> (u32, u32) {
        let first = self.add(conn);
        (first, first + 1)
    }
    /// Adds an mmTP download; returns its subscriber's and its publishers' element indices.
    pub(crate) fn add_mmtp_conn(&mut self, conn: MmtpConn) -> (u32, u32) {
        let first = self.add(conn);
        (first, first + 1)
    }
    /// Adds a router's chunk cache and returns its element index.
    pub(crate) fn add_cache(&mut self, cache: SimCache) -> u32 {
        self.caches.push(cache);
        self.push(Slot::Cache(self.caches.len() as u32 - 1))
    }
    /// Adds an INRPP router (its `elem` is set here) and returns its element index.
    pub(crate) fn add_router(&mut self, mut router: crate::inrpp_router::SimRouter) -> u32 {
        router.elem = self.slots.len() as u32;
        self.routers.push(router);
        self.push(Slot::Router(self.routers.len() as u32 - 1))
    }
    /// Adds an RCP controller (its `elem` is set here) and returns its element index.
    pub(crate) fn add_rcp_link(&mut self, mut rcp: crate::rcp_link::SimRcpLink) -> u32 {
        rcp.elem = self.slots.len() as u32;
        self.rcp_links.push(rcp);
        self.push(Slot::Rcp(self.rcp_links.len() as u32 - 1))
    }
    /// Adds an element for NDN node `n` and returns its index.
    pub(crate) fn add_ndn_node(&mut self, n: u32) -> u32 {
        self.push(Slot::Ndn(n))
    }
    /// Adds an element for NDN consumer `c` and returns its index.
    pub(crate) fn add_ndn_consumer(&mut self, c: u32) -> u32 {
        self.push(Slot::NdnApp(c))
    }
    /// The NDN consumer that element `elem` is, if it is one.
    pub(crate) fn ndn_consumer_at(&self, elem: u32) -> Option<&crate::ndn_node::NdnConsumer> {
        self.ndn_consumer(self.slot(elem))
    }
    /// The NDN consumer at `slot`, if it is one.
    fn ndn_consumer(&self, slot: Slot) -> Option<&crate::ndn_node::NdnConsumer> {
        match slot {
            Slot::NdnApp(c) => self.ndn.as_ref().map(|n| &n.consumers[c as usize]),
            _ => None,
        }
    }
    /// Adds the sampler and returns its element index.
    pub(crate) fn add_sampler(&mut self) -> u32 {
        self.push(Slot::Sampler)
    }
    /// Adds the topology manager's element and returns its index.
    pub(crate) fn add_tm(&mut self) -> u32 {
        self.push(Slot::Tm)
    }

    /// Where element `elem` is kept.
    #[inline]
    pub(crate) fn slot(&self, elem: u32) -> Slot {
        self.slots[elem as usize]
    }
    /// The index among the links of element `elem` (link metadata always points at a link).
    pub(crate) fn link_index(&self, elem: u32) -> usize {
        match self.slot(elem) {
            Slot::Link(i) => i as usize,
            s => unreachable!("element {elem} is {s:?}, not a link"),
        }
    }
    /// The TCP source that element `elem` is, if it is one.
    pub(crate) fn tcp_source(&self, elem: u32) -> Option<&TcpSource> {
        match self.slot(elem) {
            Slot::TcpSource(i) => Some(&self.tcp_flows[i as usize].source),
            _ => None,
        }
    }
    /// The rate-based source (INRPP or RCP) that element `elem` is, if it is one.
    pub(crate) fn rate_source(&self, elem: u32) -> Option<&crate::rate_flow::RateSource> {
        match self.slot(elem) {
            Slot::RateSource(i) => Some(&self.rate_flows[i as usize].source),
            _ => None,
        }
    }
    /// The UDP source that element `elem` is, if it is one.
    pub(crate) fn udp_source(&self, elem: u32) -> Option<&UdpSource> {
        match self.slot(elem) {
            Slot::UdpSource(i) => Some(&self.udp_sources[i as usize]),
            _ => None,
        }
    }
    /// The multipath transfer (MPTCP-like connection or mmTP download) that element `elem`
    /// is an end of, if it is one.
    pub(crate) fn multipath(&self, elem: u32) -> Option<Multi<'_>> {
        match self.slot(elem) {
            Slot::MpSource(i) | Slot::MpSink(i) => Some(Multi::Mp(&self.mp_conns[i as usize])),
            Slot::MmtpSub(i) | Slot::MmtpPub(i) => Some(Multi::Mmtp(&self.mmtp_conns[i as usize])),
            Slot::MpTfrcSource(i) | Slot::MpTfrcSink(i) => {
                Some(Multi::MpTfrc(&self.mptfrc_flows[i as usize]))
            }
            _ => None,
        }
    }
    /// When the endpoint `elem`, the receiver of a finite transfer, received its last byte.
    pub(crate) fn completed_at(&self, elem: u32) -> Option<Time> {
        dispatch!(self.slot(elem), &self, |el, end| el.completed_at(end),
            other => self.ndn_consumer(other).and_then(|c| c.completed_at))
    }
    /// Bytes the endpoint `elem` has delivered in order to its application.
    pub(crate) fn delivered(&self, elem: u32) -> u64 {
        dispatch!(self.slot(elem), &self, |el, end| el.delivered(end),
            other => self.ndn_consumer(other).map_or(0, crate::ndn_node::NdnConsumer::delivered))
    }
    /// When the endpoint `elem` first needs its timer, if it is an endpoint.
    pub(crate) fn first_deadline(&self, elem: u32) -> Option<Time> {
        dispatch!(self.slot(elem), &self, |el, end| el.deadline(end), _ => None)
    }
}
