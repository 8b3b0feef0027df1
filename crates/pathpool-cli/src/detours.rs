//! `pathpool detours MAP...`: the one-hop detour census of the INRPP document's Table 1
//! (spec 001 §2) for any Rocketfuel map in the `r0.cch` form, as
//! `pathpool reproduce inrpp-detour-census` computes it for the nine maps of the table.

use std::path::PathBuf;

use clap::Args;
use pathpool_topo::census::{link_census, path_census, Census};
use pathpool_topo::parse_rocketfuel;

use crate::CliError;

/// Arguments of `pathpool detours`.
#[derive(Args, Debug)]
pub struct DetoursArgs {
    /// Rocketfuel maps (`ID bb|nbb NEIGHBOUR...` a line, as the `*.r0.cch.abr` files).
    #[arg(required = true, value_name = "MAP")]
    pub maps: Vec<PathBuf>,
    /// Count edge-to-edge paths (one shortest path between every two non-backbone routers,
    /// D274) instead of links (D273).
    #[arg(long)]
    pub paths: bool,
    /// One JSON object per map instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `pathpool detours`: every map is read first, so that a bad one (named with its line)
/// prints nothing.
///
/// # Errors
/// A map that cannot be read or is malformed (bad input).
pub fn detours_command(args: &DetoursArgs) -> Result<(), CliError> {
    let mut rows = Vec::new();
    for path in &args.maps {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::BadInput(format!("{}: {e}", path.display())))?;
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let map = parse_rocketfuel(&name, &text).map_err(|e| match e.line {
            Some(line) => CliError::BadInput(format!("{}:{line}: {}", path.display(), e.message)),
            None => CliError::BadInput(format!("{}: {}", path.display(), e.message)),
        })?;
        let census = if args.paths {
            let edge: Vec<bool> = map.backbone.iter().map(|b| !b).collect();
            path_census(&map.topology, &edge)
        } else {
            link_census(&map.topology)
        };
        rows.push((name, map.topology.nodes().len(), census));
    }
    let unit = if args.paths { "paths" } else { "links" };
    if args.json {
        for (name, routers, c) in &rows {
            let p = c.percent_by_count();
            println!(
                "{}",
                serde_json::json!({
                    "map": name,
                    "routers": routers,
                    "unit": unit,
                    "population": c.population,
                    "with_detour_pct": c.percent_with_detour(),
                    "split_pct": {"1": p[0], "2": p[1], "3": p[2], "4": p[3], "5+": p[4]},
                    "max_link_detours": c.max_link_detours,
                })
            );
        }
        return Ok(());
    }
    println!(
        "{:<20} {:>7} {:>8} {:>9} {:>6} {:>6} {:>6} {:>6} {:>6} {:>4}",
        "map", "routers", unit, "1-hop", "1", "2", "3", "4", "5+", "max"
    );
    for (name, routers, c) in &rows {
        println!("{}", row(name, *routers, c));
    }
    Ok(())
}

fn row(name: &str, routers: usize, c: &Census) -> String {
    let p = c.percent_by_count();
    format!(
        "{name:<20} {routers:>7} {:>8} {:>8.2}% {:>6.2} {:>6.2} {:>6.2} {:>6.2} {:>6.2} {:>4}",
        c.population,
        c.percent_with_detour(),
        p[0],
        p[1],
        p[2],
        p[3],
        p[4],
        c.max_link_detours
    )
}
