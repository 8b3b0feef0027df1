//! Links and their queues: each `[[links]]` entry becomes one directed link per direction,
//! an element with its queue discipline, an edge of the routing graph, and its failures.

use pathpool_core::{BufferSize, Dur, QueueSize, Rate, Rng, Time};
use pathpool_topo::EdgeId;

use super::net::Net;
use super::{at, child, ix, k, STREAM_LINK};
use crate::error::{PathSeg, SpecError};
use crate::link::{Discipline, Link};
use crate::random_queue::RandomDrop;
use crate::red::{Red, RedParams};
use crate::sim::{LinkMeta, Simulation};
use crate::spec::{LinkSpec, QueueSpec, RedSpec, RouteMetric};
use crate::tm_control::LinkChange;

/// When the topology manager hears of a link failure or repair, unless `routing.tm_reaction`
/// says otherwise (D107).
pub(super) const DEFAULT_TM_REACTION: Dur = Dur::from_ms(100);

/// Checks link `i`'s `failures` and adds each failure and repair of its `edges` to `changes`.
pub(super) fn link_failures(
    l: &LinkSpec,
    i: usize,
    edges: &[EdgeId],
    duration: Dur,
    changes: &mut Vec<LinkChange>,
) -> Result<(), SpecError> {
    let mut prev_until: Option<Option<Dur>> = None;
    for (j, f) in l.failures.iter().enumerate() {
        let here = at(&[k("links"), ix(i), k("failures"), ix(j)]);
        if f.at >= duration {
            return Err(SpecError::at(
                child(&here, "at"),
                format!("{} is not before the end of the run ({duration})", f.at),
            ));
        }
        match prev_until {
            Some(None) => {
                return Err(SpecError::at(
                    here,
                    "the previous failure is never repaired (give it an until)",
                ))
            }
            Some(Some(u)) if f.at < u => {
                return Err(SpecError::at(
                    child(&here, "at"),
                    format!("{} is before the previous failure's repair ({u}): list failures in time order, without overlap", f.at),
                ))
            }
            _ => {}
        }
        if f.until.is_some_and(|u| u <= f.at) {
            return Err(SpecError::at(child(&here, "until"), "must be after at"));
        }
        changes.push(LinkChange {
            at: Time::ZERO + f.at,
            edges: edges.to_vec(),
            up: false,
        });
        if let Some(u) = f.until.filter(|&u| u < duration) {
            changes.push(LinkChange {
                at: Time::ZERO + u,
                edges: edges.to_vec(),
                up: true,
            });
        }
        prev_until = Some(f.until);
    }
    Ok(())
}

/// The discipline of one direction's queue, checked, and its description in the links table.
fn queue_discipline(
    q: &QueueSpec,
    rate: Rate,
    path: &[PathSeg],
) -> Result<(Discipline, String), SpecError> {
    let field = |f: &str| child(path, f);
    // A size in time is bytes at the link's rate (issue 21: INRPP sizes queues in time); the
    // links table shows both.
    let resolve = |name: &str, q: QueueSize| {
        let size = q.at_rate(rate).map_err(|e| SpecError::at(field(name), e))?;
        let shown = match q {
            QueueSize::Time(d) => format!("{size} ({d})"),
            _ => size.to_string(),
        };
        Ok::<_, SpecError>((size, shown))
    };
    match q {
        QueueSpec::Droptail { size } => {
            let (size, shown) = resolve("size", *size)?;
            match size {
                BufferSize::Packets(0) | BufferSize::Bytes(0) => Err(SpecError::at(
                    field("size"),
                    "a queue must hold at least one packet",
                )),
                BufferSize::Packets(n) => {
                    Ok((Discipline::DropTailPackets(n), format!("droptail {shown}")))
                }
                BufferSize::Bytes(n) => {
                    Ok((Discipline::DropTailBytes(n), format!("droptail {shown}")))
                }
            }
        }
        QueueSpec::Red(red) | QueueSpec::Rem(red) => {
            let RedSpec {
                size,
                min_th,
                max_th,
                max_p,
                weight,
                gentle,
                mean_packet,
            } = red;
            let mark = matches!(q, QueueSpec::Rem(_));
            let (size, shown) = resolve("size", *size)?;
            let (min_th, min_shown) = resolve("min_th", *min_th)?;
            let (max_th, max_shown) = resolve("max_th", *max_th)?;
            let (size, min_th, max_th) = (&size, &min_th, &max_th);
            let unit = |b: &BufferSize| matches!(b, BufferSize::Bytes(_));
            if unit(size) != unit(min_th) || unit(size) != unit(max_th) {
                return Err(SpecError::at(
                    field("min_th"),
                    "size, min_th and max_th must all be in packets or all in bytes (a time is bytes at the link's rate)",
                ));
            }
            let num = |b: &BufferSize| match *b {
                BufferSize::Packets(n) | BufferSize::Bytes(n) => n,
            };
            let (limit, lo, hi) = (num(size), num(min_th), num(max_th));
            if limit == 0 {
                return Err(SpecError::at(
                    field("size"),
                    "a queue must hold at least one packet",
                ));
            }
            if lo >= hi {
                return Err(SpecError::at(
                    field("min_th"),
                    format!("min_th {min_shown} must be below max_th {max_shown}"),
                ));
            }
            if !(*max_p > 0.0 && *max_p <= 1.0) {
                return Err(SpecError::at(
                    field("max_p"),
                    format!("{max_p} is not in (0, 1]"),
                ));
            }
            if !(*weight > 0.0 && *weight <= 1.0) {
                return Err(SpecError::at(
                    field("weight"),
                    format!("{weight} is not in (0, 1]"),
                ));
            }
            if mean_packet.bytes() == 0 {
                return Err(SpecError::at(field("mean_packet"), "must be positive"));
            }
            let byte_mode = unit(size);
            let params = RedParams {
                byte_mode,
                min_th: lo as f64,
                max_th: hi as f64,
                max_p: *max_p,
                weight: *weight,
                gentle: *gentle,
                mean_packet_bytes: mean_packet.bytes() as f64,
                mean_tx_time: rate.tx_time(mean_packet.bytes()),
            };
            let desc = format!(
                "{} {shown} th=[{min_shown},{max_shown}] max_p={max_p} w={weight}{}",
                if mark { "rem" } else { "red" },
                if *gentle { " gentle" } else { "" }
            );
            Ok((
                Discipline::Red {
                    red: Box::new(Red::new(params)),
                    limit,
                    byte_mode,
                    mark,
                },
                desc,
            ))
        }
        QueueSpec::Random { size, band, p } => {
            let (size, shown) = resolve("size", *size)?;
            let band = band.map(|b| resolve("band", b)).transpose()?;
            let (limit, byte_mode) = match size {
                BufferSize::Packets(n) => (n, false),
                BufferSize::Bytes(n) => (n, true),
            };
            if limit == 0 {
                return Err(SpecError::at(
                    field("size"),
                    "a queue must hold at least one packet",
                ));
            }
            // htsim's RANDOM_BUFFER: three packets of 1500 bytes.
            let (band, band_shown) = band.unwrap_or_else(|| {
                let band = if byte_mode {
                    BufferSize::Bytes(4500)
                } else {
                    BufferSize::Packets(3)
                };
                (band, band.to_string())
            });
            let width = match (band, byte_mode) {
                (BufferSize::Packets(n), false) | (BufferSize::Bytes(n), true) => n,
                _ => {
                    return Err(SpecError::at(
                        field("band"),
                        format!("band {band_shown} must be in the unit of size {shown}"),
                    ))
                }
            };
            if width > limit {
                return Err(SpecError::at(
                    field("band"),
                    format!("band {band_shown} is larger than the queue ({shown})"),
                ));
            }
            if !(*p >= 0.0 && *p <= 1.0) {
                return Err(SpecError::at(field("p"), format!("{p} is not in [0, 1]")));
            }
            Ok((
                Discipline::Random(RandomDrop {
                    byte_mode,
                    limit,
                    threshold: limit - width,
                    p: *p,
                }),
                format!("random {shown} band={band_shown} p={p}"),
            ))
        }
    }
}

/// Adds link `i`: one directed link (element, graph edge, cost) per direction.
pub(super) fn add_link(
    sim: &mut Simulation,
    net: &mut Net,
    l: &LinkSpec,
    here: &[PathSeg],
    seed: u64,
) -> Result<(), SpecError> {
    let here = here.to_vec();
    let field = |f: &str| child(&here, f);
    let (a, b, duplex) = match (&l.between, &l.from, &l.to) {
        (Some(v), None, None) => {
            if v.len() != 2 {
                return Err(SpecError::at(field("between"), "a duplex link joins exactly two nodes: between = [\"a\", \"b\"]"));
            }
            let mut pa = field("between");
            pa.push(ix(0));
            let mut pb = field("between");
            pb.push(ix(1));
            (net.node(&v[0], pa)?, net.node(&v[1], pb)?, true)
        }
        (None, Some(f), Some(t)) => (net.node(f, field("from"))?, net.node(t, field("to"))?, false),
        _ => {
            return Err(SpecError::at(
                here.clone(),
                "give either between = [\"a\", \"b\"] (duplex) or from = \"a\" and to = \"b\" (one-way)",
            ))
        }
    };
    if a == b {
        return Err(SpecError::at(
            here.clone(),
            "a link must join two different nodes",
        ));
    }
    if l.rate.bps() == 0 {
        return Err(SpecError::at(
            field("rate"),
            "must be positive (use \"inf\" for no serialisation delay)",
        ));
    }
    if !(l.loss >= 0.0 && l.loss < 1.0) {
        return Err(SpecError::at(
            field("loss"),
            format!("{} is not a probability in [0, 1)", l.loss),
        ));
    }
    if !(l.weight > 0.0 && l.weight.is_finite()) {
        return Err(SpecError::at(field("weight"), "must be a positive number"));
    }
    let (an, bn) = (
        net.names[a.0 as usize].clone(),
        net.names[b.0 as usize].clone(),
    );
    let name = l.id.clone().unwrap_or_else(|| format!("{an}-{bn}"));
    // A set, not a scan of the links: host groups add thousands of links (D297).
    if !net.link_names.insert(name.clone()) {
        return Err(SpecError::at(
            field("id"),
            format!("link id {name:?} is used twice"),
        ));
    }
    let mut qpath = here.clone();
    qpath.push(k("queue"));
    let dirs = if duplex {
        vec![(a, b), (b, a)]
    } else {
        vec![(a, b)]
    };
    for (from, to) in dirs {
        let (discipline, queue) = queue_discipline(&l.queue, l.rate, &qpath)?;
        let discipline_limit = match &discipline {
            Discipline::DropTailBytes(b) => Some(BufferSize::Bytes(*b)),
            Discipline::DropTailPackets(p) => Some(BufferSize::Packets(*p)),
            _ => None,
        };
        let index = sim.links.len() as u64;
        let rng = Rng::stream(seed, STREAM_LINK, index);
        let elem = sim
            .elements
            .add_link(Link::new(l.rate, l.delay, discipline, l.loss, rng));
        let (fname, tname) = (
            net.names[from.0 as usize].clone(),
            net.names[to.0 as usize].clone(),
        );
        sim.links.push(LinkMeta {
            id: format!("{name}:{fname}->{tname}"),
            name: name.clone(),
            from: fname,
            to: tname,
            delay_s: l.delay.as_secs_f64(),
            queue,
            elem,
        });
        net.graph.add_edge(from, to);
        net.cost.push(match net.metric {
            RouteMetric::Hops => 1.0,
            RouteMetric::Weight => l.weight,
            // A tiny per-hop term so equal-delay paths prefer fewer hops.
            RouteMetric::Delay => l.delay.as_secs_f64() + 1e-12,
        });
        net.rate.push(l.rate);
        net.delay.push(l.delay);
        net.elem.push(elem);
        net.queue_limit.push(match &discipline_limit {
            Some(BufferSize::Bytes(b)) => Some(*b),
            Some(BufferSize::Packets(p)) => Some(p * 1500),
            None => None,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{compile, error};

    /// Hosts `a` and `b` and the link `link` between them.
    fn with_link(link: &str) -> String {
        format!(
            r#"duration = "10s"
            [nodes]
            hosts = ["a", "b"]
            [[links]]
            {link}
            "#
        )
    }

    const DUPLEX: &str = "between = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n";

    #[test]
    fn a_duplex_link_is_two_directed_links_and_a_one_way_link_one() {
        let sim = compile(&with_link(&format!("id = \"l\"\n{DUPLEX}")));
        let ids: Vec<&str> = sim.links.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, ["l:a->b", "l:b->a"]);
        assert!(sim
            .links
            .iter()
            .all(|l| l.name == "l" && l.delay_s == 0.005));
        assert_eq!(sim.links[0].queue, "droptail 100pkts");
        let sim = compile(&with_link(
            "from = \"b\"\nto = \"a\"\nrate = \"1Mbps\"\ndelay = \"1ms\"",
        ));
        let ids: Vec<&str> = sim.links.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, ["b-a:b->a"], "named after its ends by default");
    }

    #[test]
    fn queues_are_described_and_checked() {
        let queue = |q: &str| with_link(&format!("{DUPLEX}queue = {q}"));
        let sim = compile(&queue(
            "{ type = \"red\", size = \"100pkts\", min_th = \"5pkts\", max_th = \"15pkts\" }",
        ));
        assert_eq!(
            sim.links[0].queue,
            "red 100pkts th=[5pkts,15pkts] max_p=0.1 w=0.002"
        );
        let sim = compile(&queue("{ type = \"random\", size = \"30KB\" }"));
        assert_eq!(sim.links[1].queue, "random 30KB band=4.5KB p=0.1");
        let e = error(&queue("{ type = \"droptail\", size = \"0pkts\" }"));
        assert_eq!(
            e,
            "links[0].queue.size: a queue must hold at least one packet"
        );
        let e = error(&queue(
            "{ type = \"red\", size = \"100pkts\", min_th = \"5KB\", max_th = \"15pkts\" }",
        ));
        assert_eq!(
            e,
            "links[0].queue.min_th: size, min_th and max_th must all be in packets or all in bytes \
             (a time is bytes at the link's rate)"
        );
        let e = error(&queue(
            "{ type = \"red\", size = \"100pkts\", min_th = \"15pkts\", max_th = \"15pkts\" }",
        ));
        assert_eq!(
            e,
            "links[0].queue.min_th: min_th 15pkts must be below max_th 15pkts"
        );
        let e = error(&queue(
            "{ type = \"red\", size = \"100pkts\", min_th = \"5pkts\", max_th = \"15pkts\", max_p = 0.0 }",
        ));
        assert_eq!(e, "links[0].queue.max_p: 0 is not in (0, 1]");
        let e = error(&queue(
            "{ type = \"random\", size = \"30KB\", band = \"3pkts\" }",
        ));
        assert_eq!(
            e,
            "links[0].queue.band: band 3pkts must be in the unit of size 30KB"
        );
        let e = error(&queue("{ type = \"random\", size = \"2pkts\" }"));
        assert_eq!(
            e,
            "links[0].queue.band: band 3pkts is larger than the queue (2pkts)"
        );
        let e = error(&queue("{ type = \"random\", size = \"20pkts\", p = 1.5 }"));
        assert_eq!(e, "links[0].queue.p: 1.5 is not in [0, 1]");
    }

    /// Issue 21: a queue sized in time holds what the link sends in that time.
    #[test]
    fn a_queue_in_time_is_bytes_at_the_link_rate() {
        let queue = |q: &str| with_link(&format!("{DUPLEX}queue = {q}"));
        // 10 Mb/s × 50 ms = 62 500 bytes.
        let sim = compile(&queue("{ type = \"droptail\", size = \"50ms\" }"));
        assert_eq!(sim.links[0].queue, "droptail 62.5KB (50ms)");
        let sim = compile(&queue(
            "{ type = \"red\", size = \"50ms\", min_th = \"5ms\", max_th = \"15000B\" }",
        ));
        assert_eq!(
            sim.links[0].queue,
            "red 62.5KB (50ms) th=[6.25KB (5ms),15KB] max_p=0.1 w=0.002"
        );
        let e = error(&with_link(
            "between = [\"a\", \"b\"]\nrate = \"inf\"\ndelay = \"1ms\"\nqueue = { type = \"droptail\", size = \"50ms\" }",
        ));
        assert!(
            e.starts_with("links[0].queue.size: 50ms is a time: it needs a link of finite rate"),
            "{e}"
        );
    }

    #[test]
    fn link_fields_are_checked() {
        let e = error(&with_link(
            "between = [\"a\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"",
        ));
        assert!(
            e.starts_with("links[0].between: a duplex link joins exactly two nodes"),
            "{e}"
        );
        let e = error(&with_link(
            "between = [\"a\", \"b\"]\nto = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"",
        ));
        assert!(e.starts_with("links[0]: give either between"), "{e}");
        let e = error(&with_link(
            "between = [\"a\", \"a\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"",
        ));
        assert_eq!(e, "links[0]: a link must join two different nodes");
        let e = error(&with_link(&DUPLEX.replace("10Mbps", "0Mbps")));
        assert!(e.starts_with("links[0].rate: must be positive"), "{e}");
        let e = error(&with_link(&format!("{DUPLEX}loss = 1.0")));
        assert_eq!(e, "links[0].loss: 1 is not a probability in [0, 1)");
        let e = error(&with_link(&format!("{DUPLEX}weight = 0.0")));
        assert_eq!(e, "links[0].weight: must be a positive number");
        let e = error(&with_link(&format!("{DUPLEX}[[links]]\n{DUPLEX}")));
        assert_eq!(e, "links[1].id: link id \"a-b\" is used twice");
    }

    #[test]
    fn failures_are_in_order_within_the_run_and_hand_the_run_a_topology_manager() {
        let failures = |f: &str| with_link(&format!("{DUPLEX}failures = {f}"));
        let sim = compile(&failures(
            "[{ at = \"1s\", until = \"2s\" }, { at = \"3s\" }]",
        ));
        assert!(sim.tm.is_some());
        assert!(compile(&with_link(DUPLEX)).tm.is_none());
        let e = error(&failures("[{ at = \"10s\" }]"));
        assert_eq!(
            e,
            "links[0].failures[0].at: 10s is not before the end of the run (10s)"
        );
        let e = error(&failures("[{ at = \"1s\" }, { at = \"3s\" }]"));
        assert_eq!(
            e,
            "links[0].failures[1]: the previous failure is never repaired (give it an until)"
        );
        let e = error(&failures(
            "[{ at = \"1s\", until = \"4s\" }, { at = \"3s\" }]",
        ));
        assert!(
            e.starts_with(
                "links[0].failures[1].at: 3s is before the previous failure's repair (4s)"
            ),
            "{e}"
        );
        let e = error(&failures("[{ at = \"2s\", until = \"2s\" }]"));
        assert_eq!(e, "links[0].failures[0].until: must be after at");
    }
}
