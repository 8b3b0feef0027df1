//! `inrpp-dumbbell`: the INRPP document's §5.2, Fig. 7 and Table 5: three 10 MB flows over a
//! 10 Mb/s bottleneck with a 10 Mb/s one-hop detour, started 1 s apart; INRPP, RCP and TCP
//! (NewReno), with equal access delays and with 50, 100 and 200 ms ones ("different RTTs").
//! Compared: AFCT and the 10-ms sampled fairness of Table 5, the claims INRPP < TCP < RCP in
//! AFCT, INRPP's goodput steps (Fig. 8) and node 0's output (Fig. 9). Observed: when node 0
//! first went to Backpressure (the document: 3.04 s), what full caches dropped, the fairness
//! on the other reading of "instantaneous throughput" (each flow's mean since its start,
//! D301), the receivers' inter-arrival times (Fig. 12: INRPP 1-4 ms, TCP up to 70 ms), and
//! from flow 2's sequence trace (Fig. 10) when node 4 first cached it, how much of it had left
//! the sender by then (the document: 3.04 s, about half) and how long its sender took to send
//! it once (about 2 s at 40 Mb/s), drawn as `fig10-flow2.svg`.
//!
//! Nothing in these runs is random (no send overhead, no random loss), so one seed is the
//! run; more seeds repeat it.

use pathpool_sim::Results;

use super::{published, Ctx, Estimate, Experiment, Job, Observation, Report};

const FILE: &str = "scenarios/reproductions/inrpp-dumbbell.toml";
const TEXT: &str = include_str!("../../../../scenarios/reproductions/inrpp-dumbbell.toml");
const SOURCE: &str = "001-inrpp.md §5.2 Fig. 7, Table 5, Figs 8-9";

pub(super) const EXPERIMENT: Experiment = Experiment {
    id: "inrpp-dumbbell",
    title: "Three flows, a bottleneck with a detour: INRPP, RCP and TCP (Table 5)",
    source: SOURCE,
    run,
    compared,
};

/// The transports compared: the name in the metrics and the flows' `cc`.
const TRANSPORTS: [(&str, &str); 3] = [("INRPP", "inrpp"), ("RCP", "rcp"), ("TCP", "newreno")];

/// The sender access links (links 5-7 of the file) and their delays in the "different RTTs"
/// runs (spec 001 §5.1: 50, 100 and 200 ms, one per sender).
const DIFFERENT_RTTS: [(&str, &str); 3] = [
    ("links.5.delay", "50ms"),
    ("links.6.delay", "100ms"),
    ("links.7.delay", "200ms"),
];

/// A cache INRPP never fills on this network.
const LARGE_CACHE: [(&str, &str); 3] = [
    ("inrpp.cache", "100MB"),
    ("inrpp.cache_high", "90MB"),
    ("inrpp.cache_low", "50MB"),
];

/// The intervals of Fig. 8's goodput steps, (from, to] in seconds, fixed before the run:
/// half a second after each arrival for INRPP to reach its share, and for three flows until
/// 5 s, before any flow can end (ideal sharing ends flow 1 at about 9.5 s).
const ALONE: (f64, f64) = (1.5, 2.0);
const TWO: (f64, f64) = (2.5, 3.0);
const THREE: (f64, f64) = (3.5, 5.0);
/// Node 0's output (Fig. 9) from 2 s, after it has gone to S&D, to 9 s.
const NODE0_OUTPUT: (f64, f64) = (2.0, 9.0);
const NODE0_LINKS: [&str; 2] = ["n0-n2:n0->n2", "n0-n1:n0->n1"];

fn compared(_quick: bool) -> Vec<(String, &'static str)> {
    let mut rows: Vec<(String, &'static str)> = Vec::new();
    for (t, _) in TRANSPORTS {
        rows.push((format!("{t}: AFCT"), "s"));
    }
    for suffix in ["", ", different RTTs"] {
        for (t, _) in TRANSPORTS {
            rows.push((format!("{t}: fairness{suffix}"), ""));
        }
    }
    rows.push(("AFCT, TCP over INRPP".into(), "ratio"));
    rows.push(("AFCT, RCP over TCP".into(), "ratio"));
    rows.push(("INRPP: goodput of flow 1 alone".into(), "Mb/s"));
    rows.push(("INRPP: goodput per flow, two flows".into(), "Mb/s"));
    rows.push(("INRPP: goodput per flow, three flows".into(), "Mb/s"));
    rows.push(("INRPP: node 0 output".into(), "Mb/s"));
    rows
}

fn run(ctx: &Ctx<'_>) -> Result<Report, String> {
    let seeds = ctx.seeds(1, 1);
    let targets = published::of(EXPERIMENT.id)?;
    let mut jobs = Vec::new();
    for different in [false, true] {
        for (_, cc) in TRANSPORTS {
            let mut o: Vec<(&str, String)> = (0..3)
                .map(|k| {
                    (
                        ["flows.0.cc", "flows.1.cc", "flows.2.cc"][k],
                        cc.to_string(),
                    )
                })
                .collect();
            if different {
                o.extend(DIFFERENT_RTTS.iter().map(|&(k, v)| (k, v.to_string())));
            }
            for seed in 1..=u64::from(seeds) {
                jobs.push(Job::new(FILE, TEXT, &o, seed));
            }
        }
    }
    // INRPP again with a cache it never fills (100 MB, S_high 90 MB, S_low 50 MB): what the
    // mechanism gives when no packet meets a full cache.
    let mut large: Vec<(&str, String)> = LARGE_CACHE
        .iter()
        .map(|&(k, v)| (k, v.to_string()))
        .collect();
    large.extend((0..3).map(|k| {
        (
            ["flows.0.cc", "flows.1.cc", "flows.2.cc"][k],
            "inrpp".into(),
        )
    }));
    for seed in 1..=u64::from(seeds) {
        jobs.push(Job::new(FILE, TEXT, &large, seed));
    }
    let results = ctx.runner.run(&jobs)?;
    let (results, large_runs) = results.split_at(results.len() - seeds as usize);
    let mut large_afct = Vec::new();
    let mut large_jain = Vec::new();
    let mut large_gap = Vec::new();
    for r in large_runs {
        large_afct.push(completed_afct(r)?);
        large_jain.push(r.jain_sampled.and_then(|j| j.mean()).unwrap_or(f64::NAN));
        large_gap.push(interarrival_quantile(r, 1.0).unwrap_or(f64::NAN) * 1e3);
    }
    let mut chunks = results.chunks(seeds as usize);
    let mut report = Report::default();
    let mut csv = String::from(
        "transport,rtts,seed,afct_s,fairness,fairness_since_start,jain_whole_window\n",
    );
    let mut afct = Vec::new();
    let mut fairness: Vec<(String, Estimate)> = Vec::new();
    for different in [false, true] {
        let suffix = if different { ", different RTTs" } else { "" };
        for (transport, _) in TRANSPORTS {
            let runs = chunks.next().ok_or("missing runs")?;
            let mut afcts = Vec::new();
            let mut jains = Vec::new();
            let mut since_start = Vec::new();
            for (seed, r) in runs.iter().enumerate() {
                let a = completed_afct(r)?;
                let j = r.jain_sampled.and_then(|j| j.mean()).unwrap_or(f64::NAN);
                let s = r
                    .jain_sampled_since_start
                    .and_then(|j| j.mean())
                    .unwrap_or(f64::NAN);
                csv += &format!(
                    "{transport},{},{},{a:.4},{j:.4},{s:.4},{:.4}\n",
                    if different { "different" } else { "equal" },
                    seed + 1,
                    r.jain_index.unwrap_or(f64::NAN)
                );
                afcts.push(a);
                jains.push(j);
                since_start.push(s);
            }
            report.observations.push(Observation::new(
                format!("{transport}: fairness{suffix}, means since each flow's start (D301)"),
                "",
                Estimate::of(&since_start),
            ));
            if !different {
                for (what, q) in [("median", 0.5), ("99th percentile", 0.99), ("largest", 1.0)] {
                    let v: Vec<f64> = runs
                        .iter()
                        .map(|r| interarrival_quantile(r, q).unwrap_or(f64::NAN) * 1e3)
                        .collect();
                    report.observations.push(Observation::new(
                        format!("{transport}: inter-arrival at the receivers, {what} (bin's top)"),
                        "ms",
                        Estimate::of(&v),
                    ));
                }
                afct.push((transport, Estimate::of(&afcts)));
                if transport == "INRPP" {
                    inrpp_figures(&mut report, targets, runs)?;
                    sequence_figures(&mut report, runs)?;
                }
            }
            fairness.push((
                format!("{transport}: fairness{suffix}"),
                Estimate::of(&jains),
            ));
            if transport == "INRPP" {
                let first_b: Vec<f64> = runs
                    .iter()
                    .map(|r| node0_first_backpressure(r).unwrap_or(f64::NAN))
                    .collect();
                let drops: Vec<f64> = runs
                    .iter()
                    .map(|r| r.routers.iter().map(|x| x.cache_drops).sum::<u64>() as f64)
                    .collect();
                report.observations.push(Observation::new(
                    format!("INRPP{suffix}: node 0 first in Backpressure (published 3.04 s)"),
                    "s",
                    Estimate::of(&first_b),
                ));
                report.observations.push(Observation::new(
                    format!("INRPP{suffix}: packets dropped by full caches"),
                    "",
                    Estimate::of(&drops),
                ));
            }
        }
    }
    let mut comparisons = Vec::new();
    for (transport, e) in &afct {
        comparisons.push(targets.compare(&format!("{transport}: AFCT"), "s", *e)?);
    }
    for (metric, e) in &fairness {
        comparisons.push(targets.compare(metric, "", *e)?);
    }
    let mean_of = |name: &str| afct.iter().find(|(t, _)| *t == name).map(|(_, e)| e.mean);
    let (inrpp, rcp, tcp) = (
        mean_of("INRPP").unwrap_or(f64::NAN),
        mean_of("RCP").unwrap_or(f64::NAN),
        mean_of("TCP").unwrap_or(f64::NAN),
    );
    comparisons.push(targets.compare(
        "AFCT, TCP over INRPP",
        "ratio",
        Estimate::of(&[tcp / inrpp]),
    )?);
    comparisons.push(targets.compare("AFCT, RCP over TCP", "ratio", Estimate::of(&[rcp / tcp]))?);
    // INRPP's figures first, then the table's, in `compared` order.
    let inrpp_rows = std::mem::take(&mut report.comparisons);
    report.comparisons = comparisons;
    report.comparisons.extend(inrpp_rows);
    report.observations.push(Observation::new(
        "INRPP, 100 MB cache (never full): AFCT",
        "s",
        Estimate::of(&large_afct),
    ));
    report.observations.push(Observation::new(
        "INRPP, 100 MB cache (never full): fairness",
        "",
        Estimate::of(&large_jain),
    ));
    report.observations.push(Observation::new(
        "INRPP, 100 MB cache (never full): largest inter-arrival (bin's top)",
        "ms",
        Estimate::of(&large_gap),
    ));
    report.files.push(("runs.csv".into(), csv));
    Ok(report)
}

/// Mean completion time of the run's flows; an error if one did not complete (the run is
/// long enough for every transport, so that is a failure, not a figure).
fn completed_afct(r: &Results) -> Result<f64, String> {
    let fcts: Vec<f64> = r.flows.iter().filter_map(|f| f.fct_s).collect();
    if fcts.len() != r.flows.len() {
        return Err(format!(
            "{} of {} flows completed in {} s",
            fcts.len(),
            r.flows.len(),
            r.sim_time_s
        ));
    }
    Ok(fcts.iter().sum::<f64>() / fcts.len() as f64)
}

/// The upper edge of the `interarrival` bin holding quantile `q` of every flow's gaps
/// pooled (1: the largest gap's bin), in seconds.
fn interarrival_quantile(r: &Results, q: f64) -> Option<f64> {
    let t = r.interarrival.as_ref()?;
    let (Some(hi), Some(count)) = (t.f64s("hi_s"), t.u64s("count")) else {
        return None;
    };
    let mut bins: Vec<(f64, u64)> = Vec::new();
    for (&h, &n) in hi.iter().zip(count) {
        match bins.iter_mut().find(|b| b.0 == h) {
            Some(b) => b.1 += n,
            None => bins.push((h, n)),
        }
    }
    bins.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = bins.iter().map(|b| b.1).sum();
    let need = (q * total as f64).ceil() as u64;
    let mut seen = 0;
    bins.into_iter()
        .find(|b| {
            seen += b.1;
            seen >= need.max(1)
        })
        .map(|b| b.0)
}

fn node0_first_backpressure(r: &Results) -> Option<f64> {
    r.routers
        .iter()
        .find(|x| x.node == "n0")
        .and_then(|x| x.first_backpressure_s)
}

/// Fig. 10 from flow 2's sequence trace: when node 4 first cached it, the share of its
/// segments sent before then, and how long its sender took to send every segment once; and
/// the figure itself, from the first seed's run.
fn sequence_figures(report: &mut Report, runs: &[Results]) -> Result<(), String> {
    let mut first_cached = Vec::new();
    let mut sent_before = Vec::new();
    let mut sending = Vec::new();
    for (k, r) in runs.iter().enumerate() {
        let t = r
            .sequence_trace
            .as_ref()
            .ok_or("the INRPP run has no sequence trace of flow 2")?;
        let (Some(time), Some(point), Some(event), Some(seq)) = (
            t.f64s("time_s"),
            t.strs("point"),
            t.strs("event"),
            t.u64s("seq"),
        ) else {
            return Err("the sequence trace lacks time_s, point, event or seq".into());
        };
        let rows = |p: &str, e: &str| -> Vec<(f64, f64)> {
            (0..time.len())
                .filter(|&i| point[i] == p && event[i] == e)
                .map(|i| (time[i], seq[i] as f64 / 1e6))
                .collect()
        };
        let sent = rows("sender", "sent");
        let n4 = rows("n4", "cached");
        let (Some(first), Some(last)) = (sent.first(), sent.last()) else {
            return Err("flow 2's sender sent nothing".into());
        };
        let cached_at = n4.first().map_or(f64::NAN, |c| c.0);
        first_cached.push(cached_at);
        sent_before.push(
            100.0 * sent.iter().filter(|s| s.0 < cached_at).count() as f64 / sent.len() as f64,
        );
        sending.push(last.0 - first.0);
        if k == 0 {
            let svg = super::svg::line_chart(
                "inrpp-dumbbell: flow 2's sequence numbers (Fig. 10)",
                ("time (s)", "sequence number (MB)"),
                &[
                    ("sender: sent", sent),
                    ("node 4: cached", n4),
                    ("node 0: cached", rows("n0", "cached")),
                    ("receiver: in order", rows("receiver", "delivered")),
                ],
            );
            report.files.push(("fig10-flow2.svg".into(), svg));
        }
    }
    for (metric, unit, values) in [
        (
            "INRPP: node 4 first caches flow 2 (published 3.04 s)",
            "s",
            &first_cached,
        ),
        (
            "INRPP: flow 2's segments sent before node 4 caches it (published about half)",
            "%",
            &sent_before,
        ),
        (
            "INRPP: flow 2's sender sends every segment once in (published about 2 s)",
            "s",
            &sending,
        ),
    ] {
        report
            .observations
            .push(Observation::new(metric, unit, Estimate::of(values)));
    }
    Ok(())
}

/// Fig. 8's goodput steps and Fig. 9's node 0 output, from the INRPP runs' time series.
fn inrpp_figures(
    report: &mut Report,
    targets: &'static published::Published,
    runs: &[Results],
) -> Result<(), String> {
    let mut steps: [Vec<f64>; 3] = Default::default();
    let mut node0 = Vec::new();
    for r in runs {
        let flow_mbps = |ids: &[&str], (from, to): (f64, f64)| -> Result<f64, String> {
            let t = &r.flow_timeseries;
            let (Some(time), Some(flow), Some(goodput)) =
                (t.f64s("time_s"), t.strs("flow"), t.f64s("goodput_bps"))
            else {
                return Err("the flow time series lacks time_s, flow or goodput_bps".into());
            };
            let picked: Vec<f64> = time
                .iter()
                .zip(flow)
                .zip(goodput)
                .filter(|((&s, id), _)| {
                    s > from + 1e-9 && s <= to + 1e-9 && ids.contains(&id.as_str())
                })
                .map(|(_, &g)| g / 1e6)
                .collect();
            Ok(picked.iter().sum::<f64>() / picked.len().max(1) as f64)
        };
        steps[0].push(flow_mbps(&["f1"], ALONE)?);
        steps[1].push(flow_mbps(&["f1", "f2"], TWO)?);
        steps[2].push(flow_mbps(&["f1", "f2", "f3"], THREE)?);
        let t = &r.link_timeseries;
        let (Some(time), Some(link), Some(bps)) =
            (t.f64s("time_s"), t.strs("link"), t.f64s("throughput_bps"))
        else {
            return Err("the link time series lacks time_s, link or throughput_bps".into());
        };
        let (from, to) = NODE0_OUTPUT;
        let picked: Vec<f64> = time
            .iter()
            .zip(link)
            .zip(bps)
            .filter(|((&s, l), _)| {
                s > from + 1e-9 && s <= to + 1e-9 && NODE0_LINKS.contains(&l.as_str())
            })
            .map(|(_, &b)| b)
            .collect();
        // Two links a sample: their sum, averaged over the samples.
        node0.push(picked.iter().sum::<f64>() / (picked.len().max(2) / 2) as f64 / 1e6);
    }
    for (metric, values) in [
        ("INRPP: goodput of flow 1 alone", &steps[0]),
        ("INRPP: goodput per flow, two flows", &steps[1]),
        ("INRPP: goodput per flow, three flows", &steps[2]),
        ("INRPP: node 0 output", &node0),
    ] {
        report
            .comparisons
            .push(targets.compare(metric, "Mb/s", Estimate::of(values))?);
    }
    Ok(())
}
