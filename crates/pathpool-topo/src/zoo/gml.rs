//! Internet Topology Zoo GML files: a tokenizer and a parser of the GML subset the Zoo
//! writes, tolerant of unknown keys and nested lists, strict about what it reads.

use std::collections::HashMap;

use super::{check_lat_lon, ImportError, TopoLink, TopoNode, Topology, MAX_GML_DEPTH};

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Key(String),
    Int(i64),
    Real(f64),
    Str(String),
    Open,
    Close,
}

fn describe(t: Option<&(Tok, usize)>) -> String {
    match t.map(|t| &t.0) {
        None => "the end of the input".into(),
        Some(Tok::Key(k)) => format!("the key '{k}'"),
        Some(Tok::Int(i)) => format!("the number {i}"),
        Some(Tok::Real(r)) => format!("the number {r}"),
        Some(Tok::Str(s)) => format!("the string {s:?}"),
        Some(Tok::Open) => "'['".into(),
        Some(Tok::Close) => "']'".into(),
    }
}

/// Splits GML text into tokens with their lines. GML (Himsolt, "GML: A portable Graph File
/// Format") is a list of `key value` pairs; a value is an integer, a real, a string in double
/// quotes (which may span lines and has no escape for `"`) or a list in brackets. `#` starts a
/// comment running to the end of the line.
fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, ImportError> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            '#' => while chars.next_if(|&(_, c)| c != '\n').is_some() {},
            '[' => out.push((Tok::Open, line)),
            ']' => out.push((Tok::Close, line)),
            '"' => {
                let first = line;
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None => {
                            return Err(ImportError::at(first, "a string is not closed by '\"'"))
                        }
                        Some((_, '"')) => break,
                        Some((_, c)) => {
                            if c == '\n' {
                                line += 1;
                            }
                            s.push(c);
                        }
                    }
                }
                out.push((Tok::Str(decode_entities(&s)), first));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut end = start + c.len_utf8();
                while let Some((i, c)) =
                    chars.next_if(|&(_, c)| c.is_ascii_alphanumeric() || c == '_')
                {
                    end = i + c.len_utf8();
                }
                out.push((Tok::Key(text[start..end].to_string()), line));
            }
            c if c.is_ascii_digit() || matches!(c, '-' | '+' | '.') => {
                let mut end = start + 1;
                while let Some((i, _)) = chars.next_if(|&(_, c)| {
                    c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')
                }) {
                    end = i + 1;
                }
                let word = &text[start..end];
                let tok = if let Ok(i) = word.parse::<i64>() {
                    Tok::Int(i)
                } else {
                    match word.parse::<f64>() {
                        Ok(r) if r.is_finite() => Tok::Real(r),
                        _ => {
                            return Err(ImportError::at(
                                line,
                                format!("expected a number, found '{word}'"),
                            ))
                        }
                    }
                };
                out.push((tok, line));
            }
            c => {
                return Err(ImportError::at(
                    line,
                    format!("unexpected character {c:?} (expected a key, a value, '[' or ']')"),
                ))
            }
        }
    }
    Ok(out)
}

/// Replaces the character references Topology Zoo files use (`&amp;`, `&#34;`, …) by their
/// characters; anything else is kept as written.
fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        // Entity names are short: look for the ';' among the next few characters only, so a
        // long string full of '&' stays linear.
        let semicolon = rest.char_indices().take(12).find(|&(_, c)| c == ';');
        let decoded = semicolon.and_then(|(j, _)| {
            let name = &rest[1..j];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => name
                    .strip_prefix('#')
                    .and_then(|n| match n.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => n.parse().ok(),
                    })
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, j + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[derive(Debug)]
enum Value {
    Int(i64),
    Real(f64),
    Str(String),
    List(Vec<Entry>),
}

#[derive(Debug)]
struct Entry {
    key: String,
    value: Value,
    line: usize,
}

/// Parses `key value` pairs from `toks[*pos..]` up to the `]` closing a list opened on line
/// `open` (or to the end of the input at the top level, `open == None`).
fn parse_list(
    toks: &[(Tok, usize)],
    pos: &mut usize,
    open: Option<(usize, &str)>,
    depth: usize,
) -> Result<Vec<Entry>, ImportError> {
    let mut entries = Vec::new();
    loop {
        let here = toks.get(*pos);
        let key = match (here, open) {
            (None, None) => return Ok(entries),
            (None, Some((line, key))) => {
                return Err(ImportError::at(
                    toks.last().map_or(line, |t| t.1),
                    format!("expected ']' to close '{key} [' opened on line {line}, found the end of the input"),
                ))
            }
            (Some((Tok::Close, _)), Some(_)) => {
                *pos += 1;
                return Ok(entries);
            }
            (Some((Tok::Key(k), _)), _) => k.clone(),
            (Some((_, line)), _) => {
                return Err(ImportError::at(
                    *line,
                    format!("expected a key, found {}", describe(here)),
                ))
            }
        };
        let line = here.map_or(0, |t| t.1);
        *pos += 1;
        let value = match toks.get(*pos) {
            Some((Tok::Int(i), _)) => Value::Int(*i),
            Some((Tok::Real(r), _)) => Value::Real(*r),
            Some((Tok::Str(s), _)) => Value::Str(s.clone()),
            Some((Tok::Open, _)) => {
                if depth >= MAX_GML_DEPTH {
                    return Err(ImportError::at(
                        line,
                        format!("lists nest deeper than {MAX_GML_DEPTH} levels"),
                    ));
                }
                *pos += 1;
                Value::List(parse_list(toks, pos, Some((line, &key)), depth + 1)?)
            }
            other => {
                return Err(ImportError::at(
                    other.map_or(line, |t| t.1),
                    format!("expected a value after '{key}', found {}", describe(other)),
                ))
            }
        };
        if !matches!(value, Value::List(_)) {
            *pos += 1;
        }
        entries.push(Entry { key, value, line });
    }
}

fn find<'a>(entries: &'a [Entry], key: &str) -> Option<&'a Entry> {
    entries.iter().find(|e| e.key == key)
}

/// A node or edge end id, as text: GML ids are integers, but strings are accepted (so `0` and
/// `"0"` are the same id).
fn id_of(e: &Entry, what: &str) -> Result<String, ImportError> {
    match &e.value {
        Value::Int(i) => Ok(i.to_string()),
        Value::Str(s) => Ok(s.clone()),
        _ => Err(ImportError::at(
            e.line,
            format!("expected an integer {what}, found {}", kind(&e.value)),
        )),
    }
}

fn number_of(e: &Entry) -> Result<f64, ImportError> {
    match e.value {
        Value::Int(i) => Ok(i as f64),
        Value::Real(r) => Ok(r),
        _ => Err(ImportError::at(
            e.line,
            format!(
                "expected a number for '{}', found {}",
                e.key,
                kind(&e.value)
            ),
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Int(_) => "an integer",
        Value::Real(_) => "a real",
        Value::Str(_) => "a string",
        Value::List(_) => "a list",
    }
}

/// Reads an Internet Topology Zoo GML file: the first `graph [ ... ]`, its `node [ id label
/// Latitude Longitude ]` and `edge [ source target ]` lists. Other keys, at any depth, are
/// ignored; a node's name is its `label`, or its id without one. Links are undirected whatever
/// the graph's `directed` key says (each direction of a link is a parallel link, dropped:
/// decision D50). GML gives no link lengths; delays come from the coordinates.
///
/// # Errors
/// With the line and what was expected, on malformed GML (unclosed lists or strings, a key
/// without a value, bad numbers), a missing `graph`, a node without an integer `id` or with a
/// duplicate one, a node with only one coordinate or coordinates out of range, or an edge
/// whose `source` or `target` is missing or not a node id. Never panics.
pub fn parse_gml(text: &str) -> Result<Topology, ImportError> {
    let toks = tokenize(text)?;
    let mut pos = 0;
    let top = parse_list(&toks, &mut pos, None, 0)?;
    let graph = find(&top, "graph")
        .ok_or_else(|| ImportError::new("expected 'graph [ ... ]' at the top level, found none"))?;
    let Value::List(entries) = &graph.value else {
        return Err(ImportError::at(
            graph.line,
            format!(
                "expected 'graph' to be a list '[ ... ]', found {}",
                kind(&graph.value)
            ),
        ));
    };
    let name = match find(entries, "label").map(|e| &e.value) {
        Some(Value::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let mut nodes = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut edges = Vec::new();
    for e in entries {
        let list = match (&e.value, e.key.as_str()) {
            (Value::List(list), "node" | "edge") => list,
            (v, "node" | "edge") => {
                return Err(ImportError::at(
                    e.line,
                    format!("expected '{} [ ... ]', found {}", e.key, kind(v)),
                ))
            }
            _ => continue,
        };
        if e.key == "node" {
            let id = find(list, "id")
                .ok_or_else(|| ImportError::at(e.line, "expected an 'id' in this node"))?;
            let id = id_of(id, "node id")?;
            let name = match find(list, "label").map(|l| &l.value) {
                Some(Value::Str(s)) => s.clone(),
                Some(Value::Int(i)) => i.to_string(),
                Some(Value::Real(r)) => r.to_string(),
                _ => id.clone(),
            };
            let lat = find(list, "Latitude").map(number_of).transpose()?;
            let lon = find(list, "Longitude").map(number_of).transpose()?;
            let lat_lon = match (lat, lon) {
                (Some(lat), Some(lon)) => {
                    check_lat_lon((lat, lon)).map_err(|m| ImportError::at(e.line, m))?;
                    Some((lat, lon))
                }
                (None, None) => None,
                _ => {
                    return Err(ImportError::at(
                        e.line,
                        "expected both 'Latitude' and 'Longitude' or neither",
                    ))
                }
            };
            if index.insert(id.clone(), nodes.len()).is_some() {
                return Err(ImportError::at(
                    e.line,
                    format!("node id {id} is used by an earlier node"),
                ));
            }
            nodes.push(TopoNode { name, lat_lon });
        } else {
            let end = |key: &str| -> Result<String, ImportError> {
                let v = find(list, key).ok_or_else(|| {
                    ImportError::at(e.line, format!("expected a '{key}' in this edge"))
                })?;
                id_of(v, key)
            };
            edges.push((end("source")?, end("target")?, e.line));
        }
    }
    let mut links = Vec::with_capacity(edges.len());
    for (source, target, line) in edges {
        let node = |id: &str, what: &str| {
            index.get(id).copied().ok_or_else(|| {
                ImportError::at(line, format!("edge {what} {id} is not the id of a node"))
            })
        };
        links.push(TopoLink {
            a: node(&source, "source")?,
            b: node(&target, "target")?,
            length_km: None,
        });
    }
    Topology::new(name, nodes, links)
}

// ---- topohub JSON ----

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{EdgeId, NodeIx};
    use crate::zoo::DelayModel;
    use pathpool_core::Dur;
    use proptest::prelude::*;

    /// A small GML file in the Topology Zoo style with what the parser must cope with:
    /// comments, unknown keys at every level, nested lists, strings with spaces, an entity,
    /// a node without coordinates, a parallel link (both orientations) and a self-loop.
    const GML: &str = r#"# written by hand for the tests
graph [
  DateObtained "14/01/11"
  Network "Test Net"
  label "Testnet"
  hierarchic 1
  extra [ nested [ deeper 1 ] list "a b" ]
  node [
    id 0
    label "Amsterdam &amp; Co"
    Country "Netherlands"
    Longitude 4.88969
    Internal 1
    Latitude 52.37403
  ]
  node [
    id 1
    label "London"
    Longitude -0.12574
    Latitude 51.50853
    graphics [ x 1.5 y -2 ]
  ]
  node [
    id 2
    label "Nowhere"
    Internal 0
  ]
  node [ id 3 Latitude 48.85341 Longitude 2.3488 ]
  edge [ source 0 target 1 LinkLabel "10 Gbps" id "e0" ]
  edge [ source 1 target 0 ]
  edge [ source 1 target 2 ]
  edge [ source 2 target 2 ]
  edge [ source 3 target 0 ]
]
"#;

    #[test]
    fn gml_fixture() {
        let t = parse_gml(GML).unwrap();
        assert_eq!(t.name(), "Testnet");
        let names: Vec<&str> = t.nodes().iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["Amsterdam & Co", "London", "Nowhere", "3"]);
        assert_eq!(t.nodes()[0].lat_lon, Some((52.37403, 4.88969)));
        assert_eq!(t.nodes()[2].lat_lon, None);
        let ends: Vec<(usize, usize)> = t.links().iter().map(|l| (l.a, l.b)).collect();
        assert_eq!(ends, [(0, 1), (1, 2), (3, 0)]);
        assert_eq!((t.dropped_parallel_links(), t.dropped_self_loops()), (1, 1));
        assert_eq!(t.degrees(), [2, 2, 1, 1]);
        assert_eq!(t.access_nodes(), [2, 3]);
        assert!((t.density() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn graph_and_delays() {
        let t = parse_gml(GML).unwrap();
        let g = t.to_graph();
        assert_eq!((g.node_count(), g.edge_count()), (4, 6));
        assert_eq!(g.ends(EdgeId(2)), (NodeIx(1), NodeIx(2)));
        assert_eq!(g.ends(EdgeId(3)), (NodeIx(2), NodeIx(1)));
        // Amsterdam–London: 356.93 km on the sphere (the haversine formula evaluated
        // independently in Python), 1.785 ms at 200 000 km/s.
        let km = t.link_length_km(0).unwrap();
        assert!((km - 356.930_636).abs() < 1e-5, "{km}");
        let model = DelayModel::default();
        let d = t.link_delay(0, &model);
        assert!((d.as_secs_f64() - km / 200_000.0).abs() < 1e-12);
        // Nowhere has no coordinates: the fallback.
        assert_eq!(t.link_length_km(1), None);
        assert_eq!(t.link_delay(1, &model), Dur::from_ms(5));
        let delays = t.edge_delays(&model);
        assert_eq!(delays.len(), 6);
        assert_eq!((delays[0], delays[1], delays[2]), (d, d, Dur::from_ms(5)));
        let slow = DelayModel {
            speed_km_per_s: 100_000.0,
            fallback: Dur::from_ms(1),
        };
        assert_eq!(slow.delay_for_km(100.0), Dur::from_ms(1));
        assert_eq!(t.link_delay(1, &slow), Dur::from_ms(1));
    }

    fn gml_error(text: &str) -> (Option<usize>, String) {
        let e = parse_gml(text).unwrap_err();
        (e.line, e.message)
    }

    #[test]
    fn gml_errors_name_the_line() {
        let (line, msg) = gml_error("graph [\n node [ id 0 ]\n node [ id 1\n");
        assert_eq!(line, Some(3));
        assert!(
            msg.contains("expected ']' to close 'node [' opened on line 3"),
            "{msg}"
        );
        let (line, msg) = gml_error("graph [\n node [ id 0 ]\n edge [ source 0 target 7 ]\n]");
        assert_eq!(line, Some(3));
        assert_eq!(msg, "edge target 7 is not the id of a node");
        let (line, msg) = gml_error("graph [\n node [ label \"x\" ]\n]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(2), "expected an 'id' in this node")
        );
        let (line, msg) = gml_error("graph [\n node [ id 0 ]\n node [ id 0 ]\n]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(3), "node id 0 is used by an earlier node")
        );
        let (line, msg) = gml_error("graph [\n node [ id 0 Latitude 1.0 ]\n]");
        assert_eq!(line, Some(2));
        assert!(msg.contains("both 'Latitude' and 'Longitude'"));
        let (line, msg) = gml_error("graph [\n node [ id 0 Latitude 91 Longitude 0 ]\n]");
        assert_eq!(line, Some(2));
        assert!(msg.contains("not a position"), "{msg}");
        let (line, msg) = gml_error("graph [\n\n label \"never closed\n ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(3), "a string is not closed by '\"'")
        );
        let (line, msg) = gml_error("graph [ x 1.2.3 ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(1), "expected a number, found '1.2.3'")
        );
        let (line, msg) = gml_error("graph [ node [ id 0 ]\n edge [ source 0 ]\n]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(2), "expected a 'target' in this edge")
        );
        let (line, msg) = gml_error("graph [\n label ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(2), "expected a value after 'label', found ']'")
        );
        let (line, msg) = gml_error("graph [ 12 ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(1), "expected a key, found the number 12")
        );
        let (line, msg) = gml_error("graph [ ] ]");
        assert_eq!((line, msg.as_str()), (Some(1), "expected a key, found ']'"));
        let (line, msg) = gml_error("graph [ node 3 ]");
        assert_eq!(
            (line, msg.as_str()),
            (Some(1), "expected 'node [ ... ]', found an integer")
        );
        let (line, msg) = gml_error("creator \"x\"");
        assert_eq!(line, None);
        assert!(msg.contains("'graph [ ... ]'"));
        let (line, _) = gml_error("graph [ a ! ]");
        assert_eq!(line, Some(1));
        let deep = "graph [ ".to_string() + &"a [ ".repeat(100) + &"] ".repeat(101);
        assert!(gml_error(&deep).1.contains("nest deeper"));
    }

    #[test]
    fn gml_ids_and_labels_are_flexible() {
        let t = parse_gml(
            "graph [ directed 1 node [ id \"a\" ] node [ id -4 label 12 ] \
             edge [ source \"a\" target -4 ] edge [ target \"a\" source -4 ] ]",
        )
        .unwrap();
        assert_eq!(t.nodes()[0].name, "a");
        assert_eq!(t.nodes()[1].name, "12");
        assert_eq!(t.links().len(), 1);
        assert_eq!(t.dropped_parallel_links(), 1);
        assert_eq!(
            decode_entities("a &#34;T&#34; &#x41; &bogus; & &amp"),
            "a \"T\" A &bogus; & &amp"
        );
    }

    /// Words garbled GML is made of.
    const GML_WORDS: &[&str] = &[
        "graph",
        "node",
        "edge",
        "id",
        "source",
        "target",
        "label",
        "Latitude",
        "Longitude",
        "[",
        "]",
        "0",
        "1",
        "-3.5e2",
        "\"",
        "\"a b\"",
        "#",
        "\n",
        "&#",
        "1e999",
        "é",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        #[test]
        fn gml_never_panics_on_arbitrary_text(s in "\\PC*") {
            let _ = parse_gml(&s);
        }

        #[test]
        fn gml_never_panics_on_gml_like_tokens(
            toks in proptest::collection::vec(
                proptest::sample::select(GML_WORDS),
                0..60,
            )
        ) {
            let _ = parse_gml(&toks.join(" "));
        }

        #[test]
        fn gml_never_panics_on_a_garbled_fixture(
            cuts in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..8),
        ) {
            let mut bytes = GML.as_bytes().to_vec();
            for (at, b) in cuts {
                let i = at.index(bytes.len());
                match b % 3 {
                    0 => { bytes.remove(i); }
                    1 => bytes[i] = b"[]\"#0-. x\n"[usize::from(b) % 10],
                    _ => bytes.truncate(i),
                }
                if bytes.is_empty() {
                    break;
                }
            }
            let _ = parse_gml(&String::from_utf8_lossy(&bytes));
        }

    }
}
