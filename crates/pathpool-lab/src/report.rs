//! The summary printed at the end of a run.

use std::fmt::Write;

use pathpool_sim::Results;

fn mbps(bps: Option<f64>) -> String {
    bps.map_or("-".into(), |b| format!("{:.3}", b / 1e6))
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.1}", v * 100.0))
}

/// A plain-text table of rows, columns padded to their widest cell.
/// Rows as an aligned text table under `header`.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "  {}", parts.join("  ").trim_end());
    };
    line(header.to_vec(), &mut out);
    for r in rows {
        line(r.iter().map(String::as_str).collect(), &mut out);
    }
    out
}

/// How many rows of a long table to show.
const MAX_ROWS: usize = 20;

/// The end-of-run summary.
#[must_use]
pub fn summary_text(r: &Results, wall_time_s: f64) -> String {
    let mut out = String::new();
    let name = r.name.as_deref().unwrap_or("scenario");
    let _ = writeln!(
        out,
        "{name}: seed {}, {:.1} s simulated in {:.2} s ({:.0} events, {:.2} M data packets/s)",
        r.seed,
        r.sim_time_s,
        wall_time_s,
        r.stats.events as f64,
        r.stats.data_packets_delivered as f64 / wall_time_s.max(1e-9) / 1e6
    );
    let _ = writeln!(
        out,
        "window [{:.1} s, {:.1} s]: Jain index {}, AFCT {}",
        r.window_s.0,
        r.window_s.1,
        r.jain_index.map_or("-".into(), |j| format!("{j:.4}")),
        r.afct_s.map_or("-".into(), |a| format!("{a:.3} s")),
    );
    let finite = r.flows.iter().filter(|f| f.size_bytes.is_some()).count();
    if finite > 0 {
        let done = r.flows.iter().filter(|f| f.completed == Some(true)).count();
        let _ = writeln!(out, "finite flows: {done} of {finite} completed");
    }
    out.push('\n');
    let mut flows: Vec<_> = r.flows.iter().collect();
    if flows.len() > MAX_ROWS {
        flows.sort_by(|a, b| {
            b.throughput_bps
                .unwrap_or(-1.0)
                .total_cmp(&a.throughput_bps.unwrap_or(-1.0))
        });
    }
    // A multipath or mmTP flow's paths are its subflows; a single-path flow has one.
    let paths = |id: &str, kind: &str| -> String {
        let n = r.subflows.iter().filter(|s| s.flow == id).count();
        match (n, kind) {
            (0, "tcp") => "1".into(),
            (0, _) => "-".into(),
            (n, _) => n.to_string(),
        }
    };
    let rows: Vec<Vec<String>> = flows
        .iter()
        .take(MAX_ROWS)
        .map(|f| {
            vec![
                f.id.clone(),
                f.kind.clone(),
                f.cc.clone().unwrap_or_else(|| "-".into()),
                f.loss_recovery.clone().unwrap_or_else(|| "-".into()),
                paths(&f.id, &f.kind),
                mbps(f.throughput_bps),
                pct(f.share),
                f.fct_s.map_or("-".into(), |x| format!("{x:.3}")),
                f.retransmissions.to_string(),
                f.timeouts.to_string(),
            ]
        })
        .collect();
    out += &table(
        &[
            "flow", "kind", "cc", "recovery", "paths", "Mb/s", "share %", "FCT s", "retx", "RTOs",
        ],
        &rows,
    );
    if flows.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "  … {} more flows (highest throughput shown)",
            flows.len() - MAX_ROWS
        );
    }
    out.push('\n');
    if !r.subflows.is_empty() {
        let rows: Vec<Vec<String>> = r
            .subflows
            .iter()
            .take(MAX_ROWS)
            .map(|s| {
                vec![
                    format!("{}/{}", s.flow, s.subflow),
                    s.path.clone(),
                    s.group.to_string(),
                    mbps(s.throughput_bps),
                    pct(s.share_of_flow),
                    s.retransmissions.to_string(),
                    s.timeouts.to_string(),
                ]
            })
            .collect();
        out += &table(
            &[
                "subflow",
                "path",
                "group",
                "Mb/s",
                "of flow %",
                "retx",
                "RTOs",
            ],
            &rows,
        );
        if r.subflows.len() > MAX_ROWS {
            let _ = writeln!(out, "  … {} more subflows", r.subflows.len() - MAX_ROWS);
        }
        out.push('\n');
    }
    if let Some(fair) = r.mp_fairness.as_ref().filter(|f| !f.is_empty()) {
        let flag = |b: Option<bool>| match b {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let ratio = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.2}"));
        let rows: Vec<Vec<String>> = fair
            .iter()
            .map(|f| {
                vec![
                    f.flow.clone(),
                    f.mode.to_string(),
                    mbps(Some(f.m_bps)),
                    mbps(f.lenient_bound_bps),
                    ratio(f.lenient_ratio),
                    flag(f.lenient_fair).into(),
                    mbps(f.stringent_bound_bps),
                    ratio(f.stringent_ratio),
                    flag(f.stringent_fair).into(),
                ]
            })
            .collect();
        out += &table(
            &[
                "multipath flow",
                "T_p, S_p from",
                "M Mb/s",
                "lenient Mb/s",
                "max M_p/T_p",
                "lenient",
                "stringent Mb/s",
                "M/bound",
                "stringent",
            ],
            &rows,
        );
        out.push('\n');
    }
    if !r.caches.is_empty() {
        let rows: Vec<Vec<String>> = r
            .caches
            .iter()
            .take(MAX_ROWS)
            .map(|c| {
                vec![
                    c.node.clone(),
                    c.hits.to_string(),
                    c.misses.to_string(),
                    pct(c.hit_ratio),
                    format!("{:.1}", c.payload_bytes_served as f64 / 1e6),
                    c.evicted.to_string(),
                ]
            })
            .collect();
        out += &table(
            &["cache", "hits", "misses", "hit %", "MB served", "evicted"],
            &rows,
        );
        if r.caches.len() > MAX_ROWS {
            let _ = writeln!(out, "  … {} more caches", r.caches.len() - MAX_ROWS);
        }
        out.push('\n');
    }
    if !r.routers.is_empty() {
        let rows: Vec<Vec<String>> = r
            .routers
            .iter()
            .take(MAX_ROWS)
            .map(|x| {
                vec![
                    x.node.clone(),
                    format!("{:.2}", x.peak_cached_bytes as f64 / 1e6),
                    x.cache_drops.to_string(),
                    x.first_backpressure_s
                        .map_or_else(|| "-".into(), |t| format!("{t:.2}")),
                    x.states_at_end.clone(),
                ]
            })
            .collect();
        out += &table(
            &[
                "INRPP router",
                "peak cache MB",
                "cache drops",
                "first B s",
                "interfaces at the end",
            ],
            &rows,
        );
        if r.routers.len() > MAX_ROWS {
            let _ = writeln!(out, "  … {} more routers", r.routers.len() - MAX_ROWS);
        }
        out.push('\n');
    }
    let mut links: Vec<_> = r
        .links
        .iter()
        .filter(|l| l.tx_bytes > 0 || l.drops > 0 || l.failure_losses > 0)
        .collect();
    // A column for failures only where the scenario has them.
    let failures = links.iter().any(|l| l.failure_losses > 0);
    links.sort_by(|a, b| {
        b.utilization
            .unwrap_or(0.0)
            .total_cmp(&a.utilization.unwrap_or(0.0))
    });
    let rows: Vec<Vec<String>> = links
        .iter()
        .take(MAX_ROWS)
        .map(|l| {
            let mut row = vec![
                l.id.clone(),
                pct(l.utilization),
                format!("{:.0}", l.mean_queue_bytes),
                l.drops.to_string(),
                l.random_losses.to_string(),
            ];
            if failures {
                row.push(l.failure_losses.to_string());
            }
            row
        })
        .collect();
    let mut header = vec!["link", "util %", "mean queue B", "drops", "losses"];
    if failures {
        header.push("failure losses");
    }
    out += &table(&header, &rows);
    if links.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "  … {} more busy links (busiest shown)",
            links.len() - MAX_ROWS
        );
    }
    out
}
