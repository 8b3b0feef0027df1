//! Loads the 15 Topology Zoo networks of the thesis's Table 4.2 (thesis E7) from a directory
//! and prints their sizes next to the thesis's.
//!
//! ```sh
//! cargo run -p pathpool-topo --example zoo_table -- DIR
//! ```
//!
//! `DIR` holds `NAME.gml` files from the Internet Topology Zoo or `NAME.json` files from the
//! `topohub` package (`topohub/data/topozoo/`); when both exist, both are read. Links are
//! counted after dropping parallel links and self-loops (decision D50); "dup" and "loop" are
//! the numbers dropped, "iso" the nodes without links, "AN" the access nodes (degree 1).

use std::path::Path;

use pathpool_topo::{parse_gml, parse_topohub_json, ImportError, Topology};

/// Table 4.2 of the thesis: name, nodes, edges, access nodes.
const TABLE_4_2: [(&str, usize, usize, usize); 15] = [
    ("Globalcenter", 12, 39, 3),
    ("Janetlense", 20, 40, 3),
    ("Gridnet", 12, 23, 3),
    ("Internetmci", 23, 43, 5),
    ("Goodnet", 17, 31, 4),
    ("Iij", 37, 65, 10),
    ("Geant2012", 40, 61, 8),
    ("SwitchL3", 42, 63, 12),
    ("Bics", 33, 48, 5),
    ("Uninett2011", 69, 98, 11),
    ("PionierL3", 38, 52, 9),
    ("Ans", 20, 27, 3),
    ("Aarnet", 21, 26, 4),
    ("Nsfnet", 13, 15, 3),
    ("Bren", 37, 42, 20),
];

fn density(nodes: usize, edges: usize) -> f64 {
    2.0 * edges as f64 / (nodes as f64 * (nodes as f64 - 1.0))
}

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: zoo_table DIR (with NAME.gml or NAME.json Topology Zoo files)");
        std::process::exit(2);
    };
    println!(
        "{:<12} {:<4} | {:>5} {:>5} {:>3} {:>4} {:>3} {:>3} {:>7} | thesis: {:>5} {:>5} {:>3} {:>7}",
        "topology", "file", "nodes", "links", "dup", "loop", "iso", "AN", "density", "nodes",
        "edges", "AN", "density"
    );
    for (name, t_nodes, t_edges, t_an) in TABLE_4_2 {
        let thesis = format!(
            "{t_nodes:>5} {t_edges:>5} {t_an:>3} {:>7.3}",
            density(t_nodes, t_edges)
        );
        let mut found = false;
        for (ext, parse) in [
            (
                "gml",
                parse_gml as fn(&str) -> Result<Topology, ImportError>,
            ),
            ("json", parse_topohub_json),
        ] {
            let path = Path::new(&dir).join(format!("{name}.{ext}"));
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            found = true;
            match parse(&String::from_utf8_lossy(&bytes)) {
                Ok(t) => {
                    let deg = t.degrees();
                    println!(
                        "{name:<12} {ext:<4} | {:>5} {:>5} {:>3} {:>4} {:>3} {:>3} {:>7.3} | thesis: {thesis}",
                        t.nodes().len(),
                        t.links().len(),
                        t.dropped_parallel_links(),
                        t.dropped_self_loops(),
                        deg.iter().filter(|&&d| d == 0).count(),
                        t.access_nodes().len(),
                        t.density(),
                    );
                }
                Err(e) => println!("{name:<12} {ext:<4} | error: {e}"),
            }
        }
        if !found {
            println!("{name:<12} -    | not found in {dir} | thesis: {thesis}");
        }
    }
}
