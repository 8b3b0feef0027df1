//! TCP flows (`kind = "tcp"`): single-path connections and multipath ones, each a source and
//! a sink element with their data and ACK routes.

use std::collections::HashSet;

use pathpool_cc::MultipathController;
use pathpool_core::{BufferSize, Dur, Rng, Time};
use pathpool_proto::mptcp::{MpReceiver, MpSender, ReceiveWindowConfig, Scheduler};
use pathpool_proto::tcp::{TcpReceiver, TcpSender, TcpSenderConfig};
use pathpool_topo::{EdgeId, NodeIx};

use super::entry::Entry;
use super::multipath::{multipath_plan, Planned};
use super::net::{flow_paths, FlowPaths, Net};
use super::tcp_params::{
    check_base_subflow, element_tcp_spec, resolve_tcp, single_path_cc, TcpParams,
};
use super::{child, STREAM_OVERHEAD};
use crate::error::{PathSeg, SpecError};
use crate::mp_flow::{MpConn, SubflowPlan};
use crate::overhead::SendOverhead;
use crate::sdn;
use crate::sim::{FlowMeta, Simulation, SubflowMeta};
use crate::spec::{FlowCc, FlowKind, SubflowSpec, TcpFlowSpec, WindowLimit};
use crate::tcp_flow::{TcpSink, TcpSource};

/// Adds a TCP entry's copies: its hosts, times, parameters and paths checked once, then one
/// connection per copy.
pub(super) fn add_tcp_flows(
    sim: &mut Simulation,
    entry: &Entry<'_>,
    f: &TcpFlowSpec,
    base_tcp: &TcpParams,
    ids: &mut HashSet<String>,
) -> Result<(), SpecError> {
    match f.cc {
        Some(FlowCc::Inrpp) => return super::inrpp::add_inrpp_flows(sim, entry, f, base_tcp, ids),
        Some(FlowCc::Rcp) => return super::rcp::add_rcp_flows(sim, entry, f, base_tcp, ids),
        _ => {}
    }
    let cc = f.cc.and_then(FlowCc::window);
    let (net, here) = (entry.net, entry.here());
    let (from, to) = entry.hosts_and_times(sim, &f.common, f.stop)?;
    let params = if f.tcp.is_some() || cc.is_some() {
        let spec = element_tcp_spec(entry.sc, f.tcp.as_ref(), cc);
        resolve_tcp(&spec, &entry.field("tcp"))?
    } else {
        base_tcp.clone()
    };
    let subflows = multipath_plan(net, f, from, to, &here, entry.sc.duration)?;
    match &subflows {
        None => single_path_cc(cc, f.tcp.as_ref(), params.cc, &here)?,
        Some(sfs) => check_base_subflow(&params, f.tcp.as_ref(), sfs.len(), &here)?,
    }
    let paths = match &subflows {
        Some(sfs) => sfs[0].paths.clone(),
        None => flow_paths(
            net,
            from,
            to,
            f.route.as_ref(),
            &here,
            entry.field("route"),
            true,
        )?,
    };
    let seed = entry.seed;
    entry.each_copy(sim, &f.common, ids, |sim, copy| {
        let size = f.size.map(|s| match s {
            BufferSize::Packets(n) => n * params.sender.mss,
            BufferSize::Bytes(b) => b,
        });
        if size == Some(0) {
            return Err(SpecError::at(
                entry.field("size"),
                "a finite flow transfers at least 1 byte",
            ));
        }
        let overhead = SendOverhead::new(
            params.send_overhead,
            Rng::stream(seed, STREAM_OVERHEAD, sim.flows.len() as u64),
        )
        .map(Box::new);
        let ends = FlowEnds {
            id: copy.id,
            from,
            to,
            start: copy.start,
            stop: f.stop.map(|s| Time::ZERO + s),
            size,
            overhead,
        };
        match &subflows {
            Some(sfs) => {
                let window = receive_window(f, params.sender.mss, &here)?;
                let scheduler = f.scheduler.unwrap_or_default();
                let sdn = f.sdn.as_ref().map(|s| s.hold.unwrap_or(SDN_HOLD));
                add_mp_flow(sim, net, ends, (sfs, sdn), scheduler, &params, window);
            }
            None => add_tcp_flow(sim, net, ends, &paths, &params),
        }
        Ok(())
    })
}

/// What every TCP flow, single- or multipath, has.
pub(super) struct FlowEnds {
    pub(super) id: String,
    pub(super) from: NodeIx,
    pub(super) to: NodeIx,
    pub(super) start: Time,
    pub(super) stop: Option<Time>,
    pub(super) size: Option<u64>,
    /// `tcp.send_overhead`'s timer, when on.
    pub(super) overhead: Option<Box<SendOverhead>>,
}

/// A multipath flow's receive window and its mitigations, checked (`None`: unlimited).
fn receive_window(
    f: &TcpFlowSpec,
    mss: u64,
    here: &[PathSeg],
) -> Result<Option<ReceiveWindowConfig>, SpecError> {
    let field = |name: &str| child(here, name);
    match f.receive_buffer {
        Some(WindowLimit::Bytes(b)) if b.bytes() < mss => Err(SpecError::at(
            field("receive_buffer"),
            format!(
                "{}B holds less than one segment (tcp.mss = {mss}B)",
                b.bytes()
            ),
        )),
        Some(WindowLimit::Bytes(b)) => Ok(Some(ReceiveWindowConfig {
            receive_buffer_bytes: b.bytes(),
            opportunistic_retransmission: f.opportunistic_retransmission.unwrap_or(true),
            penalisation: f.penalisation.unwrap_or(true),
        })),
        None | Some(WindowLimit::Unlimited) => {
            for (name, set) in [
                (
                    "opportunistic_retransmission",
                    f.opportunistic_retransmission.is_some(),
                ),
                ("penalisation", f.penalisation.is_some()),
            ] {
                if set {
                    return Err(SpecError::at(
                        field(name),
                        "applies only with a finite receive_buffer (e.g. receive_buffer = \"200KB\"): \
                         an unlimited buffer never blocks a subflow",
                    ));
                }
            }
            Ok(None)
        }
    }
}

/// Adds the data route (to the sink element) and the ACK route (back to the source element) of
/// one path of a TCP connection.
fn add_routes(
    sim: &mut Simulation,
    net: &Net,
    paths: &FlowPaths,
    src: u32,
    sink: u32,
) -> (u32, u32) {
    let back = paths.back.as_ref().expect("TCP flows have a reverse path");
    let data = net.hops_to(&paths.data, sink);
    let ack = net.hops_to(back, src);
    (sim.routes.add(&data), sim.routes.add(&ack))
}

/// What the results say of a TCP connection whose source element is `source` (its sink is the
/// next element).
#[allow(clippy::too_many_arguments)]
fn tcp_flow_meta(
    net: &Net,
    id: String,
    (from, to): (NodeIx, NodeIx),
    (start, stop, size): (Time, Option<Time>, Option<u64>),
    p: &TcpParams,
    source: u32,
    path: Vec<String>,
    subflows: Vec<SubflowMeta>,
    data_route: Option<u32>,
) -> FlowMeta {
    FlowMeta {
        id,
        kind: FlowKind::Tcp,
        from: net.names[from.0 as usize].clone(),
        to: net.names[to.0 as usize].clone(),
        cc: Some(p.cc.name().to_string()),
        loss_recovery: Some(p.sender.loss_recovery()),
        start,
        stop,
        size,
        source,
        sink: source + 1,
        path,
        subflows,
        payload_fraction: p.payload_fraction(),
        data_route,
    }
}

/// How long the SDN controller keeps a connection's status without `sdn.hold` (the thesis:
/// 1-2 s; D337).
const SDN_HOLD: Dur = Dur::from_secs(2);

/// Adds a multipath connection: one source and one sink element for all its subflows, a data
/// and an ACK route per subflow (and one per move), with the SDN controller's groups when
/// `sdn_hold` is given.
pub(super) fn add_mp_flow(
    sim: &mut Simulation,
    net: &Net,
    ends: FlowEnds,
    (subflows, sdn_hold): (&[Planned], Option<Dur>),
    scheduler: Scheduler,
    p: &TcpParams,
    window: Option<ReceiveWindowConfig>,
) {
    let FlowEnds {
        id,
        from,
        to,
        start,
        stop,
        size,
        overhead,
    } = ends;
    let src_elem = sim.elements.len() as u32;
    let sink_elem = src_elem + 1;
    let mut plan = Vec::with_capacity(subflows.len());
    let mut meta = Vec::with_capacity(subflows.len());
    let opens = |sf: &SubflowSpec| sf.start.map_or(start, |s| Time::ZERO + s);
    // With an SDN controller, the groups the host sets as each subflow opens (crate::sdn).
    let regroups = sdn_hold.map(|hold| {
        let setups: Vec<(Time, Vec<EdgeId>)> = subflows
            .iter()
            .map(|s| {
                // Links of infinite rate never queue: no bottleneck to share (D339).
                let queuing = s.paths.data.iter().copied();
                let queuing = queuing.filter(|e| !net.rate[e.0 as usize].is_infinite());
                (opens(&s.spec), queuing.collect())
            })
            .collect();
        sdn::regroups(&setups, hold)
    });
    for (j, s) in subflows.iter().enumerate() {
        let (sf, paths) = (&s.spec, &s.paths);
        let (data_route, ack_route) = add_routes(sim, net, paths, src_elem, sink_elem);
        let sf_start = opens(sf);
        let sf_stop = sf.stop.map(|s| Time::ZERO + s);
        let regroup = regroups.as_ref().map_or(Vec::new(), |r| r[j].clone());
        let group = regroup.first().map_or(sf.group, |&(_, g)| g);
        let moves = s
            .moves
            .iter()
            .map(|(at, to)| {
                let (data, ack) = add_routes(sim, net, to, src_elem, sink_elem);
                (*at, data, ack)
            })
            .collect();
        plan.push(SubflowPlan {
            data_route,
            ack_route,
            group,
            start: sf_start,
            stop: sf_stop,
            regroup,
            moves,
        });
        meta.push(SubflowMeta {
            path: net.node_names(from, &paths.data),
            group,
            start: sf_start,
            stop: sf_stop,
        });
    }
    let cc = p.cc.build_with(p.window, p.options);
    let mut sender = MpSender::new(
        TcpSenderConfig {
            data_bytes: size,
            ..p.sender
        },
        scheduler,
    );
    let mut receiver = MpReceiver::new(p.receiver);
    if let Some(w) = window {
        sender = sender.with_receive_window(w);
        receiver = receiver.with_receive_buffer(w.receive_buffer_bytes);
    }
    let header = p.header as u32;
    let conn = MpConn::new(
        sender, cc, receiver, plan, header, start, stop, size, overhead,
    );
    assert_eq!(sim.elements.add_mp_conn(conn), (src_elem, sink_elem));
    let path = meta[0].path.clone();
    sim.flows.push(tcp_flow_meta(
        net,
        id,
        (from, to),
        (start, stop, size),
        p,
        src_elem,
        path,
        meta,
        None,
    ));
}

/// Adds a single-path connection: source and sink elements, data and ACK routes.
pub(super) fn add_tcp_flow(
    sim: &mut Simulation,
    net: &Net,
    ends: FlowEnds,
    paths: &FlowPaths,
    p: &TcpParams,
) {
    let FlowEnds {
        id,
        from,
        to,
        start,
        stop,
        size,
        overhead,
    } = ends;
    let src_elem = sim.elements.len() as u32;
    let sink_elem = src_elem + 1;
    let (data_route, ack_route) = add_routes(sim, net, paths, src_elem, sink_elem);

    let mut cc = p.cc.build_with(p.window, p.options);
    let path = cc.add_path(p.sender.mss);
    let sender = TcpSender::new(
        TcpSenderConfig {
            data_bytes: size,
            ..p.sender
        },
        path,
    );
    let header = p.header as u32;
    let src = TcpSource::new(sender, cc, data_route, header, start, stop, overhead);
    let sink = TcpSink::new(TcpReceiver::new(p.receiver), ack_route, header, size);
    assert_eq!(sim.elements.add_tcp_flow(src, sink), (src_elem, sink_elem));
    let path = net.node_names(from, &paths.data);
    sim.flows.push(tcp_flow_meta(
        net,
        id,
        (from, to),
        (start, stop, size),
        p,
        src_elem,
        path,
        Vec::new(),
        Some(data_route),
    ));
}

#[cfg(test)]
mod tests {
    use super::super::testing::{compile, diamond, error, ids};
    use pathpool_core::Time;

    fn flow(extra: &str) -> String {
        diamond(&format!("[[flows]]\nfrom = \"a\"\nto = \"b\"\n{extra}"))
    }

    #[test]
    fn a_tcp_flow_is_a_source_and_a_sink_with_its_parameters() {
        let sim = compile(&flow(
            "id = \"f\"\nsize = \"10pkts\"\nstart = \"1s\"\nstop = \"5s\"\ntcp = { mss = \"1000B\", sack = true }",
        ));
        let f = &sim.flows[0];
        assert_eq!(ids(&sim), ["f"]);
        assert_eq!((f.from.as_str(), f.to.as_str()), ("a", "b"));
        assert_eq!(f.size, Some(10_000), "10 segments of the flow's own mss");
        assert_eq!(f.cc.as_deref(), Some("newreno"));
        assert_eq!(f.start, Time::from_secs(1));
        assert_eq!(f.stop, Some(Time::from_secs(5)));
        assert_eq!(f.sink, f.source + 1);
        assert!(f.subflows.is_empty());
        let e = error(&flow("size = \"0B\""));
        assert_eq!(e, "flows[0].size: a finite flow transfers at least 1 byte");
    }

    #[test]
    fn copies_of_a_multipath_entry_are_connections_of_their_own() {
        let sim = compile(&flow(
            "count = 2\ncc = \"lia\"\npaths = [[\"a\", \"r1\", \"b\"], [\"a\", \"r2\", \"b\"]]\nscheduler = \"round-robin\"",
        ));
        assert_eq!(ids(&sim), ["flow0.0", "flow0.1"]);
        assert!(sim.flows.iter().all(|f| f.subflows.len() == 2));
        assert!(sim.flows.iter().all(|f| f.cc.as_deref() == Some("lia")));
        assert_eq!(sim.flows[1].source, sim.flows[0].sink + 1);
    }

    #[test]
    fn the_receive_buffer_holds_a_segment_and_its_mitigations_need_one() {
        let mp = |extra: &str| flow(&format!("paths = [[\"a\", \"r1\", \"b\"]]\n{extra}"));
        compile(&mp("receive_buffer = \"64KB\"\npenalisation = false"));
        compile(&mp("receive_buffer = \"unlimited\""));
        let e = error(&mp("receive_buffer = \"1000B\""));
        assert_eq!(
            e,
            "flows[0].receive_buffer: 1000B holds less than one segment (tcp.mss = 1460B)"
        );
        let e = error(&mp("opportunistic_retransmission = false"));
        assert!(
            e.starts_with(
                "flows[0].opportunistic_retransmission: applies only with a finite receive_buffer"
            ),
            "{e}"
        );
        let e = error(&mp("receive_buffer = \"unlimited\"\npenalisation = true"));
        assert!(
            e.starts_with("flows[0].penalisation: applies only with a finite receive_buffer"),
            "{e}"
        );
    }
}
