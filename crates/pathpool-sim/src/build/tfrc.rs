//! TFRC flows (`kind = "tfrc"`): RFC 3448's sender and receiver (`pathpool-cc`) on one
//! path, data one way and feedback back, or multipath TFRC (`pathpool-proto`'s `mptfrc`:
//! Bilevel or 1/N TFRC) on the flow's `paths` or `subflows`, with the scenario's `[tfrc]`
//! parameters and the flow's own `tfrc` table over them.

use std::collections::HashSet;

use pathpool_cc::{
    BilevelConfig, HistoryMode, LossCombination, MasterRtt, NominalCap, RecvCap, TfrcReceiver,
    TfrcReceiverConfig, TfrcSender, TfrcSenderConfig,
};
use pathpool_core::Time;
use pathpool_proto::mptfrc::{
    FirstInterval, MpTfrcConfig, MpTfrcReceiver, MpTfrcSender, MultipathTfrc, ResendSubflow,
};

use super::entry::Entry;
use super::multipath::{multipath_plan, Planned};
use super::net::flow_paths;
use super::{child, k, MAX_PACKET_BYTES};
use crate::error::{PathSeg, SpecError};
use crate::mptfrc_flow::MpTfrcFlow;
use crate::sim::{FlowMeta, Simulation, SubflowMeta};
use crate::spec::{
    FlowKind, TcpFlowSpec, TfrcFirstInterval, TfrcFlowSpec, TfrcHistory, TfrcLossCombination,
    TfrcMasterRtt, TfrcMultipath, TfrcNominalCap, TfrcRecvCap, TfrcResendOn, TfrcSpec,
    TFRC_MULTIPATH_FIELDS,
};
use crate::tfrc_flow::TfrcFlow;
use crate::udp_flow::UDP_HEADER_BYTES;

/// Packet size when neither the flow nor `[tfrc]` gives one (Tse's runs: 1000-byte packets).
const DEFAULT_PACKET_BYTES: u64 = 1000;

/// A `[tfrc]` table (or a flow's over it), checked: the receiver's options, the default
/// packet size and multipath TFRC's options.
pub(super) struct TfrcParams {
    receiver: TfrcReceiverConfig,
    packet_bytes: u64,
    multipath: MultipathParams,
}

/// Multipath TFRC's options.
struct MultipathParams {
    mode: TfrcMultipath,
    master_rtt: MasterRtt,
    loss_combination: LossCombination,
    recv_cap: RecvCap,
    nack_expiry_rtts: f64,
    resend_on: ResendSubflow,
    first_interval: FirstInterval,
    nominal_cap: NominalCap,
}

fn check_packet_size(bytes: u64, at: Vec<PathSeg>) -> Result<u64, SpecError> {
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
    resolve(t, &|name| vec![k("tfrc"), k(name)])
}

/// Checks a table whose field `name` is at `field(name)`.
fn resolve(t: &TfrcSpec, field: &dyn Fn(&str) -> Vec<PathSeg>) -> Result<TfrcParams, SpecError> {
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
    let nack_expiry_rtts = t
        .nack_expiry_rtts
        .unwrap_or(pathpool_proto::mptfrc::reliability::DEFAULT_NACK_EXPIRY_RTTS);
    if !(nack_expiry_rtts.is_finite() && nack_expiry_rtts >= 0.0) {
        return Err(SpecError::at(
            field("nack_expiry_rtts"),
            format!("{nack_expiry_rtts}: must be a number of RTTs, 0 or more (Tse: 1.5)"),
        ));
    }
    let multipath = MultipathParams {
        mode: t.multipath.unwrap_or_default(),
        master_rtt: match t.master_rtt.unwrap_or_default() {
            TfrcMasterRtt::RateWeightedMean => MasterRtt::RateWeightedMean,
            TfrcMasterRtt::Max => MasterRtt::Max,
            TfrcMasterRtt::Min => MasterRtt::Min,
        },
        loss_combination: match t.loss_combination.unwrap_or_default() {
            TfrcLossCombination::RateWeighted => LossCombination::RateWeighted,
            TfrcLossCombination::Sum => LossCombination::Sum,
            TfrcLossCombination::ConnectionHistory => LossCombination::ConnectionHistory,
        },
        recv_cap: match t.recv_cap.unwrap_or_default() {
            TfrcRecvCap::Sent => RecvCap::Sent,
            TfrcRecvCap::Nominal => RecvCap::Nominal,
        },
        nack_expiry_rtts,
        resend_on: match t.resend_on.unwrap_or_default() {
            TfrcResendOn::HighestRate => ResendSubflow::HighestRateOther,
            TfrcResendOn::Same => ResendSubflow::Same,
        },
        first_interval: match t.first_interval.unwrap_or_default() {
            TfrcFirstInterval::Connection => FirstInterval::Connection,
            TfrcFirstInterval::Subflow => FirstInterval::Subflow,
        },
        nominal_cap: match t.nominal_cap.unwrap_or_default() {
            TfrcNominalCap::Connection => NominalCap::Connection,
            TfrcNominalCap::Subflow => NominalCap::Subflow,
        },
    };
    Ok(TfrcParams {
        receiver: TfrcReceiverConfig {
            history,
            history_slots: history_slots as usize,
            loss_intervals,
            ..defaults
        },
        packet_bytes,
        multipath,
    })
}

/// The multipath sender's options for packets of `size_bytes`.
fn mp_config(p: &TfrcParams, size_bytes: u64) -> MpTfrcConfig {
    let m = &p.multipath;
    let mode = match m.mode {
        TfrcMultipath::Bilevel => MultipathTfrc::Bilevel(BilevelConfig {
            segment_bytes: size_bytes,
            master_rtt: m.master_rtt,
            loss_combination: m.loss_combination,
            nominal_cap: m.nominal_cap,
            ..BilevelConfig::default()
        }),
        TfrcMultipath::Fractional => MultipathTfrc::Fractional(m.recv_cap),
    };
    MpTfrcConfig {
        subflow: TfrcSenderConfig {
            segment_bytes: size_bytes,
            ..TfrcSenderConfig::default()
        },
        mode,
        nack_expiry_rtts: m.nack_expiry_rtts,
        resend_on: m.resend_on,
        fallback_rtt: p.receiver.fallback_rtt,
    }
}

/// Adds a TFRC entry's copies.
pub(super) fn add_tfrc_flows(
    sim: &mut Simulation,
    entry: &Entry<'_>,
    f: &TfrcFlowSpec,
    params: &TfrcParams,
    ids: &mut HashSet<String>,
) -> Result<(), SpecError> {
    let own;
    let params = match &f.tfrc {
        None => params,
        Some(over) => {
            let given = over.set_fields();
            let here = entry.field("tfrc");
            own = resolve(&entry.sc.tfrc.overridden_by(over), &|name| {
                if given.contains(&name) {
                    child(&here, name)
                } else {
                    vec![k("tfrc"), k(name)]
                }
            })?;
            &own
        }
    };
    let net = entry.net;
    let (from, to) = entry.hosts_and_times(sim, &f.common, f.stop)?;
    if let Some(sfs) = &f.subflows {
        for (i, sf) in sfs.iter().enumerate() {
            for (name, set) in [
                ("group", sf.group != 0),
                ("start", sf.start.is_some()),
                ("stop", sf.stop.is_some()),
            ] {
                if set {
                    let mut at = entry.field("subflows");
                    at.push(PathSeg::Index(i));
                    at.push(k(name));
                    return Err(SpecError::at(
                        at,
                        "a TFRC subflow takes only route (its subflows start and stop with the flow)",
                    ));
                }
            }
        }
    }
    let tcp_like = TcpFlowSpec {
        common: f.common.clone(),
        route: f.route.clone(),
        paths: f.paths.clone(),
        subflows: f.subflows.clone(),
        ..TcpFlowSpec::default()
    };
    if let Some(i) = f
        .subflows
        .iter()
        .flatten()
        .position(|s| !s.moves.is_empty())
    {
        let mut at = entry.field("subflows");
        at.push(super::ix(i));
        return Err(SpecError::at(
            child(&at, "moves"),
            "moves are for multipath TCP subflows",
        ));
    }
    let plan = multipath_plan(net, &tcp_like, from, to, &entry.here(), entry.sc.duration)?;
    if plan.is_none() {
        if let Some(name) = f.tfrc.as_ref().and_then(|t| {
            t.set_fields()
                .into_iter()
                .find(|n| TFRC_MULTIPATH_FIELDS.contains(n))
        }) {
            return Err(SpecError::at(
                child(&entry.field("tfrc"), name),
                "a multipath TFRC option: give the flow paths or subflows",
            ));
        }
    }
    let size_bytes = match f.packet_size {
        Some(b) => check_packet_size(b.bytes(), entry.field("packet_size"))?,
        None => params.packet_bytes,
    };
    let routes: Vec<(Vec<u32>, Vec<u32>, Vec<String>)> = match &plan {
        Some(plan) => plan
            .iter()
            .map(|Planned { paths: p, .. }| {
                let back = p.back.as_ref().expect("TFRC flows ask for a reverse path");
                (
                    p.data.iter().map(|e| net.elem[e.0 as usize]).collect(),
                    back.iter().map(|e| net.elem[e.0 as usize]).collect(),
                    net.node_names(from, &p.data),
                )
            })
            .collect(),
        None => {
            let paths = flow_paths(
                net,
                from,
                to,
                f.route.as_ref(),
                &entry.here(),
                entry.field("route"),
                true,
            )?;
            let back = paths
                .back
                .as_ref()
                .expect("TFRC flows ask for a reverse path");
            vec![(
                paths.data.iter().map(|e| net.elem[e.0 as usize]).collect(),
                back.iter().map(|e| net.elem[e.0 as usize]).collect(),
                net.node_names(from, &paths.data),
            )]
        }
    };
    entry.each_copy(sim, &f.common, ids, |sim, copy| {
        let stop = f.stop.map_or(sim.end, |s| Time::ZERO + s).min(sim.end);
        let source = sim.elements.len() as u32;
        let sink = source + 1;
        let mut data_routes = Vec::with_capacity(routes.len());
        let mut feedback_routes = Vec::with_capacity(routes.len());
        for (data, back, _) in &routes {
            let mut hops = data.clone();
            hops.push(sink);
            data_routes.push(sim.routes.add(&hops));
            let mut hops = back.clone();
            hops.push(source);
            feedback_routes.push(sim.routes.add(&hops));
        }
        let bad_intervals = |e: pathpool_cc::BadIntervalCount| {
            SpecError::at(vec![k("tfrc"), k("loss_intervals")], e.to_string())
        };
        let subflows = if plan.is_some() {
            let n = routes.len();
            let sender = MpTfrcSender::new(mp_config(params, size_bytes), n, copy.start);
            // 1/N TFRC's subflows each run the equation at their own rate (decision D262).
            let first_interval = match params.multipath.mode {
                TfrcMultipath::Bilevel => params.multipath.first_interval,
                TfrcMultipath::Fractional => FirstInterval::Subflow,
            };
            let history = params.multipath.mode == TfrcMultipath::Bilevel
                && params.multipath.loss_combination == LossCombination::ConnectionHistory;
            let receiver = MpTfrcReceiver::new(n, &params.receiver, first_interval, history)
                .map_err(bad_intervals)?;
            let flow = MpTfrcFlow::new(
                data_routes,
                feedback_routes,
                size_bytes as u32,
                stop,
                sender,
                receiver,
            );
            assert_eq!(sim.elements.add(flow), source);
            routes
                .iter()
                .map(|r| SubflowMeta {
                    path: r.2.clone(),
                    group: 0,
                    start: copy.start,
                    stop: None,
                })
                .collect()
        } else {
            let sender_cfg = TfrcSenderConfig {
                segment_bytes: size_bytes,
                ..TfrcSenderConfig::default()
            };
            let sender = TfrcSender::new(sender_cfg, copy.start);
            let receiver = TfrcReceiver::new(params.receiver.clone()).map_err(bad_intervals)?;
            let flow = TfrcFlow::new(
                data_routes[0],
                feedback_routes[0],
                size_bytes as u32,
                stop,
                sender,
                receiver,
            );
            assert_eq!(sim.elements.add(flow), source);
            Vec::new()
        };
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
            path: routes[0].2.clone(),
            subflows,
            // A TFRC packet's bytes all count as received (`TfrcFlow::delivered`).
            payload_fraction: 1.0,
            data_route: None,
        });
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use pathpool_cc::tfrc_rate_bytes_per_s;
    use pathpool_core::Dur;

    use super::super::testing::{compile, compile_seed, diamond, error};
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

    /// A TFRC flow from `a` to `b` on the diamond (two routes), with `extra`.
    fn on_diamond(extra: &str) -> String {
        diamond(&format!(
            "[[flows]]\nkind = \"tfrc\"\nfrom = \"a\"\nto = \"b\"\n{extra}"
        ))
    }

    #[test]
    fn multipath_tfrc_parameters_are_checked() {
        let two = "paths = [[\"a\", \"r1\", \"b\"], [\"a\", \"r2\", \"b\"]]";
        let cases = [
            (
                format!("{two}\n[tfrc]\nnack_expiry_rtts = -0.5"),
                "tfrc.nack_expiry_rtts: -0.5: must be a number of RTTs, 0 or more (Tse: 1.5)",
            ),
            (
                format!("{two}\ntfrc = {{ nack_expiry_rtts = -1.0 }}"),
                "flows[0].tfrc.nack_expiry_rtts: -1: must be a number of RTTs, 0 or more (Tse: 1.5)",
            ),
            (
                format!("{two}\ntfrc = {{ loss_intervals = 5 }}"),
                "flows[0].tfrc.loss_intervals: 5: must be an even number of at least 2 (RFC 3448 §5.4: 8)",
            ),
            (
                "tfrc = { multipath = \"fractional\" }".to_string(),
                "flows[0].tfrc.multipath: a multipath TFRC option: give the flow paths or subflows",
            ),
            (
                "subflows = [{ route = [\"a\", \"r1\", \"b\"] }, { group = 1 }]".to_string(),
                "flows[0].subflows[1].group: a TFRC subflow takes only route (its subflows start and stop with the flow)",
            ),
            (
                "paths = []".to_string(),
                "flows[0].paths: give at least one subflow",
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(error(&on_diamond(&extra)), want, "{extra}");
        }
        // In [tfrc] the multipath options are defaults, also for single-path flows.
        let sim = compile(&on_diamond(
            "[tfrc]\nmultipath = \"fractional\"\nnack_expiry_rtts = 0.0",
        ));
        assert_eq!(sim.elements.tfrc_flows.len(), 1);
    }

    #[test]
    fn a_tfrc_flow_with_paths_is_one_multipath_flow_of_as_many_subflows() {
        let sim = compile(&on_diamond(
            "subflows = [{ route = [\"a\", \"r2\", \"b\"] }, {}]\ntfrc = { multipath = \"fractional\", recv_cap = \"nominal\" }",
        ));
        assert_eq!(sim.elements.mptfrc_flows.len(), 1);
        assert!(sim.elements.tfrc_flows.is_empty());
        let paths: Vec<String> = sim.flows[0]
            .subflows
            .iter()
            .map(|s| s.path.join(" "))
            .collect();
        assert_eq!(paths, ["a r2 b", "a r1 b"]);
        assert_eq!(sim.flows[0].path, ["a", "r2", "b"]);
    }
}
