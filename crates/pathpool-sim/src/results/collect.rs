//! Collecting a run's results from the simulation: flows, links, subflows, caches and
//! their time series over the summary window.

use pathpool_core::Time;
use pathpool_proto::inrpp::interface::InterfaceState;

use super::mp_fairness::{paths_of, MpFairness};
use super::{CacheResult, FlowResult, LinkResult, Results, RouterResult, SubflowResult};
use crate::metrics::{afct_bins, jain_index, mean};
use crate::sampler::{subflow_acked, Snapshot};
use crate::sim::Simulation;
use crate::spec::MpFairnessMode;
use crate::table::{Column, Table};

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
        let links = self.link_results(t0, t1, start_snap, end_snap);
        let subflows = self.subflow_results(&flows, start_snap, end_snap);
        let mp_fairness = self.mp_fairness.map(|(mode, tolerance)| match mode {
            MpFairnessMode::Analytic => {
                self.mp_fairness_analytic(tolerance, &flows, &subflows, &links)
            }
            // Measured by `mp_fairness_reference_runs`: until then M_p alone.
            MpFairnessMode::ReferenceRuns => paths_of(&flows, &subflows)
                .into_iter()
                .map(|(flow, paths)| MpFairness::judge(&flow, mode, tolerance, paths))
                .collect(),
        });
        Results {
            name: self.name.clone(),
            seed: self.seed,
            sim_time_s: self.net.now.as_secs_f64(),
            window_s: (t0.as_secs_f64(), t1.as_secs_f64()),
            stats: self.stats,
            jain_index: jain_index(&throughputs),
            afct_s: mean(&fcts),
            jain_sampled: self.sampler.fairness.as_ref().map(|f| f.jain),
            jain_sampled_since_start: self.sampler.fairness.as_ref().map(|f| f.jain_since_start),
            afct_bins: self.afct_bins_per_decade.map(|b| {
                let sized: Vec<(u64, Option<f64>)> = flows
                    .iter()
                    .filter_map(|f| f.size_bytes.map(|s| (s, f.fct_s)))
                    .collect();
                afct_bins(&sized, b)
            }),
            links,
            subflows,
            caches: self.cache_results(),
            routers: self.router_results(),
            flows,
            flow_timeseries: self.flow_series_table(),
            link_timeseries: self.link_series_table(),
            subflow_timeseries: self.subflow_series_table(),
            router_timeseries: self
                .sampler
                .router_series
                .as_ref()
                .map(|s| s.routers_table(&self.elements)),
            router_flow_timeseries: self
                .sampler
                .router_series
                .as_ref()
                .map(|s| s.flows_table(&self.elements, &self.flows)),
            interarrival: self.interarrival.as_ref().map(|ia| ia.table(&self.flows)),
            sequence_trace: self.net.seq_trace.as_ref().map(|t| {
                let routers: Vec<String> = self
                    .elements
                    .routers
                    .iter()
                    .map(|r| r.node.clone())
                    .collect();
                t.table(&self.flows, &routers)
            }),
            mp_fairness,
            ndn_nodes: self.ndn_nodes_table(),
            ndn_paths: self.ndn_paths_table(),
            ndn_path_timeseries: self.ndn_path_series_table(),
        }
    }

    fn router_results(&self) -> Vec<RouterResult> {
        self.elements
            .routers
            .iter()
            .map(|r| {
                let cache = r.router.cache();
                let states: Vec<String> = r
                    .neighbour_names
                    .iter()
                    .enumerate()
                    .map(|(i, name)| format!("{name}:{}", r.router.state(i).short_name()))
                    .collect();
                let first_b = (0..r.neighbour_names.len())
                    .filter_map(|i| r.router.first_entered(i, InterfaceState::Backpressure))
                    .min();
                RouterResult {
                    node: r.node.clone(),
                    first_backpressure_s: first_b.map(Time::as_secs_f64),
                    first_propagate_s: r
                        .router
                        .signalling()
                        .first_propagate()
                        .map(Time::as_secs_f64),
                    cache_bytes: r.router.cache_capacity_bytes(),
                    peak_cached_bytes: cache.stats().peak_bytes,
                    cached_bytes_at_end: cache.bytes(),
                    cache_drops: r.dropped,
                    nonces_at_end: r.router.signalling().listed().count() as u64,
                    states_at_end: states.join(" "),
                }
            })
            .collect()
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
        t.push("flow", self.flow_ids(&s.flow));
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
                } else if let Some(s) = self.elements.rate_source(f.source) {
                    let st = s.sender.stats();
                    (st.segments_sent, st.retransmissions, st.timeouts, 0)
                } else if let Some(s) = self.elements.udp_source(f.source) {
                    (s.sent, 0, 0, 0)
                } else if let Some(c) = self.elements.ndn_consumer_at(f.source) {
                    c.totals()
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
                    ce_marks: b.marks - a.marks,
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

    /// The ids of flows given by index, as a table column.
    pub(crate) fn flow_ids(&self, flows: &[u32]) -> Column {
        Column::Str(
            flows
                .iter()
                .map(|&f| self.flows[f as usize].id.clone())
                .collect(),
        )
    }

    fn flow_series_table(&self) -> Table {
        let s = &self.sampler.flow_series;
        let (time_s, goodput_bps) = s.time_and_goodput(self.flows.len());
        let mut t = Table::new("flow_timeseries");
        t.push("time_s", Column::F64(time_s));
        t.push("flow", self.flow_ids(&s.flow));
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
