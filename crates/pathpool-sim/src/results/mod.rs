//! What a run produces: per-flow and per-link results over the summary window, time series,
//! and the summary figures. Every definition is in `docs/metrics.md`.

use serde::Serialize;

use crate::metrics::{AfctBin, SampledJain};
use crate::sim::RunStats;
use crate::table::Table;

mod collect;
pub mod mp_fairness;
mod ndn;
mod tables;

use mp_fairness::MpFairness;

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
    /// NDN Data a REM queue marked CE in the window (instead of dropping them).
    pub ce_marks: u64,
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

/// What one INRPP router did over the whole run (scenarios with `[inrpp]`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RouterResult {
    /// The router's node.
    pub node: String,
    /// Its cache's size in bytes.
    pub cache_bytes: u64,
    /// The most its cache held, in bytes.
    pub peak_cached_bytes: u64,
    /// Bytes its cache held at the end of the run.
    pub cached_bytes_at_end: u64,
    /// Data packets that arrived to a full cache and were dropped.
    pub cache_drops: u64,
    /// Nonces listed at the end of the run.
    pub nonces_at_end: u64,
    /// Each interface's state at the end, `neighbour:state` (P, S&D, B, DB), space-separated.
    pub states_at_end: String,
    /// When an interface of the router first went to Backpressure, seconds (never: `None`).
    pub first_backpressure_s: Option<f64>,
    /// When the router first passed SLOW-DOWN upstream (Algorithm 1's PR mode, its cache
    /// above S_high), seconds (never: `None`).
    pub first_propagate_s: Option<f64>,
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
    /// Per-router results (scenarios with `[inrpp]`; empty otherwise).
    pub routers: Vec<RouterResult>,
    /// Jain's index over the throughput of every flow active in the window.
    pub jain_index: Option<f64>,
    /// Mean completion time of the finite flows that completed.
    pub afct_s: Option<f64>,
    /// Jain's index sampled every `measure.fairness_interval` over the flows active in each
    /// interval, averaged over the samples (spec 001 §5.1, D290); `None` unless asked for.
    pub jain_sampled: Option<SampledJain>,
    /// The same samples on each flow's mean throughput since it started (D301); `None`
    /// unless asked for.
    pub jain_sampled_since_start: Option<SampledJain>,
    /// AFCT per logarithmic flow-size bin (spec 001 §5.1, D291), with
    /// `measure.afct_bins_per_decade`.
    pub afct_bins: Option<Vec<AfctBin>>,
    /// Per-flow time series.
    pub flow_timeseries: Table,
    /// Per-link time series.
    pub link_timeseries: Table,
    /// Per-subflow time series of the multipath flows (with `measure.trace_cwnd`).
    pub subflow_timeseries: Table,
    /// The INRPP routers at each tick (with `measure.trace_routers`).
    pub router_timeseries: Option<Table>,
    /// The bytes each INRPP router holds of each flow at each tick (with
    /// `measure.trace_routers`).
    pub router_flow_timeseries: Option<Table>,
    /// Each flow's histogram of receiver inter-arrival times (with `measure.interarrival`).
    pub interarrival: Option<Table>,
    /// The traced flows' sequence numbers at their senders, INRPP routers and receivers (with
    /// `measure.trace_sequences`).
    pub sequence_trace: Option<Table>,
    /// Tse's fairness figures of each multipath flow, when `measure.mp_fairness` asks for
    /// them (with `"reference-runs"`, T_p and S_p are empty until
    /// [`Simulation::mp_fairness_reference_runs`](crate::Simulation::mp_fairness_reference_runs)
    /// has filled them).
    pub mp_fairness: Option<Vec<MpFairness>>,
    /// One row per NDN node: PIT, content store, FAB and NACK counters (with `[ndn]`).
    pub ndn_nodes: Option<Table>,
    /// One row per path each PTP consumer found, or subflow of an mmTP consumer: its tag,
    /// nodes, in-use intervals, goodput and window (with PTP or mmTP consumers).
    pub ndn_paths: Option<Table>,
    /// Each NDN consumer's paths in use at each sample: window, threshold, smoothed RTT and
    /// payload so far (with `[ndn]` and `measure.trace_cwnd`).
    pub ndn_path_timeseries: Option<Table>,
}

impl Results {
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
            jain_sampled: self.jain_sampled.map(|j| j.mean()),
            jain_sampled_samples: self.jain_sampled.map(|j| j.samples()),
            jain_sampled_since_start: self.jain_sampled_since_start.map(|j| j.mean()),
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
                    ce_marks: l.ce_marks,
                    mean_queue_bytes: l.mean_queue_bytes,
                })
                .collect(),
            mp_fairness: self.mp_fairness.clone(),
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
    /// With `measure.fairness_interval`: the mean over the samples of Jain's index of the
    /// flows active over each sampling interval (dimensionless, in (0, 1]; null if no sample
    /// had two active flows that delivered something). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jain_sampled: Option<Option<f64>>,
    /// With `measure.fairness_interval`: the number of samples `jain_sampled` averages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jain_sampled_samples: Option<u64>,
    /// With `measure.fairness_interval`: as `jain_sampled`, each flow's throughput being
    /// its mean since it started (or since the window opened) (D301). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jain_sampled_since_start: Option<Option<f64>>,
    /// Events processed.
    pub events: u64,
    /// TCP data packets delivered to sinks.
    pub data_packets_delivered: u64,
    /// Per-flow figures.
    pub flows: Vec<SummaryFlow>,
    /// Per-link figures.
    pub links: Vec<SummaryLink>,
    /// Tse's fairness figures of each multipath flow (only with `measure.mp_fairness`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mp_fairness: Option<Vec<MpFairness>>,
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
    /// CE marks of a REM queue in the window (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub ce_marks: u64,
    /// Mean queue in bytes over the window.
    pub mean_queue_bytes: f64,
}

/// Whether a counter is zero (fields only failures fill are left out of the summary then).
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}
