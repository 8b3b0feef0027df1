//! Measurements taken during a run: periodic time series and the snapshots that delimit the
//! summary window. The sampler is an ordinary element with one pending event (the next tick
//! or mark); it is the last element, so a sample at time `t` sees every event at `t`.

use pathpool_core::{Dur, Time};

use crate::fairness::FairnessSampler;
use crate::kinds::Elements;
use crate::link::Link;
use crate::link::LinkCounters;
use crate::multi::Multi;
use crate::router_series::RouterSeries;
use crate::sim::{FlowMeta, LinkMeta};

/// An instant at which the sampler must record something besides the periodic tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mark {
    WindowStart,
    WindowEnd,
    /// A flow's stop time: record what it had delivered.
    FlowStop(u32),
}

/// Counters of every flow and link at one instant.
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshot {
    pub(crate) delivered: Vec<u64>,
    /// Bytes acknowledged on each subflow of each multipath flow, flow by flow.
    pub(crate) subflow_acked: Vec<u64>,
    pub(crate) links: Vec<LinkCounters>,
}

/// Per-flow time series, one row per active flow per tick.
///
/// A run keeps one row per flow per tick, the bulk of its measurements, so a row holds only
/// what cannot be derived: the time and the goodput follow from the ticks (see
/// [`FlowSeries::rows`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct FlowSeries {
    /// Each tick's time and the number of rows recorded up to it (inclusive).
    pub(crate) ticks: Vec<(Time, usize)>,
    pub(crate) flow: Vec<u32>,
    pub(crate) delivered_bytes: Vec<u64>,
    pub(crate) cwnd_bytes: Vec<f64>,
    pub(crate) ssthresh_bytes: Vec<f64>,
    pub(crate) srtt_s: Vec<f64>,
}

impl FlowSeries {
    /// The time and goodput columns: each row's tick time, and its flow's goodput since the
    /// flow's previous row (or the start of the run) over the time since the previous tick,
    /// computed exactly as the sampler used to at each tick.
    pub(crate) fn time_and_goodput(&self, flows: usize) -> (Vec<f64>, Vec<f64>) {
        let rows = self.flow.len();
        let (mut time_s, mut goodput_bps) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
        let mut last_delivered = vec![0u64; flows];
        let (mut last_tick, mut row) = (Time::ZERO, 0);
        for &(now, end) in &self.ticks {
            let dt = (now - last_tick).as_secs_f64();
            let t = now.as_secs_f64();
            for (&f, &d) in self.flow[row..end]
                .iter()
                .zip(&self.delivered_bytes[row..end])
            {
                time_s.push(t);
                goodput_bps.push((d - last_delivered[f as usize]) as f64 * 8.0 / dt);
                last_delivered[f as usize] = d;
            }
            (last_tick, row) = (now, end);
        }
        (time_s, goodput_bps)
    }
}

/// Per-subflow time series of multipath flows, one row per open subflow per tick.
#[derive(Clone, Debug, Default)]
pub(crate) struct SubflowSeries {
    pub(crate) time_s: Vec<f64>,
    pub(crate) flow: Vec<u32>,
    pub(crate) subflow: Vec<u64>,
    pub(crate) acked_bytes: Vec<u64>,
    pub(crate) cwnd_bytes: Vec<f64>,
    pub(crate) ssthresh_bytes: Vec<f64>,
    pub(crate) srtt_s: Vec<f64>,
    /// Name of the algorithm's state variable ("" if it has none).
    pub(crate) alg_var: Vec<&'static str>,
    pub(crate) alg_value: Vec<f64>,
}

/// Per-path time series of NDN consumers (`trace_cwnd`): one row per path in use (PTP) or
/// active subflow (mmTP over NDN) per tick.
#[derive(Clone, Debug, Default)]
pub(crate) struct NdnPathSeries {
    pub(crate) time_s: Vec<f64>,
    pub(crate) flow: Vec<u32>,
    pub(crate) path: Vec<u64>,
    pub(crate) cwnd: Vec<f64>,
    pub(crate) ssthresh: Vec<f64>,
    pub(crate) srtt_s: Vec<f64>,
    pub(crate) payload_bytes: Vec<u64>,
}

impl NdnPathSeries {
    fn trace(&mut self, t: f64, flow: u32, consumer: &crate::ndn_node::NdnConsumer) {
        let mut paths = Vec::new();
        consumer.sample_paths(&mut paths);
        for p in paths {
            self.time_s.push(t);
            self.flow.push(flow);
            self.path.push(u64::from(p.path));
            self.cwnd.push(p.cwnd);
            self.ssthresh.push(p.ssthresh);
            self.srtt_s.push(p.srtt_s);
            self.payload_bytes.push(p.bytes);
        }
    }
}

/// Per-link time series, one row per link per tick.
#[derive(Clone, Debug, Default)]
pub(crate) struct LinkSeries {
    pub(crate) time_s: Vec<f64>,
    pub(crate) link: Vec<u32>,
    pub(crate) queue_bytes: Vec<u64>,
    pub(crate) queue_packets: Vec<u64>,
    pub(crate) throughput_bps: Vec<f64>,
    pub(crate) drops: Vec<u64>,
}

/// The measurement element's state.
#[derive(Clone, Debug)]
pub(crate) struct Sampler {
    interval: Dur,
    end: Time,
    next_tick: Option<Time>,
    last_tick: Time,
    marks: Vec<(Time, Mark)>,
    cursor: usize,
    trace_cwnd: bool,
    trace_queues: bool,
    pub(crate) window: (Time, Time),
    pub(crate) at_window_start: Option<Snapshot>,
    pub(crate) at_window_end: Option<Snapshot>,
    pub(crate) at_flow_stop: Vec<Option<u64>>,
    pub(crate) flow_series: FlowSeries,
    pub(crate) link_series: LinkSeries,
    pub(crate) subflow_series: SubflowSeries,
    pub(crate) ndn_path_series: NdnPathSeries,
    last_link: Vec<(u64, u64)>,
    /// The sampled Jain index, with `measure.fairness_interval` (`crate::fairness`).
    pub(crate) fairness: Option<FairnessSampler>,
    /// The INRPP routers' series, with `measure.trace_routers`.
    pub(crate) router_series: Option<RouterSeries>,
}

impl Sampler {
    pub(crate) fn new(
        interval: Dur,
        end: Time,
        window: (Time, Time),
        trace_cwnd: bool,
        trace_queues: bool,
    ) -> Self {
        Sampler {
            interval,
            end,
            next_tick: Some((Time::ZERO + interval).min(end)),
            last_tick: Time::ZERO,
            marks: vec![(window.0, Mark::WindowStart), (window.1, Mark::WindowEnd)],
            cursor: 0,
            trace_cwnd,
            trace_queues,
            window,
            at_window_start: None,
            at_window_end: None,
            at_flow_stop: Vec::new(),
            flow_series: FlowSeries::default(),
            link_series: LinkSeries::default(),
            subflow_series: SubflowSeries::default(),
            ndn_path_series: NdnPathSeries::default(),
            last_link: Vec::new(),
            fairness: None,
            router_series: None,
        }
    }

    /// Records the INRPP routers at every tick as well.
    pub(crate) fn trace_routers(&mut self) {
        self.router_series = Some(RouterSeries::default());
    }

    /// Samples Jain's index every `interval` over the summary window as well.
    pub(crate) fn sample_fairness(&mut self, interval: Dur) {
        self.fairness = Some(FairnessSampler::new(interval, self.window));
    }

    /// Registers the flows and links once the scenario is built.
    pub(crate) fn init(&mut self, flows: &[FlowMeta], links: usize) {
        for (i, f) in flows.iter().enumerate() {
            if let Some(s) = f.stop.filter(|&s| s < self.end) {
                self.marks.push((s, Mark::FlowStop(i as u32)));
            }
        }
        self.marks.sort();
        self.at_flow_stop = vec![None; flows.len()];
        self.last_link = vec![(0, 0); links];
        if let Some(f) = &mut self.fairness {
            f.init(flows.iter().map(|f| f.start));
        }
    }

    /// When the sampler must run next.
    pub(crate) fn next_time(&self) -> Option<Time> {
        let mark = self.marks.get(self.cursor).map(|m| m.0);
        let fair = self.fairness.as_ref().and_then(|f| f.next);
        [self.next_tick, mark, fair].into_iter().flatten().min()
    }

    /// Whether a tick or a mark (which read the links) is due at `now`, and not only a
    /// fairness sample (which reads only the flows' counters).
    pub(crate) fn reads_links_at(&self, now: Time) -> bool {
        self.next_tick == Some(now) || self.marks.get(self.cursor).is_some_and(|m| m.0 == now)
    }

    /// Records whatever is due at `now`. Links must have been advanced to `now`.
    pub(crate) fn sample(
        &mut self,
        now: Time,
        flows: &[FlowMeta],
        links: &[LinkMeta],
        elements: &Elements,
        link_state: &[Link],
    ) {
        while let Some(&(t, mark)) = self.marks.get(self.cursor) {
            if t != now {
                break;
            }
            self.cursor += 1;
            match mark {
                // A window opening with the run counts from zero: what happens at t = 0 (the
                // first packets sent) is inside it, although the sampler runs after it.
                Mark::WindowStart if now == Time::ZERO => {}
                Mark::WindowStart => {
                    self.at_window_start = Some(snapshot(flows, links, elements, link_state))
                }
                Mark::WindowEnd => {
                    self.at_window_end = Some(snapshot(flows, links, elements, link_state))
                }
                Mark::FlowStop(f) => {
                    let sink = flows[f as usize].sink;
                    self.at_flow_stop[f as usize] = Some(elements.delivered(sink));
                }
            }
        }
        if self.next_tick == Some(now) {
            self.tick(now, flows, links, elements, link_state);
            self.next_tick = (now < self.end).then(|| (now + self.interval).min(self.end));
        }
        if let Some(fair) = self.fairness.as_mut().filter(|f| f.next == Some(now)) {
            fair.sample(now, |i| {
                let f = &flows[i as usize];
                let completed = elements.completed_at(f.sink);
                let stopped = f.stop.filter(|&s| s <= now);
                let ended = [completed, stopped].into_iter().flatten().min();
                (ended, elements.delivered(f.sink))
            });
        }
    }

    fn tick(
        &mut self,
        now: Time,
        flows: &[FlowMeta],
        links: &[LinkMeta],
        elements: &Elements,
        link_state: &[Link],
    ) {
        let dt = (now - self.last_tick).as_secs_f64();
        let t = now.as_secs_f64();
        for (i, f) in flows.iter().enumerate() {
            if f.start > now {
                continue;
            }
            let ended = elements.completed_at(f.sink).or(f.stop);
            if ended.is_some_and(|e| e <= self.last_tick) {
                continue;
            }
            let s = &mut self.flow_series;
            s.flow.push(i as u32);
            s.delivered_bytes.push(elements.delivered(f.sink));
            if self.trace_cwnd {
                let (cwnd, ssthresh, srtt) = match elements.tcp_source(f.source) {
                    Some(src) => {
                        let (c, s, r) = src.trace();
                        let s = if s == u64::MAX {
                            f64::INFINITY
                        } else {
                            s as f64
                        };
                        (c as f64, s, r)
                    }
                    None => (f64::NAN, f64::NAN, f64::NAN),
                };
                s.cwnd_bytes.push(cwnd);
                s.ssthresh_bytes.push(ssthresh);
                s.srtt_s.push(srtt);
                if let Some(conn) = elements.multipath(f.source) {
                    self.trace_subflows(t, i as u32, f, conn);
                }
                if let Some(c) = elements.ndn_consumer_at(f.sink) {
                    self.ndn_path_series.trace(t, i as u32, c);
                }
            }
        }
        let rows = self.flow_series.flow.len();
        self.flow_series.ticks.push((now, rows));
        if self.trace_queues {
            for (i, l) in links.iter().enumerate() {
                let link = &link_state[elements.link_index(l.elem)];
                let c = link.counters();
                let (last_tx, last_drops) = self.last_link[i];
                let s = &mut self.link_series;
                s.time_s.push(t);
                s.link.push(i as u32);
                s.queue_bytes.push(link.queued_bytes());
                s.queue_packets.push(link.queued_packets());
                s.throughput_bps
                    .push((c.tx_bytes - last_tx) as f64 * 8.0 / dt);
                s.drops.push(c.drops - last_drops);
                self.last_link[i] = (c.tx_bytes, c.drops);
            }
        }
        if let Some(routers) = &mut self.router_series {
            routers.sample(now, elements);
        }
        self.last_tick = now;
    }

    fn trace_subflows(&mut self, t: f64, flow: u32, f: &FlowMeta, conn: Multi<'_>) {
        let s = &mut self.subflow_series;
        for j in 0..f.subflows.len() {
            let (Some(st), Some((m, srtt))) = (conn.subflow(j), conn.trace(j)) else {
                continue;
            };
            s.time_s.push(t);
            s.flow.push(flow);
            s.subflow.push(j as u64);
            s.acked_bytes.push(st.delivered_bytes);
            s.cwnd_bytes.push(m.cwnd as f64);
            s.ssthresh_bytes.push(if m.ssthresh == u64::MAX {
                f64::INFINITY
            } else {
                m.ssthresh as f64
            });
            s.srtt_s.push(srtt);
            let (var, value) = m.alg_state.unwrap_or(("", f64::NAN));
            s.alg_var.push(var);
            s.alg_value.push(value);
        }
    }

    /// Whether cwnd traces were recorded.
    pub(crate) fn traces_cwnd(&self) -> bool {
        self.trace_cwnd
    }
}

/// Bytes acknowledged on each subflow of each multipath flow, flow by flow.
pub(crate) fn subflow_acked(flows: &[FlowMeta], elements: &Elements) -> Vec<u64> {
    let mut v = Vec::new();
    for f in flows {
        if let Some(conn) = elements.multipath(f.source) {
            v.extend(
                (0..f.subflows.len()).map(|j| conn.subflow(j).map_or(0, |s| s.delivered_bytes)),
            );
        }
    }
    v
}

fn snapshot(
    flows: &[FlowMeta],
    links: &[LinkMeta],
    elements: &Elements,
    link_state: &[Link],
) -> Snapshot {
    Snapshot {
        delivered: flows.iter().map(|f| elements.delivered(f.sink)).collect(),
        subflow_acked: subflow_acked(flows, elements),
        links: links
            .iter()
            .map(|l| *link_state[elements.link_index(l.elem)].counters())
            .collect(),
    }
}
