//! The Topology Zoo JSON files of the `topohub` Python package.

use std::collections::HashMap;

use super::{ImportError, TopoLink, TopoNode, Topology};

/// Reads a Topology Zoo file of the `topohub` Python package (`topohub/data/topozoo/NAME.json`):
/// a networkx node-link document with `nodes` `[{id, name, pos: [longitude, latitude]}]` and
/// `edges` (or networkx's default `links`) `[{source, target, dist}]`, `dist` in km. Ids may be
/// strings or numbers; `name`, `pos` and `dist` are optional; other keys are ignored. Links
/// are undirected whatever `directed` says, and parallel links are dropped whatever
/// `multigraph` says (decision D50). A link's `dist` is its length (topohub computes it from
/// the coordinates, on a sphere of radius 6372.8 km); without one it comes from the
/// coordinates. topohub's networks are cleaned versions of the Zoo's GML files: nodes without
/// coordinates are left out with their links, and parallel links are merged (decision D51).
///
/// # Errors
/// On invalid JSON (with serde_json's line and column), or when `nodes` or `edges` is missing
/// or an element has the wrong shape, naming the element (`edges[3]`). Never panics.
pub fn parse_topohub_json(text: &str) -> Result<Topology, ImportError> {
    use serde_json::Value as J;
    let doc: J =
        serde_json::from_str(text).map_err(|e| ImportError::new(format!("invalid JSON: {e}")))?;
    let J::Object(doc) = doc else {
        return Err(ImportError::new("expected a JSON object at the top level"));
    };
    let name = doc
        .get("graph")
        .and_then(|g| g.get("name"))
        .and_then(J::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(J::Array(raw_nodes)) = doc.get("nodes") else {
        return Err(ImportError::new("expected an array 'nodes'"));
    };
    let Some(J::Array(raw_edges)) = doc.get("edges").or_else(|| doc.get("links")) else {
        return Err(ImportError::new("expected an array 'edges' (or 'links')"));
    };
    let id_text = |v: &J| match v {
        J::String(s) => Some(s.clone()),
        J::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let mut nodes = Vec::with_capacity(raw_nodes.len());
    let mut index = HashMap::new();
    for (i, n) in raw_nodes.iter().enumerate() {
        let at = |m: &str| ImportError::new(format!("nodes[{i}]: {m}"));
        let id = n
            .get("id")
            .and_then(id_text)
            .ok_or_else(|| at("expected an 'id' (string or number)"))?;
        let name = match n.get("name") {
            None | Some(J::Null) => id.clone(),
            Some(J::String(s)) => s.clone(),
            Some(_) => return Err(at("expected 'name' to be a string")),
        };
        let lat_lon = match n.get("pos") {
            None | Some(J::Null) => None,
            Some(J::Array(p)) if p.len() == 2 => match (p[0].as_f64(), p[1].as_f64()) {
                (Some(lon), Some(lat)) => Some((lat, lon)),
                _ => return Err(at("expected 'pos' to be [longitude, latitude]")),
            },
            Some(_) => return Err(at("expected 'pos' to be [longitude, latitude]")),
        };
        if index.insert(id.clone(), i).is_some() {
            return Err(at(&format!("node id {id:?} is used by an earlier node")));
        }
        nodes.push(TopoNode { name, lat_lon });
    }
    let mut links = Vec::with_capacity(raw_edges.len());
    for (i, e) in raw_edges.iter().enumerate() {
        let at = |m: &str| ImportError::new(format!("edges[{i}]: {m}"));
        let end = |key: &str| {
            let id = e
                .get(key)
                .and_then(id_text)
                .ok_or_else(|| at(&format!("expected a '{key}' node id")))?;
            index
                .get(&id)
                .copied()
                .ok_or_else(|| at(&format!("'{key}' {id:?} is not the id of a node")))
        };
        let length_km = match e.get("dist") {
            None | Some(J::Null) => None,
            Some(d) => Some(
                d.as_f64()
                    .ok_or_else(|| at("expected 'dist' to be a number of km"))?,
            ),
        };
        links.push(TopoLink {
            a: end("source")?,
            b: end("target")?,
            length_km,
        });
    }
    Topology::new(name, nodes, links)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zoo::DelayModel;
    use pathpool_core::Dur;
    use proptest::prelude::*;

    /// A topohub file cut down by hand: string ids, [lon, lat] positions, `dist` in km and
    /// the extra keys topohub writes.
    const JSON: &str = r#"{
"directed": false,
"multigraph": false,
"graph": {"name": "tiny", "demands": {}, "stats": {"nodes": 3}},
"nodes": [
  {"name": "Houston", "pos": [-95.36, 29.76], "id": "0"},
  {"name": "Princeton", "pos": [-74.66, 40.35], "id": "1"},
  {"id": "2"}
],
"edges": [
  {"dist": 2174.5, "ecmp_fwd": {"uni": 1.0}, "source": "0", "target": "1"},
  {"source": "2", "target": "1"},
  {"source": "1", "target": "0", "dist": 1.0},
  {"source": "2", "target": "2"}
]
}"#;

    #[test]
    fn topohub_fixture() {
        let t = parse_topohub_json(JSON).unwrap();
        assert_eq!(t.name(), "tiny");
        assert_eq!(t.nodes()[0].lat_lon, Some((29.76, -95.36)));
        assert_eq!(t.nodes()[2].name, "2");
        assert_eq!(t.links().len(), 2);
        assert_eq!((t.dropped_parallel_links(), t.dropped_self_loops()), (1, 1));
        assert_eq!(t.link_length_km(0), Some(2174.5));
        // 2174.5 km at 200 000 km/s.
        assert_eq!(
            t.link_delay(0, &DelayModel::default()),
            Dur::from_ns(10_872_500)
        );
        assert_eq!(t.access_nodes(), [0, 2]);
        // networkx's default key for links, numeric ids.
        let t = parse_topohub_json(
            r#"{"nodes": [{"id": 1}, {"id": 2}], "links": [{"source": 1, "target": 2}]}"#,
        )
        .unwrap();
        assert_eq!(t.links().len(), 1);
        assert_eq!(t.link_delay(0, &DelayModel::default()), Dur::from_ms(5));
    }

    #[test]
    fn topohub_errors_name_the_element() {
        let err = |s: &str| parse_topohub_json(s).unwrap_err().to_string();
        assert!(err("{").starts_with("invalid JSON: "));
        assert_eq!(err("[]"), "expected a JSON object at the top level");
        assert_eq!(err(r#"{"edges": []}"#), "expected an array 'nodes'");
        assert_eq!(
            err(r#"{"nodes": []}"#),
            "expected an array 'edges' (or 'links')"
        );
        assert_eq!(
            err(r#"{"nodes": [{"name": "x"}], "edges": []}"#),
            "nodes[0]: expected an 'id' (string or number)"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id": 0, "pos": [1]}], "edges": []}"#),
            "nodes[0]: expected 'pos' to be [longitude, latitude]"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id": 0}], "edges": [{"source": 0, "target": 1}]}"#),
            "edges[0]: 'target' \"1\" is not the id of a node"
        );
        assert_eq!(
            err(
                r#"{"nodes": [{"id": 0}, {"id": 1}], "edges": [{"source": 0, "target": 1, "dist": -2}]}"#
            ),
            "link 0 has length -2 km"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id": 0, "pos": [200, 0]}], "edges": []}"#),
            "node 0 (\"0\"): latitude 0 and longitude 200 are not a position (expected −90..90, −180..180)"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        #[test]
        fn topohub_never_panics(s in "\\PC*") {
            let _ = parse_topohub_json(&s);
        }
    }
}
