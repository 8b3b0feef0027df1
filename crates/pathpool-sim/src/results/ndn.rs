//! The NDN tables (issue 22): `ndn_nodes`, one row per node, `ndn_paths`, one row per path
//! of each PTP consumer or subflow of each mmTP consumer, and `ndn_path_timeseries`.

use pathpool_core::Time;

use crate::ndn_node::{Logic, NdnNet};
use crate::sim::Simulation;
use crate::table::{Column, Table};

impl Simulation {
    /// The `ndn_nodes` table, with `[ndn]`.
    pub(crate) fn ndn_nodes_table(&self) -> Option<Table> {
        let ndn = self.elements.ndn.as_deref()?;
        let nodes = &ndn.nodes;
        let mut t = Table::new("ndn_nodes");
        let u64s = |f: &dyn Fn(&crate::ndn_node::NdnNode) -> u64| {
            Column::U64(nodes.iter().map(f).collect())
        };
        t.push(
            "node",
            Column::Str(nodes.iter().map(|n| n.name.clone()).collect()),
        );
        t.push("faces", u64s(&|n| n.face_route.len() as u64 - 1));
        t.push("produced", u64s(&|n| n.produced));
        t.push("pit_peak", u64s(&|n| n.fwd.pit().stats().peak as u64));
        t.push(
            "pit_aggregations",
            u64s(&|n| n.fwd.pit().stats().aggregations),
        );
        t.push("pit_duplicates", u64s(&|n| n.fwd.pit().stats().duplicates));
        t.push("pit_expired", u64s(&|n| n.fwd.pit().stats().expired));
        t.push(
            "pit_unsolicited",
            u64s(&|n| n.fwd.pit().stats().unsolicited),
        );
        t.push("nacks_sent", u64s(&|n| n.fwd.stats().nacks));
        t.push("tags_followed", u64s(&|n| n.fwd.stats().tags_followed));
        t.push("tags_broken", u64s(&|n| n.fwd.stats().tags_broken));
        t.push("route_info_bytes", u64s(&|n| n.route_info_bytes));
        let cs = |f: &dyn Fn(pathpool_ndn::CsStats) -> u64| {
            Column::OptU64(
                nodes
                    .iter()
                    .map(|n| n.fwd.cs().map(|c| f(c.stats())))
                    .collect(),
            )
        };
        t.push("cs_hits", cs(&|s| s.hits));
        t.push("cs_misses", cs(&|s| s.misses));
        t.push("cs_insertions", cs(&|s| s.insertions));
        t.push("cs_evictions", cs(&|s| s.evictions));
        t.push("fab_hits", u64s(&|n| n.fwd.fab().stats().hits));
        t.push("fab_misses", u64s(&|n| n.fwd.fab().stats().misses));
        t.push("fab_evictions", u64s(&|n| n.fwd.fab().stats().evictions));
        Some(t)
    }

    /// The `ndn_path_timeseries` table, with `[ndn]` and `measure.trace_cwnd`.
    pub(crate) fn ndn_path_series_table(&self) -> Option<Table> {
        self.elements.ndn.as_ref()?;
        if !self.sampler.traces_cwnd() {
            return None;
        }
        let s = &self.sampler.ndn_path_series;
        let mut t = Table::new("ndn_path_timeseries");
        t.push("time_s", Column::F64(s.time_s.clone()));
        t.push("flow", self.flow_ids(&s.flow));
        t.push("path", Column::U64(s.path.clone()));
        t.push("cwnd", Column::F64(s.cwnd.clone()));
        t.push("ssthresh", Column::F64(s.ssthresh.clone()));
        t.push("srtt_s", Column::F64(s.srtt_s.clone()));
        t.push("payload_bytes", Column::U64(s.payload_bytes.clone()));
        Some(t)
    }

    /// The `ndn_paths` table: each path a PTP consumer's probes found, each subflow of an
    /// mmTP consumer.
    pub(crate) fn ndn_paths_table(&self) -> Option<Table> {
        let ndn = self.elements.ndn.as_deref()?;
        let end = self.net.now;
        let mut flow = Vec::new();
        let mut index = Vec::new();
        let mut tag = Vec::new();
        let mut nodes = Vec::new();
        let mut intervals = Vec::new();
        let mut in_use_s = Vec::new();
        let mut bytes = Vec::new();
        let mut goodput = Vec::new();
        let mut in_use_at_end = Vec::new();
        let mut broken = Vec::new();
        let mut mean_rtt = Vec::new();
        let mut cwnd = Vec::new();
        for f in self.flows.iter() {
            let Some(c) = self.elements.ndn_consumer_at(f.sink) else {
                continue;
            };
            let rows: Vec<PathRow> = match &c.logic {
                Logic::Ptp(ptp) => ptp
                    .paths()
                    .paths()
                    .iter()
                    .enumerate()
                    .map(|(p, info)| PathRow {
                        tag: info
                            .tag
                            .iter()
                            .rev()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(" "),
                        nodes: path_nodes(ndn, c.node, &info.tag),
                        bytes: c.paths.get(p).map_or(0, |r| r.bytes),
                        in_use: info.in_use,
                        broken: info.broken,
                        mean_rtt: info.mean_rtt_s(),
                        cwnd: ptp.mpccp().path(p).cwnd,
                    })
                    .collect(),
                Logic::Mmtp(m) => mmtp_rows(ndn, c, m.as_ref()),
                Logic::Aimd(_) => continue,
            };
            for (p, row) in rows.into_iter().enumerate() {
                let rec = c.paths.get(p).cloned().unwrap_or_default();
                let mut spans: Vec<(Time, Time)> = rec.intervals.clone();
                if let Some(t) = rec.since {
                    spans.push((t, end));
                }
                let used: f64 = spans
                    .iter()
                    .map(|(a, b)| b.saturating_since(*a).as_secs_f64())
                    .sum();
                flow.push(f.id.clone());
                index.push(p as u64);
                tag.push(row.tag);
                nodes.push(row.nodes);
                intervals.push(
                    spans
                        .iter()
                        .map(|(a, b)| format!("{:.3}-{:.3}", a.as_secs_f64(), b.as_secs_f64()))
                        .collect::<Vec<_>>()
                        .join(" "),
                );
                in_use_s.push(used);
                bytes.push(row.bytes);
                goodput.push((used > 0.0).then(|| row.bytes as f64 * 8.0 / used));
                in_use_at_end.push(row.in_use);
                broken.push(row.broken);
                mean_rtt.push(row.mean_rtt);
                cwnd.push(row.cwnd);
            }
        }
        let mut t = Table::new("ndn_paths");
        t.push("flow", Column::Str(flow));
        t.push("path", Column::U64(index));
        t.push("tag", Column::Str(tag));
        t.push("nodes", Column::Str(nodes));
        t.push("in_use_intervals_s", Column::Str(intervals));
        t.push("in_use_s", Column::F64(in_use_s));
        t.push("payload_bytes", Column::U64(bytes));
        t.push("goodput_bps", Column::OptF64(goodput));
        t.push("in_use_at_end", Column::Bool(in_use_at_end));
        t.push("broken", Column::Bool(broken));
        t.push("mean_rtt_s", Column::OptF64(mean_rtt));
        t.push("cwnd_at_end", Column::F64(cwnd));
        Some(t)
    }
}

/// One row of `ndn_paths`, besides its flow, index and intervals.
struct PathRow {
    tag: String,
    nodes: String,
    bytes: u64,
    in_use: bool,
    broken: bool,
    mean_rtt: Option<f64>,
    cwnd: f64,
}

/// An mmTP consumer's subflows: the tag column holds a subflow's route labels (empty for
/// the unsteered subflow 0), in use while active, broken once a NACK removed it; the
/// window in chunks.
fn mmtp_rows(
    ndn: &NdnNet,
    c: &crate::ndn_node::NdnConsumer,
    m: &pathpool_proto::ndn::MmtpNdnConsumer<pathpool_cc::AnyController>,
) -> Vec<PathRow> {
    use pathpool_cc::MultipathController;
    use pathpool_proto::mmtp::SubflowState;
    let sub = m.subscriber();
    let chunk = sub.metadata().map_or(1, |md| md.chunk_bytes).max(1);
    sub.subflows()
        .iter()
        .zip(m.routes())
        .map(|(sf, labels)| PathRow {
            tag: labels
                .iter()
                .map(|k| format!("_R{k}"))
                .collect::<Vec<_>>()
                .join(" "),
            nodes: if labels.is_empty() {
                String::new()
            } else {
                route_nodes(ndn, c, labels)
            },
            bytes: sf.stats().bytes_delivered,
            in_use: sf.state() == SubflowState::Active && !m.is_complete(),
            broken: sf.state() == SubflowState::Removed,
            mean_rtt: sf.srtt().map(|d| d.as_secs_f64()),
            cwnd: sf
                .controller_path()
                .map_or(0.0, |p| m.controller().window(p) as f64 / f64::from(chunk)),
        })
        .collect()
}

/// The nodes a steered Interest with route labels `labels` crosses from the consumer to a
/// producer: one next hop at a node with one, the last label's at a branching node.
fn route_nodes(ndn: &NdnNet, c: &crate::ndn_node::NdnConsumer, labels: &[u32]) -> String {
    let mut left = labels.to_vec();
    let mut at = c.node;
    let mut out = vec![ndn.nodes[at as usize].name.clone()];
    for _ in 0..ndn.nodes.len() {
        let node = &ndn.nodes[at as usize];
        let fib = node.fwd.fib();
        let Some(entry) = fib.lpm(&c.content) else {
            break;
        };
        let hops = &fib.entry(entry).next_hops;
        let hop = if hops.len() >= 2 {
            left.pop().and_then(|k| hops.get(k as usize - 1))
        } else {
            hops.first()
        };
        match hop.map(|h| h.face) {
            Some(face) if face != 0 => at = node.face_neighbour[face as usize],
            _ => break,
        }
        out.push(ndn.nodes[at as usize].name.clone());
    }
    out.join(">")
}

/// The nodes a tag leads through from `from` (its top, the last face, first).
fn path_nodes(ndn: &NdnNet, from: u32, tag: &[u32]) -> String {
    let mut at = from;
    let mut out = vec![ndn.nodes[at as usize].name.clone()];
    for &face in tag.iter().rev() {
        match ndn.nodes[at as usize].face_neighbour.get(face as usize) {
            Some(&next) => {
                at = next;
                out.push(ndn.nodes[at as usize].name.clone());
            }
            None => break,
        }
    }
    out.join(">")
}
