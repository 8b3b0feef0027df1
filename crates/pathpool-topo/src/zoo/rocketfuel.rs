//! Rocketfuel router-level ISP maps (N. Spring, R. Mahajan, D. Wetherall, "Measuring ISP
//! Topologies with Rocketfuel", SIGCOMM 2002) in the abbreviated `r0.cch` form the INRPP
//! document's detour census (its Table 1) was computed on.
//!
//! One router a line: `ID ROLE NEIGHBOUR...`, where `ID` and each neighbour are router
//! numbers and `ROLE` is `bb` (backbone) or `nbb` (not backbone). Links are undirected and
//! may be listed from one end or both; a listing from the other end is the same link, not a
//! parallel one. A router listing itself is a self-loop and is dropped (and counted) as
//! [`Topology::new`] drops it.

use std::collections::{HashMap, HashSet};

use super::{ImportError, TopoLink, TopoNode, Topology};

/// A Rocketfuel map: the routers (named by their numbers) and links, and which routers are
/// backbone routers.
#[derive(Clone, Debug, PartialEq)]
pub struct RocketfuelMap {
    /// The routers in file order and their links.
    pub topology: Topology,
    /// Whether each router (by its index in [`Topology::nodes`]) is a backbone router.
    pub backbone: Vec<bool>,
}

/// Reads a map in the `r0.cch` abbreviated form.
///
/// # Errors
/// A line without a role, a router number or neighbour that is not a number, a role other
/// than `bb` or `nbb`, a router with two lines, or a neighbour without a line of its own; the
/// error names the line.
pub fn parse_rocketfuel(name: &str, text: &str) -> Result<RocketfuelMap, ImportError> {
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut nodes = Vec::new();
    let mut backbone = Vec::new();
    // (line, router, neighbours) of every router line, resolved once every router is known.
    let mut lists: Vec<(usize, usize, Vec<u64>)> = Vec::new();
    let number = |tok: &str, line: usize, what: &str| {
        tok.parse::<u64>().map_err(|_| {
            ImportError::at(
                line,
                format!("{what} {tok:?} is not a router number (digits only)"),
            )
        })
    };
    for (i, text_line) in text.lines().enumerate() {
        let line = i + 1;
        let mut tokens = text_line.split_whitespace();
        let Some(id_tok) = tokens.next() else {
            continue;
        };
        let id = number(id_tok, line, "router")?;
        let role = match tokens.next() {
            Some("bb") => true,
            Some("nbb") => false,
            Some(other) => {
                return Err(ImportError::at(
                    line,
                    format!("router {id}: role {other:?}; expected bb or nbb"),
                ))
            }
            None => {
                return Err(ImportError::at(
                    line,
                    format!("router {id} has no role; expected `ID bb|nbb NEIGHBOUR...`"),
                ))
            }
        };
        let neighbours = tokens
            .map(|t| number(t, line, "neighbour"))
            .collect::<Result<Vec<_>, _>>()?;
        if index.insert(id, nodes.len()).is_some() {
            return Err(ImportError::at(
                line,
                format!("router {id} has a second line"),
            ));
        }
        lists.push((line, nodes.len(), neighbours));
        nodes.push(TopoNode {
            name: id.to_string(),
            lat_lon: None,
        });
        backbone.push(role);
    }
    let mut links = Vec::new();
    let mut listed: HashSet<(usize, usize)> = HashSet::new();
    for (line, a, neighbours) in lists {
        for n in neighbours {
            let b = *index.get(&n).ok_or_else(|| {
                ImportError::at(
                    line,
                    format!(
                        "router {} lists neighbour {n}, which has no line of its own",
                        nodes[a].name
                    ),
                )
            })?;
            // The same link listed from its other end is not a parallel link; the same
            // neighbour twice on one line is, and `Topology::new` counts it.
            if a != b && listed.contains(&(b, a)) {
                continue;
            }
            listed.insert((a, b));
            links.push(TopoLink {
                a,
                b,
                length_km: None,
            });
        }
    }
    let topology = Topology::new(name, nodes, links)?;
    Ok(RocketfuelMap { topology, backbone })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_listed_from_both_ends_are_one_and_self_loops_are_dropped() {
        let m = parse_rocketfuel("t", "1 bb 2 3 1\n2 nbb 1\n\n3 bb 1 2\n").unwrap();
        let t = &m.topology;
        assert_eq!(t.nodes().len(), 3);
        let ends: Vec<(usize, usize)> = t.links().iter().map(|l| (l.a, l.b)).collect();
        assert_eq!(ends, [(0, 1), (0, 2), (2, 1)]);
        assert_eq!(t.dropped_self_loops(), 1);
        assert_eq!(t.dropped_parallel_links(), 0);
        assert_eq!(m.backbone, [true, false, true]);
        assert_eq!(t.nodes()[2].name, "3");
    }

    #[test]
    fn malformed_lines_are_named() {
        let err = |text: &str| parse_rocketfuel("t", text).unwrap_err().to_string();
        assert_eq!(
            err("1 bb 2\n2 core 1\n"),
            "line 2: router 2: role \"core\"; expected bb or nbb"
        );
        assert_eq!(
            err("1 bb 2\nx bb 1\n"),
            "line 2: router \"x\" is not a router number (digits only)"
        );
        assert_eq!(
            err("1 bb 2x\n"),
            "line 1: neighbour \"2x\" is not a router number (digits only)"
        );
        assert_eq!(
            err("1\n"),
            "line 1: router 1 has no role; expected `ID bb|nbb NEIGHBOUR...`"
        );
        assert_eq!(err("1 bb\n1 nbb\n"), "line 2: router 1 has a second line");
        assert_eq!(
            err("1 bb 2\n\n3 bb 9\n2 bb\n"),
            "line 3: router 3 lists neighbour 9, which has no line of its own"
        );
    }
}
