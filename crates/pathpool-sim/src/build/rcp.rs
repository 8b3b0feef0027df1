//! RCP (issue 21): a TCP entry with `cc = "rcp"` is an RCP flow ([`add_rcp_flows`]); every
//! finite-rate link its data cross gets one RCP controller, shared by all the RCP flows on
//! that link, with the constants of `[rcp]` ([`rcp_params`]).

use std::collections::HashSet;

use pathpool_core::{Dur, Time};
use pathpool_proto::rcp::{RcpLink, RcpParams};
use pathpool_topo::EdgeId;

use super::entry::Entry;
use super::net::{FlowPaths, Net};
use super::rate::{add_rate_entry, add_rate_flow, check_size};
use super::tcp::FlowEnds;
use super::tcp_params::TcpParams;
use super::{at, k};
use crate::error::{PathSeg, SpecError};
use crate::rate_flow::RateProto;
use crate::rcp_link::SimRcpLink;
use crate::sim::Simulation;
use crate::spec::{FlowCc, Scenario, TcpFlowSpec};

/// RCP's constants from `[rcp]` (defaults where absent), checked; and the RTT a sender's
/// packets carry before its first sample.
pub(super) fn rcp_params(sc: &Scenario) -> Result<(RcpParams, Dur), SpecError> {
    let spec = sc.rcp.clone().unwrap_or_default();
    let field = |name: &str| at(&[k("rcp"), k(name)]);
    let d = RcpParams::PAPER;
    let alpha = spec.alpha.unwrap_or(d.alpha);
    if !(alpha > 0.0 && alpha.is_finite()) {
        return Err(SpecError::at(
            field("alpha"),
            format!("{alpha} is not a positive number"),
        ));
    }
    let beta = spec.beta.unwrap_or(d.beta);
    if !(beta >= 0.0 && beta.is_finite()) {
        return Err(SpecError::at(
            field("beta"),
            format!("{beta} is not a number at least 0"),
        ));
    }
    let initial = spec.initial_rate.unwrap_or(d.initial_rate_fraction);
    if !(initial > 0.0 && initial <= 1.0) {
        return Err(SpecError::at(
            field("initial_rate"),
            format!("{initial} is not a fraction of the link's rate in (0, 1]"),
        ));
    }
    let min_rate = spec.min_rate.map_or(d.min_rate_bps, |r| r.bps() as f64);
    if !(min_rate > 0.0 && min_rate.is_finite()) {
        return Err(SpecError::at(
            field("min_rate"),
            "must be a positive, finite rate (a link at rate 0 would never rise again)",
        ));
    }
    let positive = |name: &str, v: Option<Dur>, default: Dur| {
        let v = v.unwrap_or(default);
        if v == Dur::ZERO {
            Err(SpecError::at(field(name), "must be positive"))
        } else {
            Ok(v)
        }
    };
    let params = RcpParams {
        alpha,
        beta,
        interval: positive("interval", spec.interval, d.interval)?,
        min_rate_bps: min_rate,
        initial_rate_fraction: initial,
        initial_rtt: positive("initial_rtt", spec.initial_rtt, d.initial_rtt)?,
    };
    Ok((params, spec.first_rtt.unwrap_or(Dur::ZERO)))
}

/// The RCP controller of link `e` (created on first use); `None` for a link of infinite
/// rate, which never limits a flow.
fn controller(sim: &mut Simulation, net: &Net, params: RcpParams, e: EdgeId) -> Option<u32> {
    let rate = net.rate[e.0 as usize];
    if rate.is_infinite() {
        return None;
    }
    let link_elem = net.elem[e.0 as usize];
    if let Some(&c) = sim.rcp_of_link.get(&link_elem) {
        return Some(c);
    }
    let elem = sim.elements.add_rcp_link(SimRcpLink::new(
        link_elem,
        RcpLink::new(params, rate.bps() as f64, Time::ZERO, 0),
    ));
    sim.rcp_of_link.insert(link_elem, elem);
    Some(elem)
}

/// A TCP entry with `cc = "rcp"`: single-path RCP flows, one per copy ([`add_rcp_flow`]).
pub(super) fn add_rcp_flows(
    sim: &mut Simulation,
    entry: &Entry<'_>,
    f: &TcpFlowSpec,
    base_tcp: &TcpParams,
    ids: &mut HashSet<String>,
) -> Result<(), SpecError> {
    let rcp = rcp_params(entry.sc)?;
    add_rate_entry(
        sim,
        entry,
        f,
        base_tcp,
        ids,
        "\"rcp\" is a single-path transport",
        |sim, net, ends, paths, params, size_field| {
            add_rcp_flow(sim, net, ends, paths, params, rcp, size_field)
        },
    )
}

/// Adds one RCP flow on `paths`, paced at the rate its ACKs echo, with the controllers of
/// the links its data cross (`rcp`: [`rcp_params`]); a size out of range is reported at
/// `size_field`.
pub(super) fn add_rcp_flow(
    sim: &mut Simulation,
    net: &Net,
    ends: FlowEnds,
    paths: &FlowPaths,
    params: &TcpParams,
    (rcp, first_rtt): (RcpParams, Dur),
    size_field: &[PathSeg],
) -> Result<(), SpecError> {
    check_size(ends.size, FlowCc::Rcp, size_field)?;
    let back = paths.back.as_ref().expect("RCP flows have a reverse path");
    // The controllers first (each new one is an element), then the flow's two.
    let controllers: Vec<Option<u32>> = paths
        .data
        .iter()
        .map(|&e| controller(sim, net, rcp, e))
        .collect();
    let src_elem = sim.elements.len() as u32;
    let mut data = Vec::with_capacity(paths.data.len() * 2 + 1);
    for (&e, c) in paths.data.iter().zip(controllers) {
        data.extend(c);
        data.push(net.elem[e.0 as usize]);
    }
    data.push(src_elem + 1);
    let mut ack: Vec<u32> = back.iter().map(|e| net.elem[e.0 as usize]).collect();
    ack.push(src_elem);
    let routes = (sim.routes.add(&data), sim.routes.add(&ack));
    add_rate_flow(
        sim,
        net,
        ends,
        paths,
        params,
        RateProto::Rcp { first_rtt },
        routes,
    );
    Ok(())
}
