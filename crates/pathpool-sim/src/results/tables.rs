//! A run's results as tables (what `pathpool run` writes as Parquet files).

use super::mp_fairness::{MpFairness, MpFairnessPath};
use super::{CacheResult, Results, RouterResult};
use crate::table::{column, Column, Table};

impl Results {
    /// The flows table.
    #[must_use]
    pub fn flows_table(&self) -> Table {
        let f = &self.flows;
        let mut t = Table::new("flows");
        t.push("id", column(f, Column::Str, |r| r.id.clone()));
        t.push("kind", column(f, Column::Str, |r| r.kind.clone()));
        t.push("from", column(f, Column::Str, |r| r.from.clone()));
        t.push("to", column(f, Column::Str, |r| r.to.clone()));
        t.push("cc", column(f, Column::OptStr, |r| r.cc.clone()));
        t.push(
            "loss_recovery",
            column(f, Column::OptStr, |r| r.loss_recovery.clone()),
        );
        t.push("path", column(f, Column::Str, |r| r.path.clone()));
        t.push("start_s", column(f, Column::F64, |r| r.start_s));
        t.push("stop_s", column(f, Column::OptF64, |r| r.stop_s));
        t.push("size_bytes", column(f, Column::OptU64, |r| r.size_bytes));
        t.push(
            "bytes_delivered",
            column(f, Column::U64, |r| r.bytes_delivered),
        );
        t.push("window_bytes", column(f, Column::U64, |r| r.window_bytes));
        t.push(
            "window_active_s",
            column(f, Column::F64, |r| r.window_active_s),
        );
        t.push(
            "throughput_bps",
            column(f, Column::OptF64, |r| r.throughput_bps),
        );
        t.push("share", column(f, Column::OptF64, |r| r.share));
        t.push("fct_s", column(f, Column::OptF64, |r| r.fct_s));
        t.push("completed", column(f, Column::OptBool, |r| r.completed));
        t.push("packets_sent", column(f, Column::U64, |r| r.packets_sent));
        t.push(
            "retransmissions",
            column(f, Column::U64, |r| r.retransmissions),
        );
        t.push("timeouts", column(f, Column::U64, |r| r.timeouts));
        t.push(
            "fast_recoveries",
            column(f, Column::U64, |r| r.fast_recoveries),
        );
        t
    }

    /// The links table.
    #[must_use]
    pub fn links_table(&self) -> Table {
        let l = &self.links;
        let mut t = Table::new("links");
        t.push("id", column(l, Column::Str, |r| r.id.clone()));
        t.push("name", column(l, Column::Str, |r| r.name.clone()));
        t.push("from", column(l, Column::Str, |r| r.from.clone()));
        t.push("to", column(l, Column::Str, |r| r.to.clone()));
        t.push("rate_bps", column(l, Column::OptF64, |r| r.rate_bps));
        t.push("delay_s", column(l, Column::F64, |r| r.delay_s));
        t.push("queue", column(l, Column::Str, |r| r.queue.clone()));
        t.push("utilization", column(l, Column::OptF64, |r| r.utilization));
        t.push(
            "throughput_bps",
            column(l, Column::F64, |r| r.throughput_bps),
        );
        t.push("tx_bytes", column(l, Column::U64, |r| r.tx_bytes));
        t.push("arrivals", column(l, Column::U64, |r| r.arrivals));
        t.push("drops", column(l, Column::U64, |r| r.drops));
        t.push("random_losses", column(l, Column::U64, |r| r.random_losses));
        t.push(
            "failure_losses",
            column(l, Column::U64, |r| r.failure_losses),
        );
        t.push("ce_marks", column(l, Column::U64, |r| r.ce_marks));
        t.push(
            "mean_queue_bytes",
            column(l, Column::F64, |r| r.mean_queue_bytes),
        );
        t.push(
            "max_queue_bytes",
            column(l, Column::U64, |r| r.max_queue_bytes),
        );
        t
    }

    /// The subflows table (one row per subflow of each multipath flow).
    #[must_use]
    pub fn subflows_table(&self) -> Table {
        let f = &self.subflows;
        let mut t = Table::new("subflows");
        t.push("flow", column(f, Column::Str, |r| r.flow.clone()));
        t.push("subflow", column(f, Column::U64, |r| u64::from(r.subflow)));
        t.push("path", column(f, Column::Str, |r| r.path.clone()));
        t.push("group", column(f, Column::U64, |r| u64::from(r.group)));
        t.push("start_s", column(f, Column::F64, |r| r.start_s));
        t.push("stop_s", column(f, Column::OptF64, |r| r.stop_s));
        t.push("bytes_sent", column(f, Column::U64, |r| r.bytes_sent));
        t.push("bytes_acked", column(f, Column::U64, |r| r.bytes_acked));
        t.push("window_bytes", column(f, Column::U64, |r| r.window_bytes));
        t.push(
            "throughput_bps",
            column(f, Column::OptF64, |r| r.throughput_bps),
        );
        t.push(
            "share_of_flow",
            column(f, Column::OptF64, |r| r.share_of_flow),
        );
        t.push(
            "retransmissions",
            column(f, Column::U64, |r| r.retransmissions),
        );
        t.push("timeouts", column(f, Column::U64, |r| r.timeouts));
        t.push(
            "fast_recoveries",
            column(f, Column::U64, |r| r.fast_recoveries),
        );
        t
    }

    /// The caches table (one row per on-path cache).
    #[must_use]
    pub fn caches_table(&self) -> Table {
        let c = &self.caches;
        let mut t = Table::new("caches");
        let u64s = |f: fn(&CacheResult) -> u64| Column::U64(c.iter().map(f).collect());
        t.push("node", column(c, Column::Str, |r| r.node.clone()));
        t.push("capacity_bytes", u64s(|r| r.capacity_bytes));
        t.push("used_bytes", u64s(|r| r.used_bytes));
        t.push("hits", u64s(|r| r.hits));
        t.push("misses", u64s(|r| r.misses));
        t.push("hit_ratio", column(c, Column::OptF64, |r| r.hit_ratio));
        t.push("stored", u64s(|r| r.stored));
        t.push("evicted", u64s(|r| r.evicted));
        t.push("payload_bytes_served", u64s(|r| r.payload_bytes_served));
        t
    }

    /// The routers table (one row per INRPP router), for scenarios with `[inrpp]`.
    #[must_use]
    pub fn routers_table(&self) -> Option<Table> {
        let r = &self.routers;
        if r.is_empty() {
            return None;
        }
        let mut t = Table::new("routers");
        let u64s = |f: fn(&RouterResult) -> u64| Column::U64(r.iter().map(f).collect());
        t.push("node", column(r, Column::Str, |x| x.node.clone()));
        t.push("cache_bytes", u64s(|x| x.cache_bytes));
        t.push("peak_cached_bytes", u64s(|x| x.peak_cached_bytes));
        t.push("cached_bytes_at_end", u64s(|x| x.cached_bytes_at_end));
        t.push("cache_drops", u64s(|x| x.cache_drops));
        t.push("nonces_at_end", u64s(|x| x.nonces_at_end));
        t.push(
            "states_at_end",
            column(r, Column::Str, |x| x.states_at_end.clone()),
        );
        t.push(
            "first_backpressure_s",
            column(r, Column::OptF64, |x| x.first_backpressure_s),
        );
        t.push(
            "first_propagate_s",
            column(r, Column::OptF64, |x| x.first_propagate_s),
        );
        Some(t)
    }

    /// Tse's fairness figures (with `measure.mp_fairness`): one row per path of each
    /// multipath flow, the flow's figures repeated on each of its rows.
    #[must_use]
    pub fn mp_fairness_table(&self) -> Option<Table> {
        let rows: Vec<(&MpFairness, &MpFairnessPath)> = self
            .mp_fairness
            .as_ref()?
            .iter()
            .flat_map(|f| f.paths.iter().map(move |p| (f, p)))
            .collect();
        let mut t = Table::new("mp_fairness");
        let strs = |f: fn(&MpFairness, &MpFairnessPath) -> String| {
            Column::Str(rows.iter().map(|(a, b)| f(a, b)).collect())
        };
        let f64s = |f: fn(&MpFairness, &MpFairnessPath) -> f64| {
            Column::F64(rows.iter().map(|(a, b)| f(a, b)).collect())
        };
        let opt = |f: fn(&MpFairness, &MpFairnessPath) -> Option<f64>| {
            Column::OptF64(rows.iter().map(|(a, b)| f(a, b)).collect())
        };
        let flag = |f: fn(&MpFairness) -> Option<bool>| {
            Column::OptBool(rows.iter().map(|(a, _)| f(a)).collect())
        };
        t.push("flow", strs(|f, _| f.flow.clone()));
        t.push("mode", strs(|f, _| f.mode.to_string()));
        t.push("path", strs(|_, p| p.path.clone()));
        t.push(
            "subflows",
            Column::U64(rows.iter().map(|(_, p)| u64::from(p.subflows)).collect()),
        );
        t.push("m_p_bps", f64s(|_, p| p.m_p_bps));
        t.push("t_p_bps", opt(|_, p| p.t_p_bps));
        t.push("s_p_bps", opt(|_, p| p.s_p_bps));
        t.push(
            "bottleneck",
            Column::OptStr(rows.iter().map(|(_, p)| p.bottleneck.clone()).collect()),
        );
        t.push(
            "competitors",
            Column::OptU64(
                rows.iter()
                    .map(|(_, p)| p.competitors.map(u64::from))
                    .collect(),
            ),
        );
        t.push("m_bps", f64s(|f, _| f.m_bps));
        t.push("lenient_bound_bps", opt(|f, _| f.lenient_bound_bps));
        t.push("lenient_ratio", opt(|f, _| f.lenient_ratio));
        t.push("stringent_bound_bps", opt(|f, _| f.stringent_bound_bps));
        t.push("stringent_ratio", opt(|f, _| f.stringent_ratio));
        t.push("tolerance", f64s(|f, _| f.tolerance));
        t.push("lenient_fair", flag(|f| f.lenient_fair));
        t.push("stringent_fair", flag(|f| f.stringent_fair));
        Some(t)
    }

    /// AFCT per logarithmic flow-size bin (with `measure.afct_bins_per_decade`; spec 001
    /// §5.1, D291): one row per bin holding a finite flow, smallest first, with the bin's
    /// edges in bytes (lower inclusive, upper exclusive), the flows that completed and their
    /// mean FCT in seconds (null if none did), and the flows that did not complete.
    #[must_use]
    pub fn afct_bins_table(&self) -> Option<Table> {
        let b = self.afct_bins.as_ref()?;
        let mut t = Table::new("afct_bins");
        t.push("size_lo_bytes", column(b, Column::F64, |r| r.lo_bytes));
        t.push("size_hi_bytes", column(b, Column::F64, |r| r.hi_bytes));
        t.push("completed", column(b, Column::U64, |r| r.completed));
        t.push("mean_fct_s", column(b, Column::OptF64, |r| r.mean_fct_s));
        t.push("not_completed", column(b, Column::U64, |r| r.not_completed));
        Some(t)
    }

    /// All the tables: flows, links, subflows, caches, flow_timeseries, link_timeseries,
    /// subflow_timeseries, routers with `[inrpp]`, router_timeseries and
    /// router_flow_timeseries with `measure.trace_routers`, interarrival with
    /// `measure.interarrival`, sequence_trace with `measure.trace_sequences`, mp_fairness when
    /// `measure.mp_fairness` asks for it, afct_bins when `measure.afct_bins_per_decade`
    /// does, ndn_nodes and ndn_paths with `[ndn]`, and ndn_path_timeseries with `[ndn]` and
    /// `measure.trace_cwnd`.
    #[must_use]
    pub fn tables(&self) -> Vec<Table> {
        let mut all = vec![
            self.flows_table(),
            self.links_table(),
            self.subflows_table(),
            self.caches_table(),
            self.flow_timeseries.clone(),
            self.link_timeseries.clone(),
            self.subflow_timeseries.clone(),
        ];
        all.extend(self.routers_table());
        all.extend(self.router_timeseries.clone());
        all.extend(self.router_flow_timeseries.clone());
        all.extend(self.interarrival.clone());
        all.extend(self.sequence_trace.clone());
        all.extend(self.mp_fairness_table());
        all.extend(self.afct_bins_table());
        all.extend(self.ndn_nodes.clone());
        all.extend(self.ndn_paths.clone());
        all.extend(self.ndn_path_timeseries.clone());
        all
    }
}
