//! The network: nodes, the routing graph of the directed links, and routes through it —
//! explicit node lists checked against the links, or least-cost paths.

use std::collections::{HashMap, HashSet};

use pathpool_core::{Dur, Rate};
use pathpool_psi::TopologyManager;
use pathpool_topo::{k_shortest_paths, shortest_path, EdgeId, Graph, NodeIx};

use super::hosts::HostGroup;
use super::{at, child, ix, k};
use crate::error::{PathSeg, SpecError};
use crate::packet::MAX_SUBFLOWS;
use crate::spec::{RouteMetric, Scenario, TmSpec};

/// The network being built: nodes, directed links and the routing graph.
pub(super) struct Net {
    pub(super) names: Vec<String>,
    pub(super) index: HashMap<String, NodeIx>,
    pub(super) is_host: Vec<bool>,
    pub(super) graph: Graph,
    /// Cost of each directed link (graph edge ids equal link indices).
    pub(super) cost: Vec<f64>,
    /// Rate of each directed link.
    pub(super) rate: Vec<Rate>,
    /// Propagation delay of each directed link.
    pub(super) delay: Vec<Dur>,
    /// Element of each directed link.
    pub(super) elem: Vec<u32>,
    /// Cache element of each node that has one (`caches`).
    pub(super) cache: Vec<Option<u32>>,
    /// The drop-tail limit in bytes of each directed link's queue (packets counted at 1500
    /// bytes), `None` for other queues: what INRPP's L_high is checked against.
    pub(super) queue_limit: Vec<Option<u64>>,
    /// The INRPP router (index among the routers) of each node, with `[inrpp]`.
    pub(super) router: Vec<Option<u32>>,
    /// Each INRPP router's element and node.
    pub(super) router_elem: Vec<u32>,
    pub(super) router_node: Vec<u32>,
    pub(super) metric: RouteMetric,
    /// Every link's `id`, to find one used twice.
    pub(super) link_names: HashSet<String>,
    /// The host groups (`[[host_groups]]`), in the order of the file.
    pub(super) groups: Vec<HostGroup>,
}

impl Net {
    pub(super) fn node(&self, name: &str, path: Vec<PathSeg>) -> Result<NodeIx, SpecError> {
        self.index.get(name).copied().ok_or_else(|| {
            let all = self.names.iter().map(String::as_str);
            let meant = pathpool_core::text::closest(name, all.clone())
                .map_or(String::new(), |m| format!(" (did you mean {m:?}?)"));
            let mut known: Vec<&str> = all.take(12).collect();
            if self.names.len() > 12 {
                known.push("...");
            }
            SpecError::at(
                path,
                format!(
                    "unknown node {name:?}{meant}; known nodes: {}",
                    known.join(", ")
                ),
            )
        })
    }

    pub(super) fn host(&self, name: &str, path: Vec<PathSeg>) -> Result<NodeIx, SpecError> {
        let n = self.node(name, path.clone())?;
        if !self.is_host[n.0 as usize] {
            return Err(SpecError::at(
                path,
                format!("{name:?} is a router; flows start and end at hosts (nodes.hosts)"),
            ));
        }
        Ok(n)
    }

    /// The least-cost path; hosts other than the source never forward.
    pub(super) fn shortest(&self, from: NodeIx, to: NodeIx) -> Option<Vec<EdgeId>> {
        shortest_path(&self.graph, from, to, |e| {
            let (a, _) = self.graph.ends(e);
            if a != from && self.is_host[a.0 as usize] {
                f64::INFINITY
            } else {
                self.cost[e.0 as usize]
            }
        })
    }

    /// Up to `k` least-cost loopless paths (Yen), under the same rules as `shortest`.
    pub(super) fn k_shortest(&self, from: NodeIx, to: NodeIx, k: usize) -> Vec<Vec<EdgeId>> {
        k_shortest_paths(&self.graph, from, to, k, |e| {
            let (a, _) = self.graph.ends(e);
            if a != from && self.is_host[a.0 as usize] {
                f64::INFINITY
            } else {
                self.cost[e.0 as usize]
            }
        })
    }

    /// Directed links along an explicit node list.
    pub(super) fn along(
        &self,
        nodes: &[NodeIx],
        path: &[PathSeg],
        purpose: &str,
    ) -> Result<Vec<EdgeId>, SpecError> {
        let mut edges = Vec::new();
        for (i, w) in nodes.windows(2).enumerate() {
            let e = self
                .graph
                .out_edges(w[0])
                .iter()
                .copied()
                .find(|&e| self.graph.ends(e).1 == w[1]);
            match e {
                Some(e) => edges.push(e),
                None => {
                    let mut p = path.to_vec();
                    p.push(ix(i + 1));
                    return Err(SpecError::at(
                        p,
                        format!(
                            "no link from {:?} to {:?}{purpose}",
                            self.names[w[0].0 as usize], self.names[w[1].0 as usize]
                        ),
                    ));
                }
            }
        }
        Ok(edges)
    }

    /// The elements a packet crosses along `edges`, then the element `end` (a sink or source).
    pub(super) fn hops_to(&self, edges: &[EdgeId], end: u32) -> Vec<u32> {
        let mut hops: Vec<u32> = edges.iter().map(|e| self.elem[e.0 as usize]).collect();
        hops.push(end);
        hops
    }

    pub(super) fn node_names(&self, from: NodeIx, edges: &[EdgeId]) -> Vec<String> {
        let mut v = vec![self.names[from.0 as usize].clone()];
        v.extend(
            edges
                .iter()
                .map(|&e| self.names[self.graph.ends(e).1 .0 as usize].clone()),
        );
        v
    }
}

/// Data and reverse (ACK) paths of a flow as directed link lists.
#[derive(Clone)]
pub(super) struct FlowPaths {
    pub(super) data: Vec<EdgeId>,
    pub(super) back: Option<Vec<EdgeId>>,
}

/// A flow's data path from `from` to `to` (and with `need_back` its reverse path for the
/// ACKs): along `route`, whose problems are reported at `route_path`, or else the least-cost
/// path each way.
pub(super) fn flow_paths(
    net: &Net,
    from: NodeIx,
    to: NodeIx,
    route: Option<&Vec<String>>,
    path: &[PathSeg],
    route_path: Vec<PathSeg>,
    need_back: bool,
) -> Result<FlowPaths, SpecError> {
    let fname = |f: &str| child(path, f);
    if let Some(route) = route {
        let rpath = route_path;
        if route.len() < 2 {
            return Err(SpecError::at(
                rpath,
                "a route lists at least the two end hosts",
            ));
        }
        let mut nodes = Vec::new();
        for (i, name) in route.iter().enumerate() {
            let mut p = rpath.clone();
            p.push(ix(i));
            let n = net.node(name, p.clone())?;
            let interior = i > 0 && i + 1 < route.len();
            if interior && net.is_host[n.0 as usize] {
                return Err(SpecError::at(
                    p,
                    format!("{name:?} is a host; hosts do not forward"),
                ));
            }
            nodes.push(n);
        }
        if nodes[0] != from || nodes[nodes.len() - 1] != to {
            return Err(SpecError::at(
                rpath,
                "a route must start at `from` and end at `to`",
            ));
        }
        let unique: HashSet<_> = nodes.iter().collect();
        if unique.len() != nodes.len() {
            return Err(SpecError::at(rpath, "a route must not visit a node twice"));
        }
        let data = net.along(&nodes, &rpath, "")?;
        let back = if need_back {
            let rev: Vec<NodeIx> = nodes.iter().rev().copied().collect();
            Some(net.along(
                &rev,
                &rpath,
                " for the ACKs of this route (make the link duplex)",
            )?)
        } else {
            None
        };
        return Ok(FlowPaths { data, back });
    }
    let unreachable = |a: NodeIx, b: NodeIx| {
        SpecError::at(
            fname("to"),
            format!(
                "no path from {:?} to {:?} (hosts do not forward; check the links)",
                net.names[a.0 as usize], net.names[b.0 as usize]
            ),
        )
    };
    let data = net
        .shortest(from, to)
        .ok_or_else(|| unreachable(from, to))?;
    let back = if need_back {
        Some(
            net.shortest(to, from)
                .ok_or_else(|| unreachable(to, from))?,
        )
    } else {
        None
    };
    Ok(FlowPaths { data, back })
}

/// The scenario's nodes, hosts first, checked, in a network without links yet.
pub(super) fn build_nodes(sc: &Scenario) -> Result<Net, SpecError> {
    let mut net = Net {
        names: Vec::new(),
        index: HashMap::new(),
        is_host: Vec::new(),
        graph: Graph::default(),
        cost: Vec::new(),
        rate: Vec::new(),
        delay: Vec::new(),
        elem: Vec::new(),
        cache: Vec::new(),
        queue_limit: Vec::new(),
        router: Vec::new(),
        router_elem: Vec::new(),
        router_node: Vec::new(),
        metric: sc.routing.metric,
        link_names: HashSet::new(),
        groups: Vec::new(),
    };
    for (kind, list, host) in [
        ("hosts", &sc.nodes.hosts, true),
        ("routers", &sc.nodes.routers, false),
    ] {
        for (i, name) in list.iter().enumerate() {
            let p = at(&[k("nodes"), k(kind), ix(i)]);
            if name.trim().is_empty() {
                return Err(SpecError::at(p, "node names must not be empty"));
            }
            if net.index.contains_key(name) {
                return Err(SpecError::at(p, format!("node {name:?} is declared twice")));
            }
            net.index
                .insert(name.clone(), NodeIx(net.names.len() as u32));
            net.names.push(name.clone());
            net.is_host.push(host);
        }
    }
    net.graph = Graph::with_nodes(net.names.len());
    Ok(net)
}

/// The two end hosts of a flow or generator, which must differ.
pub(super) fn end_hosts(
    net: &Net,
    from: &str,
    to: &str,
    here: &[PathSeg],
) -> Result<(NodeIx, NodeIx), SpecError> {
    let a = net.host(from, child(here, "from"))?;
    let b = net.host(to, child(here, "to"))?;
    if a == b {
        return Err(SpecError::at(
            child(here, "to"),
            "a flow needs two different hosts",
        ));
    }
    Ok((a, b))
}

/// The topology manager a `tm` table describes, over the scenario's network (hosts do not
/// transit), and the number of paths it asks for.
pub(super) fn topology_manager(
    net: &Net,
    tm: &TmSpec,
    here: &[PathSeg],
) -> Result<(TopologyManager, usize), SpecError> {
    let (config, k) = tm
        .config(MAX_SUBFLOWS as usize)
        .map_err(|e| SpecError::at(child(here, e.field), e.message))?;
    let rates = net
        .rate
        .iter()
        .map(|r| {
            if r.is_infinite() {
                f64::INFINITY
            } else {
                r.bps() as f64
            }
        })
        .collect();
    let internal = |e: pathpool_psi::TmError| SpecError::at(here.to_vec(), e.to_string());
    let mut manager = TopologyManager::new(net.graph.clone(), rates, net.delay.clone(), config)
        .map_err(internal)?;
    for (n, &host) in net.is_host.iter().enumerate() {
        manager
            .set_transit(NodeIx(n as u32), !host)
            .map_err(internal)?;
    }
    // A simulated link of infinite rate never queues: no bottleneck to share (D339).
    for (e, r) in net.rate.iter().enumerate() {
        if r.is_infinite() {
            manager
                .set_queueless(EdgeId(e as u32), true)
                .map_err(internal)?;
        }
    }
    Ok((manager, k))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{compile, diamond, error, line};

    fn path_of(text: &str) -> Vec<String> {
        compile(text).flows[0].path.clone()
    }

    #[test]
    fn nodes_are_named_once_and_unknown_ones_get_a_suggestion() {
        let e = error(&line("").replace("routers = [\"r\"]", "routers = [\"a\"]"));
        assert_eq!(e, "nodes.routers[0]: node \"a\" is declared twice");
        let e = error(&line("").replace("routers = [\"r\"]", "routers = [\" \"]"));
        assert_eq!(e, "nodes.routers[0]: node names must not be empty");
        let e = error(&line("[[flows]]\nfrom = \"a\"\nto = \"bb\""));
        assert_eq!(
            e,
            "flows[0].to: unknown node \"bb\" (did you mean \"b\"?); known nodes: a, b, r"
        );
    }

    #[test]
    fn the_default_route_is_least_cost_and_never_crosses_a_host() {
        let flow = "[[flows]]\nfrom = \"a\"\nto = \"b\"\n";
        // Equal hop counts: the first path found (through r1, the earlier links).
        assert_eq!(path_of(&diamond(flow)), ["a", "r1", "b"]);
        // By delay, r1's 5 ms links win; by weight, the heavier r1 links lose.
        let by_delay = diamond(&format!("[routing]\nmetric = \"delay\"\n{flow}"));
        assert_eq!(path_of(&by_delay), ["a", "r1", "b"]);
        let heavy = diamond(&format!("[routing]\nmetric = \"weight\"\n{flow}")).replacen(
            "rate = \"10Mbps\"",
            "rate = \"10Mbps\"\nweight = 5.0",
            1,
        );
        assert_eq!(path_of(&heavy), ["a", "r2", "b"]);
        // A host in the middle is no transit: c cannot reach b through a.
        let text = line("[[links]]\nbetween = [\"c\", \"a\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\nfrom = \"c\"\nto = \"b\"")
            .replace("hosts = [\"a\", \"b\"]", "hosts = [\"a\", \"b\", \"c\"]");
        let e = error(&text);
        assert!(
            e.starts_with("flows[0].to: no path from \"c\" to \"b\""),
            "{e}"
        );
    }

    #[test]
    fn an_explicit_route_is_checked_against_the_links() {
        let flow = |route: &str| {
            diamond(&format!(
                "[[flows]]\nfrom = \"a\"\nto = \"b\"\nroute = {route}"
            ))
        };
        assert_eq!(path_of(&flow("[\"a\", \"r2\", \"b\"]")), ["a", "r2", "b"]);
        let e = error(&flow("[\"a\"]"));
        assert_eq!(
            e,
            "flows[0].route: a route lists at least the two end hosts"
        );
        let e = error(&flow("[\"a\", \"r1\", \"r2\", \"b\"]"));
        assert_eq!(e, "flows[0].route[2]: no link from \"r1\" to \"r2\"");
        let e = error(&flow("[\"b\", \"r1\", \"a\"]"));
        assert_eq!(
            e,
            "flows[0].route: a route must start at `from` and end at `to`"
        );
        let e = error(&flow("[\"a\", \"r1\", \"a\", \"r2\", \"b\"]"));
        assert_eq!(
            e,
            "flows[0].route[2]: \"a\" is a host; hosts do not forward"
        );
        let e = error(&flow("[\"a\", \"r1\", \"b\", \"r1\", \"b\"]"));
        assert_eq!(
            e,
            "flows[0].route[2]: \"b\" is a host; hosts do not forward"
        );
        let e = error(&flow("[\"a\", \"r1\", \"r1\", \"b\"]"));
        assert_eq!(e, "flows[0].route: a route must not visit a node twice");
    }

    #[test]
    fn tcp_acks_need_the_reverse_links_and_udp_does_not() {
        let one_way = r#"duration = "10s"
            [nodes]
            hosts = ["a", "b"]
            [[links]]
            from = "a"
            to = "b"
            rate = "10Mbps"
            delay = "5ms"
            "#;
        let tcp = format!("{one_way}[[flows]]\nfrom = \"a\"\nto = \"b\"\nroute = [\"a\", \"b\"]");
        assert_eq!(
            error(&tcp),
            "flows[0].route[1]: no link from \"b\" to \"a\" for the ACKs of this route (make the link duplex)"
        );
        let tcp = format!("{one_way}[[flows]]\nfrom = \"a\"\nto = \"b\"");
        assert!(error(&tcp).starts_with("flows[0].to: no path from \"b\" to \"a\""));
        let udp = format!(
            "{one_way}[[flows]]\nkind = \"udp-cbr\"\nfrom = \"a\"\nto = \"b\"\nrate = \"1Mbps\""
        );
        assert_eq!(compile(&udp).flows[0].path, ["a", "b"]);
    }
}
