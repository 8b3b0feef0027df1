//! Tests of sweep plans: ids, seeds, the directory, resuming and gathering.

use super::super::def::{parse_grid_arg, ScenarioText};
use super::super::{gather, pool};
use super::*;

const TINY: &str = r#"name = "tiny"
duration = "2s"
[nodes]
hosts = ["a", "b"]
routers = ["r"]
[[links]]
id = "bottleneck"
between = ["r", "b"]
rate = "5Mbps"
delay = "10ms"
queue = { type = "droptail", size = "30pkts" }
loss = 0.001
[[links]]
between = ["a", "r"]
rate = "50Mbps"
delay = "5ms"
[[flows]]
id = "f"
from = "a"
to = "b"
count = 2
"#;

fn def(grid: &[&str], reps: u64) -> SweepDef {
    let mut d = SweepDef::new(ScenarioText {
        text: TINY.into(),
        format: "toml".into(),
        source: "tiny.toml".into(),
    });
    d.grid = grid.iter().map(|g| parse_grid_arg(g).unwrap()).collect();
    d.reps = reps;
    d
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("pathpool-sweep-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    Scratch(d)
}

#[test]
fn the_grid_expands_first_parameter_slowest_then_repetitions() {
    let p = Plan::new(
        def(
            &["links.bottleneck.rate=5Mbps,10Mbps", "flows.f.count=1,2,3"],
            2,
        ),
        PathBuf::from("unused"),
    )
    .unwrap();
    assert_eq!(p.points(), 6);
    assert_eq!(p.runs.len(), 12);
    let summary: Vec<(usize, u64, &str, &str)> = p
        .runs
        .iter()
        .map(|r| {
            (
                r.point,
                r.rep,
                r.params[0].1.as_str(),
                r.params[1].1.as_str(),
            )
        })
        .collect();
    assert_eq!(summary[0], (0, 0, "5Mbps", "1"));
    assert_eq!(summary[1], (0, 1, "5Mbps", "1"));
    assert_eq!(summary[2], (1, 0, "5Mbps", "2"));
    assert_eq!(summary[11], (5, 1, "10Mbps", "3"));
    let no_grid = Plan::new(def(&[], 3), PathBuf::from("unused")).unwrap();
    assert_eq!(no_grid.runs.len(), 3);
    assert!(no_grid.runs.iter().all(|r| r.params.is_empty()));
}

#[test]
fn a_prepared_sweep_opens_from_its_directory() {
    let dir = scratch("open");
    assert!(Plan::open(&dir.0).is_err(), "no manifest yet");
    let mut d = def(&["links.bottleneck.rate=5Mbps,10Mbps"], 2);
    d.set = vec![("flows.f.count".into(), "1".into())];
    d.seed = Some(7);
    let plan = Plan::new(d, dir.0.clone()).unwrap();
    plan.prepare().unwrap();
    plan.run_and_store(1, &|| false).unwrap();
    let opened = Plan::open(&dir.0).unwrap();
    assert_eq!(opened.def, plan.def);
    assert_eq!(opened.runs, plan.runs);
    assert_eq!(opened.columns, plan.columns);
    assert_eq!(opened.base_seed, 7);
    assert_eq!(opened.pending(), [0, 2, 3]);
    let manifest = dir.0.join("manifest.json");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(&manifest, text.replace(&plan.digest, "0000000000000000")).unwrap();
    let e = Plan::open(&dir.0).unwrap_err().to_string();
    assert!(e.contains("scenario changed"), "{e}");
}

#[test]
fn seeds_are_the_base_plus_the_repetition() {
    assert_eq!(derive_seed(1, 0), 1);
    assert_eq!(derive_seed(1, 4), 5);
    assert_eq!(derive_seed(u64::MAX, 1), 0);
    let p = Plan::new(def(&["flows.f.count=1,2"], 3), PathBuf::new()).unwrap();
    let seeds: Vec<u64> = p.runs.iter().map(|r| r.seed).collect();
    assert_eq!(
        seeds,
        [1, 2, 3, 1, 2, 3],
        "the scenario has no seed: base 1"
    );
    let mut d = def(&["flows.f.count=1,2"], 2);
    d.seed = Some(40);
    let p = Plan::new(d, PathBuf::new()).unwrap();
    let seeds: Vec<u64> = p.runs.iter().map(|r| r.seed).collect();
    assert_eq!(seeds, [40, 41, 40, 41]);
    let mut d = def(&[], 2);
    d.scenario.text = format!("seed = 9\n{TINY}");
    let p = Plan::new(d, PathBuf::new()).unwrap();
    assert_eq!(p.runs[1].seed, 10, "the scenario's seed is the base");
}

#[test]
fn run_ids_depend_on_parameters_and_seed_only() {
    let kv = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    };
    let a = run_id(&kv(&[("links.l.rate", "10Mbps"), ("flows.0.cc", "lia")]), 3);
    // Pinned: ids name directories on disk and must not change between releases.
    assert_eq!(a, "14bd3f9cacbb2e33");
    assert_eq!(
        a,
        run_id(&kv(&[("flows.0.cc", "lia"), ("links.l.rate", "10Mbps")]), 3),
        "order of the grid does not matter"
    );
    assert_ne!(
        a,
        run_id(&kv(&[("links.l.rate", "10Mbps"), ("flows.0.cc", "lia")]), 4)
    );
    assert_ne!(
        a,
        run_id(
            &kv(&[("links.l.rate", "10Mbps"), ("flows.0.cc", "olia")]),
            3
        )
    );
    assert_ne!(a, run_id(&kv(&[("links.l.rate", "10Mbps")]), 3));
    // A grown grid keeps the ids of its old points.
    let small = Plan::new(def(&["flows.f.count=1,2"], 2), PathBuf::new()).unwrap();
    let big = Plan::new(def(&["flows.f.count=1,2,3"], 3), PathBuf::new()).unwrap();
    let big_ids: HashSet<&str> = big.runs.iter().map(|r| r.id.as_str()).collect();
    assert!(small.runs.iter().all(|r| big_ids.contains(r.id.as_str())));
}

fn err(d: SweepDef) -> String {
    Plan::new(d, PathBuf::new()).unwrap_err().to_string()
}

#[test]
fn bad_sweeps_are_refused_before_anything_runs() {
    let e = err(def(&["links.bottleneck.rat=5Mbps"], 1));
    // A grid value's problem is the value's, not the file's line.
    assert!(
        e.starts_with(
            "--grid: links.bottleneck.rat = 5Mbps: links[0].rat: unknown field (did you \
             mean `rate`?)"
        ),
        "{e}"
    );
    let e = err(def(&["links.bottleneck.rate=5Mbps,fast"], 1));
    assert!(
        e.starts_with("--grid: links.bottleneck.rate = fast: links[0].rate: \"fast\""),
        "{e}"
    );
    let e = err(def(&["links.nowhere.rate=5Mbps"], 1));
    assert!(e.contains("no element \"nowhere\""), "{e}");
    let e = err(def(&["flows.f.to=a,b"], 1));
    assert!(e.contains("flows.f.to = a:"), "{e}");
    let e = err(def(&["flows.f.count=1,1"], 1));
    assert!(e.contains("the value 1 is listed twice"), "{e}");
    let e = err(def(&["seed=1,2"], 1));
    assert!(e.contains("seeds are not a grid parameter"), "{e}");
    let e = err(def(&["flows.f.count=1", "flows.f.count=2"], 1));
    assert!(e.contains("the grid has this parameter twice"), "{e}");
    assert!(err(def(&[], 0)).starts_with("reps: must be at least 1"));
    let mut d = def(&["flows.f.count=1"], 1);
    d.set = vec![("flows.f.count".into(), "3".into())];
    assert!(err(d).contains("both a grid parameter and a fixed override"));
    let mut d = def(&[], 1);
    d.metrics = vec!["goodput".into()];
    let e = err(d);
    assert!(
        e.contains("\"goodput\" is not a column of the flows table"),
        "{e}"
    );
    assert!(e.contains("throughput_bps"), "{e}");
    let mut d = def(&[], 1);
    d.grid = vec![parse_grid_arg("name=x,y").unwrap()];
    d.table = GatherTable::Links;
    assert!(err(d).contains("already has a column of this name"));
    // Each value compiles on its own, but one combination does not.
    let e = err(def(
        &["links.bottleneck.rate=5Mbps,0bps", "measure.start=0s,1s"],
        1,
    ));
    assert!(e.contains("0bps"), "{e}");
}

#[test]
fn an_interrupted_sweep_reruns_only_its_unfinished_runs() {
    let dir = scratch("resume");
    let p = Plan::new(
        def(&["links.bottleneck.rate=5Mbps,10Mbps"], 3),
        dir.0.clone(),
    )
    .unwrap();
    p.prepare().unwrap();
    assert_eq!(p.pending().len(), 6);
    let r = pool::run_local(&p, &p.pending(), 2, false, || false);
    assert_eq!((r.ran.len(), r.failed.len(), r.interrupted), (6, 0, false));
    assert!(p.pending().is_empty());
    let first = gather::gather(&p).unwrap();
    assert_eq!(first.rows(), 12, "2 flows x 6 runs");

    // "Interrupt": runs 1 and 4 lost their markers (killed between files and marker),
    // run 2 lost its whole directory.
    fs::remove_file(p.run_dir(1).join(DONE_MARKER)).unwrap();
    fs::remove_file(p.run_dir(4).join(DONE_MARKER)).unwrap();
    fs::remove_dir_all(p.run_dir(2)).unwrap();
    fs::create_dir_all(p.out.join("runs").join(".x.partial-1")).unwrap();
    p.prepare().unwrap();
    assert!(!p.out.join("runs").join(".x.partial-1").exists());
    assert_eq!(p.pending(), [1, 2, 4]);
    let r = pool::run_local(&p, &p.pending(), 2, false, || false);
    let mut ran = r.ran.clone();
    ran.sort_unstable();
    assert_eq!(ran, [1, 2, 4]);
    assert_eq!(
        gather::gather(&p).unwrap(),
        first,
        "same table after resuming"
    );

    // A grown grid adds runs; the old ones are kept.
    let grown = Plan::new(
        def(&["links.bottleneck.rate=5Mbps,10Mbps,20Mbps"], 3),
        dir.0.clone(),
    )
    .unwrap();
    grown.prepare().unwrap();
    assert_eq!(grown.pending(), [6, 7, 8]);

    // Another scenario may not share the directory.
    let mut other = def(&["links.bottleneck.rate=5Mbps"], 1);
    other.set = vec![("duration".into(), "3s".into())];
    let e = Plan::new(other, dir.0.clone())
        .unwrap()
        .prepare()
        .unwrap_err();
    assert!(
        e.to_string().contains("a sweep of a different scenario"),
        "{e}"
    );
}

#[test]
fn a_stopped_sweep_marks_nothing_it_did_not_finish() {
    let dir = scratch("stop");
    let p = Plan::new(def(&["flows.f.count=1,2"], 2), dir.0.clone()).unwrap();
    p.prepare().unwrap();
    // Interrupted before it starts: nothing runs, nothing is marked, nothing gathers.
    let r = pool::run_local(&p, &p.pending(), 2, false, || true);
    assert!(r.interrupted);
    assert!(r.ran.is_empty() && r.failed.is_empty(), "{r:?}");
    assert_eq!(p.pending().len(), 4);
    assert!(gather::gather(&p).is_err());
    // Interrupted at the pool's first look after it started (the workers may have finished
    // some runs by then): exactly the runs reported finished are marked.
    let mut calls = 0;
    let r = pool::run_local(&p, &p.pending(), 2, false, || {
        calls += 1;
        calls > 1
    });
    assert_eq!(p.pending().len(), 4 - r.ran.len());
    assert!(r.interrupted || r.ran.len() == 4);
}

#[test]
fn the_gathered_table_has_run_and_parameter_columns() {
    let dir = scratch("gather");
    let mut d = def(
        &[
            "links.bottleneck.rate=5Mbps,10Mbps",
            "flows.f.count=1,2",
            "links.bottleneck.loss=0,0.01",
            "tcp.delayed_ack=false,true",
        ],
        1,
    );
    d.metrics = vec!["throughput_bps".into()];
    let p = Plan::new(d, dir.0.clone()).unwrap();
    p.prepare().unwrap();
    pool::run_local(&p, &p.pending(), 2, false, || false);
    let t = gather::gather(&p).unwrap();
    let names: Vec<&str> = t.columns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "run_id",
            "point",
            "rep",
            "seed",
            "links.bottleneck.rate",
            "flows.f.count",
            "links.bottleneck.loss",
            "tcp.delayed_ack",
            "id",
            "throughput_bps"
        ]
    );
    assert!(matches!(
        t.column("links.bottleneck.rate"),
        Some(Column::Str(_))
    ));
    assert!(matches!(t.column("flows.f.count"), Some(Column::U64(_))));
    assert!(matches!(
        t.column("links.bottleneck.loss"),
        Some(Column::F64(_))
    ));
    assert!(matches!(t.column("tcp.delayed_ack"), Some(Column::Bool(_))));
    assert_eq!(t.rows(), 4 * 3 * 2, "16 points, 1 or 2 flows each");
    let csv = gather::to_csv(&t);
    assert!(csv.starts_with("run_id,point,rep,seed,links.bottleneck.rate,"));
    assert_eq!(csv.lines().count(), 1 + t.rows());
    let (_, files) = gather::gather_and_write(&p).unwrap();
    let back = output::read_parquet(&files[0]).unwrap();
    assert_eq!(back, t, "sweep.parquet reads back as gathered");
    assert_eq!(fs::read_to_string(&files[1]).unwrap(), csv);
}

#[test]
fn summary_gathers_one_row_per_run() {
    let dir = scratch("summary");
    let mut d = def(&["flows.f.count=1,2"], 2);
    d.table = GatherTable::Summary;
    let p = Plan::new(d, dir.0.clone()).unwrap();
    p.prepare().unwrap();
    pool::run_local(&p, &p.pending(), 1, false, || false);
    let t = gather::gather(&p).unwrap();
    assert_eq!(t.rows(), 4);
    assert_eq!(t.columns.len(), 4 + 1 + gather::SUMMARY_COLUMNS.len());
    let Some(Column::OptF64(jain)) = t.column("jain_index") else {
        panic!("jain_index")
    };
    assert!(jain.iter().all(Option::is_some));
}
