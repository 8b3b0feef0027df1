//! Host groups (`[[host_groups]]`): many hosts, each on an access link of its own to one
//! router, which traffic generators draw their end hosts from (issue 21's transit-stub
//! experiment: 2 × 3000 senders and 6 × 1000 receivers); and routes between such hosts, the
//! least-cost route between their routers computed once per pair of routers (D297).

use std::collections::HashMap;

use pathpool_topo::{EdgeId, NodeIx};

use super::links::add_link;
use super::net::{flow_paths, FlowPaths, Net};
use super::{at, child, ix, k};
use crate::error::{PathSeg, SpecError};
use crate::sim::Simulation;
use crate::spec::{HostNames, LinkSpec, Scenario};

/// Most hosts the host groups of a scenario may have together.
const MAX_GROUP_HOSTS: u64 = 1_000_000;

/// A host group in the network: hosts `first .. first + count` (node indices), host `i`'s
/// access link is the directed links `first_edge + 2i` (host to router) and
/// `first_edge + 2i + 1` (back).
pub(super) struct HostGroup {
    pub(super) name: String,
    first: u32,
    count: u32,
    attach: NodeIx,
    first_edge: u32,
}

/// Adds every host group's hosts (after the scenario's nodes, so that those keep their
/// indices) and their access links (after `[[links]]`, whose entries therefore cannot name a
/// group's host: its access link is its only link, which the routes rely on).
pub(super) fn add_host_groups(
    sim: &mut Simulation,
    net: &mut Net,
    sc: &Scenario,
    seed: u64,
) -> Result<(), SpecError> {
    let mut total = 0u64;
    for (g, h) in sc.host_groups.iter().enumerate() {
        let here = at(&[k("host_groups"), ix(g)]);
        let field = |name: &str| child(&here, name);
        if h.name.trim().is_empty() {
            return Err(SpecError::at(field("name"), "must not be empty"));
        }
        if net.index.contains_key(&h.name) {
            return Err(SpecError::at(
                field("name"),
                format!(
                    "{:?} is already a node; a group needs a name of its own",
                    h.name
                ),
            ));
        }
        if net.groups.iter().any(|o| o.name == h.name) {
            return Err(SpecError::at(
                field("name"),
                format!("group {:?} is declared twice", h.name),
            ));
        }
        if h.count == 0 {
            return Err(SpecError::at(field("count"), "must be at least 1"));
        }
        total += u64::from(h.count);
        if total > MAX_GROUP_HOSTS {
            return Err(SpecError::at(
                field("count"),
                format!("the host groups would have more than {MAX_GROUP_HOSTS} hosts"),
            ));
        }
        let attach = net.node(&h.attach, field("attach"))?;
        if net.is_host[attach.0 as usize] {
            return Err(SpecError::at(
                field("attach"),
                format!(
                    "{:?} is a host, and hosts do not forward: attach the group to a router",
                    h.attach
                ),
            ));
        }
        let first = net.names.len() as u32;
        let first_edge = sim.links.len() as u32;
        for i in 0..h.count {
            let name = format!("{}.{i}", h.name);
            if net.index.contains_key(&name) {
                return Err(SpecError::at(
                    field("name"),
                    format!("its host {name:?} is already a node"),
                ));
            }
            let link = format!("{name}-{}", h.attach);
            if net.link_names.contains(&link) {
                return Err(SpecError::at(
                    field("name"),
                    format!(
                        "the access link of its host {name:?}, {link:?}, is already a link's id"
                    ),
                ));
            }
            let node = net.graph.add_node();
            debug_assert_eq!(node.0 as usize, net.names.len());
            net.index.insert(name.clone(), node);
            net.names.push(name.clone());
            net.is_host.push(true);
            let spec = LinkSpec {
                id: None,
                between: Some(vec![name, h.attach.clone()]),
                from: None,
                to: None,
                rate: h.rate,
                delay: h.delay,
                queue: h.queue.clone(),
                loss: 0.0,
                weight: 1.0,
                failures: Vec::new(),
            };
            add_link(sim, net, &spec, &here, seed)?;
        }
        net.groups.push(HostGroup {
            name: h.name.clone(),
            first,
            count: h.count,
            attach,
            first_edge,
        });
    }
    Ok(())
}

/// The router of a group's host and its access link's two directions.
fn access(net: &Net, n: NodeIx) -> Option<(NodeIx, EdgeId, EdgeId)> {
    let g = net
        .groups
        .iter()
        .find(|g| n.0 >= g.first && n.0 - g.first < g.count)?;
    let up = EdgeId(g.first_edge + 2 * (n.0 - g.first));
    debug_assert_eq!(net.graph.ends(up), (n, g.attach));
    Some((g.attach, up, EdgeId(up.0 + 1)))
}

/// The hosts a generator's `from` or `to` names, at `path`: each host, and every host of each
/// group, in order.
pub(super) fn hosts_named(
    net: &Net,
    names: &HostNames,
    path: Vec<PathSeg>,
) -> Result<Vec<NodeIx>, SpecError> {
    let list = names.names();
    if list.is_empty() {
        return Err(SpecError::at(path, "give at least one host or host group"));
    }
    let mut hosts = Vec::new();
    for (i, name) in list.iter().enumerate() {
        let p = match names {
            HostNames::One(_) => path.clone(),
            HostNames::Many(_) => {
                let mut p = path.clone();
                p.push(ix(i));
                p
            }
        };
        if list[..i].contains(name) {
            return Err(SpecError::at(p, format!("{name:?} is listed twice")));
        }
        match net.groups.iter().find(|g| g.name == *name) {
            Some(g) => hosts.extend((g.first..g.first + g.count).map(NodeIx)),
            None if net.groups.is_empty() || net.index.contains_key(name) => {
                hosts.push(net.host(name, p)?);
            }
            None => return Err(unknown(net, name, p)),
        }
    }
    Ok(hosts)
}

/// A name that is neither a host group nor a node, with the groups and the other hosts (a
/// list of thousands of groups' hosts would not help).
fn unknown(net: &Net, name: &str, path: Vec<PathSeg>) -> SpecError {
    let first_group_host = net
        .groups
        .first()
        .map_or(net.names.len(), |g| g.first as usize);
    let groups = net.groups.iter().map(|g| g.name.as_str());
    let others = (0..first_group_host)
        .filter(|&n| net.is_host[n])
        .map(|n| net.names[n].as_str());
    let meant = pathpool_core::text::closest(name, groups.clone().chain(others.clone()))
        .map_or(String::new(), |m| format!(" (did you mean {m:?}?)"));
    let list = |names: Vec<&str>| {
        if names.len() > 12 {
            format!("{}, ...", names[..12].join(", "))
        } else {
            names.join(", ")
        }
    };
    SpecError::at(
        path,
        format!(
            "unknown host or host group {name:?}{meant}; host groups: {}; other hosts: {}",
            list(groups.collect()),
            list(others.collect())
        ),
    )
}

/// Routes between hosts, remembered by the pair of nodes they start and end at beyond the
/// hosts' access links: a group's host has one link, so a least-cost route from it is that
/// link and a least-cost route from its router (D297).
#[derive(Default)]
pub(super) struct Routes {
    core: HashMap<(NodeIx, NodeIx), FlowPaths>,
}

impl Routes {
    /// The data and ACK paths between hosts `from` and `to` (which differ); a problem is
    /// reported in the generator at `here`.
    pub(super) fn between(
        &mut self,
        net: &Net,
        from: NodeIx,
        to: NodeIx,
        here: &[PathSeg],
    ) -> Result<FlowPaths, SpecError> {
        let (a, up_a, down_a) = match access(net, from) {
            Some((r, up, down)) => (r, Some(up), Some(down)),
            None => (from, None, None),
        };
        let (b, up_b, down_b) = match access(net, to) {
            Some((r, up, down)) => (r, Some(up), Some(down)),
            None => (to, None, None),
        };
        let core = if a == b {
            // Two hosts of one router: up to it and down again.
            FlowPaths {
                data: Vec::new(),
                back: Some(Vec::new()),
            }
        } else {
            match self.core.get(&(a, b)) {
                Some(p) => p.clone(),
                None => {
                    let p = flow_paths(net, a, b, None, here, child(here, "route"), true)?;
                    self.core.insert((a, b), p.clone());
                    p
                }
            }
        };
        let join = |first: Option<EdgeId>, middle: &[EdgeId], last: Option<EdgeId>| {
            first
                .into_iter()
                .chain(middle.iter().copied())
                .chain(last)
                .collect::<Vec<EdgeId>>()
        };
        let back = core.back.as_deref().unwrap_or(&[]);
        Ok(FlowPaths {
            data: join(up_a, &core.data, down_b),
            back: Some(join(up_b, back, down_a)),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::super::testing::{compile, compile_seed, error};
    use super::*;

    /// Routers `e1` and `e2` joined by a 100 Mb/s link, host `h` on `e1`, `groups` and
    /// `extra`.
    fn stubs(groups: &str, extra: &str) -> String {
        format!(
            r#"duration = "10s"
            [nodes]
            hosts = ["h"]
            routers = ["e1", "e2"]
            [[links]]
            between = ["e1", "e2"]
            rate = "100Mbps"
            delay = "10ms"
            [[links]]
            between = ["h", "e1"]
            rate = "100Mbps"
            delay = "1ms"
            {groups}
            {extra}"#
        )
    }

    fn group(name: &str, count: u32, attach: &str) -> String {
        format!(
            "[[host_groups]]\nname = \"{name}\"\ncount = {count}\nattach = \"{attach}\"\n\
             rate = \"10Mbps\"\ndelay = \"2ms\"\nqueue = {{ type = \"droptail\", size = \"20pkts\" }}\n"
        )
    }

    fn traffic(from: &str, to: &str, extra: &str) -> String {
        format!(
            "[[traffic]]\nid = \"t\"\nkind = \"poisson\"\nfrom = {from}\nto = {to}\n\
             arrival_rate = 40.0\nsize = {{ dist = \"constant\", value = \"1KB\" }}\n{extra}"
        )
    }

    #[test]
    fn a_group_is_hosts_each_on_its_own_access_link_after_the_links() {
        let sim = compile(&stubs(&group("s", 3, "e1"), ""));
        let ids: Vec<&str> = sim.links.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "e1-e2:e1->e2",
                "e1-e2:e2->e1",
                "h-e1:h->e1",
                "h-e1:e1->h",
                "s.0-e1:s.0->e1",
                "s.0-e1:e1->s.0",
                "s.1-e1:s.1->e1",
                "s.1-e1:e1->s.1",
                "s.2-e1:s.2->e1",
                "s.2-e1:e1->s.2",
            ]
        );
        assert!(sim.links[4..]
            .iter()
            .all(|l| l.delay_s == 0.002 && l.queue == "droptail 20pkts"));
    }

    #[test]
    fn flows_draw_their_hosts_from_the_groups_cover_them_and_repeat_by_seed() {
        let text = stubs(
            &format!("{}{}", group("s", 5, "e1"), group("d", 4, "e2")),
            &traffic("\"s\"", "[\"d\", \"h\"]", ""),
        );
        let pairs = |seed| -> Vec<(String, String)> {
            compile_seed(&text, seed)
                .flows
                .iter()
                .map(|f| (f.from.clone(), f.to.clone()))
                .collect()
        };
        let one = pairs(1);
        assert!(one.len() > 300, "{}", one.len());
        let senders: HashSet<&str> = one.iter().map(|p| p.0.as_str()).collect();
        let receivers: HashSet<&str> = one.iter().map(|p| p.1.as_str()).collect();
        let want = |names: [&'static str; 5]| HashSet::from(names);
        assert_eq!(senders, want(["s.0", "s.1", "s.2", "s.3", "s.4"]));
        assert_eq!(receivers, want(["d.0", "d.1", "d.2", "d.3", "h"]));
        // Each of the 5 receivers is drawn with probability 1/5: within 5 standard deviations.
        let n = one.len() as f64;
        let h = one.iter().filter(|p| p.1 == "h").count() as f64;
        let sd = (n * 0.2 * 0.8).sqrt();
        assert!((h - n / 5.0).abs() < 5.0 * sd, "{h} of {n}");
        assert_eq!(one, pairs(1));
        assert_ne!(one, pairs(2));
        // The route: the access link, the routers' route, the other access link.
        let sim = compile(&text);
        for f in &sim.flows {
            let want = if f.to == "h" {
                vec![f.from.as_str(), "e1", "h"]
            } else {
                vec![f.from.as_str(), "e1", "e2", f.to.as_str()]
            };
            assert_eq!(f.path, want);
        }
    }

    #[test]
    fn a_route_between_group_hosts_is_the_least_cost_route() {
        let text = stubs(
            &format!("{}{}", group("s", 2, "e1"), group("d", 2, "e2")),
            "[[links]]\nbetween = [\"e1\", \"x\"]\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
             [[links]]\nbetween = [\"x\", \"e2\"]\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
             [routing]\nmetric = \"delay\"",
        )
        .replace(
            "routers = [\"e1\", \"e2\"]",
            "routers = [\"e1\", \"e2\", \"x\"]",
        );
        let sc: Scenario = toml::from_str(&text).expect("scenario");
        let mut sim = Simulation::new(
            pathpool_core::Time::from_secs(10),
            1,
            crate::sampler::Sampler::new(
                pathpool_core::Dur::from_ms(100),
                pathpool_core::Time::from_secs(10),
                (
                    pathpool_core::Time::ZERO,
                    pathpool_core::Time::from_secs(10),
                ),
                false,
                false,
            ),
        );
        let mut net = super::super::net::build_nodes(&sc).expect("nodes");
        for (i, l) in sc.links.iter().enumerate() {
            add_link(&mut sim, &mut net, l, &at(&[k("links"), ix(i)]), 1).expect("link");
        }
        add_host_groups(&mut sim, &mut net, &sc, 1).expect("groups");
        let mut routes = Routes::default();
        let here = at(&[k("traffic"), ix(0)]);
        for a in ["s.0", "s.1", "d.1", "h"] {
            for b in ["s.1", "d.0", "d.1", "h"] {
                let (a, b) = (net.index[a], net.index[b]);
                if a == b {
                    continue;
                }
                let got = routes.between(&net, a, b, &here).expect("route");
                let want = flow_paths(&net, a, b, None, &here, Vec::new(), true).expect("path");
                assert_eq!(got.data, want.data);
                assert_eq!(got.back, want.back);
            }
        }
        // Through x (2 ms) rather than the direct 10 ms link.
        let got = routes
            .between(&net, net.index["s.0"], net.index["d.0"], &here)
            .expect("route");
        assert_eq!(
            net.node_names(net.index["s.0"], &got.data),
            ["s.0", "e1", "x", "e2", "d.0"]
        );
    }

    #[test]
    fn bad_groups_and_generator_hosts_name_the_field() {
        let s = group("s", 2, "e1");
        let cases = [
            (group("s", 0, "e1"), String::new(), "host_groups[0].count: must be at least 1"),
            (group("h", 2, "e1"), String::new(), "host_groups[0].name: \"h\" is already a node; a group needs a name of its own"),
            (format!("{s}{s}"), String::new(), "host_groups[1].name: group \"s\" is declared twice"),
            (group(" ", 2, "e1"), String::new(), "host_groups[0].name: must not be empty"),
            (group("s", 2, "e11"), String::new(), "host_groups[0].attach: unknown node \"e11\" (did you mean \"e1\"?); known nodes: h, e1, e2"),
            (group("s", 2, "h"), String::new(), "host_groups[0].attach: \"h\" is a host, and hosts do not forward: attach the group to a router"),
            (format!("{s}{}", group("s.1", 1, "e2")), String::new(), "host_groups[1].name: \"s.1\" is already a node; a group needs a name of its own"),
            (group("s", 1_000_001, "e1"), String::new(), "host_groups[0].count: the host groups would have more than 1000000 hosts"),
            (s.clone(), traffic("\"ss\"", "\"h\"", ""), "traffic[0].from: unknown host or host group \"ss\" (did you mean \"s\"?); host groups: s; other hosts: h"),
            (s.clone(), traffic("[\"s\", \"h\"]", "[\"h\"]", ""), "traffic[0].to: host \"h\" is in both from and to; a flow needs two different hosts"),
            (s.clone(), traffic("[\"s\", \"s\"]", "\"h\"", ""), "traffic[0].from[1]: \"s\" is listed twice"),
            (s.clone(), traffic("[]", "\"h\"", ""), "traffic[0].from: give at least one host or host group"),
            (s.clone(), traffic("\"s\"", "\"e2\"", ""), "traffic[0].to: \"e2\" is a router; flows start and end at hosts (nodes.hosts)"),
            (s.clone(), traffic("\"s\"", "\"h\"", "load = 0.5").replace("arrival_rate = 40.0\n", ""), "traffic[0].load_link: the flows take more than one route (from or to names several hosts, or paths are given): name the link whose rate load is a fraction of (load_link = \"<link id>\")"),
            (s.clone(), "[[links]]\nbetween = [\"s.0\", \"e2\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"".to_string(), "links[2].between[0]: unknown node \"s.0\"; known nodes: h, e1, e2"),
            (s.clone(), "[[links]]\nid = \"s.1-e1\"\nbetween = [\"h\", \"e2\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"".to_string(), "host_groups[0].name: the access link of its host \"s.1\", \"s.1-e1\", is already a link's id"),
        ];
        for (groups, extra, want) in cases {
            assert_eq!(error(&stubs(&groups, &extra)), want, "{groups}{extra}");
        }
    }

    /// Issue 21's transit-stub experiment's scale: 2 × 3000 senders, 6 × 1000 receivers,
    /// 6000 flows; prints how long compiling takes (on a 2-core machine, fast-test profile:
    /// see D297).
    #[test]
    fn six_thousand_hosts_and_flows_compile() {
        let mut groups = String::new();
        for (name, count, attach) in [("s1", 3000, "e1"), ("s2", 3000, "e1")] {
            groups += &group(name, count, attach);
        }
        for i in 0..6 {
            groups += &group(&format!("d{i}"), 1000, "e2");
        }
        let text = stubs(
            &groups,
            &traffic(
                "[\"s1\", \"s2\"]",
                "[\"d0\", \"d1\", \"d2\", \"d3\", \"d4\", \"d5\"]",
                "max_flows = 6000\nstop = \"5s\"",
            )
            .replace("arrival_rate = 40.0", "arrival_rate = 2000.0"),
        );
        let t0 = std::time::Instant::now();
        let sim = compile(&text);
        eprintln!(
            "12000 group hosts, {} flows compiled in {:.2} s",
            sim.flows.len(),
            t0.elapsed().as_secs_f64()
        );
        assert_eq!(sim.flows.len(), 6000);
        assert_eq!(sim.links.len(), 4 + 2 * 12_000);
    }
}
