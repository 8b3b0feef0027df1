//! What INRPP's and RCP's flows share when they are built (issue 21): the size check, the
//! rate-based sender and the receiver acknowledging every segment, the element and the
//! flow's metadata. Each protocol builds its own routes first.

use pathpool_proto::rate_sender::{RateSender, RateSenderConfig};
use pathpool_proto::tcp::{TcpReceiver, TcpReceiverConfig};

use std::collections::HashSet;

use pathpool_core::{BufferSize, Time};

use super::entry::Entry;
use super::net::{flow_paths, FlowPaths, Net};
use super::tcp::FlowEnds;
use super::tcp_params::{element_tcp_spec, resolve_tcp, TcpParams};
use crate::error::{PathSeg, SpecError};
use crate::packet::INRPP_MAX_BYTES;
use crate::rate_flow::{HostShare, RateFlow, RateProto, RateSink, RateSource};
use crate::sim::{FlowMeta, Simulation};
use crate::spec::{FlowCc, FlowKind, TcpFlowSpec};

/// A TCP entry whose `cc` is a rate-based transport (INRPP's host or RCP): refused with
/// `paths`, `subflows` or `k_paths` (`why` says why it is single-path); its hosts, times,
/// parameters, path and size checked once, then `add_one` for each copy.
pub(super) fn add_rate_entry(
    sim: &mut Simulation,
    entry: &Entry<'_>,
    f: &TcpFlowSpec,
    base_tcp: &TcpParams,
    ids: &mut HashSet<String>,
    why: &str,
    mut add_one: impl FnMut(
        &mut Simulation,
        &Net,
        FlowEnds,
        &FlowPaths,
        &TcpParams,
        &[PathSeg],
    ) -> Result<(), SpecError>,
) -> Result<(), SpecError> {
    let (net, here) = (entry.net, entry.here());
    if f.paths.is_some() || f.subflows.is_some() || f.k_paths.is_some() {
        return Err(SpecError::at(
            entry.field("cc"),
            format!("{why}: give no paths, subflows or k_paths, or choose a multipath cc"),
        ));
    }
    let (from, to) = entry.hosts_and_times(sim, &f.common, f.stop)?;
    let params = match &f.tcp {
        Some(_) => resolve_tcp(
            &element_tcp_spec(entry.sc, f.tcp.as_ref(), None),
            &entry.field("tcp"),
        )?,
        None => base_tcp.clone(),
    };
    let paths = flow_paths(
        net,
        from,
        to,
        f.route.as_ref(),
        &here,
        entry.field("route"),
        true,
    )?;
    let size = f.size.map(|s| match s {
        BufferSize::Packets(n) => n * params.sender.mss,
        BufferSize::Bytes(b) => b,
    });
    let size_field = entry.field("size");
    entry.each_copy(sim, &f.common, ids, |sim, copy| {
        let ends = FlowEnds {
            id: copy.id,
            from,
            to,
            start: copy.start,
            stop: f.stop.map(|s| Time::ZERO + s),
            size,
            overhead: None,
        };
        add_one(sim, net, ends, &paths, &params, &size_field)
    })
}

/// Checks a rate-based flow's size (1 to 2^40 bytes: its sequence numbers share the packet
/// with the protocol's header, D282, D294), reporting at `size_field`.
pub(super) fn check_size(
    size: Option<u64>,
    cc: FlowCc,
    size_field: &[PathSeg],
) -> Result<(), SpecError> {
    if size == Some(0) || size.is_some_and(|s| s > INRPP_MAX_BYTES) {
        return Err(SpecError::at(
            size_field.to_vec(),
            format!(
                "an {} flow transfers 1 to {INRPP_MAX_BYTES} bytes",
                cc.name().to_uppercase()
            ),
        ));
    }
    Ok(())
}

/// Adds a rate-based flow whose data and ACK routes start at `data_start` and `ack_start`
/// (built for the element indices `sim.elements.len()` and the next, the source and the
/// sink); the sender starts at the rate of its first (access) link, which an INRPP host's
/// flows share.
pub(super) fn add_rate_flow(
    sim: &mut Simulation,
    net: &Net,
    ends: FlowEnds,
    paths: &FlowPaths,
    params: &TcpParams,
    proto: RateProto,
    (data_start, ack_start): (u32, u32),
) {
    let FlowEnds {
        id,
        from,
        to,
        start,
        stop,
        size,
        overhead: _,
    } = ends;
    let access_bps = net.rate[paths.data[0].0 as usize].bps() as f64;
    let mut sender = RateSender::new(
        RateSenderConfig {
            mss: params.sender.mss as u32,
            header_bytes: params.header as u32,
            rtt: params.sender.rtt,
        },
        access_bps,
    );
    sender.push_data(size.unwrap_or(INRPP_MAX_BYTES));
    // Every segment acknowledged: delayed ACKs would halve INRPP's ACK pacing in closed loop
    // and RCP's echoes.
    let receiver = TcpReceiver::new(TcpReceiverConfig {
        delayed_ack: false,
        ..params.receiver
    });
    let header = params.header as u32;
    // An INRPP host's flows share its access rate (D303); RCP's links share theirs.
    let share = (proto == RateProto::Inrpp).then(|| HostShare::new(from.0, access_bps));
    let src_elem = sim.elements.add(RateFlow {
        source: RateSource::new(sender, proto, share, data_start, header, start),
        sink: RateSink::new(receiver, proto, ack_start, header, size),
    });
    let cc = match proto {
        RateProto::Inrpp => FlowCc::Inrpp,
        RateProto::Rcp { .. } => FlowCc::Rcp,
    };
    sim.flows.push(FlowMeta {
        id,
        kind: FlowKind::Tcp,
        from: net.names[from.0 as usize].clone(),
        to: net.names[to.0 as usize].clone(),
        cc: Some(cc.name().into()),
        loss_recovery: Some("rto"),
        start,
        stop,
        size,
        source: src_elem,
        sink: src_elem + 1,
        path: net.node_names(from, &paths.data),
        subflows: Vec::new(),
        payload_fraction: params.payload_fraction(),
        data_route: Some(data_start),
    });
}
