//! `measure.mp_fairness = "reference-runs"`: T_p and S_p of Tse's fairness metrics measured
//! rather than derived (003-tse-fairness.md §1; `docs/metrics.md`). For each multipath TCP
//! flow, with the run's seed:
//! * S_p from one run of the scenario without the flow: min over p's links of their spare
//!   capacity, at the flow's payload fraction: (rate − carried bit rate) for a link that
//!   dropped nothing from its queue in the window, 0 for one that did. Tse's S_p is capacity
//!   "available because all flows using the links of p are bottlenecked elsewhere"; a link
//!   whose queue drops is where some flow is bottlenecked, and what it leaves unused is that
//!   flow's sawtooth (one NewReno under the chapter-4 RED leaves about 28% of a 5 Mb/s path),
//!   not spare capacity (D260);
//! * T_p from one run per path p with the flow replaced, at its place in the scenario, by one
//!   NewReno flow on p with an unlimited receive window (the "idealized TCP" of the thesis's
//!   footnote), same ends, start, stop and size: its throughput.
//!
//! Removing the flow shifts the random streams of the flows after it (each flow's stream is
//! keyed by its index); links keep theirs. Replacing it keeps every stream.

use crate::error::{PathSeg, ScenarioError};
use crate::load::LoadedScenario;
use crate::results::mp_fairness::{paths_of, route_links, MpFairness, MpFairnessPath};
use crate::results::Results;
use crate::sim::Simulation;
use crate::spec::{FlowSpec, MpFairnessMode, TcpFlowSpec, TcpSpec, WindowLimit};
use pathpool_cc::CcKind;

/// The scenario's flow entry `results` calls `id`, if it is a multipath TCP flow with one copy.
fn entry_of(scenario: &LoadedScenario, id: &str) -> Option<usize> {
    scenario
        .scenario
        .flows
        .iter()
        .enumerate()
        .position(|(j, f)| {
            let c = f.common();
            c.count == 1 && c.id.clone().unwrap_or_else(|| format!("flow{j}")) == id
        })
        .filter(|&j| matches!(scenario.scenario.flows[j], FlowSpec::Tcp(_)))
}

/// `flows[j]` as one NewReno flow on `route` (node names), everything multipath removed.
fn newreno_on(f: &TcpFlowSpec, route: &str) -> TcpFlowSpec {
    TcpFlowSpec {
        route: Some(route.split('>').map(str::to_string).collect()),
        paths: None,
        subflows: None,
        k_paths: None,
        tm: None,
        scheduler: None,
        receive_buffer: None,
        opportunistic_retransmission: None,
        penalisation: None,
        cc: Some(crate::spec::FlowCc::Window(CcKind::NewReno)),
        tcp: Some(TcpSpec {
            cc: Some(CcKind::NewReno),
            rwnd: Some(WindowLimit::Unlimited),
            ..f.tcp.clone().unwrap_or_default()
        }),
        ..f.clone()
    }
}

fn run(
    scenario: &LoadedScenario,
    seed: u64,
    edit: impl FnOnce(&mut Vec<FlowSpec>),
) -> Result<Results, ScenarioError> {
    let mut variant = scenario.clone();
    edit(&mut variant.scenario.flows);
    variant.scenario.measure.mp_fairness = None;
    let mut sim = variant.compile(Some(seed))?;
    sim.run();
    Ok(sim.results())
}

impl Simulation {
    /// The reference runs of `measure.mp_fairness = "reference-runs"` for this finished run of
    /// `scenario` with `seed`: fills `results.mp_fairness` with measured T_p and S_p. Does
    /// nothing for other modes. `progress` is told what each run is before it starts.
    ///
    /// # Errors
    /// A variant of the scenario that does not compile (which the checks made when this run
    /// was compiled should prevent).
    pub fn mp_fairness_reference_runs(
        &self,
        scenario: &LoadedScenario,
        seed: u64,
        results: &mut Results,
        mut progress: impl FnMut(&str),
    ) -> Result<(), ScenarioError> {
        let Some((MpFairnessMode::ReferenceRuns, tolerance)) = self.mp_fairness else {
            return Ok(());
        };
        let mut out = Vec::new();
        for (flow, mut paths) in paths_of(&results.flows, &results.subflows) {
            let Some(j) = entry_of(scenario, &flow) else {
                continue;
            };
            let FlowSpec::Tcp(spec) = scenario.scenario.flows[j].clone() else {
                continue;
            };
            let fraction = self
                .flows
                .iter()
                .find(|f| f.id == flow)
                .map_or(1.0, |f| f.payload_fraction);
            progress(&format!("{flow}: a run without it"));
            let without = run(scenario, seed, |flows| {
                flows.remove(j);
            })?;
            for p in &mut paths {
                p.s_p_bps = spare_bps(&without, p, fraction);
                progress(&format!("{flow}: one NewReno on {}", p.path));
                let alone = run(scenario, seed, |flows| {
                    flows[j] = FlowSpec::Tcp(newreno_on(&spec, &p.path));
                })?;
                p.t_p_bps = alone.flow(&flow).and_then(|f| f.throughput_bps);
            }
            out.push(MpFairness::judge(
                &flow,
                MpFairnessMode::ReferenceRuns,
                tolerance,
                paths,
            ));
        }
        results.mp_fairness = Some(out);
        Ok(())
    }
}

/// Path `p`'s spare capacity in `without`: min over its links of finite rate of their spare
/// capacity (0 if the queue dropped, else rate − carried bit rate), at `fraction`; the
/// tightest link is named.
fn spare_bps(without: &Results, p: &mut MpFairnessPath, fraction: f64) -> Option<f64> {
    let tightest = route_links(&p.path, &without.links)
        .into_iter()
        .filter_map(|i| {
            let l = &without.links[i];
            let spare = |r: f64| {
                if l.drops > 0 {
                    0.0
                } else {
                    (r - l.throughput_bps).max(0.0) * fraction
                }
            };
            l.rate_bps.map(|r| (i, spare(r)))
        })
        .reduce(|a, b| if b.1 < a.1 { b } else { a })?;
    p.bottleneck = Some(without.links[tightest.0].id.clone());
    Some(tightest.1)
}

/// Why a scenario cannot have reference runs: a multipath TCP flow with copies (`count`).
pub(crate) fn check(flows: &[FlowSpec]) -> Option<(Vec<PathSeg>, String)> {
    flows.iter().enumerate().find_map(|(j, f)| {
        let FlowSpec::Tcp(t) = f else { return None };
        let multipath =
            t.paths.is_some() || t.subflows.is_some() || t.k_paths.is_some() || t.tm.is_some();
        (multipath && t.common.count > 1).then(|| {
            (
                vec![
                    PathSeg::Key("flows".into()),
                    PathSeg::Index(j),
                    PathSeg::Key("count".into()),
                ],
                "measure.mp_fairness = \"reference-runs\" replaces each multipath flow by one \
                 NewReno flow, so a multipath flow must have one copy (count = 1); give the \
                 copies entries of their own, or use measure.mp_fairness = \"analytic\""
                    .to_string(),
            )
        })
    })
}
