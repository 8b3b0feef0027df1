//! Tests of domain-scale: sweep files, row parsing and the analysis on synthetic rows.

use super::analysis::slice_mean;
use super::*;

#[test]
fn disjoint_pairs_are_recognised() {
    assert!(has_disjoint_pair("s>a>b>c | s>d>c"));
    assert!(!has_disjoint_pair("s>a>b>c | s>a>d>c"));
    // Three paths, two of them disjoint.
    assert!(has_disjoint_pair("s>a>c | s>a>b>c | s>d>c"));
    assert!(!has_disjoint_pair("s>a>c"));
}

#[test]
fn sweep_files_parse_and_name_every_configuration() {
    let t = Topo {
        name: "Nsfnet",
        path: PathBuf::from("/x/Nsfnet.gml"),
        nodes: 13,
        links: 15,
        access_nodes: 3,
        density: 0.19,
    };
    let dir = std::env::temp_dir();
    let mut points = 0;
    for s in sweeps() {
        let text = sweep_file(&s, &[&t], 3, &[("tcp.min_rto".into(), "1s".into())]);
        let doc: toml::Table = text.parse().unwrap();
        assert_eq!(doc["reps"].as_integer(), Some(3));
        assert_eq!(doc["set"]["tcp.min_rto"].as_str(), Some("1s"));
        let grid = doc["grid"].as_table().unwrap();
        points += grid
            .values()
            .map(|v| v.as_array().unwrap().len())
            .product::<usize>();
        let _ = def::parse_sweep_file(&text, "x.toml", &dir);
    }
    // E7a: 2 x 2 + 2 x 2; E7b: 3 + 3 x 2 x 2 + 2 (per topology).
    assert_eq!(points, 25);
}

#[test]
fn rank_slices() {
    let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
    assert_eq!(slice_mean(&v, 0.0, 0.1), 1.0);
    assert_eq!(slice_mean(&v, 0.0, 0.5), 3.0);
    assert_eq!(slice_mean(&v, 0.9, 1.0), 10.0);
}

/// Rows of a sweep: for each configuration, two placements of Nsfnet with a multipath
/// flow (over two disjoint paths) and a single-path one; `scale` varies the throughput.
fn rows(configs: &[(&[&str], f64)]) -> Vec<Row> {
    let mut v = Vec::new();
    for (config, scale) in configs {
        for rep in 1..=2u64 {
            for (flow, bps, path) in [
                ("mp0", 4e6, "s>a>c | s>b>c"),
                ("sp0", 3e6 + 1e5 * rep as f64, "s>a>c"),
            ] {
                v.push(Row {
                    config: config.iter().map(ToString::to_string).collect(),
                    topology: "Nsfnet".into(),
                    rep,
                    flow: flow.into(),
                    throughput_bps: bps * scale,
                    path: path.into(),
                });
            }
        }
    }
    v
}

#[test]
fn comparisons_take_their_targets_from_the_published_file() {
    let mut tables = BTreeMap::new();
    let mut e7a = Vec::new();
    for (sweep, first, _) in E7A_CASES {
        e7a.push((sweep, first));
    }
    for sweep in ["e7a-capacity", "e7a-delay"] {
        let firsts: Vec<&str> = e7a
            .iter()
            .filter(|(s, _)| *s == sweep)
            .map(|(_, f)| *f)
            .collect();
        let mut configs: Vec<(Vec<&str>, f64)> = Vec::new();
        for f in firsts {
            configs.push((vec![f, "\"nmcc\""], 1.1));
            configs.push((vec![f, "\"lia\""], 1.0));
        }
        let configs: Vec<(&[&str], f64)> =
            configs.iter().map(|(c, s)| (c.as_slice(), *s)).collect();
        tables.insert(sweep, rows(&configs));
    }
    let rates = ["\"10Mbps\"", "\"100Mbps\"", "\"1Gbps\""];
    let single: Vec<(&[&str], f64)> = rates
        .iter()
        .map(|r| (std::slice::from_ref(r), 1.0))
        .collect();
    tables.insert("e7b-single", rows(&single));
    let mut yen: Vec<(Vec<&str>, f64)> = Vec::new();
    for r in rates {
        for k in ["2", "3"] {
            yen.push((vec![r, k, "\"none\""], 1.2));
            yen.push((vec![r, k, "\"shared-link\""], 1.3));
        }
    }
    let yen: Vec<(&[&str], f64)> = yen.iter().map(|(c, s)| (c.as_slice(), *s)).collect();
    tables.insert("e7b-yen", rows(&yen));
    tables.insert(
        "e7b-bhandari",
        rows(&[(&["\"none\""], 1.4), (&["\"shared-link\""], 1.5)]),
    );
    let t = Topo {
        name: "Nsfnet",
        path: PathBuf::from("/x/Nsfnet.gml"),
        nodes: 13,
        links: 15,
        access_nodes: 3,
        density: 0.19,
    };
    let mut report = Report::default();
    super::e7a(&tables, &mut report).unwrap();
    e7b(&tables, &[&t], &mut report).unwrap();
    let metrics: Vec<(String, &str)> = report
        .comparisons
        .iter()
        .map(|c| (c.metric.clone(), c.unit))
        .collect();
    assert_eq!(metrics, compared(false));
    let targets = published::of(EXPERIMENT.id).unwrap();
    for c in &report.comparisons {
        let t = targets.target(&c.metric, c.unit).unwrap();
        assert_eq!(c.experiment, EXPERIMENT.id);
        assert_eq!(c.published.to_bits(), t.published.to_bits(), "{}", c.metric);
        assert_eq!(c.tolerance.to_bits(), t.tolerance.to_bits(), "{}", c.metric);
        assert_eq!(c.source, t.source, "{}", c.metric);
    }
}
