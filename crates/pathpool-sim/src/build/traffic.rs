//! Traffic generators (`[[traffic]]`): finite flows arriving as a Poisson process, with
//! sizes drawn from a distribution (with Pareto sizes, the Poisson Pareto Burst Process) —
//! single-path TCP, multipath TCP on listed paths, or INRPP hosts' flows (D295, D296) —
//! between two hosts or between hosts drawn from host groups (D297, D298).

use std::collections::HashSet;

use pathpool_cc::CcKind;
use pathpool_core::{BufferSize, Dur, Rng, Time};
use pathpool_proto::mptcp::Scheduler;
use pathpool_proto::rcp::RcpParams;
use pathpool_topo::{EdgeId, NodeIx};

use super::entry::unique_id;
use super::hosts::{hosts_named, Routes};
use super::inrpp::add_inrpp_flow;
use super::multipath::{multipath_plan, Plan};
use super::net::Net;
use super::rcp::{add_rcp_flow, rcp_params};
use super::tcp::{add_mp_flow, add_tcp_flow, FlowEnds};
use super::tcp_params::{check_base_subflow, element_tcp_spec, resolve_tcp, single_path_cc};
use super::{at, child, ix, k, MAX_FLOWS, STREAM_OVERHEAD, STREAM_TRAFFIC};
use crate::error::{PathSeg, SpecError};
use crate::overhead::SendOverhead;
use crate::sim::Simulation;
use crate::spec::{FlowCc, Scenario, SizeDist, TcpFlowSpec, TrafficSpec};

/// What each generated flow is.
enum Transport {
    /// A single-path window-based TCP connection.
    Tcp,
    /// A multipath connection with a subflow on each of the generator's `paths`.
    Mptcp(Plan),
    /// An INRPP host's flow (issue 21).
    Inrpp,
    /// An RCP flow, with `[rcp]`'s constants and the RTT its first packets carry.
    Rcp((RcpParams, Dur)),
}

/// Adds generator `g`'s flows, drawn from its own random stream.
pub(super) fn add_traffic(
    sim: &mut Simulation,
    net: &Net,
    sc: &Scenario,
    t: &TrafficSpec,
    g: usize,
    ids: &mut HashSet<String>,
    seed: u64,
) -> Result<(), SpecError> {
    let here = at(&[k("traffic"), ix(g)]);
    let field = |name: &str| child(&here, name);
    let senders = hosts_named(net, &t.from, field("from"))?;
    let receivers = hosts_named(net, &t.to, field("to"))?;
    let single = match (senders.as_slice(), receivers.as_slice()) {
        (&[a], &[b]) if a == b => {
            return Err(SpecError::at(
                field("to"),
                "a flow needs two different hosts",
            ))
        }
        (&[a], &[b]) => Some((a, b)),
        _ => {
            let from: HashSet<NodeIx> = senders.iter().copied().collect();
            if let Some(both) = receivers.iter().find(|n| from.contains(n)) {
                return Err(SpecError::at(
                    field("to"),
                    format!(
                        "host {:?} is in both from and to; a flow needs two different hosts",
                        net.names[both.0 as usize]
                    ),
                ));
            }
            None
        }
    };
    let window_cc = t.cc.and_then(FlowCc::window);
    let spec = element_tcp_spec(sc, t.tcp.as_ref(), window_cc);
    let params = resolve_tcp(&spec, &field("tcp"))?;
    // One arm per kind of flow; a transport added to `FlowCc` adds its arm here and below.
    let transport = match t.cc {
        Some(FlowCc::Inrpp) => {
            if t.paths.is_some() {
                return Err(SpecError::at(
                    field("cc"),
                    "\"inrpp\" is a single-path transport (its routers pool paths): give no \
                     paths, or choose a multipath cc",
                ));
            }
            Transport::Inrpp
        }
        Some(FlowCc::Rcp) => {
            if t.paths.is_some() {
                return Err(SpecError::at(
                    field("cc"),
                    "\"rcp\" is a single-path transport: give no paths, or choose a multipath cc",
                ));
            }
            Transport::Rcp(rcp_params(sc)?)
        }
        None | Some(FlowCc::Window(_)) => match &t.paths {
            None => {
                single_path_cc(window_cc, t.tcp.as_ref(), params.cc, &here)?;
                Transport::Tcp
            }
            Some(paths) => {
                let Some((from, to)) = single else {
                    return Err(SpecError::at(
                        field("paths"),
                        "paths are node lists from one host to another: from and to must each \
                         name one host (not a group, nor a list of several)",
                    ));
                };
                if matches!(params.cc, CcKind::NewReno | CcKind::Cubic | CcKind::TcpLp) {
                    return Err(SpecError::at(
                        field("paths"),
                        format!(
                            "multipath traffic needs a multipath cc, and {:?} is a single-path \
                             controller: give e.g. cc = \"lia\" (or \"uncoupled\" for NewReno \
                             on each subflow)",
                            params.cc.name()
                        ),
                    ));
                }
                let entry = TcpFlowSpec {
                    paths: Some(paths.clone()),
                    ..TcpFlowSpec::default()
                };
                let plan = multipath_plan(net, &entry, from, to, &here, sc.duration)?
                    .expect("paths make a multipath plan");
                check_base_subflow(&params, t.tcp.as_ref(), plan.len(), &here)?;
                Transport::Mptcp(plan)
            }
        },
    };
    let mss = params.sender.mss;
    let bytes = |b: BufferSize| match b {
        BufferSize::Packets(n) => n * mss,
        BufferSize::Bytes(n) => n,
    };
    let (mean, dist) = match &t.size {
        SizeDist::Pareto { mean, shape } => {
            if !(*shape > 1.0 && shape.is_finite()) {
                return Err(SpecError::at(
                    field("size"),
                    format!("Pareto shape {shape} must be above 1 for a finite mean"),
                ));
            }
            (bytes(*mean), SizeDraw::Pareto { shape: *shape })
        }
        SizeDist::Exponential { mean } => (bytes(*mean), SizeDraw::Exponential),
        SizeDist::Constant { value } => (bytes(*value), SizeDraw::Constant),
    };
    if mean == 0 {
        return Err(SpecError::at(
            field("size"),
            "the mean flow size must be positive",
        ));
    }
    let mut routes = Routes::default();
    // Between two hosts the one route is checked before any flow is drawn.
    let route = match (&transport, single) {
        (Transport::Tcp | Transport::Inrpp, Some((a, b))) => {
            Some(routes.between(net, a, b, &here)?)
        }
        _ => None,
    };
    let lambda = match (t.arrival_rate, t.load) {
        (Some(r), None) => {
            if !(r > 0.0 && r.is_finite()) {
                return Err(SpecError::at(field("arrival_rate"), "must be a positive number of flows per second"));
            }
            if t.load_link.is_some() {
                return Err(SpecError::at(field("load_link"), "goes with load, not arrival_rate"));
            }
            r
        }
        (None, Some(rho)) => {
            if !(rho > 0.0 && rho.is_finite()) {
                return Err(SpecError::at(field("load"), "must be a positive number"));
            }
            let c = load_capacity(sim, net, t, route.as_ref().map(|r| r.data.as_slice()), &here)?;
            rho * c / (8.0 * mean as f64)
        }
        _ => return Err(SpecError::at(here.clone(), "give exactly one of arrival_rate (flows/s) or load (fraction of the route's slowest link)")),
    };
    let start = t.start;
    let stop = t.stop.unwrap_or(sc.duration).min(sc.duration);
    if stop <= start {
        return Err(SpecError::at(field("stop"), "must be after start"));
    }
    let expected = lambda * (stop - start).as_secs_f64();
    let cap = t.max_flows.unwrap_or(u64::MAX).min(MAX_FLOWS);
    if expected > MAX_FLOWS as f64 && t.max_flows.is_none_or(|m| m > MAX_FLOWS) {
        return Err(SpecError::at(field("arrival_rate"), format!("about {expected:.0} flows would be generated; the limit is {MAX_FLOWS} (set max_flows)")));
    }
    let mut rng = Rng::stream(seed, STREAM_TRAFFIC, g as u64);
    let prefix = t.id.clone().unwrap_or_else(|| format!("traffic{g}"));
    let mut at_s = start.as_secs_f64();
    let stop_s = stop.as_secs_f64();
    let mut n = 0u64;
    while n < cap {
        at_s += rng.exponential(1.0 / lambda);
        if at_s >= stop_s {
            break;
        }
        let size = dist.draw(&mut rng, mean as f64);
        // After the size, and only from a choice of hosts, so that a generator between two
        // hosts draws what it drew before host groups (D298).
        let from = pick(&mut rng, &senders);
        let to = pick(&mut rng, &receivers);
        let id = unique_id(ids, format!("{prefix}.{n}"), field("id"))?;
        let overhead = || {
            SendOverhead::new(
                params.send_overhead,
                Rng::stream(seed, STREAM_OVERHEAD, sim.flows.len() as u64),
            )
            .map(Box::new)
        };
        let ends = |overhead| FlowEnds {
            id,
            from,
            to,
            start: Time::from_secs_f64(at_s),
            stop: None,
            size: Some(size),
            overhead,
        };
        match &transport {
            Transport::Tcp => {
                let ends = ends(overhead());
                let paths = match &route {
                    Some(r) => r.clone(),
                    None => routes.between(net, from, to, &here)?,
                };
                add_tcp_flow(sim, net, ends, &paths, &params);
            }
            Transport::Mptcp(plan) => {
                let ends = ends(overhead());
                add_mp_flow(
                    sim,
                    net,
                    ends,
                    (plan, None),
                    Scheduler::default(),
                    &params,
                    None,
                );
            }
            Transport::Inrpp => {
                let paths = match &route {
                    Some(r) => r.clone(),
                    None => routes.between(net, from, to, &here)?,
                };
                add_inrpp_flow(sim, net, ends(None), &paths, &params, &field("size"))?;
            }
            Transport::Rcp(rcp) => {
                let paths = match &route {
                    Some(r) => r.clone(),
                    None => routes.between(net, from, to, &here)?,
                };
                add_rcp_flow(sim, net, ends(None), &paths, &params, *rcp, &field("size"))?;
            }
        }
        n += 1;
    }
    Ok(())
}

/// One of `hosts`, drawn only when there is a choice.
fn pick(rng: &mut Rng, hosts: &[NodeIx]) -> NodeIx {
    match hosts {
        [one] => *one,
        _ => hosts[rng.below(hosts.len() as u64) as usize],
    }
}

/// The capacity in bits per second that `load` is a fraction of: the rate of `load_link`, or
/// else of the slowest link of the generator's one route (D299).
fn load_capacity(
    sim: &Simulation,
    net: &Net,
    t: &TrafficSpec,
    route: Option<&[EdgeId]>,
    here: &[PathSeg],
) -> Result<f64, SpecError> {
    let field = |name: &str| child(here, name);
    if let Some(name) = &t.load_link {
        let Some(i) = sim.links.iter().position(|l| l.name == *name) else {
            let meant =
                pathpool_core::text::closest(name, sim.links.iter().map(|l| l.name.as_str()))
                    .map_or(String::new(), |m| format!(" (did you mean {m:?}?)"));
            return Err(SpecError::at(
                field("load_link"),
                format!("unknown link {name:?}{meant}"),
            ));
        };
        let rate = net.rate[i];
        if rate.is_infinite() {
            return Err(SpecError::at(
                field("load_link"),
                format!("link {name:?} has an infinite rate; give arrival_rate instead"),
            ));
        }
        return Ok(rate.bps() as f64);
    }
    let Some(route) = route else {
        return Err(SpecError::at(
            field("load_link"),
            "the flows take more than one route (from or to names several hosts, or paths are \
             given): name the link whose rate load is a fraction of (load_link = \"<link id>\")",
        ));
    };
    let c = route
        .iter()
        .map(|e| net.rate[e.0 as usize])
        .filter(|r| !r.is_infinite())
        .min();
    let c = c.ok_or_else(|| {
        SpecError::at(
            field("load"),
            "every link on the route has an infinite rate; give arrival_rate instead",
        )
    })?;
    Ok(c.bps() as f64)
}

/// How a generator draws flow sizes.
#[derive(Clone, Copy)]
enum SizeDraw {
    Pareto { shape: f64 },
    Exponential,
    Constant,
}

impl SizeDraw {
    /// A size in whole bytes (at least 1) with the given mean.
    fn draw(self, rng: &mut Rng, mean: f64) -> u64 {
        let x = match self {
            // Pareto type I with x_min = mean·(α − 1)/α has the requested mean.
            SizeDraw::Pareto { shape } => rng.pareto(shape, mean * (shape - 1.0) / shape),
            SizeDraw::Exponential => rng.exponential(mean),
            SizeDraw::Constant => mean,
        };
        (libm::ceil(x) as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{compile, compile_seed, diamond, error, line};
    use super::*;

    fn generator(extra: &str) -> String {
        line(&format!(
            "[[traffic]]\nkind = \"poisson\"\nfrom = \"a\"\nto = \"b\"\n{extra}"
        ))
    }

    #[test]
    fn arrivals_are_poisson_within_the_window_and_repeat_by_seed() {
        let text = generator("id = \"g\"\narrival_rate = 20.0\nstart = \"1s\"\nstop = \"6s\"\nsize = { dist = \"constant\", value = \"3pkts\" }");
        let sim = compile(&text);
        let n = sim.flows.len();
        // 100 arrivals expected; a Poisson count is within 5 standard deviations (50).
        assert!((50..=150).contains(&n), "{n}");
        assert!(sim
            .flows
            .iter()
            .enumerate()
            .all(|(i, f)| f.id == format!("g.{i}")));
        assert!(sim.flows.iter().all(|f| f.size == Some(3 * 1460)));
        assert!(sim
            .flows
            .windows(2)
            .all(|w| w[0].start <= w[1].start && w[1].start < Time::from_secs(6)));
        assert!(sim.flows[0].start >= Time::from_secs(1));
        let starts = |seed| -> Vec<Time> {
            compile_seed(&text, seed)
                .flows
                .iter()
                .map(|f| f.start)
                .collect()
        };
        assert_eq!(starts(1), starts(1));
        assert_ne!(starts(1), starts(2));
        let capped = compile(&text.replace("id = \"g\"", "id = \"g\"\nmax_flows = 7"));
        assert_eq!(capped.flows.len(), 7);
    }

    #[test]
    fn load_sets_the_rate_from_the_slowest_link() {
        // ρ = 0.5 of 10 Mb/s with 12500-byte flows: 50 flows/s over 9 s, about 450.
        let sim = compile(&generator(
            "load = 0.5\nsize = { dist = \"exponential\", mean = \"12500B\" }\nstop = \"9s\"",
        ));
        let n = sim.flows.len();
        assert!((350..=550).contains(&n), "{n}");
    }

    #[test]
    fn sizes_are_whole_bytes_with_the_requested_mean() {
        let mut rng = Rng::stream(1, STREAM_TRAFFIC, 0);
        let n = 200_000;
        for (draw, tolerance) in [
            (SizeDraw::Exponential, 0.02),
            (SizeDraw::Pareto { shape: 2.5 }, 0.05),
        ] {
            let mean = (0..n).map(|_| draw.draw(&mut rng, 10_000.0)).sum::<u64>() as f64 / n as f64;
            assert!((mean / 10_000.0 - 1.0).abs() < tolerance, "{mean}");
        }
        assert_eq!(
            SizeDraw::Constant.draw(&mut rng, 0.2),
            1,
            "at least one byte"
        );
    }

    #[test]
    fn generators_are_checked() {
        let cases = [
            (
                "arrival_rate = 1.0\nsize = { dist = \"pareto\", mean = \"1KB\", shape = 1.0 }",
                "traffic[0].size: Pareto shape 1 must be above 1 for a finite mean",
            ),
            (
                "arrival_rate = 1.0\nsize = { dist = \"constant\", value = \"0B\" }",
                "traffic[0].size: the mean flow size must be positive",
            ),
            (
                "size = { dist = \"constant\", value = \"1KB\" }",
                "traffic[0]: give exactly one of arrival_rate (flows/s) or load (fraction of the route's slowest link)",
            ),
            (
                "arrival_rate = 0.0\nsize = { dist = \"constant\", value = \"1KB\" }",
                "traffic[0].arrival_rate: must be a positive number of flows per second",
            ),
            (
                "arrival_rate = 1.0\nstart = \"5s\"\nstop = \"5s\"\nsize = { dist = \"constant\", value = \"1KB\" }",
                "traffic[0].stop: must be after start",
            ),
            (
                "arrival_rate = 1e9\nsize = { dist = \"constant\", value = \"1KB\" }",
                "traffic[0].arrival_rate: about 10000000000 flows would be generated; the limit is 5000000 (set max_flows)",
            ),
            (
                "arrival_rate = 1.0\ncc = \"lia\"\nsize = { dist = \"constant\", value = \"1KB\" }",
                "traffic[0].cc: \"lia\" is a multipath controller, and traffic[0] has a single path; a generator's flows have one path each unless it lists them (paths = [[...], [...]]): list them, or use cc = \"newreno\"",
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(error(&generator(extra)), want, "{extra}");
        }
    }

    const CONSTANT: &str = "size = { dist = \"constant\", value = \"10pkts\" }";

    #[test]
    fn an_inrpp_generator_makes_inrpp_flows_like_a_flows_entry() {
        let text = generator(&format!(
            "cc = \"inrpp\"\narrival_rate = 5.0\n{CONSTANT}\n[inrpp]"
        ));
        let sim = compile(&text);
        assert!(sim.flows.len() > 10, "{}", sim.flows.len());
        for f in &sim.flows {
            assert_eq!(f.cc.as_deref(), Some("inrpp"));
            assert_eq!(f.loss_recovery, Some("rto"));
            assert_eq!(f.path, ["a", "r", "b"]);
            assert_eq!(f.size, Some(14_600));
        }
        // A [[flows]] entry's INRPP flow between the same hosts: the same controller and path.
        let one = compile(&line(
            "[[flows]]\nfrom = \"a\"\nto = \"b\"\ncc = \"inrpp\"\nsize = \"10pkts\"\n[inrpp]",
        ));
        assert_eq!(one.flows[0].cc, sim.flows[0].cc);
        assert_eq!(one.flows[0].path, sim.flows[0].path);
        let e = error(&generator(&format!(
            "cc = \"inrpp\"\narrival_rate = 5.0\n{CONSTANT}\npaths = [[\"a\", \"r\", \"b\"]]"
        )));
        assert_eq!(
            e,
            "traffic[0].cc: \"inrpp\" is a single-path transport (its routers pool paths): give \
             no paths, or choose a multipath cc"
        );
    }

    #[test]
    fn an_rcp_generator_makes_rcp_flows_sharing_each_links_controller() {
        let sim = compile(&generator(&format!(
            "cc = \"rcp\"\narrival_rate = 5.0\n{CONSTANT}\n[rcp]\nalpha = 0.2"
        )));
        assert!(sim.flows.len() > 10, "{}", sim.flows.len());
        for f in &sim.flows {
            assert_eq!(f.cc.as_deref(), Some("rcp"));
            assert_eq!(f.path, ["a", "r", "b"]);
        }
        // One controller per link of the path (a–r, r–b), whichever flow came first.
        assert_eq!(sim.rcp_of_link.len(), 2);
        let e = error(&generator(&format!(
            "cc = \"rcp\"\narrival_rate = 5.0\n{CONSTANT}\npaths = [[\"a\", \"r\", \"b\"]]"
        )));
        assert_eq!(
            e,
            "traffic[0].cc: \"rcp\" is a single-path transport: give no paths, or choose a \
             multipath cc"
        );
        let e = error(&generator(&format!(
            "cc = \"rcp\"\narrival_rate = 5.0\n{CONSTANT}\n[rcp]\nalpha = 0.0"
        )));
        assert_eq!(e, "rcp.alpha: 0 is not a positive number");
    }

    fn diamond_generator(extra: &str) -> String {
        diamond(&format!(
            "[[traffic]]\nkind = \"poisson\"\nfrom = \"a\"\nto = \"b\"\narrival_rate = 5.0\n{CONSTANT}\n{extra}"
        ))
    }

    const TWO_PATHS: &str = "paths = [[\"a\", \"r1\", \"b\"], [\"a\", \"r2\", \"b\"]]";

    #[test]
    fn a_generator_with_paths_makes_multipath_connections_on_them() {
        let sim = compile(&diamond_generator(&format!("cc = \"lia\"\n{TWO_PATHS}")));
        assert!(sim.flows.len() > 10, "{}", sim.flows.len());
        for f in &sim.flows {
            assert_eq!(f.cc.as_deref(), Some("lia"));
            let paths: Vec<Vec<String>> = f.subflows.iter().map(|s| s.path.clone()).collect();
            assert_eq!(paths, [["a", "r1", "b"], ["a", "r2", "b"]]);
            assert_eq!(f.size, Some(14_600));
        }
        let cases = [
            (
                TWO_PATHS.to_string(),
                "traffic[0].paths: multipath traffic needs a multipath cc, and \"newreno\" is a \
                 single-path controller: give e.g. cc = \"lia\" (or \"uncoupled\" for NewReno on \
                 each subflow)",
            ),
            (
                "cc = \"olia\"\npaths = [[\"a\", \"r1\", \"r2\"]]".to_string(),
                "traffic[0].paths[0]: a route must start at `from` and end at `to`",
            ),
            (
                "cc = \"olia\"\npaths = []".to_string(),
                "traffic[0].paths: give at least one subflow",
            ),
            (
                format!("cc = \"lia\"\n{TWO_PATHS}\ntcp = {{ hacker = {{ base = 2 }} }}")
                    .replace("lia", "hacker"),
                "traffic[0].tcp.hacker.base: subflow 2 does not exist: traffic[0] has 2 \
                 subflow(s), numbered from 0",
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(error(&diamond_generator(&extra)), want, "{extra}");
        }
        // A list of one host is that host; a group of several is not one host.
        let listed = diamond_generator(&format!("cc = \"lia\"\n{TWO_PATHS}"))
            .replace("to = \"b\"", "to = [\"b\"]");
        assert_eq!(compile(&listed).flows[0].subflows.len(), 2);
        let group = listed.replace("to = [\"b\"]", "to = \"g\"").replace(
            "[[traffic]]",
            "[[host_groups]]\nname = \"g\"\ncount = 2\nattach = \"r1\"\nrate = \"1Mbps\"\n\
             delay = \"1ms\"\n[[traffic]]",
        );
        assert_eq!(
            error(&group),
            "traffic[0].paths: paths are node lists from one host to another: from and to must \
             each name one host (not a group, nor a list of several)"
        );
    }

    #[test]
    fn load_link_names_the_link_load_is_a_fraction_of() {
        // ρ = 0.5 of the 20 Mb/s a-r2 link with 12500-byte flows: 100 flows/s over 9 s.
        let text = |extra: &str| {
            diamond(&format!(
                "[[traffic]]\nkind = \"poisson\"\nfrom = \"a\"\nto = \"b\"\nstop = \"9s\"\n\
                 size = {{ dist = \"constant\", value = \"12500B\" }}\n{extra}"
            ))
        };
        let n = compile(&text("load = 0.5\nload_link = \"a-r2\""))
            .flows
            .len();
        assert!((800..=1000).contains(&n), "{n}");
        let cases = [
            (
                "load = 0.5\nload_link = \"a-r11\"",
                "traffic[0].load_link: unknown link \"a-r11\" (did you mean \"a-r1\"?)",
            ),
            (
                "arrival_rate = 1.0\nload_link = \"a-r2\"",
                "traffic[0].load_link: goes with load, not arrival_rate",
            ),
            (
                "load = 0.5\ncc = \"lia\"\npaths = [[\"a\", \"r1\", \"b\"]]",
                "traffic[0].load_link: the flows take more than one route (from or to names \
                 several hosts, or paths are given): name the link whose rate load is a fraction \
                 of (load_link = \"<link id>\")",
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(error(&text(extra)), want, "{extra}");
        }
    }
}
