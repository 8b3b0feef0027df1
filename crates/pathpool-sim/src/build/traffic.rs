//! Traffic generators (`[[traffic]]`): finite single-path TCP flows arriving as a Poisson
//! process, with sizes drawn from a distribution (with Pareto sizes, the Poisson Pareto Burst
//! Process).

use std::collections::HashSet;

use pathpool_core::{BufferSize, Rng, Time};

use super::entry::unique_id;
use super::net::{end_hosts, flow_paths, Net};
use super::tcp::{add_tcp_flow, FlowEnds};
use super::tcp_params::{element_tcp_spec, resolve_tcp, single_path_cc};
use super::{at, child, ix, k, MAX_FLOWS, STREAM_OVERHEAD, STREAM_TRAFFIC};
use crate::error::SpecError;
use crate::overhead::SendOverhead;
use crate::sim::Simulation;
use crate::spec::{Scenario, SizeDist, TrafficSpec};

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
    let (from, to) = end_hosts(net, &t.from, &t.to, &here)?;
    let spec = element_tcp_spec(sc, t.tcp.as_ref(), t.cc);
    let params = resolve_tcp(&spec, &field("tcp"))?;
    single_path_cc(t.cc, t.tcp.as_ref(), params.cc, &here)?;
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
    let paths = flow_paths(net, from, to, None, &here, child(&here, "route"), true)?;
    let lambda = match (t.arrival_rate, t.load) {
        (Some(r), None) => {
            if !(r > 0.0 && r.is_finite()) {
                return Err(SpecError::at(field("arrival_rate"), "must be a positive number of flows per second"));
            }
            r
        }
        (None, Some(rho)) => {
            if !(rho > 0.0 && rho.is_finite()) {
                return Err(SpecError::at(field("load"), "must be a positive number"));
            }
            let c = paths.data.iter().map(|e| net.rate[e.0 as usize]).filter(|r| !r.is_infinite()).min();
            let c = c.ok_or_else(|| SpecError::at(field("load"), "every link on the route has an infinite rate; give arrival_rate instead"))?;
            rho * c.bps() as f64 / (8.0 * mean as f64)
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
        let id = unique_id(ids, format!("{prefix}.{n}"), field("id"))?;
        let overhead = SendOverhead::new(
            params.send_overhead,
            Rng::stream(seed, STREAM_OVERHEAD, sim.flows.len() as u64),
        )
        .map(Box::new);
        let ends = FlowEnds {
            id,
            from,
            to,
            start: Time::from_secs_f64(at_s),
            stop: None,
            size: Some(size),
            overhead,
        };
        add_tcp_flow(sim, net, ends, &paths, &params);
        n += 1;
    }
    Ok(())
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
    use super::super::testing::{compile, compile_seed, error, line};
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
                "traffic[0].cc: \"lia\" is a multipath controller, and traffic[0] has a single path; traffic flows have one path each: use cc = \"newreno\"",
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(error(&generator(extra)), want, "{extra}");
        }
    }
}
