//! Compiling a [`Scenario`] into a runnable [`Simulation`]: validation, routing, elements.
//!
//! One file per concern: the network and its routes ([`net`]), links and their queues
//! ([`links`]), TCP parameters ([`tcp_params`]), TCP flows ([`tcp`]) and their multipath
//! plans ([`multipath`]), UDP flows ([`udp`]), TFRC flows ([`tfrc`]), mmTP downloads and caches ([`mmtp`]), traffic
//! generators ([`traffic`]), host groups ([`hosts`]), and what every flow entry has ([`entry`]). Elements are added in
//! scenario order — links, caches, flows, generators, then the sampler — since element
//! indices order simultaneous events.

use std::collections::{HashMap, HashSet};

use pathpool_core::{Dur, Time};
use pathpool_topo::EdgeId;

use crate::error::{PathSeg, SpecError};
use crate::sampler::Sampler;
use crate::sim::Simulation;
use crate::spec::{FlowSpec, MpFairnessMode, Scenario};
use crate::tm_control::{LinkChange, TmControl};

mod entry;
mod hosts;
mod inrpp;
mod links;
mod mmtp;
mod multipath;
mod ndn;
mod net;
mod rate;
mod rcp;
mod tcp;
mod tcp_params;
mod tfrc;
mod traffic;
mod udp;

/// Random streams, one family per kind of component (see `pathpool_core::rng`).
const STREAM_LINK: u64 = 1;
const STREAM_START: u64 = 2;
const STREAM_TRAFFIC: u64 = 3;
const STREAM_UDP: u64 = 4;
/// `tcp.send_overhead`'s delays (stream 5 is the domain generator's placement).
const STREAM_OVERHEAD: u64 = 6;
/// NDN forwarders' draws (stream 7 is TFRC's).
const STREAM_NDN_NODE: u64 = 8;
/// NDN consumers' nonces and draws.
const STREAM_NDN_CONSUMER: u64 = 9;

/// Largest number of time-series samples a scenario may ask for.
const MAX_SAMPLES: u64 = 10_000_000;
/// Largest number of flows a scenario may generate.
const MAX_FLOWS: u64 = 5_000_000;
/// Largest segment plus header.
const MAX_PACKET_BYTES: u64 = (1 << 20) - 1;

fn k(s: &str) -> PathSeg {
    PathSeg::Key(s.to_string())
}
fn ix(i: usize) -> PathSeg {
    PathSeg::Index(i)
}
fn at(parts: &[PathSeg]) -> Vec<PathSeg> {
    parts.to_vec()
}
/// The path of field `name` inside the element at `parent`.
fn child(parent: &[PathSeg], name: &str) -> Vec<PathSeg> {
    let mut p = parent.to_vec();
    p.push(k(name));
    p
}

/// Elements left out of a compilation, to look for the problems after one found in them:
/// flows, traffic generators and caches, which no other element refers to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Skip {
    flows: HashSet<usize>,
    traffic: HashSet<usize>,
    caches: HashSet<usize>,
}

impl Skip {
    /// Leaves out the element a problem at `path` is in; `false` if it is not such an element
    /// (or already left out), so that nothing more can be learnt by compiling again.
    pub(crate) fn add(&mut self, path: &[PathSeg]) -> bool {
        let (Some(PathSeg::Key(list)), Some(&PathSeg::Index(i))) = (path.first(), path.get(1))
        else {
            return false;
        };
        match list.as_str() {
            "flows" => self.flows.insert(i),
            "traffic" => self.traffic.insert(i),
            "caches" => self.caches.insert(i),
            _ => false,
        }
    }

    fn is_empty(&self) -> bool {
        self.flows.is_empty() && self.traffic.is_empty() && self.caches.is_empty()
    }
}

/// Compiles a scenario for one seed without the elements of `skip`.
pub(crate) fn compile_skipping(
    sc: &Scenario,
    seed: u64,
    skip: &Skip,
) -> Result<Simulation, SpecError> {
    if let Some(d) = sc.generate.as_ref().and_then(|g| g.domain.as_ref()) {
        let expanded = crate::domain::expand(sc, d, seed)?;
        return compile_skipping(&expanded, seed, skip);
    }
    if sc.duration == Dur::ZERO {
        return Err(SpecError::at(at(&[k("duration")]), "must be positive"));
    }
    let end = Time::ZERO + sc.duration;
    let m = &sc.measure;
    let t0 = Time::ZERO + m.start.unwrap_or(Dur::ZERO);
    let t1 = Time::ZERO + m.end.unwrap_or(sc.duration);
    if t1 > end {
        return Err(SpecError::at(
            at(&[k("measure"), k("end")]),
            format!(
                "{} is after the end of the run ({})",
                t1 - Time::ZERO,
                sc.duration
            ),
        ));
    }
    if t0 >= t1 {
        return Err(SpecError::at(
            at(&[k("measure"), k("start")]),
            "must be before measure.end",
        ));
    }
    if m.interval == Dur::ZERO {
        return Err(SpecError::at(
            at(&[k("measure"), k("interval")]),
            "must be positive",
        ));
    }
    if sc.duration.as_ps() / m.interval.as_ps() > MAX_SAMPLES {
        return Err(SpecError::at(
            at(&[k("measure"), k("interval")]),
            format!(
                "{} would take more than {MAX_SAMPLES} samples; use a longer interval",
                m.interval
            ),
        ));
    }

    let mut sampler = Sampler::new(m.interval, end, (t0, t1), m.trace_cwnd, m.trace_queues);
    if let Some(interval) = m.fairness_interval {
        let field = at(&[k("measure"), k("fairness_interval")]);
        if interval == Dur::ZERO {
            return Err(SpecError::at(field, "must be positive"));
        }
        if (t1 - t0).as_ps() / interval.as_ps() > MAX_SAMPLES {
            return Err(SpecError::at(
                field,
                format!(
                    "{interval} would take more than {MAX_SAMPLES} samples of the window; \
                     use a longer interval"
                ),
            ));
        }
        sampler.sample_fairness(interval);
    }
    if m.trace_routers {
        if sc.inrpp.is_none() {
            return Err(SpecError::at(
                at(&[k("measure"), k("trace_routers")]),
                "the scenario has no INRPP routers to trace: add an [inrpp] table",
            ));
        }
        sampler.trace_routers();
    }
    if m.afct_bins_per_decade == Some(0) {
        return Err(SpecError::at(
            at(&[k("measure"), k("afct_bins_per_decade")]),
            "must be at least 1 (bins per decade of flow size)",
        ));
    }
    let mut sim = Simulation::new(end, seed, sampler);
    sim.name = sc.name.clone();
    let tolerance = m.mp_fairness_tolerance.unwrap_or(0.05);
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(SpecError::at(
            at(&[k("measure"), k("mp_fairness_tolerance")]),
            "must be a finite number at least 0 (a relative margin: 0.05 lets a flow exceed \
             its bound by 5%)",
        ));
    }
    if m.mp_fairness == Some(MpFairnessMode::ReferenceRuns) {
        if let Some((path, message)) = crate::mp_reference::check(&sc.flows) {
            return Err(SpecError::at(path, message));
        }
    }
    sim.mp_fairness = m.mp_fairness.map(|mode| (mode, tolerance));
    sim.afct_bins_per_decade = m.afct_bins_per_decade;
    sim.want_interarrival = m.interarrival;

    let mut net = net::build_nodes(sc)?;
    let mut changes = Vec::new();
    for (i, l) in sc.links.iter().enumerate() {
        let first = sim.links.len() as u32;
        links::add_link(&mut sim, &mut net, l, &at(&[k("links"), ix(i)]), seed)?;
        let edges: Vec<EdgeId> = (first..sim.links.len() as u32).map(EdgeId).collect();
        links::link_failures(l, i, &edges, sc.duration, &mut changes)?;
    }
    ndn::check_rem(sc)?;
    hosts::add_host_groups(&mut sim, &mut net, sc, seed)?;
    if net.names.is_empty() {
        return Err(SpecError::at(at(&[k("nodes")]), "the network has no nodes"));
    }
    mmtp::add_caches(&mut sim, &mut net, sc, &skip.caches)?;
    inrpp::add_routers(&mut sim, &mut net, sc)?;
    ndn::add_ndn_nodes(&mut sim, &net, sc, seed)?;
    if sc.routing.tm_reaction.is_some() && changes.is_empty() {
        return Err(SpecError::at(
            at(&[k("routing"), k("tm_reaction")]),
            "only for scenarios with link failures (links[].failures)",
        ));
    }
    if !changes.is_empty() {
        // Stable: simultaneous changes keep the scenario's link order.
        changes.sort_by_key(|c: &LinkChange| c.at);
        sim.tm = Some(TmControl::new(
            changes,
            sc.routing.tm_reaction.unwrap_or(links::DEFAULT_TM_REACTION),
            net.elem.clone(),
            net.cache.clone(),
            net.names.clone(),
        ));
    }

    let base_tcp = tcp_params::resolve_tcp(&sc.tcp, &[k("tcp")])?;
    let tfrc_params = tfrc::resolve_tfrc(&sc.tfrc)?;
    let mut ids = HashSet::new();
    let mut contents = HashMap::new();
    for (j, f) in sc.flows.iter().enumerate() {
        if skip.flows.contains(&j) {
            continue;
        }
        let entry = entry::Entry {
            sc,
            net: &net,
            j,
            seed,
        };
        match f {
            FlowSpec::Tcp(t) => tcp::add_tcp_flows(&mut sim, &entry, t, &base_tcp, &mut ids)?,
            FlowSpec::UdpCbr(u) => udp::add_udp_flows(&mut sim, &entry, u, None, &mut ids)?,
            FlowSpec::UdpOnoff(o) => {
                udp::add_udp_flows(&mut sim, &entry, &o.udp, Some(o), &mut ids)?;
            }
            FlowSpec::Mmtp(m) => {
                mmtp::add_mmtp_flows(&mut sim, &entry, m, &mut ids, &mut contents)?;
            }
            FlowSpec::Tfrc(t) => tfrc::add_tfrc_flows(&mut sim, &entry, t, &tfrc_params, &mut ids)?,
            FlowSpec::Ndn(n) => {
                ndn::add_ndn_flows(&mut sim, &entry, n, base_tcp.sender.rtt, &mut ids)?;
            }
        }
    }
    for (g, t) in sc.traffic.iter().enumerate() {
        if skip.traffic.contains(&g) {
            continue;
        }
        traffic::add_traffic(&mut sim, &net, sc, t, g, &mut ids, seed)?;
    }

    sim.sampler_elem = sim.elements.add_sampler();
    // After every other element, so that scenarios without failures keep their indices
    // (which order simultaneous events).
    if sim.tm.is_some() {
        sim.elements.add_tm();
    }
    sim.want_seq_trace = traced_flows(&sim, &m.trace_sequences, skip)?;
    let flows = sim.flows.clone();
    sim.sampler.init(&flows, sim.links.len());
    sim.prime();
    Ok(sim)
}

/// The flows `measure.trace_sequences` names, as indices into `sim.flows`. An unknown id is
/// passed over when the compilation leaves elements out to find more problems (`skip`: it
/// may be a flow left out); any other id must name a single-path TCP, INRPP or RCP flow.
fn traced_flows(sim: &Simulation, ids: &[String], skip: &Skip) -> Result<Vec<u32>, SpecError> {
    let mut traced = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let field = || at(&[k("measure"), k("trace_sequences"), ix(i)]);
        let Some(f) = sim.flows.iter().position(|f| f.id == *id) else {
            if !skip.is_empty() {
                continue;
            }
            let mut known: Vec<&str> = sim
                .flows
                .iter()
                .filter(|f| f.data_route.is_some())
                .map(|f| f.id.as_str())
                .take(10)
                .collect();
            if known.len() == 10 {
                known.push("...");
            }
            return Err(SpecError::at(
                field(),
                format!(
                    "no flow has the id `{id}`; flows that can be traced: {}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        if sim.flows[f].data_route.is_none() {
            return Err(SpecError::at(
                field(),
                format!(
                    "flow `{id}` cannot be traced: only single-path TCP, INRPP and RCP flows                      have one sequence space"
                ),
            ));
        }
        if !traced.contains(&(f as u32)) {
            traced.push(f as u32);
        }
    }
    Ok(traced)
}

/// Small scenarios compiled, for the tests of every part of the compiler.
#[cfg(test)]
pub(crate) mod testing {
    use crate::error::format_path;
    use crate::sim::Simulation;
    use crate::spec::Scenario;

    /// Two hosts `a` and `b` joined through router `r` (10 Mb/s, 5 ms links), and `extra`.
    pub(crate) fn line(extra: &str) -> String {
        format!(
            r#"duration = "10s"
            [nodes]
            hosts = ["a", "b"]
            routers = ["r"]
            [[links]]
            between = ["a", "r"]
            rate = "10Mbps"
            delay = "5ms"
            [[links]]
            between = ["r", "b"]
            rate = "10Mbps"
            delay = "5ms"
            {extra}"#
        )
    }

    /// Hosts `a` and `b` joined by two routes, through `r1` and through `r2`, and `extra`.
    pub(crate) fn diamond(extra: &str) -> String {
        format!(
            r#"duration = "10s"
            [nodes]
            hosts = ["a", "b"]
            routers = ["r1", "r2"]
            [[links]]
            between = ["a", "r1"]
            rate = "10Mbps"
            delay = "5ms"
            [[links]]
            between = ["r1", "b"]
            rate = "10Mbps"
            delay = "5ms"
            [[links]]
            between = ["a", "r2"]
            rate = "20Mbps"
            delay = "10ms"
            [[links]]
            between = ["r2", "b"]
            rate = "20Mbps"
            delay = "10ms"
            {extra}"#
        )
    }

    fn scenario(text: &str) -> Scenario {
        let table: toml::Table = toml::from_str(text).expect("TOML");
        crate::diagnose::deserialize_all(table)
            .unwrap_or_else(|c| panic!("{:?}", c.problems.first().map(|p| &p.message)))
    }

    /// The scenario compiled with seed 1.
    pub(crate) fn compile(text: &str) -> Simulation {
        compile_seed(text, 1)
    }

    /// The scenario compiled with `seed`.
    pub(crate) fn compile_seed(text: &str, seed: u64) -> Simulation {
        super::compile_skipping(&scenario(text), seed, &super::Skip::default())
            .unwrap_or_else(|e| panic!("{}: {}", format_path(&e.path), e.message))
    }

    /// The first problem compiling the scenario finds, as `path: message`.
    pub(crate) fn error(text: &str) -> String {
        match super::compile_skipping(&scenario(text), 1, &super::Skip::default()) {
            Ok(_) => panic!("compiles"),
            Err(e) => format!("{}: {}", format_path(&e.path), e.message),
        }
    }

    /// The flows' ids in element order.
    pub(crate) fn ids(sim: &Simulation) -> Vec<&str> {
        sim.flows.iter().map(|f| f.id.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{compile, error, line};
    use super::*;

    #[test]
    fn elements_are_added_links_first_then_flows_then_the_sampler() {
        let sim = compile(&line(
            "[[flows]]\nfrom = \"a\"\nto = \"b\"\n[[flows]]\nkind = \"udp-cbr\"\nfrom = \"b\"\nto = \"a\"\nrate = \"1Mbps\"",
        ));
        // Two duplex links: four directed links, elements 0..4.
        assert_eq!(sim.links.len(), 4);
        assert!(sim
            .links
            .iter()
            .enumerate()
            .all(|(i, l)| l.elem == i as u32));
        let elems: Vec<(u32, u32)> = sim.flows.iter().map(|f| (f.source, f.sink)).collect();
        assert_eq!(elems, [(4, 5), (6, 7)]);
        assert_eq!(sim.sampler_elem, 8);
        assert!(sim.tm.is_none());
    }

    #[test]
    fn a_problem_in_a_flow_is_skipped_to_find_the_next_and_one_in_a_link_is_not() {
        let mut skip = Skip::default();
        assert!(skip.add(&[k("flows"), ix(2), k("to")]));
        assert!(
            !skip.add(&[k("flows"), ix(2), k("from")]),
            "already left out"
        );
        assert!(skip.add(&[k("traffic"), ix(0)]));
        assert!(skip.add(&[k("caches"), ix(1), k("node")]));
        assert!(!skip.add(&[k("links"), ix(0), k("rate")]));
        assert!(!skip.add(&[k("duration")]));
    }

    #[test]
    fn the_run_and_its_measurement_window_are_checked() {
        let e = error(&line("").replace("duration = \"10s\"", "duration = \"0s\""));
        assert_eq!(e, "duration: must be positive");
        let e = error(&line("[measure]\nend = \"11s\""));
        assert_eq!(e, "measure.end: 11s is after the end of the run (10s)");
        let e = error(&line("[measure]\nstart = \"5s\"\nend = \"5s\""));
        assert_eq!(e, "measure.start: must be before measure.end");
        let e = error(&line("[measure]\ninterval = \"1ps\""));
        assert!(
            e.starts_with("measure.interval: 1ps would take more than"),
            "{e}"
        );
        let e = error(&line("[routing]\ntm_reaction = \"1s\""));
        assert!(
            e.starts_with("routing.tm_reaction: only for scenarios with link failures"),
            "{e}"
        );
    }
}
