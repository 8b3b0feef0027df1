//! TFRC flows (`kind = "tfrc"`): RFC 3448's sender and receiver (`pathpool-cc`) on one
//! path, data one way and feedback back, with the scenario's `[tfrc]` parameters.

use std::collections::HashSet;

use pathpool_cc::{HistoryMode, TfrcReceiver, TfrcReceiverConfig, TfrcSender, TfrcSenderConfig};
use pathpool_core::Time;

use super::entry::Entry;
use super::net::flow_paths;
use super::{k, MAX_PACKET_BYTES};
use crate::error::SpecError;
use crate::sim::{FlowMeta, Simulation};
use crate::spec::{FlowKind, TfrcFlowSpec, TfrcHistory, TfrcSpec};
use crate::tfrc_flow::TfrcFlow;
use crate::udp_flow::UDP_HEADER_BYTES;

/// Packet size when neither the flow nor `[tfrc]` gives one (Tse's runs: 1000-byte packets).
const DEFAULT_PACKET_BYTES: u64 = 1000;

/// The `[tfrc]` table, checked: the receiver's options and the default packet size.
pub(super) struct TfrcParams {
    receiver: TfrcReceiverConfig,
    packet_bytes: u64,
}

fn check_packet_size(bytes: u64, at: Vec<crate::error::PathSeg>) -> Result<u64, SpecError> {
    if bytes <= u64::from(UDP_HEADER_BYTES) || bytes > MAX_PACKET_BYTES {
        return Err(SpecError::at(
            at,
            format!("must be between {}B and 1048575B", UDP_HEADER_BYTES + 1),
        ));
    }
    Ok(bytes)
}

/// Checks a scenario's `[tfrc]` table.
pub(super) fn resolve_tfrc(t: &TfrcSpec) -> Result<TfrcParams, SpecError> {
    let field = |name: &str| vec![k("tfrc"), k(name)];
    let packet_bytes = check_packet_size(
        t.packet_size.map_or(DEFAULT_PACKET_BYTES, |b| b.bytes()),
        field("packet_size"),
    )?;
    let defaults = TfrcReceiverConfig::default();
    let loss_intervals = t
        .loss_intervals
        .map_or(defaults.loss_intervals, |n| n as usize);
    if loss_intervals < 2 || loss_intervals % 2 != 0 {
        return Err(SpecError::at(
            field("loss_intervals"),
            format!("{loss_intervals}: must be an even number of at least 2 (RFC 3448 §5.4: 8)"),
        ));
    }
    let history_slots = t.history_slots.unwrap_or(defaults.history_slots as u64);
    if history_slots == 0 || history_slots > 100_000_000 {
        return Err(SpecError::at(
            field("history_slots"),
            "must be between 1 and 100000000",
        ));
    }
    let history = match t.history.unwrap_or_default() {
        TfrcHistory::WrapSafe => HistoryMode::WrapSafe,
        TfrcHistory::FixedArray => HistoryMode::FixedArray,
    };
    Ok(TfrcParams {
        receiver: TfrcReceiverConfig {
            history,
            history_slots: history_slots as usize,
            loss_intervals,
            ..defaults
        },
        packet_bytes,
    })
}

/// Adds a TFRC entry's copies.
pub(super) fn add_tfrc_flows(
    sim: &mut Simulation,
    entry: &Entry<'_>,
    f: &TfrcFlowSpec,
    params: &TfrcParams,
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
        true,
    )?;
    let size_bytes = match f.packet_size {
        Some(b) => check_packet_size(b.bytes(), entry.field("packet_size"))?,
        None => params.packet_bytes,
    };
    let back = paths
        .back
        .as_ref()
        .expect("TFRC flows ask for a reverse path");
    entry.each_copy(sim, &f.common, ids, |sim, copy| {
        let stop = f.stop.map_or(sim.end, |s| Time::ZERO + s).min(sim.end);
        let source = sim.elements.len() as u32;
        let sink = source + 1;
        let mut hops: Vec<u32> = paths.data.iter().map(|e| net.elem[e.0 as usize]).collect();
        hops.push(sink);
        let data_route = sim.routes.add(&hops);
        let mut hops: Vec<u32> = back.iter().map(|e| net.elem[e.0 as usize]).collect();
        hops.push(source);
        let feedback_route = sim.routes.add(&hops);
        let sender_cfg = TfrcSenderConfig {
            segment_bytes: size_bytes,
            ..TfrcSenderConfig::default()
        };
        let sender = TfrcSender::new(sender_cfg, copy.start);
        let receiver = TfrcReceiver::new(params.receiver.clone())
            .map_err(|e| SpecError::at(vec![k("tfrc"), k("loss_intervals")], e.to_string()))?;
        let flow = TfrcFlow::new(
            data_route,
            feedback_route,
            size_bytes as u32,
            stop,
            sender,
            receiver,
        );
        assert_eq!(sim.elements.add(flow), source);
        sim.flows.push(FlowMeta {
            id: copy.id,
            kind: FlowKind::Tfrc,
            from: net.names[from.0 as usize].clone(),
            to: net.names[to.0 as usize].clone(),
            cc: None,
            loss_recovery: None,
            start: copy.start,
            stop: Some(stop).filter(|&s| s < sim.end),
            size: None,
            source,
            sink,
            path: net.node_names(from, &paths.data),
            subflows: Vec::new(),
            // A TFRC packet's bytes all count as received (`TfrcFlow::delivered`).
            payload_fraction: 1.0,
        });
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use pathpool_cc::tfrc_rate_bytes_per_s;
    use pathpool_core::Dur;

    use super::super::testing::{compile_seed, error};
    use crate::spec::FlowKind;

    /// Hosts `a` and `b` through router `r`, 100 Mb/s and 10 ms per link, Bernoulli loss
    /// `loss` on `a`–`r`; one TFRC flow from `a` to `b`, and `extra`.
    fn scenario(loss: f64, flow: &str, extra: &str) -> String {
        format!(
            r#"duration = "200s"
            [nodes]
            hosts = ["a", "b"]
            routers = ["r"]
            [[links]]
            between = ["a", "r"]
            rate = "100Mbps"
            delay = "10ms"
            loss = {loss}
            [[links]]
            between = ["r", "b"]
            rate = "100Mbps"
            delay = "10ms"
            [[flows]]
            kind = "tfrc"
            from = "a"
            to = "b"
            {flow}
            {extra}"#
        )
    }

    /// Issue 20, acceptance 3, through a scenario file: TFRC alone with 1% Bernoulli loss
    /// (on both directions of the first link, so feedback is lost too) within ±25% of the
    /// equation at p and the base RTT.
    #[test]
    fn a_tfrc_flow_runs_from_a_scenario() {
        let mut sim = compile_seed(&scenario(0.01, "", ""), 3);
        assert_eq!(sim.flows[0].kind, FlowKind::Tfrc);
        assert_eq!(sim.flows[0].path, ["a", "r", "b"]);
        sim.run_until(pathpool_core::Time::from_secs(50));
        let before = sim.elements.tfrc_flows[0].received_bytes;
        sim.run();
        let got = (sim.elements.tfrc_flows[0].received_bytes - before) as f64 / 150.0;
        // 40 ms of propagation, 1000 B twice and 44 B twice at 100 Mb/s.
        let base_rtt = Dur::from_ms(40) + Dur::from_ns(2 * 80_000 + 2 * 3_520);
        let want = tfrc_rate_bytes_per_s(1000, base_rtt, 0.01);
        let ratio = got / want;
        eprintln!("scenario, p = 0.01: {got:.0} B/s, equation {want:.0} B/s, ratio {ratio:.3}");
        assert!((0.75..=1.25).contains(&ratio), "ratio {ratio}");
    }

    #[test]
    fn tfrc_parameters_are_checked() {
        let cases = [
            (
                "",
                "[tfrc]\nloss_intervals = 7",
                "tfrc.loss_intervals: 7: must be an even number of at least 2 (RFC 3448 §5.4: 8)",
            ),
            (
                "",
                "[tfrc]\nhistory_slots = 0",
                "tfrc.history_slots: must be between 1 and 100000000",
            ),
            (
                "",
                "[tfrc]\npacket_size = \"20B\"",
                "tfrc.packet_size: must be between 29B and 1048575B",
            ),
            (
                "packet_size = \"2MB\"",
                "",
                "flows[0].packet_size: must be between 29B and 1048575B",
            ),
        ];
        for (flow, extra, want) in cases {
            assert_eq!(error(&scenario(0.0, flow, extra)), want, "{flow} {extra}");
        }
        // The fixed-array history and a flow's own packet size are accepted.
        let sim = compile_seed(
            &scenario(
                0.0,
                "packet_size = \"500B\"",
                "[tfrc]\nhistory = \"fixed-array\"",
            ),
            1,
        );
        assert_eq!(sim.flows.len(), 1);
    }
}
