//! What a run produces: per-flow and per-link results over the summary window, time series,
//! and the summary figures. Every definition is in `docs/metrics.md`.

use pathpool_core::Time;
use serde::Serialize;

use crate::metrics::{jain_index, mean};
use crate::sampler::{subflow_acked, Snapshot};
use crate::sim::{RunStats, Simulation};
use crate::table::{Column, Table};

/// One flow's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowResult {
    /// Flow id.
    pub id: String,
    /// `tcp`, `udp-cbr` or `udp-onoff`.
    pub kind: String,
    /// Sending host.
    pub from: String,
    /// Receiving host.
    pub to: String,
    /// Congestion control (TCP).
    pub cc: Option<String>,
    /// Loss recovery: `"newreno"` or `"sack"` for TCP and multipath flows, `"mmtp-timer"` or
    /// `"mmtp-gap"` for mmTP downloads (`docs/mmtp.md`), `None` for UDP.
    pub loss_recovery: Option<String>,
    /// Nodes on the data path, joined by `>`.
    pub path: String,
    /// Start time in seconds.
    pub start_s: f64,
    /// Stop time in seconds, if the flow has one.
    pub stop_s: Option<f64>,
    /// Size of a finite flow in bytes.
    pub size_bytes: Option<u64>,
    /// Payload bytes delivered in order by the end of the run.
    pub bytes_delivered: u64,
    /// Payload bytes delivered within the flow's part of the summary window.
    pub window_bytes: u64,
    /// Seconds of the summary window during which the flow was active.
    pub window_active_s: f64,
    /// Mean goodput over the flow's active part of the window, in bit/s (`None` if the flow
    /// was not active in the window).
    pub throughput_bps: Option<f64>,
    /// `throughput_bps` over the sum of all flows' throughput.
    pub share: Option<f64>,
    /// Flow completion time in seconds (finite flows that completed).
    pub fct_s: Option<f64>,
    /// Whether a finite flow delivered every byte (`None` for long-lived flows).
    pub completed: Option<bool>,
    /// Data packets sent (retransmissions included).
    pub packets_sent: u64,
    /// Retransmitted segments (TCP).
    pub retransmissions: u64,
    /// Retransmission timeouts (TCP).
    pub timeouts: u64,
    /// Fast-recovery episodes (TCP).
    pub fast_recoveries: u64,
}

/// One directed link's results over the summary window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkResult {
    /// `<name>:<from>-><to>`.
    pub id: String,
    /// The link's name in the scenario.
    pub name: String,
    /// Upstream node.
    pub from: String,
    /// Downstream node.
    pub to: String,
    /// Rate in bit/s (`None` for an infinite rate).
    pub rate_bps: Option<f64>,
    /// Propagation delay in seconds.
    pub delay_s: f64,
    /// Queue discipline and size.
    pub queue: String,
    /// Transmitted bytes over the window divided by what the rate allows.
    pub utilization: Option<f64>,
    /// Transmitted bit/s over the window.
    pub throughput_bps: f64,
    /// Bytes transmitted in the window.
    pub tx_bytes: u64,
    /// Packets offered to the queue in the window.
    pub arrivals: u64,
    /// Packets dropped by the queue in the window.
    pub drops: u64,
    /// Packets lost at random on the wire in the window.
    pub random_losses: u64,
    /// Packets lost because the link was down, in the window (`failures`).
    pub failure_losses: u64,
    /// Time-averaged queue length in bytes over the window.
    pub mean_queue_bytes: f64,
    /// Largest queue in bytes over the whole run.
    pub max_queue_bytes: u64,
}

/// The outcome of one subflow of a multipath flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SubflowResult {
    /// The flow's id.
    pub flow: String,
    /// The subflow's index in the scenario (`paths` or `subflows` order).
    pub subflow: u32,
    /// Nodes its data path visits, joined by `>`.
    pub path: String,
    /// Its coupling group.
    pub group: u32,
    /// When it opens.
    pub start_s: f64,
    /// When it closes, if it does.
    pub stop_s: Option<f64>,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes acknowledged on the subflow.
    pub bytes_acked: u64,
    /// Bytes acknowledged on the subflow during the summary window.
    pub window_bytes: u64,
    /// `window_bytes` over the flow's active part of the window.
    pub throughput_bps: Option<f64>,
    /// Its part of the flow's acknowledged bytes in the window.
    pub share_of_flow: Option<f64>,
    /// Segments retransmitted.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast-recovery episodes.
    pub fast_recoveries: u64,
}

/// What one on-path chunk cache did over the whole run (`pathpool_proto::mmtp::CacheStats`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CacheResult {
    /// The router it sits at.
    pub node: String,
    /// Its capacity in bytes.
    pub capacity_bytes: u64,
    /// Bytes held at the end of the run.
    pub used_bytes: u64,
    /// Requests it answered.
    pub hits: u64,
    /// Requests it passed on to the publisher.
    pub misses: u64,
    /// `hits / (hits + misses)`, if it saw a request.
    pub hit_ratio: Option<f64>,
    /// Replies it kept.
    pub stored: u64,
    /// Entries it evicted for room.
    pub evicted: u64,
    /// Chunk payload bytes it sent.
    pub payload_bytes_served: u64,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct Results {
    /// Scenario name.
    pub name: Option<String>,
    /// Seed of the run.
    pub seed: u64,
    /// Simulated seconds.
    pub sim_time_s: f64,
    /// The summary window in seconds.
    pub window_s: (f64, f64),
    /// Work counters.
    pub stats: RunStats,
    /// Per-flow results.
    pub flows: Vec<FlowResult>,
    /// Per-link results.
    pub links: Vec<LinkResult>,
    /// Per-subflow results of the multipath flows.
    pub subflows: Vec<SubflowResult>,
    /// Per-cache results (scenarios with `caches`).
    pub caches: Vec<CacheResult>,
    /// Jain's index over the throughput of every flow active in the window.
    pub jain_index: Option<f64>,
    /// Mean completion time of the finite flows that completed.
    pub afct_s: Option<f64>,
    /// Per-flow time series.
    pub flow_timeseries: Table,
    /// Per-link time series.
    pub link_timeseries: Table,
    /// Per-subflow time series of the multipath flows (with `measure.trace_cwnd`).
    pub subflow_timeseries: Table,
}

impl Simulation {
    /// Collects the results. Call after the run has reached its end; a partial run gives
    /// partial figures (the summary window then ends at the current time).
    #[must_use]
    pub fn results(&self) -> Results {
        let (t0, t1) = self.sampler.window;
        let t1 = t1.min(self.net.now);
        let empty = Snapshot::default();
        let start_snap = self.sampler.at_window_start.as_ref().unwrap_or(&empty);
        let live;
        let end_snap = match &self.sampler.at_window_end {
            Some(s) => s,
            None => {
                live = self.live_snapshot();
                &live
            }
        };
        let flows = self.flow_results(t0, t1, start_snap, end_snap);
        let throughputs: Vec<f64> = flows.iter().filter_map(|f| f.throughput_bps).collect();
        let total: f64 = throughputs.iter().sum();
        let flows: Vec<FlowResult> = flows
            .into_iter()
            .map(|mut f| {
                f.share = f.throughput_bps.filter(|_| total > 0.0).map(|x| x / total);
                f
            })
            .collect();
        let fcts: Vec<f64> = flows.iter().filter_map(|f| f.fct_s).collect();
        Results {
            name: self.name.clone(),
            seed: self.seed,
            sim_time_s: self.net.now.as_secs_f64(),
            window_s: (t0.as_secs_f64(), t1.as_secs_f64()),
            stats: self.stats,
            jain_index: jain_index(&throughputs),
            afct_s: mean(&fcts),
            links: self.link_results(t0, t1, start_snap, end_snap),
            subflows: self.subflow_results(&flows, start_snap, end_snap),
            caches: self.cache_results(),
            flows,
            flow_timeseries: self.flow_series_table(),
            link_timeseries: self.link_series_table(),
            subflow_timeseries: self.subflow_series_table(),
        }
    }

    fn cache_results(&self) -> Vec<CacheResult> {
        self.elements
            .caches
            .iter()
            .map(|c| {
                let s = c.cache.stats();
                let asked = s.hits + s.misses;
                CacheResult {
                    node: c.node.clone(),
                    capacity_bytes: c.cache.capacity_bytes(),
                    used_bytes: c.cache.used_bytes(),
                    hits: s.hits,
                    misses: s.misses,
                    hit_ratio: (asked > 0).then(|| s.hits as f64 / asked as f64),
                    stored: s.stored,
                    evicted: s.evicted,
                    payload_bytes_served: s.payload_bytes_served,
                }
            })
            .collect()
    }

    fn subflow_results(
        &self,
        flows: &[FlowResult],
        start_snap: &Snapshot,
        end_snap: &Snapshot,
    ) -> Vec<SubflowResult> {
        let mut out = Vec::new();
        // Subflow counters in snapshots are flat, in flow then subflow order.
        let mut k = 0;
        for (f, fr) in self.flows.iter().zip(flows) {
            let Some(conn) = self.elements.multipath(f.source) else {
                continue;
            };
            let first = k;
            let mut rows = Vec::with_capacity(f.subflows.len());
            for (j, sm) in f.subflows.iter().enumerate() {
                let st = conn.subflow(j).unwrap_or_default();
                let acked = st.delivered_bytes;
                let at = |snap: &Snapshot| snap.subflow_acked.get(k).copied();
                let a0 = if f.start >= self.sampler.window.0 {
                    0
                } else {
                    at(start_snap).unwrap_or(0)
                };
                let a1 = at(end_snap).unwrap_or(acked);
                let window_bytes = a1.saturating_sub(a0);
                rows.push(SubflowResult {
                    flow: f.id.clone(),
                    subflow: j as u32,
                    path: sm.path.join(">"),
                    group: sm.group,
                    start_s: sm.start.as_secs_f64(),
                    stop_s: sm.stop.map(Time::as_secs_f64),
                    bytes_sent: st.sent_bytes,
                    bytes_acked: acked,
                    window_bytes,
                    throughput_bps: (fr.window_active_s > 0.0)
                        .then(|| window_bytes as f64 * 8.0 / fr.window_active_s),
                    share_of_flow: None,
                    retransmissions: st.retransmissions,
                    timeouts: st.timeouts,
                    fast_recoveries: st.fast_recoveries,
                });
                k += 1;
            }
            let total: u64 = rows.iter().map(|r| r.window_bytes).sum();
            for r in &mut rows {
                r.share_of_flow = (total > 0).then(|| r.window_bytes as f64 / total as f64);
            }
            debug_assert_eq!(k - first, f.subflows.len());
            out.extend(rows);
        }
        out
    }

    fn subflow_series_table(&self) -> Table {
        let s = &self.sampler.subflow_series;
        let mut t = Table::new("subflow_timeseries");
        t.push("time_s", Column::F64(s.time_s.clone()));
        t.push(
            "flow",
            Column::Str(
                s.flow
                    .iter()
                    .map(|&f| self.flows[f as usize].id.clone())
                    .collect(),
            ),
        );
        t.push("subflow", Column::U64(s.subflow.clone()));
        t.push("acked_bytes", Column::U64(s.acked_bytes.clone()));
        t.push("cwnd_bytes", Column::F64(s.cwnd_bytes.clone()));
        t.push("ssthresh_bytes", Column::F64(s.ssthresh_bytes.clone()));
        t.push("srtt_s", Column::F64(s.srtt_s.clone()));
        t.push(
            "alg_var",
            Column::Str(s.alg_var.iter().map(|v| (*v).to_string()).collect()),
        );
        t.push("alg_value", Column::F64(s.alg_value.clone()));
        t
    }

    fn live_snapshot(&self) -> Snapshot {
        Snapshot {
            delivered: self
                .flows
                .iter()
                .map(|f| self.elements.delivered(f.sink))
                .collect(),
            subflow_acked: subflow_acked(&self.flows, &self.elements),
            links: self
                .links
                .iter()
                .map(|l| *self.link(l.elem).counters())
                .collect(),
        }
    }

    fn flow_results(
        &self,
        t0: Time,
        t1: Time,
        start_snap: &Snapshot,
        end_snap: &Snapshot,
    ) -> Vec<FlowResult> {
        let mut out = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let total = self.elements.delivered(f.sink);
            let completed_at = self.elements.completed_at(f.sink);
            let (packets_sent, retransmissions, timeouts, fast_recoveries) =
                if let Some(c) = self.elements.multipath(f.source) {
                    c.totals()
                } else if let Some(s) = self.elements.tcp_source(f.source) {
                    let st = s.sender.stats();
                    (
                        st.segments_sent,
                        st.retransmissions,
                        st.timeouts,
                        st.fast_recoveries,
                    )
                } else if let Some(s) = self.elements.udp_source(f.source) {
                    (s.sent, 0, 0, 0)
                } else {
                    (0, 0, 0, 0)
                };
            // The flow's part of the window: from max(t0, start) to the earliest of t1, its
            // completion and its stop time, with the bytes delivered at each end.
            let (w_start, bytes_start) = if f.start >= t0 {
                (f.start, 0)
            } else {
                (t0, start_snap.delivered.get(i).copied().unwrap_or(0))
            };
            let mut w_end = (t1, end_snap.delivered.get(i).copied().unwrap_or(total));
            if let (Some(c), Some(size)) = (completed_at, f.size) {
                if c < w_end.0 {
                    w_end = (c, size);
                }
            }
            if let (Some(stop), Some(at_stop)) = (f.stop, self.sampler.at_flow_stop[i]) {
                if stop < w_end.0 {
                    w_end = (stop, at_stop);
                }
            }
            let active = w_end.0.saturating_since(w_start);
            let window_bytes = w_end.1.saturating_sub(bytes_start);
            let throughput =
                (active.as_ps() > 0).then(|| window_bytes as f64 * 8.0 / active.as_secs_f64());
            out.push(FlowResult {
                id: f.id.clone(),
                kind: f.kind.name().to_string(),
                from: f.from.clone(),
                to: f.to.clone(),
                cc: f.cc.clone(),
                loss_recovery: f.loss_recovery.map(str::to_string),
                path: if f.subflows.is_empty() {
                    f.path.join(">")
                } else {
                    let paths: Vec<String> = f.subflows.iter().map(|s| s.path.join(">")).collect();
                    paths.join(" | ")
                },
                start_s: f.start.as_secs_f64(),
                stop_s: f.stop.map(Time::as_secs_f64),
                size_bytes: f.size,
                bytes_delivered: total,
                window_bytes: if active.as_ps() > 0 { window_bytes } else { 0 },
                window_active_s: active.as_secs_f64(),
                throughput_bps: throughput,
                share: None,
                fct_s: completed_at.map(|c| (c - f.start).as_secs_f64()),
                completed: f.size.map(|_| completed_at.is_some()),
                packets_sent,
                retransmissions,
                timeouts,
                fast_recoveries,
            });
        }
        out
    }

    fn link_results(
        &self,
        t0: Time,
        t1: Time,
        start_snap: &Snapshot,
        end_snap: &Snapshot,
    ) -> Vec<LinkResult> {
        let span = t1.saturating_since(t0);
        let secs = span.as_secs_f64();
        self.links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let link = self.link(l.elem);
                let a = start_snap.links.get(i).copied().unwrap_or_default();
                let b = end_snap.links.get(i).copied().unwrap_or(*link.counters());
                let tx_bytes = b.tx_bytes - a.tx_bytes;
                let throughput = if secs > 0.0 {
                    tx_bytes as f64 * 8.0 / secs
                } else {
                    0.0
                };
                let rate = link.rate();
                let rate_bps = (!rate.is_infinite()).then_some(rate.bps() as f64);
                LinkResult {
                    id: l.id.clone(),
                    name: l.name.clone(),
                    from: l.from.clone(),
                    to: l.to.clone(),
                    rate_bps,
                    delay_s: l.delay_s,
                    queue: l.queue.clone(),
                    utilization: rate_bps.filter(|_| secs > 0.0).map(|r| throughput / r),
                    throughput_bps: throughput,
                    tx_bytes,
                    arrivals: b.arrivals - a.arrivals,
                    drops: b.drops - a.drops,
                    random_losses: b.random_losses - a.random_losses,
                    failure_losses: b.failure_losses - a.failure_losses,
                    mean_queue_bytes: if span.as_ps() > 0 {
                        (b.queue_byte_ps - a.queue_byte_ps) as f64 / span.as_ps() as f64
                    } else {
                        0.0
                    },
                    max_queue_bytes: link.counters().max_queue_bytes,
                }
            })
            .collect()
    }

    fn flow_series_table(&self) -> Table {
        let s = &self.sampler.flow_series;
        let (time_s, goodput_bps) = s.time_and_goodput(self.flows.len());
        let mut t = Table::new("flow_timeseries");
        t.push("time_s", Column::F64(time_s));
        t.push(
            "flow",
            Column::Str(
                s.flow
                    .iter()
                    .map(|&f| self.flows[f as usize].id.clone())
                    .collect(),
            ),
        );
        t.push("delivered_bytes", Column::U64(s.delivered_bytes.clone()));
        t.push("goodput_bps", Column::F64(goodput_bps));
        if self.sampler.traces_cwnd() {
            t.push("cwnd_bytes", Column::F64(s.cwnd_bytes.clone()));
            t.push("ssthresh_bytes", Column::F64(s.ssthresh_bytes.clone()));
            t.push("srtt_s", Column::F64(s.srtt_s.clone()));
        }
        t
    }

    fn link_series_table(&self) -> Table {
        let s = &self.sampler.link_series;
        let mut t = Table::new("link_timeseries");
        t.push("time_s", Column::F64(s.time_s.clone()));
        t.push(
            "link",
            Column::Str(
                s.link
                    .iter()
                    .map(|&l| self.links[l as usize].id.clone())
                    .collect(),
            ),
        );
        t.push("queue_bytes", Column::U64(s.queue_bytes.clone()));
        t.push("queue_packets", Column::U64(s.queue_packets.clone()));
        t.push("throughput_bps", Column::F64(s.throughput_bps.clone()));
        t.push("drops", Column::U64(s.drops.clone()));
        t
    }
}

impl Results {
    /// The flows table.
    #[must_use]
    pub fn flows_table(&self) -> Table {
        let f = &self.flows;
        let mut t = Table::new("flows");
        t.push("id", Column::Str(f.iter().map(|r| r.id.clone()).collect()));
        t.push(
            "kind",
            Column::Str(f.iter().map(|r| r.kind.clone()).collect()),
        );
        t.push(
            "from",
            Column::Str(f.iter().map(|r| r.from.clone()).collect()),
        );
        t.push("to", Column::Str(f.iter().map(|r| r.to.clone()).collect()));
        t.push(
            "cc",
            Column::OptStr(f.iter().map(|r| r.cc.clone()).collect()),
        );
        t.push(
            "loss_recovery",
            Column::OptStr(f.iter().map(|r| r.loss_recovery.clone()).collect()),
        );
        t.push(
            "path",
            Column::Str(f.iter().map(|r| r.path.clone()).collect()),
        );
        t.push(
            "start_s",
            Column::F64(f.iter().map(|r| r.start_s).collect()),
        );
        t.push(
            "stop_s",
            Column::OptF64(f.iter().map(|r| r.stop_s).collect()),
        );
        t.push(
            "size_bytes",
            Column::OptU64(f.iter().map(|r| r.size_bytes).collect()),
        );
        t.push(
            "bytes_delivered",
            Column::U64(f.iter().map(|r| r.bytes_delivered).collect()),
        );
        t.push(
            "window_bytes",
            Column::U64(f.iter().map(|r| r.window_bytes).collect()),
        );
        t.push(
            "window_active_s",
            Column::F64(f.iter().map(|r| r.window_active_s).collect()),
        );
        t.push(
            "throughput_bps",
            Column::OptF64(f.iter().map(|r| r.throughput_bps).collect()),
        );
        t.push("share", Column::OptF64(f.iter().map(|r| r.share).collect()));
        t.push("fct_s", Column::OptF64(f.iter().map(|r| r.fct_s).collect()));
        t.push(
            "completed",
            Column::OptBool(f.iter().map(|r| r.completed).collect()),
        );
        t.push(
            "packets_sent",
            Column::U64(f.iter().map(|r| r.packets_sent).collect()),
        );
        t.push(
            "retransmissions",
            Column::U64(f.iter().map(|r| r.retransmissions).collect()),
        );
        t.push(
            "timeouts",
            Column::U64(f.iter().map(|r| r.timeouts).collect()),
        );
        t.push(
            "fast_recoveries",
            Column::U64(f.iter().map(|r| r.fast_recoveries).collect()),
        );
        t
    }

    /// The links table.
    #[must_use]
    pub fn links_table(&self) -> Table {
        let l = &self.links;
        let mut t = Table::new("links");
        t.push("id", Column::Str(l.iter().map(|r| r.id.clone()).collect()));
        t.push(
            "name",
            Column::Str(l.iter().map(|r| r.name.clone()).collect()),
        );
        t.push(
            "from",
            Column::Str(l.iter().map(|r| r.from.clone()).collect()),
        );
        t.push("to", Column::Str(l.iter().map(|r| r.to.clone()).collect()));
        t.push(
            "rate_bps",
            Column::OptF64(l.iter().map(|r| r.rate_bps).collect()),
        );
        t.push(
            "delay_s",
            Column::F64(l.iter().map(|r| r.delay_s).collect()),
        );
        t.push(
            "queue",
            Column::Str(l.iter().map(|r| r.queue.clone()).collect()),
        );
        t.push(
            "utilization",
            Column::OptF64(l.iter().map(|r| r.utilization).collect()),
        );
        t.push(
            "throughput_bps",
            Column::F64(l.iter().map(|r| r.throughput_bps).collect()),
        );
        t.push(
            "tx_bytes",
            Column::U64(l.iter().map(|r| r.tx_bytes).collect()),
        );
        t.push(
            "arrivals",
            Column::U64(l.iter().map(|r| r.arrivals).collect()),
        );
        t.push("drops", Column::U64(l.iter().map(|r| r.drops).collect()));
        t.push(
            "random_losses",
            Column::U64(l.iter().map(|r| r.random_losses).collect()),
        );
        t.push(
            "failure_losses",
            Column::U64(l.iter().map(|r| r.failure_losses).collect()),
        );
        t.push(
            "mean_queue_bytes",
            Column::F64(l.iter().map(|r| r.mean_queue_bytes).collect()),
        );
        t.push(
            "max_queue_bytes",
            Column::U64(l.iter().map(|r| r.max_queue_bytes).collect()),
        );
        t
    }

    /// The subflows table (one row per subflow of each multipath flow).
    #[must_use]
    pub fn subflows_table(&self) -> Table {
        let f = &self.subflows;
        let mut t = Table::new("subflows");
        t.push(
            "flow",
            Column::Str(f.iter().map(|r| r.flow.clone()).collect()),
        );
        t.push(
            "subflow",
            Column::U64(f.iter().map(|r| u64::from(r.subflow)).collect()),
        );
        t.push(
            "path",
            Column::Str(f.iter().map(|r| r.path.clone()).collect()),
        );
        t.push(
            "group",
            Column::U64(f.iter().map(|r| u64::from(r.group)).collect()),
        );
        t.push(
            "start_s",
            Column::F64(f.iter().map(|r| r.start_s).collect()),
        );
        t.push(
            "stop_s",
            Column::OptF64(f.iter().map(|r| r.stop_s).collect()),
        );
        t.push(
            "bytes_sent",
            Column::U64(f.iter().map(|r| r.bytes_sent).collect()),
        );
        t.push(
            "bytes_acked",
            Column::U64(f.iter().map(|r| r.bytes_acked).collect()),
        );
        t.push(
            "window_bytes",
            Column::U64(f.iter().map(|r| r.window_bytes).collect()),
        );
        t.push(
            "throughput_bps",
            Column::OptF64(f.iter().map(|r| r.throughput_bps).collect()),
        );
        t.push(
            "share_of_flow",
            Column::OptF64(f.iter().map(|r| r.share_of_flow).collect()),
        );
        t.push(
            "retransmissions",
            Column::U64(f.iter().map(|r| r.retransmissions).collect()),
        );
        t.push(
            "timeouts",
            Column::U64(f.iter().map(|r| r.timeouts).collect()),
        );
        t.push(
            "fast_recoveries",
            Column::U64(f.iter().map(|r| r.fast_recoveries).collect()),
        );
        t
    }

    /// The caches table (one row per on-path cache).
    #[must_use]
    pub fn caches_table(&self) -> Table {
        let c = &self.caches;
        let mut t = Table::new("caches");
        let u64s = |f: fn(&CacheResult) -> u64| Column::U64(c.iter().map(f).collect());
        t.push(
            "node",
            Column::Str(c.iter().map(|r| r.node.clone()).collect()),
        );
        t.push("capacity_bytes", u64s(|r| r.capacity_bytes));
        t.push("used_bytes", u64s(|r| r.used_bytes));
        t.push("hits", u64s(|r| r.hits));
        t.push("misses", u64s(|r| r.misses));
        t.push(
            "hit_ratio",
            Column::OptF64(c.iter().map(|r| r.hit_ratio).collect()),
        );
        t.push("stored", u64s(|r| r.stored));
        t.push("evicted", u64s(|r| r.evicted));
        t.push("payload_bytes_served", u64s(|r| r.payload_bytes_served));
        t
    }

    /// All seven tables: flows, links, subflows, caches, flow_timeseries, link_timeseries,
    /// subflow_timeseries.
    #[must_use]
    pub fn tables(&self) -> Vec<Table> {
        vec![
            self.flows_table(),
            self.links_table(),
            self.subflows_table(),
            self.caches_table(),
            self.flow_timeseries.clone(),
            self.link_timeseries.clone(),
            self.subflow_timeseries.clone(),
        ]
    }

    /// The flow with this id.
    #[must_use]
    pub fn flow(&self, id: &str) -> Option<&FlowResult> {
        self.flows.iter().find(|f| f.id == id)
    }

    /// The directed link with this id, or the first direction of the link with this name.
    #[must_use]
    pub fn link(&self, id_or_name: &str) -> Option<&LinkResult> {
        self.links
            .iter()
            .find(|l| l.id == id_or_name)
            .or_else(|| self.links.iter().find(|l| l.name == id_or_name))
    }

    /// The machine-readable summary (`summary.json`, schema in `docs/summary-json.md`).
    #[must_use]
    pub fn summary(&self, wall_time_s: f64) -> Summary {
        Summary {
            schema: "pathpool.summary/1",
            scenario: self.name.clone(),
            seed: self.seed,
            sim_time_s: self.sim_time_s,
            wall_time_s,
            window_s: [self.window_s.0, self.window_s.1],
            jain_index: self.jain_index,
            afct_s: self.afct_s,
            events: self.stats.events,
            data_packets_delivered: self.stats.data_packets_delivered,
            flows: self
                .flows
                .iter()
                .map(|f| SummaryFlow {
                    id: f.id.clone(),
                    kind: f.kind.clone(),
                    throughput_bps: f.throughput_bps,
                    share: f.share,
                    bytes_delivered: f.bytes_delivered,
                    fct_s: f.size_bytes.map(|_| f.fct_s),
                })
                .collect(),
            links: self
                .links
                .iter()
                .map(|l| SummaryLink {
                    id: l.id.clone(),
                    utilization: l.utilization,
                    drops: l.drops,
                    random_losses: l.random_losses,
                    failure_losses: l.failure_losses,
                    mean_queue_bytes: l.mean_queue_bytes,
                })
                .collect(),
        }
    }
}

/// The stable machine-readable summary of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Schema identifier, `pathpool.summary/1`.
    pub schema: &'static str,
    /// Scenario name.
    pub scenario: Option<String>,
    /// Seed.
    pub seed: u64,
    /// Simulated seconds.
    pub sim_time_s: f64,
    /// Wall-clock seconds the run took.
    pub wall_time_s: f64,
    /// The summary window `[t0, t1]` in seconds.
    pub window_s: [f64; 2],
    /// Jain's index over all flows active in the window.
    pub jain_index: Option<f64>,
    /// Mean flow completion time of the completed finite flows.
    pub afct_s: Option<f64>,
    /// Events processed.
    pub events: u64,
    /// TCP data packets delivered to sinks.
    pub data_packets_delivered: u64,
    /// Per-flow figures.
    pub flows: Vec<SummaryFlow>,
    /// Per-link figures.
    pub links: Vec<SummaryLink>,
}

/// A flow in the summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryFlow {
    /// Flow id.
    pub id: String,
    /// Flow kind.
    pub kind: String,
    /// Mean throughput over the flow's part of the window.
    pub throughput_bps: Option<f64>,
    /// Share of the total throughput.
    pub share: Option<f64>,
    /// Payload bytes delivered by the end of the run.
    pub bytes_delivered: u64,
    /// Completion time (finite flows only; null if it did not complete).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_s: Option<Option<f64>>,
}

/// A link direction in the summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryLink {
    /// `<name>:<from>-><to>`.
    pub id: String,
    /// Utilisation over the window.
    pub utilization: Option<f64>,
    /// Queue drops in the window.
    pub drops: u64,
    /// Random losses in the window.
    pub random_losses: u64,
    /// Losses to the link's failures in the window (absent when none, as in every scenario
    /// without `failures`).
    #[serde(skip_serializing_if = "is_zero")]
    pub failure_losses: u64,
    /// Mean queue in bytes over the window.
    pub mean_queue_bytes: f64,
}

/// Whether a counter is zero (fields only failures fill are left out of the summary then).
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}
