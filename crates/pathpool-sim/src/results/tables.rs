//! A run's results as tables (what `pathpool run` writes as Parquet files).

use super::mp_fairness::{MpFairness, MpFairnessPath};
use super::{CacheResult, Results};
use crate::table::{Column, Table};

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

    /// All the tables: flows, links, subflows, caches, flow_timeseries, link_timeseries,
    /// subflow_timeseries, and mp_fairness when `measure.mp_fairness` asks for it.
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
        all.extend(self.mp_fairness_table());
        all
    }
}
