//! The analysis of domain-scale's sweeps: E7a's rank-wise comparison of NMCC and LIA and
//! E7b's multipath gains, against Table 4.2 and Figs 4.16–4.17.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::*;
/// Throughputs of every flow of `rows` matching `config`, sorted ascending, and the
/// relative throughputs (each over its run's fastest), sorted ascending.
fn sorted_throughputs(rows: &[Row], config: &[&str]) -> (Vec<f64>, Vec<f64>) {
    let mut by_run: BTreeMap<(String, u64), Vec<f64>> = BTreeMap::new();
    for r in rows.iter().filter(|r| same_config(&r.config, config)) {
        by_run
            .entry((r.topology.clone(), r.rep))
            .or_default()
            .push(r.throughput_bps);
    }
    let mut all = Vec::new();
    let mut rel = Vec::new();
    for v in by_run.values() {
        let max = v.iter().copied().fold(0.0, f64::max);
        all.extend(v);
        if max > 0.0 {
            rel.extend(v.iter().map(|x| x / max));
        }
    }
    all.sort_by(f64::total_cmp);
    rel.sort_by(f64::total_cmp);
    (all, rel)
}

/// Mean of `v[lo..hi]` for fractions `lo`, `hi` of its length.
pub(super) fn slice_mean(v: &[f64], lo: f64, hi: f64) -> f64 {
    let a = (lo * v.len() as f64).floor() as usize;
    let b = ((hi * v.len() as f64).ceil() as usize).clamp(a + 1, v.len());
    v[a..b].iter().sum::<f64>() / (b - a) as f64
}

/// E7a: rank-wise NMCC-over-LIA gains and relative throughputs (thesis Fig. 4.16).
pub(super) fn e7a(
    tables: &BTreeMap<&'static str, Vec<Row>>,
    report: &mut Report,
) -> Result<(), String> {
    let targets = published::of(EXPERIMENT.id)?;
    let mut csv =
        String::from("case,rank_fraction,nmcc_bps,lia_bps,gain_pct,nmcc_relative,lia_relative\n");
    let mut gain_series = Vec::new();
    let mut rel_series = Vec::new();
    for (sweep, first, label) in E7A_CASES {
        let rows = tables.get(sweep).ok_or("missing sweep")?;
        let (n, nr) = sorted_throughputs(rows, &[first, "\"nmcc\""]);
        let (l, lr) = sorted_throughputs(rows, &[first, "\"lia\""]);
        if n.is_empty() || n.len() != l.len() {
            return Err(format!(
                "E7a {label}: {} NMCC and {} LIA connections",
                n.len(),
                l.len()
            ));
        }
        let len = n.len();
        let gains: Vec<f64> = n
            .iter()
            .zip(&l)
            .map(|(a, b)| if *b > 0.0 { pct(a / b - 1.0) } else { f64::NAN })
            .collect();
        for i in 0..len {
            let _ = writeln!(
                csv,
                // The label has a comma ("10 Mb/s, 5-125 ms"): quoted (RFC 4180).
                "\"{label}\",{:.5},{:.0},{:.0},{:.3},{:.5},{:.5}",
                (i as f64 + 0.5) / len as f64,
                n[i],
                l[i],
                gains[i],
                nr.get(i).copied().unwrap_or(f64::NAN),
                lr.get(i).copied().unwrap_or(f64::NAN)
            );
        }
        // Decile means of the rank-wise gain.
        let finite: Vec<f64> = gains
            .iter()
            .map(|g| if g.is_finite() { *g } else { 0.0 })
            .collect();
        let deciles: Vec<f64> = (0..10)
            .map(|d| slice_mean(&finite, d as f64 / 10.0, (d + 1) as f64 / 10.0))
            .collect();
        gain_series.push((
            label.to_string(),
            deciles
                .iter()
                .enumerate()
                .map(|(d, g)| (10.0 * d as f64 + 5.0, *g))
                .collect::<Vec<_>>(),
        ));
        let rel_dec = |v: &[f64]| -> Vec<(f64, f64)> {
            (0..10)
                .map(|d| {
                    (
                        10.0 * d as f64 + 5.0,
                        pct(slice_mean(v, d as f64 / 10.0, (d + 1) as f64 / 10.0)),
                    )
                })
                .collect()
        };
        rel_series.push((format!("NMCC {label}"), rel_dec(&nr)));
        rel_series.push((format!("LIA {label}"), rel_dec(&lr)));
        let slow = Estimate::of(&finite[..(len / 10).max(1)]);
        let max_decile = deciles.iter().copied().fold(f64::MIN, f64::max);
        let positive =
            finite[..len / 2].iter().filter(|g| **g > 0.0).count() as f64 / (len / 2).max(1) as f64;
        let agg = pct(n.iter().sum::<f64>() / l.iter().sum::<f64>());
        if label.starts_with("10 Mb/s, 5-125") {
            report.comparisons.push(targets.compare(
                &format!("E7a {label}: largest decile gain NMCC vs LIA"),
                "%",
                Estimate {
                    mean: max_decile,
                    ci95: 0.0,
                    n: len,
                },
            )?);
        }
        if label.starts_with("10 Mb/s, 5-250") || label.starts_with("10 Mb/s, 5-500") {
            report.comparisons.push(targets.compare(
                &format!("E7a {label}: slower half, share of ranks NMCC faster"),
                "%",
                Estimate {
                    mean: pct(positive),
                    ci95: 0.0,
                    n: len,
                },
            )?);
        }
        report.comparisons.push(targets.compare(
            &format!("E7a {label}: aggregate NMCC / LIA"),
            "%",
            Estimate {
                mean: agg,
                ci95: 0.0,
                n: len,
            },
        )?);
        report.observations.push(Observation::new(
            format!("E7a {label}: slowest 10% rank-wise gain NMCC vs LIA"),
            "%",
            slow,
        ));
        report.observations.push(Observation::new(
            format!("E7a {label}: slowest 10% relative throughput, NMCC"),
            "%",
            Estimate::of(
                &nr[..(nr.len() / 10).max(1)]
                    .iter()
                    .map(|x| pct(*x))
                    .collect::<Vec<_>>(),
            ),
        ));
        report.observations.push(Observation::new(
            format!("E7a {label}: slowest 10% relative throughput, LIA"),
            "%",
            Estimate::of(
                &lr[..(lr.len() / 10).max(1)]
                    .iter()
                    .map(|x| pct(*x))
                    .collect::<Vec<_>>(),
            ),
        ));
    }
    report.files.push(("e7a_ranks.csv".into(), csv));
    report.files.push((
        "e7a_gains.svg".into(),
        line_chart(
            "E7a (Fig. 4.16): NMCC throughput gain over LIA by rank (decile means)",
            "connections by throughput, percentile (slowest left)",
            "(NMCC - LIA) / LIA, %",
            &gain_series,
        ),
    ));
    report.files.push((
        "e7a_relative.svg".into(),
        line_chart(
            "E7a (Fig. 4.16): relative throughput (over the run's fastest), decile means",
            "connections by relative throughput, percentile",
            "relative throughput, %",
            &rel_series,
        ),
    ));
    Ok(())
}

/// Aggregate throughput (bit/s) per (topology, placement).
type Aggregates = BTreeMap<(String, u64), f64>;

/// Aggregate throughput per (topology, placement) of the rows matching `config`.
fn aggregates(rows: &[Row], config: &[&str]) -> Aggregates {
    let mut m = BTreeMap::new();
    for r in rows.iter().filter(|r| same_config(&r.config, config)) {
        *m.entry((r.topology.clone(), r.rep)).or_insert(0.0) += r.throughput_bps;
    }
    m
}

/// E7b: multipath gain over single-path per topology, with and without TM (Fig. 4.17).
pub(super) fn e7b(
    tables: &BTreeMap<&'static str, Vec<Row>>,
    topos: &[&Topo],
    report: &mut Report,
) -> Result<(), String> {
    let single = tables.get("e7b-single").ok_or("missing sweep")?;
    let yen = tables.get("e7b-yen").ok_or("missing sweep")?;
    let bh = tables.get("e7b-bhandari").ok_or("missing sweep")?;
    let rates = [
        ("\"10Mbps\"", "10 Mb/s"),
        ("\"100Mbps\"", "100 Mb/s"),
        ("\"1Gbps\"", "1 Gb/s"),
    ];
    let mut csv = String::from("topology,density,core_rate,paths,tm,placements,mean_gain_pct\n");
    // (rate, paths, tm) -> per-topology mean gains
    let mut means: BTreeMap<(String, String, bool), Vec<(String, f64)>> = BTreeMap::new();
    for (rate, rate_label) in rates {
        let base = aggregates(single, &[rate]);
        let mut configs: Vec<(String, bool, Aggregates)> = Vec::new();
        for k in ["2", "3"] {
            for (a, tm) in [("\"none\"", false), ("\"shared-link\"", true)] {
                configs.push((format!("Yen {k}"), tm, aggregates(yen, &[rate, k, a])));
            }
        }
        if rate == "\"1Gbps\"" {
            for (a, tm) in [("\"none\"", false), ("\"shared-link\"", true)] {
                configs.push(("Bhandari pair".into(), tm, aggregates(bh, &[a])));
            }
        }
        for (paths, tm, agg) in configs {
            for t in topos {
                let gains: Vec<f64> = agg
                    .iter()
                    .filter(|((name, _), _)| name == t.name)
                    .filter_map(|(key, mp)| {
                        base.get(key)
                            .filter(|b| **b > 0.0)
                            .map(|b| pct(mp / b - 1.0))
                    })
                    .collect();
                if gains.is_empty() {
                    continue;
                }
                let g = gains.iter().sum::<f64>() / gains.len() as f64;
                let _ = writeln!(
                    csv,
                    "{},{:.3},{rate_label},{paths},{},{},{g:.3}",
                    t.name,
                    t.density,
                    if tm { "yes" } else { "no" },
                    gains.len()
                );
                means
                    .entry((rate_label.to_string(), paths.clone(), tm))
                    .or_default()
                    .push((t.name.to_string(), g));
            }
        }
    }
    let est = |rate: &str, paths: &str, tm: bool| -> Option<Estimate> {
        means
            .get(&(rate.to_string(), paths.to_string(), tm))
            .map(|v| Estimate::of(&v.iter().map(|x| x.1).collect::<Vec<_>>()))
    };
    // TM effect: per-topology difference of mean gains.
    let tm_effect = |rate: &str, paths: &[&str]| -> Option<Estimate> {
        let mut d = Vec::new();
        for p in paths {
            let with = means.get(&(rate.to_string(), (*p).to_string(), true))?;
            let without = means.get(&(rate.to_string(), (*p).to_string(), false))?;
            for (name, g) in with {
                if let Some((_, h)) = without.iter().find(|(n, _)| n == name) {
                    d.push(g - h);
                }
            }
        }
        Some(Estimate::of(&d))
    };
    let targets = published::of(EXPERIMENT.id)?;
    // A compared figure, when there were runs to measure it.
    let mut cmp = |metric: &str, e: Option<Estimate>| -> Result<(), String> {
        if let Some(e) = e {
            report.comparisons.push(targets.compare(metric, "%", e)?);
        }
        Ok(())
    };
    cmp(
        "E7b 10 Mb/s Yen 2, with TM: gain over single-path",
        est("10 Mb/s", "Yen 2", true),
    )?;
    cmp(
        "E7b 10 Mb/s Yen 3, with TM: gain over single-path",
        est("10 Mb/s", "Yen 3", true),
    )?;
    cmp(
        "E7b 10 Mb/s Yen 2 and 3: TM - no TM",
        tm_effect("10 Mb/s", &["Yen 2", "Yen 3"]),
    )?;
    cmp(
        "E7b 100 Mb/s Yen 3, with TM: gain over single-path",
        est("100 Mb/s", "Yen 3", true),
    )?;
    cmp(
        "E7b 100 Mb/s Yen 2 and 3: TM - no TM",
        tm_effect("100 Mb/s", &["Yen 2", "Yen 3"]),
    )?;
    cmp(
        "E7b 1 Gb/s Yen 2, with TM: gain over single-path",
        est("1 Gb/s", "Yen 2", true),
    )?;
    cmp(
        "E7b 1 Gb/s Yen 3, with TM: gain over single-path",
        est("1 Gb/s", "Yen 3", true),
    )?;
    cmp(
        "E7b 1 Gb/s Yen 2: TM - no TM",
        tm_effect("1 Gb/s", &["Yen 2"]),
    )?;
    cmp(
        "E7b 1 Gb/s Yen 3: TM - no TM",
        tm_effect("1 Gb/s", &["Yen 3"]),
    )?;
    cmp(
        "E7b 1 Gb/s Bhandari pair, with TM: gain over single-path",
        est("1 Gb/s", "Bhandari pair", true),
    )?;
    cmp(
        "E7b 1 Gb/s Bhandari pair: TM - no TM",
        tm_effect("1 Gb/s", &["Bhandari pair"]),
    )?;
    for ((rate, paths, tm), v) in &means {
        report.observations.push(Observation::new(
            format!(
                "E7b {rate} {paths}, {}: mean gain over topologies",
                if *tm { "with TM" } else { "without TM" }
            ),
            "%",
            Estimate::of(&v.iter().map(|x| x.1).collect::<Vec<_>>()),
        ));
    }
    // Users with link-disjoint paths (thesis: 32% Yen 2, 51% Yen 3, 86% Bhandari).
    let disjoint = |rows: &[Row], config: &[&str]| -> Option<Estimate> {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.flow.starts_with("mp"))
            .filter(|r| same_config(&r.config, config))
            .map(|r| {
                if has_disjoint_pair(&r.path) {
                    100.0
                } else {
                    0.0
                }
            })
            .collect();
        (!v.is_empty()).then(|| Estimate::of(&v))
    };
    cmp(
        "E7b users with two link-disjoint paths, Yen 2",
        disjoint(yen, &["\"10Mbps\"", "2", "\"shared-link\""]),
    )?;
    cmp(
        "E7b users with two link-disjoint paths, Yen 3",
        disjoint(yen, &["\"10Mbps\"", "3", "\"shared-link\""]),
    )?;
    cmp(
        "E7b users with two link-disjoint paths, Bhandari",
        disjoint(bh, &["\"shared-link\""]),
    )?;
    // Fig. 4.17: per-topology gains in ascending density.
    let order: Vec<(usize, &str)> = topos.iter().enumerate().map(|(i, t)| (i, t.name)).collect();
    let mut series = Vec::new();
    for ((rate, paths, tm), v) in &means {
        if !*tm && paths == "Bhandari pair" {
            continue;
        }
        let pts: Vec<(f64, f64)> = order
            .iter()
            .filter_map(|(i, n)| {
                v.iter()
                    .find(|(m, _)| m == n)
                    .map(|(_, g)| (*i as f64 + 1.0, *g))
            })
            .collect();
        series.push((
            format!("{rate} {paths}{}", if *tm { " TM" } else { "" }),
            pts,
        ));
    }
    let names: Vec<&str> = order.iter().map(|(_, n)| *n).collect();
    report.files.push(("e7b_gains.csv".into(), csv));
    report.files.push((
        "e7b_gains.svg".into(),
        line_chart(
            "E7b (Fig. 4.17): multipath gain over single-path per topology",
            &format!("topology, ascending density: {}", names.join(", ")),
            "aggregate throughput gain, %",
            &series,
        ),
    ));
    Ok(())
}
