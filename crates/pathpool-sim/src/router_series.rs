//! INRPP routers' time series (`measure.trace_routers`, issue 21; the document's Figs 9 and
//! 11): at every tick, one row per router (its cache, cumulative drops and detoured bytes,
//! listed nonces, Algorithm 1's mode, each interface's state) and one row per flow the router holds packets of
//! (by interface). Opt-in: a row per router per tick is cheap, but the per-flow rows of a
//! busy router grow with its flows.

use pathpool_core::Time;
use pathpool_proto::inrpp::signalling::PropagationMode;

use crate::kinds::Elements;
use crate::sim::FlowMeta;
use crate::table::{Column, Table};

/// The routers' rows and the per-flow cache rows.
#[derive(Clone, Debug, Default)]
pub(crate) struct RouterSeries {
    time_s: Vec<f64>,
    router: Vec<u32>,
    cached_bytes: Vec<u64>,
    cache_drops: Vec<u64>,
    detoured_bytes: Vec<u64>,
    nonces: Vec<u64>,
    /// Algorithm 1's mode: PROPAGATE.
    propagate: Vec<bool>,
    states: Vec<String>,
    flow_time_s: Vec<f64>,
    flow_router: Vec<u32>,
    flow: Vec<u32>,
    flow_interface: Vec<u32>,
    flow_cached_bytes: Vec<u64>,
}

impl RouterSeries {
    /// Records every router at `now`.
    pub(crate) fn sample(&mut self, now: Time, elements: &Elements) {
        let t = now.as_secs_f64();
        for (i, r) in elements.routers.iter().enumerate() {
            let router = &r.router;
            self.time_s.push(t);
            self.router.push(i as u32);
            self.cached_bytes.push(router.cache().bytes());
            self.cache_drops.push(r.dropped);
            self.detoured_bytes.push(r.detoured_bytes);
            self.nonces
                .push(router.signalling().listed().count() as u64);
            self.propagate
                .push(router.signalling().mode() == PropagationMode::Propagate);
            let states: Vec<String> = r
                .neighbour_names
                .iter()
                .enumerate()
                .map(|(k, name)| format!("{name}:{}", router.state(k).short_name()))
                .collect();
            self.states.push(states.join(" "));
            for (iface, flow, bytes) in router.cache().flows() {
                self.flow_time_s.push(t);
                self.flow_router.push(i as u32);
                self.flow.push(flow as u32);
                self.flow_interface.push(iface as u32);
                self.flow_cached_bytes.push(bytes);
            }
        }
    }

    /// The `router_timeseries` table.
    pub(crate) fn routers_table(&self, elements: &Elements) -> Table {
        let mut t = Table::new("router_timeseries");
        t.push("time_s", Column::F64(self.time_s.clone()));
        t.push("node", node_column(&self.router, elements));
        t.push("cached_bytes", Column::U64(self.cached_bytes.clone()));
        t.push("cache_drops", Column::U64(self.cache_drops.clone()));
        t.push("detoured_bytes", Column::U64(self.detoured_bytes.clone()));
        t.push("nonces", Column::U64(self.nonces.clone()));
        t.push(
            "mode",
            Column::Str(
                self.propagate
                    .iter()
                    .map(|&p| if p { "PR" } else { "CLR" }.to_string())
                    .collect(),
            ),
        );
        t.push("states", Column::Str(self.states.clone()));
        t
    }

    /// The `router_flow_timeseries` table: bytes cached per flow and primary interface.
    pub(crate) fn flows_table(&self, elements: &Elements, flows: &[FlowMeta]) -> Table {
        let mut t = Table::new("router_flow_timeseries");
        t.push("time_s", Column::F64(self.flow_time_s.clone()));
        t.push("node", node_column(&self.flow_router, elements));
        t.push(
            "flow",
            Column::Str(
                self.flow
                    .iter()
                    .map(|&f| flows[f as usize].id.clone())
                    .collect(),
            ),
        );
        t.push(
            "interface",
            Column::Str(
                self.flow_router
                    .iter()
                    .zip(&self.flow_interface)
                    .map(|(&r, &i)| {
                        elements.routers[r as usize].neighbour_names[i as usize].clone()
                    })
                    .collect(),
            ),
        );
        t.push("cached_bytes", Column::U64(self.flow_cached_bytes.clone()));
        t
    }
}

fn node_column(routers: &[u32], elements: &Elements) -> Column {
    Column::Str(
        routers
            .iter()
            .map(|&r| elements.routers[r as usize].node.clone())
            .collect(),
    )
}
