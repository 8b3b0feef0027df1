//! UDP flows (`kind = "udp-cbr"` and `"udp-onoff"`): a source sending datagrams at a rate
//! (while on) and a sink that counts them, on a data route only.

use std::collections::HashSet;

use pathpool_core::{Dur, Rate, Rng, Time};
use pathpool_topo::{EdgeId, NodeIx};

use super::entry::Entry;
use super::net::{flow_paths, Net};
use super::{MAX_PACKET_BYTES, STREAM_UDP};
use crate::error::SpecError;
use crate::sim::{FlowMeta, Simulation};
use crate::spec::{FlowKind, PeriodDist, UdpFlowSpec, UdpOnoffFlowSpec};
use crate::udp_flow::{Periods, UdpSink, UdpSource, UDP_HEADER_BYTES};

/// Adds a UDP entry's copies (`onoff`: its on/off part, for `kind = "udp-onoff"`).
pub(super) fn add_udp_flows(
    sim: &mut Simulation,
    entry: &Entry<'_>,
    f: &UdpFlowSpec,
    onoff: Option<&UdpOnoffFlowSpec>,
    ids: &mut HashSet<String>,
) -> Result<(), SpecError> {
    let net = entry.net;
    let (from, to) = entry.hosts_and_times(sim, &f.common, f.stop)?;
    let paths = flow_paths(
        net,
        from,
        to,
        f.route.as_ref(),
        &entry.here(),
        entry.field("route"),
        false,
    )?;
    let kind = if onoff.is_some() {
        FlowKind::UdpOnoff
    } else {
        FlowKind::UdpCbr
    };
    entry.each_copy(sim, &f.common, ids, |sim, copy| {
        let (rate, size, periods) = udp_params(entry, f, onoff)?;
        let stop = f.stop.map_or(sim.end, |s| Time::ZERO + s);
        let flow = UdpFlow {
            id: copy.id,
            kind,
            from,
            to,
            rate,
            size,
            periods,
            start: copy.start,
            stop,
        };
        add_udp_flow(sim, net, flow, &paths.data, entry.seed);
        Ok(())
    })
}

/// A UDP flow's rate, datagram size and periods, checked.
fn udp_params(
    entry: &Entry<'_>,
    f: &UdpFlowSpec,
    onoff: Option<&UdpOnoffFlowSpec>,
) -> Result<(Rate, u32, Periods), SpecError> {
    let rate = f.rate.ok_or_else(|| {
        SpecError::at(
            entry.field("rate"),
            "a UDP flow needs a rate, e.g. rate = \"5Mbps\"",
        )
    })?;
    if rate.bps() == 0 || rate.is_infinite() {
        return Err(SpecError::at(
            entry.field("rate"),
            "must be positive and finite",
        ));
    }
    let size = f.packet_size.map_or(1500, |b| b.bytes());
    if size <= u64::from(UDP_HEADER_BYTES) || size > MAX_PACKET_BYTES {
        return Err(SpecError::at(
            entry.field("packet_size"),
            format!("must be between {}B and 1048575B", UDP_HEADER_BYTES + 1),
        ));
    }
    let periods = match onoff {
        Some(o) => {
            let on = o.on.ok_or_else(|| {
                SpecError::at(
                    entry.field("on"),
                    "an on-off flow needs a mean on period, e.g. on = \"1s\"",
                )
            })?;
            let off = o.off.ok_or_else(|| {
                SpecError::at(
                    entry.field("off"),
                    "an on-off flow needs a mean off period, e.g. off = \"1s\"",
                )
            })?;
            if on == Dur::ZERO {
                return Err(SpecError::at(entry.field("on"), "must be positive"));
            }
            Periods::OnOff {
                on,
                off,
                exponential: o.periods == PeriodDist::Exponential,
            }
        }
        None => Periods::AlwaysOn,
    };
    Ok((rate, size as u32, periods))
}

/// One UDP flow, checked.
struct UdpFlow {
    id: String,
    kind: FlowKind,
    from: NodeIx,
    to: NodeIx,
    rate: Rate,
    size: u32,
    periods: Periods,
    start: Time,
    stop: Time,
}

/// Adds a UDP flow: source and sink elements and the data route.
fn add_udp_flow(sim: &mut Simulation, net: &Net, flow: UdpFlow, data: &[EdgeId], seed: u64) {
    let UdpFlow {
        id,
        kind,
        from,
        to,
        rate,
        size,
        periods,
        start,
        stop,
    } = flow;
    let src_elem = sim.elements.len() as u32;
    let sink_elem = src_elem + 1;
    let route = sim.routes.add(&net.hops_to(data, sink_elem));
    let rng = Rng::stream(seed, STREAM_UDP, sim.flows.len() as u64);
    let interval = rate.tx_time(u64::from(size));
    let src = UdpSource::new(
        route,
        size,
        interval,
        periods,
        rng,
        start,
        stop.min(sim.end),
    );
    assert_eq!(sim.elements.add_udp_source(src), src_elem);
    assert_eq!(sim.elements.add_udp_sink(UdpSink::default()), sink_elem);
    sim.flows.push(FlowMeta {
        id,
        kind,
        from: net.names[from.0 as usize].clone(),
        to: net.names[to.0 as usize].clone(),
        cc: None,
        loss_recovery: None,
        start,
        stop: Some(stop).filter(|&s| s < sim.end),
        size: None,
        source: src_elem,
        sink: sink_elem,
        path: net.node_names(from, data),
        subflows: Vec::new(),
        // A datagram's payload is its size less the IP and UDP headers (docs/metrics.md).
        payload_fraction: f64::from(size.saturating_sub(28)) / f64::from(size.max(1)),
        data_route: None,
    });
}

#[cfg(test)]
mod tests {
    use super::super::testing::{compile, error, ids, line};
    use crate::spec::FlowKind;
    use pathpool_core::Time;

    fn udp(kind: &str, extra: &str) -> String {
        line(&format!(
            "[[flows]]\nkind = \"{kind}\"\nfrom = \"a\"\nto = \"b\"\n{extra}"
        ))
    }

    #[test]
    fn udp_flows_keep_their_kind_and_stop_at_the_end_of_the_run_at_the_latest() {
        let sim = compile(&udp("udp-cbr", "rate = \"1Mbps\"\ncount = 2"));
        assert_eq!(ids(&sim), ["flow0.0", "flow0.1"]);
        let f = &sim.flows[0];
        assert_eq!(f.kind, FlowKind::UdpCbr);
        assert_eq!((f.cc.as_deref(), f.size, f.stop), (None, None, None));
        assert_eq!(f.path, ["a", "r", "b"]);
        let sim = compile(&udp(
            "udp-onoff",
            "rate = \"1Mbps\"\non = \"1s\"\noff = \"1s\"\nstop = \"4s\"",
        ));
        assert_eq!(sim.flows[0].kind, FlowKind::UdpOnoff);
        assert_eq!(sim.flows[0].stop, Some(Time::from_secs(4)));
    }

    #[test]
    fn rates_sizes_and_periods_are_checked() {
        let cases = [
            (
                "udp-cbr",
                "",
                "flows[0].rate: a UDP flow needs a rate, e.g. rate = \"5Mbps\"",
            ),
            (
                "udp-cbr",
                "rate = \"inf\"",
                "flows[0].rate: must be positive and finite",
            ),
            (
                "udp-cbr",
                "rate = \"1Mbps\"\npacket_size = \"28B\"",
                "flows[0].packet_size: must be between 29B and 1048575B",
            ),
            (
                "udp-onoff",
                "rate = \"1Mbps\"\noff = \"1s\"",
                "flows[0].on: an on-off flow needs a mean on period, e.g. on = \"1s\"",
            ),
            (
                "udp-onoff",
                "rate = \"1Mbps\"\non = \"1s\"",
                "flows[0].off: an on-off flow needs a mean off period, e.g. off = \"1s\"",
            ),
            (
                "udp-onoff",
                "rate = \"1Mbps\"\non = \"0s\"\noff = \"1s\"",
                "flows[0].on: must be positive",
            ),
        ];
        for (kind, extra, want) in cases {
            assert_eq!(error(&udp(kind, extra)), want, "{kind}: {extra}");
        }
    }
}
