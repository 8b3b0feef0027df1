//! Tse's multipath TCP-fairness metrics (003-tse-fairness.md §1; `docs/metrics.md`): for each
//! multipath flow, its throughput M_p on each of its paths p against the TCP-fair share T_p
//! (lenient fairness, eq. 1.2: M_p ≤ T_p for every p) and its total M against the stringent
//! bound max_p(T_p + Σ_{q≠p} S_q) (eq. 1.4 with "argmax" read as max and M_p as T_p, spec §1),
//! where S_q is the spare capacity of path q.
//!
//! A path is a distinct route: subflows on the same route are summed into one M_p. Rates are
//! goodput: a link's rate counts at the flow's payload fraction, as a flow alone on it would
//! measure.

use serde::Serialize;

use super::{FlowResult, LinkResult, SubflowResult};
use crate::sim::Simulation;
use crate::spec::MpFairnessMode;

/// One path of a multipath flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MpFairnessPath {
    /// The route, nodes joined by `>`.
    pub path: String,
    /// Subflows of the flow on it.
    pub subflows: u32,
    /// M_p: the flow's throughput on it (its subflows' acknowledged bytes in the window).
    pub m_p_bps: f64,
    /// T_p: what one TCP would get on it (`None`: no link of finite rate).
    pub t_p_bps: Option<f64>,
    /// S_p: its spare capacity.
    pub s_p_bps: Option<f64>,
    /// The link taken as its bottleneck (analytic: its slowest; the first of equals).
    pub bottleneck: Option<String>,
    /// Analytic: other flows and subflows active in the window that cross the bottleneck.
    pub competitors: Option<u32>,
}

/// One multipath flow's fairness figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MpFairness {
    /// The flow's id.
    pub flow: String,
    /// `"analytic"` or `"reference-runs"`.
    pub mode: &'static str,
    /// M = Σ_p M_p.
    pub m_bps: f64,
    /// Σ_p T_p: the most a leniently fair flow could take.
    pub lenient_bound_bps: Option<f64>,
    /// max_p M_p / T_p (eq. 1.2 holds when at most 1).
    pub lenient_ratio: Option<f64>,
    /// max_p (T_p + Σ_{q≠p} S_q) (eq. 1.4).
    pub stringent_bound_bps: Option<f64>,
    /// M / the stringent bound.
    pub stringent_ratio: Option<f64>,
    /// The relative margin of the pass flags.
    pub tolerance: f64,
    /// lenient_ratio ≤ 1 + tolerance.
    pub lenient_fair: Option<bool>,
    /// Leniently fair and stringent_ratio ≤ 1 + tolerance (stringent fairness includes
    /// lenient, spec §1 Definition 2).
    pub stringent_fair: Option<bool>,
    /// Per path, in the order the flow's subflows first use them.
    pub paths: Vec<MpFairnessPath>,
}

impl MpFairness {
    /// The figures of `flow` with paths whose M_p, T_p and S_p are set.
    #[must_use]
    pub fn judge(
        flow: &str,
        mode: MpFairnessMode,
        tolerance: f64,
        paths: Vec<MpFairnessPath>,
    ) -> MpFairness {
        let m_bps: f64 = paths.iter().map(|p| p.m_p_bps).sum();
        let all = |f: fn(&MpFairnessPath) -> Option<f64>| -> Option<Vec<f64>> {
            paths.iter().map(f).collect()
        };
        let (t, s) = (all(|p| p.t_p_bps), all(|p| p.s_p_bps));
        let lenient_bound_bps = t.as_ref().map(|t| t.iter().sum());
        let lenient_ratio = t.as_ref().and_then(|t| {
            paths
                .iter()
                .zip(t)
                .map(|(p, &t_p)| ratio(p.m_p_bps, t_p))
                .reduce(f64::max)
        });
        let stringent_bound_bps = t.as_ref().zip(s.as_ref()).and_then(|(t, s)| {
            let spare: f64 = s.iter().sum();
            (0..t.len()).map(|p| t[p] + spare - s[p]).reduce(f64::max)
        });
        let stringent_ratio = stringent_bound_bps.map(|b| ratio(m_bps, b));
        let lenient_fair = lenient_ratio.map(|r| r <= 1.0 + tolerance);
        let stringent_fair = lenient_fair
            .zip(stringent_ratio)
            .map(|(l, r)| l && r <= 1.0 + tolerance);
        MpFairness {
            flow: flow.to_string(),
            mode: match mode {
                MpFairnessMode::Analytic => "analytic",
                MpFairnessMode::ReferenceRuns => "reference-runs",
            },
            m_bps,
            lenient_bound_bps,
            lenient_ratio,
            stringent_bound_bps,
            stringent_ratio,
            tolerance,
            lenient_fair,
            stringent_fair,
            paths,
        }
    }
}

/// `x / bound`, with nothing over nothing as 0 and something over nothing as infinite.
fn ratio(x: f64, bound: f64) -> f64 {
    if bound > 0.0 {
        x / bound
    } else if x > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// The multipath flows' paths with M_p filled in (T_p and S_p empty): one entry per flow
/// with subflows, its paths in the order its subflows first use them.
#[must_use]
pub fn paths_of(
    flows: &[FlowResult],
    subflows: &[SubflowResult],
) -> Vec<(String, Vec<MpFairnessPath>)> {
    let mut out: Vec<(String, Vec<MpFairnessPath>)> = Vec::new();
    for f in flows {
        let mut paths: Vec<MpFairnessPath> = Vec::new();
        for s in subflows.iter().filter(|s| s.flow == f.id) {
            let m = s.throughput_bps.unwrap_or(0.0);
            match paths.iter_mut().find(|p| p.path == s.path) {
                Some(p) => {
                    p.subflows += 1;
                    p.m_p_bps += m;
                }
                None => paths.push(MpFairnessPath {
                    path: s.path.clone(),
                    subflows: 1,
                    m_p_bps: m,
                    t_p_bps: None,
                    s_p_bps: None,
                    bottleneck: None,
                    competitors: None,
                }),
            }
        }
        if !paths.is_empty() {
            out.push((f.id.clone(), paths));
        }
    }
    out
}

/// The directed links a route `a>b>c` crosses, as indices into `links` (the first link
/// joining each pair of nodes in that direction).
pub(crate) fn route_links(route: &str, links: &[LinkResult]) -> Vec<usize> {
    let nodes: Vec<&str> = route.split('>').collect();
    nodes
        .windows(2)
        .filter_map(|w| links.iter().position(|l| l.from == w[0] && l.to == w[1]))
        .collect()
}

impl Simulation {
    /// The analytic figures of every multipath flow: each path's bottleneck is its slowest
    /// link C_p (the first of equals), k_p the other flows and subflows active in the window
    /// that cross it, T_p = C_p/(k_p + 1) and S_p = C_p when k_p = 0, else 0 (every
    /// competitor is taken to be greedy and bottlenecked there).
    pub(super) fn mp_fairness_analytic(
        &self,
        tolerance: f64,
        flows: &[FlowResult],
        subflows: &[SubflowResult],
        links: &[LinkResult],
    ) -> Vec<MpFairness> {
        let mut out = Vec::new();
        for (flow, mut paths) in paths_of(flows, subflows) {
            let fraction = self
                .flows
                .iter()
                .find(|f| f.id == flow)
                .map_or(1.0, |f| f.payload_fraction);
            // Every other active flow's routes: a multipath flow's active subflows', another
            // flow's own.
            let others: Vec<&str> = flows
                .iter()
                .filter(|f| f.id != flow && f.throughput_bps.is_some())
                .flat_map(|f| {
                    let subs: Vec<&str> = subflows
                        .iter()
                        .filter(|s| s.flow == f.id && s.window_bytes > 0)
                        .map(|s| s.path.as_str())
                        .collect();
                    if subflows.iter().any(|s| s.flow == f.id) {
                        subs
                    } else {
                        vec![f.path.as_str()]
                    }
                })
                .collect();
            for p in &mut paths {
                let bottleneck = route_links(&p.path, links)
                    .into_iter()
                    .filter_map(|i| links[i].rate_bps.map(|r| (i, r)))
                    .reduce(|a, b| if b.1 < a.1 { b } else { a });
                let Some((i, rate_bps)) = bottleneck else {
                    continue;
                };
                let k = others
                    .iter()
                    .filter(|r| route_links(r, links).contains(&i))
                    .count();
                let c_p = rate_bps * fraction;
                p.t_p_bps = Some(c_p / (k as f64 + 1.0));
                p.s_p_bps = Some(if k == 0 { c_p } else { 0.0 });
                p.bottleneck = Some(links[i].id.clone());
                p.competitors = Some(u32::try_from(k).unwrap_or(u32::MAX));
            }
            out.push(MpFairness::judge(
                &flow,
                MpFairnessMode::Analytic,
                tolerance,
                paths,
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(m: f64, t: f64, s: f64) -> MpFairnessPath {
        MpFairnessPath {
            path: String::new(),
            subflows: 1,
            m_p_bps: m,
            t_p_bps: Some(t),
            s_p_bps: Some(s),
            bottleneck: None,
            competitors: None,
        }
    }

    #[test]
    fn two_equal_paths_with_a_tcp_each_allow_a_quarter_stringently_and_half_leniently() {
        // Spec §1's table: C = 5 on each path, T_p = C/2, S_p = 0.
        let f = MpFairness::judge(
            "mp",
            MpFairnessMode::Analytic,
            0.05,
            vec![path(1.5, 2.5, 0.0), path(1.0, 2.5, 0.0)],
        );
        assert_eq!(f.lenient_bound_bps, Some(5.0), "1/2 of the 10 in total");
        assert_eq!(f.stringent_bound_bps, Some(2.5), "1/4 of the 10 in total");
        assert_eq!(f.lenient_ratio, Some(0.6));
        assert_eq!(f.stringent_ratio, Some(1.0));
        assert_eq!((f.lenient_fair, f.stringent_fair), (Some(true), Some(true)));
    }

    #[test]
    fn sixteen_paths_with_k_tcps_allow_33_minus_2k_units() {
        // Spec §1: 16 paths of C = 2 units; k carry one TCP (T = 1, S = 0), the others are
        // empty (T = S = 2): the stringent bound is 33 − 2k units.
        for k in 0..=16 {
            let paths: Vec<_> = (0..16)
                .map(|p| {
                    if p < k {
                        path(0.0, 1.0, 0.0)
                    } else {
                        path(0.0, 2.0, 2.0)
                    }
                })
                .collect();
            let f = MpFairness::judge("mp", MpFairnessMode::Analytic, 0.0, paths);
            let want = if k == 0 { 32.0 } else { 33.0 - 2.0 * k as f64 };
            assert_eq!(f.stringent_bound_bps, Some(want), "k = {k}");
        }
    }

    #[test]
    fn over_the_bound_fails_and_stringent_needs_lenient() {
        // Within the total but over T_p on one path: leniently unfair, so not stringent.
        let f = MpFairness::judge(
            "mp",
            MpFairnessMode::Analytic,
            0.05,
            vec![path(3.0, 2.5, 0.0), path(0.0, 2.5, 5.0)],
        );
        assert_eq!(f.lenient_ratio, Some(1.2));
        assert_eq!(f.stringent_bound_bps, Some(7.5));
        assert_eq!(
            (f.lenient_fair, f.stringent_fair),
            (Some(false), Some(false))
        );
        // A missing T_p leaves the figures empty rather than wrong.
        let mut open = path(1.0, 0.0, 0.0);
        open.t_p_bps = None;
        let f = MpFairness::judge("mp", MpFairnessMode::Analytic, 0.05, vec![open]);
        assert_eq!((f.lenient_ratio, f.stringent_fair), (None, None));
    }
}
