//! NDN in the simulator (issue 22, acceptance 3): consumers, forwarders, content stores and
//! PTP's paths on small topologies, each test on a summary figure that could fail.

use crate::common::{error, run, run_seeded};
use pathpool_sim::{Column, Results, Table};

/// A duplex link's TOML.
fn link(a: &str, b: &str, rate: &str, delay: &str, extra: &str) -> String {
    format!(
        "[[links]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{rate}\"\ndelay = \"{delay}\"\n{extra}\n"
    )
}

/// Nodes `nodes` (all routers: NDN nodes forward and consume alike), `links`, `[ndn]` with
/// `ndn`, and `rest`, for `duration`.
fn scenario(duration: &str, nodes: &[&str], links: &str, ndn: &str, rest: &str) -> String {
    let names: Vec<String> = nodes.iter().map(|n| format!("{n:?}")).collect();
    format!(
        "duration = \"{duration}\"\n[nodes]\nrouters = [{}]\n{links}\n[ndn]\n{ndn}\n{rest}",
        names.join(", ")
    )
}

fn producer(node: &str, prefix: &str) -> String {
    format!("[[ndn.producers]]\nnode = \"{node}\"\nprefix = \"{prefix}\"\n")
}

fn consumer(to: &str, content: &str, size: &str, transport: &str, extra: &str) -> String {
    format!(
        "[[flows]]\nkind = \"ndn\"\nto = \"{to}\"\ncontent = \"{content}\"\nsize = \"{size}\"\n\
         transport = \"{transport}\"\n{extra}\n"
    )
}

fn column<'a>(t: &'a Table, name: &str) -> &'a Column {
    t.column(name)
        .unwrap_or_else(|| panic!("{} has no column {name}", t.name))
}

/// Column `name` of `ndn_nodes` at node `node`.
fn node_u64(r: &Results, node: &str, name: &str) -> u64 {
    let t = r.ndn_nodes.as_ref().expect("ndn_nodes");
    let Column::Str(nodes) = column(t, "node") else {
        panic!()
    };
    let i = nodes.iter().position(|n| n == node).expect("node");
    match column(t, name) {
        Column::U64(v) => v[i],
        Column::OptU64(v) => v[i].unwrap_or(0),
        c => panic!("{name}: {c:?}"),
    }
}

/// The rows of `ndn_paths` for flow `flow`.
fn paths_of(r: &Results, flow: &str) -> usize {
    let t = r.ndn_paths.as_ref().expect("ndn_paths");
    let Column::Str(flows) = column(t, "flow") else {
        panic!()
    };
    flows.iter().filter(|f| *f == flow).count()
}

/// Consumer c – router r – producer p; r–p is the 10 Mb/s bottleneck with `queue`.
fn line(queue: &str, ndn: &str, flows: &str) -> String {
    scenario(
        "20s",
        &["c", "r", "p"],
        &(link("c", "r", "100Mbps", "5ms", "") + &link("r", "p", "10Mbps", "5ms", queue)),
        &(ndn.to_string() + &producer("p", "/c")),
        flows,
    )
}

/// The goodput a 10 Mb/s link gives Data of 1024 payload bytes in 1074 on the wire.
const LINE_GOODPUT_BPS: f64 = 10e6 * 1024.0 / 1074.0;

#[test]
fn icp_over_best_route_fetches_every_seq_once_at_over_90_percent_of_the_bottleneck() {
    // A queue that never fills: no Interest is lost, so each SEQ is produced once.
    let r = run(&line(
        "queue = { type = \"droptail\", size = \"5000pkts\" }",
        "",
        &consumer("c", "/c/A", "10000pkts", "icp", ""),
    ));
    let f = r.flow("flow0").unwrap();
    assert_eq!(f.completed, Some(true), "{f:?}");
    assert_eq!(f.bytes_delivered, 10000 * 1024);
    assert_eq!(
        node_u64(&r, "p", "produced"),
        10000,
        "each SEQ fetched once"
    );
    assert_eq!(f.retransmissions, 0);
    let bps = f.bytes_delivered as f64 * 8.0 / f.fct_s.unwrap();
    println!(
        "ICP: {:.3} Mb/s over {:.2} s, {:.1}% of the bottleneck's goodput",
        bps / 1e6,
        f.fct_s.unwrap(),
        100.0 * bps / LINE_GOODPUT_BPS
    );
    assert!(bps >= 0.9 * LINE_GOODPUT_BPS, "{bps}");
}

#[test]
fn two_consumers_of_one_content_take_each_seq_from_the_producer_about_once() {
    // c1 and c2 behind r, which caches; both fetch /c/A from the start.
    let text = scenario(
        "30s",
        &["c1", "c2", "r", "p"],
        &(link("c1", "r", "100Mbps", "2ms", "")
            + &link("c2", "r", "100Mbps", "3ms", "")
            + &link("r", "p", "10Mbps", "5ms", "")),
        &(producer("p", "/c") + "[[ndn.cs]]\nnode = \"r\"\ncapacity = 5000\n"),
        &(consumer("c1", "/c/A", "2000pkts", "icp", "id = \"one\"")
            + &consumer("c2", "/c/A", "2000pkts", "icp", "id = \"two\"")),
    );
    let r = run(&text);
    for id in ["one", "two"] {
        assert_eq!(r.flow(id).unwrap().completed, Some(true), "{id}");
    }
    let produced = node_u64(&r, "p", "produced");
    let from_r = node_u64(&r, "r", "cs_hits") + node_u64(&r, "r", "pit_aggregations");
    println!("produced {produced} for 2 × 2000 SEQs; r answered or aggregated {from_r}");
    assert!(produced <= 2200, "{produced}");
    assert!(from_r >= 1800, "{from_r}");
}

/// The paper's S1 tree (consumer 1; producers 5–8 of `/c`) with leaf links of different
/// rates.
fn tree(ndn: &str, flows: &str) -> String {
    let mut links = String::new();
    for (a, b, rate) in [
        ("1", "2", "100Mbps"),
        ("2", "3", "100Mbps"),
        ("2", "4", "100Mbps"),
        ("3", "5", "10Mbps"),
        ("3", "6", "20Mbps"),
        ("4", "7", "30Mbps"),
        ("4", "8", "40Mbps"),
    ] {
        links += &link(a, b, rate, "5ms", "");
    }
    let producers: String = ["5", "6", "7", "8"]
        .iter()
        .map(|n| producer(n, "/c"))
        .collect();
    scenario(
        "20s",
        &["1", "2", "3", "4", "5", "6", "7", "8"],
        &links,
        &(ndn.to_string() + &producers),
        flows,
    )
}

#[test]
fn ptp_finds_the_trees_four_paths_and_fills_its_leaves() {
    let r = run(&tree("", &consumer("1", "/c/A", "1000000pkts", "ptp", "")));
    assert_eq!(paths_of(&r, "flow0"), 4);
    let t = r.ndn_paths.as_ref().unwrap();
    let Column::Str(nodes) = column(t, "nodes") else {
        panic!()
    };
    let mut nodes = nodes.clone();
    nodes.sort();
    assert_eq!(nodes, ["1>2>3>5", "1>2>3>6", "1>2>4>7", "1>2>4>8"]);
    let f = r.flow("flow0").unwrap();
    // The leaves carry 100 Mb/s, the 1–2 link's rate.
    let bps = f.throughput_bps.unwrap();
    println!("PTP on the tree: {:.2} Mb/s", bps / 1e6);
    assert!(bps > 0.9 * 100e6 * 1024.0 / 1074.0, "{bps}");
}

/// The PTP paper's mesh (scenario 5, `ptp-mesh`), 40 s of it: its probes find at least 10
/// distinct paths (issue 22, acceptance 3); the reproduction's 300-s runs find about 56.
#[test]
fn ptp_finds_at_least_ten_paths_on_the_mesh() {
    let text = include_str!("../../../../scenarios/reproductions/ptp-mesh.toml")
        .replace("duration = \"300s\"", "duration = \"40s\"")
        .replace("start = \"60s\"", "start = \"10s\"");
    let r = run(&text);
    let found = paths_of(&r, "consumer");
    println!("PTP's probes found {found} paths on the mesh in 40 s");
    assert!(found >= 10, "{found}");
}

#[test]
fn a_failed_in_use_link_brings_nacks_and_a_replacement_within_t_and_the_download_completes() {
    // The tree with 3–5 failing at 4 s; N = 3 paths in use, so one path is spare.
    let text = tree(
        "[ndn.ptp]\nmax_paths = 3\nperiod = \"2s\"\n",
        &consumer("1", "/c/A", "120000pkts", "ptp", ""),
    )
    .replace(
        "between = [\"3\", \"5\"]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n",
        "between = [\"3\", \"5\"]\nrate = \"10Mbps\"\ndelay = \"5ms\"\nfailures = [{ at = \"4s\" }]\n",
    );
    let r = run(&text);
    let f = r.flow("flow0").unwrap();
    assert_eq!(f.completed, Some(true), "{f:?}");
    assert!(
        node_u64(&r, "3", "nacks_sent") > 0,
        "node 3 refused tags over 3–5"
    );
    let t = r.ndn_paths.as_ref().unwrap();
    let (Column::Str(nodes), Column::Str(spans), Column::Bool(broken)) = (
        column(t, "nodes"),
        column(t, "in_use_intervals_s"),
        column(t, "broken"),
    ) else {
        panic!()
    };
    let via = |n: &str| nodes.iter().position(|x| x == n).expect(n);
    let failed = via("1>2>3>5");
    assert!(broken[failed], "{spans:?}");
    let ends = |s: &str| -> Vec<(f64, f64)> {
        s.split(' ')
            .filter(|x| !x.is_empty())
            .map(|x| {
                let (a, b) = x.split_once('-').unwrap();
                (a.parse().unwrap(), b.parse().unwrap())
            })
            .collect()
    };
    let failed_until = ends(&spans[failed]).last().unwrap().1;
    println!("paths: {nodes:?}\nin use: {spans:?}");
    assert!((4.0..6.0).contains(&failed_until), "{failed_until}");
    // Another path went into use within T = 2 s of the failure.
    let replaced = (0..nodes.len())
        .filter(|&p| p != failed)
        .flat_map(|p| ends(&spans[p]))
        .any(|(a, _)| (4.0..=6.0 + 1e-9).contains(&a));
    assert!(replaced, "{spans:?}");
}

#[test]
fn multicast_on_a_ring_whose_fibs_loop_terminates_with_duplicate_nacks() {
    // Every node of a 4-ring forwards /c to both neighbours: Interests meet themselves.
    let mut links = String::new();
    for (a, b) in [("n0", "n1"), ("n1", "n2"), ("n2", "n3"), ("n3", "n0")] {
        links += &link(a, b, "10Mbps", "2ms", "");
    }
    let mut ndn = String::from("routing = \"explicit\"\nstrategy = \"multicast\"\n");
    ndn += &producer("n2", "/c");
    for (n, a, b) in [
        ("n0", "n1", "n3"),
        ("n1", "n2", "n0"),
        ("n3", "n2", "n0"),
        ("n2", "n1", "n3"),
    ] {
        ndn +=
            &format!("[[ndn.fib]]\nnode = \"{n}\"\nprefix = \"/c\"\nnext = [\"{a}\", \"{b}\"]\n");
    }
    let r = run(&scenario(
        "20s",
        &["n0", "n1", "n2", "n3"],
        &links,
        &ndn,
        &consumer("n0", "/c/A", "500pkts", "icp", ""),
    ));
    let f = r.flow("flow0").unwrap();
    assert_eq!(f.completed, Some(true), "{f:?}");
    let dups: u64 = ["n0", "n1", "n2", "n3"]
        .iter()
        .map(|n| node_u64(&r, n, "pit_duplicates"))
        .sum();
    println!("{} events, {dups} duplicates refused", r.stats.events);
    assert!(dups > 0);
    assert!(r.stats.events < 500 * 200, "{}", r.stats.events);
}

/// Every table of a run as text, without the columns named in `skip`.
fn tables_text(r: &Results, skip: &[&str]) -> String {
    r.tables()
        .iter()
        .map(|t| {
            let cols: Vec<String> = t
                .columns
                .iter()
                .filter(|(name, _)| !skip.contains(&name.as_str()))
                .map(|(name, c)| format!("{name}={c:?}"))
                .collect();
            format!("{}: {}", t.name, cols.join(";"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_same_seed_and_an_empty_fab_give_byte_identical_results() {
    let text = tree(
        "strategy = \"rfa\"\n",
        &(consumer("1", "/c/A", "20000pkts", "ptp", "")
            + &consumer("1", "/c/B", "20000pkts", "raaqm", "")),
    );
    let one = run_seeded(&text, 3);
    let again = run_seeded(&text, 3);
    assert_eq!(tables_text(&one, &[]), tables_text(&again, &[]));
    let fab = ["fab_hits", "fab_misses", "fab_evictions"];
    let no_fab = run_seeded(
        &text.replace("[ndn]\n", "[ndn]\nfab = { capacity = 0 }\n"),
        3,
    );
    assert_eq!(
        tables_text(&one, &fab),
        tables_text(&no_fab, &fab),
        "the FAB only saves lookups"
    );
    assert_eq!(node_u64(&no_fab, "2", "fab_hits"), 0);
    assert!(node_u64(&one, "2", "fab_hits") > 0);
    let other = run_seeded(&text, 4);
    assert_ne!(tables_text(&one, &[]), tables_text(&other, &[]));
}

#[test]
fn bad_ndn_input_is_refused_at_its_field() {
    let ok = line("", "", &consumer("c", "/c/A", "10pkts", "ptp", ""));
    let e = error(&ok.replace("[ndn]\n", "[ndn]\nstrategy = \"fastest\"\n"));
    assert!(
        e.contains("ndn.strategy: unknown value `fastest`; expected one of `best-route`"),
        "{e}"
    );
    let e = error(&ok.replace("[ndn]\n", "[ndn]\n[ndn.ptp]\nbeta = 1.0\n"));
    assert!(e.contains("ndn.ptp.beta: 1 is not in (0, 1)"), "{e}");
    let e = error(&ok.replace(
        "transport = \"ptp\"",
        "transport = \"ptp\"\nptp = { max_paths = 0 }",
    ));
    assert!(
        e.contains("flows[0].ptp.max_paths: must be at least 1"),
        "{e}"
    );
    let e = error(&ok.replace("content = \"/c/A\"", "content = \"/d/A\""));
    assert!(
        e.contains("flows[0].content: no producer serves /d/A; ndn.producers serve /c"),
        "{e}"
    );
    let e = error(&ok.replace(
        "[ndn]\n",
        "[ndn]\n[[ndn.cs]]\nnode = \"q\"\ncapacity = 10\n",
    ));
    assert!(e.contains("ndn.cs[0].node: unknown node \"q\""), "{e}");
    let e = error(&ok.replace(
        "transport = \"ptp\"",
        "transport = \"ptp\"\ntcp = { mss = \"1000B\" }",
    ));
    assert!(
        e.contains("flows[0].tcp: not allowed in a kind = \"ndn\" flow"),
        "{e}"
    );
    let e = error(&ok.replace(
        "[ndn]\n",
        "[ndn]\n[[ndn.fib]]\nnode = \"r\"\nprefix = \"/c\"\nnext = [\"p\"]\n",
    ));
    assert!(
        e.contains("ndn.fib: explicit FIB entries need ndn.routing = \"explicit\""),
        "{e}"
    );
}

#[test]
fn ric_over_a_rem_queue_backs_off_on_marks_and_loses_nothing() {
    let rem = "queue = { type = \"rem\", size = \"1000pkts\", min_th = \"50pkts\", max_th = \"150pkts\" }";
    let r = run(&line(
        rem,
        "",
        &consumer("c", "/c/A", "20000pkts", "ric", ""),
    ));
    let f = r.flow("flow0").unwrap();
    assert_eq!(f.completed, Some(true), "{f:?}");
    let l = r.link("r-p:p->r").unwrap();
    println!(
        "RIC: {} CE marks, {} drops, mean queue {:.0} B, {:.2} Mb/s",
        l.ce_marks,
        l.drops,
        l.mean_queue_bytes,
        f.bytes_delivered as f64 * 8.0 / f.fct_s.unwrap() / 1e6
    );
    assert!(l.ce_marks > 0);
    assert_eq!(l.drops, 0);
    // The marks keep the average queue near REM's thresholds, far below its 1000 packets.
    assert!(
        l.mean_queue_bytes < 150.0 * 1074.0,
        "{}",
        l.mean_queue_bytes
    );
    // ICP, blind to marks, fills the same queue further.
    let icp = run(&line(
        rem,
        "",
        &consumer("c", "/c/A", "20000pkts", "icp", ""),
    ));
    let q = icp.link("r-p:p->r").unwrap();
    assert!(
        q.mean_queue_bytes > l.mean_queue_bytes,
        "{}",
        q.mean_queue_bytes
    );
}

#[test]
fn a_rem_queue_is_only_for_ndn_scenarios() {
    let e = error(&format!(
        "{}\n[[flows]]\nfrom = \"c\"\nto = \"p\"\n",
        line(
            "queue = { type = \"rem\", size = \"100pkts\", min_th = \"5pkts\", max_th = \"15pkts\" }",
            "",
            ""
        )
    ));
    assert!(
        e.contains("links[1].queue.type: a \"rem\" queue marks NDN Data"),
        "{e}"
    );
}

/// The PTP paper's diamond (case I of `ptp-diamond`: 5 ms everywhere, max flow 9 Mb/s) with
/// its explicit FIB (2 → 3, 4, 5; 3 → 4, 5; 4, 5 → 6) and `ndn`.
fn diamond(ndn: &str, flows: &str) -> String {
    let mut links = String::new();
    for (a, b, rate) in [
        ("1", "2", "20Mbps"),
        ("2", "3", "3Mbps"),
        ("2", "4", "1Mbps"),
        ("2", "5", "5Mbps"),
        ("3", "4", "2Mbps"),
        ("3", "5", "1Mbps"),
        ("4", "6", "10Mbps"),
        ("5", "6", "10Mbps"),
        ("6", "7", "20Mbps"),
    ] {
        links += &link(a, b, rate, "5ms", "");
    }
    let mut fib = String::new();
    for (node, next) in [
        ("1", "\"2\""),
        ("2", "\"3\", \"4\", \"5\""),
        ("3", "\"4\", \"5\""),
        ("4", "\"6\""),
        ("5", "\"6\""),
        ("6", "\"7\""),
    ] {
        fib += &format!("[[ndn.fib]]\nnode = \"{node}\"\nprefix = \"/c\"\nnext = [{next}]\n");
    }
    scenario(
        "30s",
        &["1", "2", "3", "4", "5", "6", "7"],
        &links,
        &format!(
            "routing = \"explicit\"\n{ndn}\n{}{fib}",
            producer("7", "/c")
        ),
        flows,
    )
}

#[test]
fn mmtp_over_ndn_completes_on_the_diamond_with_a_subflow_per_labelled_route() {
    let r = run(&diamond(
        "label = \"branching-postfix\"\nstrategy = \"equal-weight\"",
        &consumer("1", "/c/A", "4000pkts", "mmtp", ""),
    ));
    let f = r.flow("flow0").unwrap();
    assert_eq!(f.completed, Some(true), "{f:?}");
    let t = r.ndn_paths.as_ref().unwrap();
    let (Column::Str(tags), Column::Str(nodes), Column::U64(bytes)) = (
        column(t, "tag"),
        column(t, "nodes"),
        column(t, "payload_bytes"),
    ) else {
        panic!()
    };
    println!("subflows: {tags:?}\n{nodes:?}\n{bytes:?}");
    // Subflow 0 is unsteered; the branching nodes 2 and 3 label the four published routes.
    assert_eq!(tags[0], "");
    let mut routes: Vec<&str> = nodes[1..].iter().map(String::as_str).collect();
    routes.sort_unstable();
    assert_eq!(
        routes,
        ["1>2>3>4>6>7", "1>2>3>5>6>7", "1>2>4>6>7", "1>2>5>6>7"]
    );
    assert!(bytes[1..].iter().all(|&b| b > 0), "{bytes:?}");
    assert_eq!(bytes.iter().sum::<u64>(), 4000 * 1024);
    // Labels cost bytes; node 1 sends steered Interests, node 2 labelled Data.
    assert!(node_u64(&r, "1", "route_info_bytes") > 0);
    assert!(node_u64(&r, "2", "route_info_bytes") > 0);
    println!(
        "mmTP over NDN on the diamond: {:.2} Mb/s",
        f.throughput_bps.unwrap_or(0.0) / 1e6
    );
}

#[test]
fn mmtp_over_ndn_is_refused_without_route_labels_and_its_fields_elsewhere() {
    let e = error(&diamond("", &consumer("1", "/c/A", "40pkts", "mmtp", "")));
    assert!(
        e.contains("flows[0].transport: mmTP over NDN needs the branching routers' route labels"),
        "{e}"
    );
    let e = error(&diamond(
        "",
        &consumer("1", "/c/A", "40pkts", "ptp", "cc = \"lia\""),
    ));
    assert!(
        e.contains("flows[0].cc: for transport = \"mmtp\" consumers, not \"ptp\" ones"),
        "{e}"
    );
}

/// The thesis's caching weakness of mmTP over NDN (§6.3): on the tree with node 0 behind
/// node 1 and a store at node 1, a second consumer at 0 of the content a first one fetched
/// finds it all in the store with PTP, whose names are the content's, and only the part
/// fetched on the same route with mmTP, whose Data names carry their route labels.
#[test]
fn route_labels_keep_a_second_mmtp_consumer_from_the_store_between_branching_and_receiver() {
    let hits = |transport: &str, ndn: &str| {
        let flows = consumer("0", "/c/A", "5000pkts", transport, "id = \"a\"")
            + &consumer(
                "0",
                "/c/A",
                "5000pkts",
                transport,
                "id = \"b\"\nstart = \"15s\"",
            );
        let text = tree(
            &format!("{ndn}\n[[ndn.cs]]\nnode = \"1\"\ncapacity = 20000\n"),
            &flows,
        )
        .replace("routers = [\"1\"", "routers = [\"0\", \"1\"")
        .replace("[ndn]", &(link("0", "1", "100Mbps", "5ms", "") + "[ndn]"));
        let r = run(&text);
        for id in ["a", "b"] {
            let f = r.flow(id).unwrap();
            assert_eq!(f.completed, Some(true), "{transport} {f:?}");
        }
        node_u64(&r, "1", "cs_hits")
    };
    let ptp = hits("ptp", "");
    let mmtp = hits(
        "mmtp",
        "label = \"branching-postfix\"\nstrategy = \"equal-weight\"",
    );
    println!("node 1's store answered {ptp} Interests with PTP, {mmtp} with mmTP over NDN");
    assert!(ptp >= 4750, "{ptp}");
    assert!(mmtp < 3750, "{mmtp}");
}

#[test]
fn raaqm_runs_with_the_ndnsim_or_hicn_constants() {
    let flows = consumer("c", "/c/A", "1000000pkts", "raaqm", "");
    let ndnsim = run(&line("", "", &flows));
    let hicn = run(&line("", "raaqm = \"hicn\"\n", &flows));
    let (a, b) = (
        ndnsim.flow("flow0").unwrap().throughput_bps.unwrap(),
        hicn.flow("flow0").unwrap().throughput_bps.unwrap(),
    );
    println!(
        "RAAQM: {:.2} Mb/s (ndnSIM's constants), {:.2} Mb/s (hicn's)",
        a / 1e6,
        b / 1e6
    );
    assert_ne!(a, b, "the variant changes the run");
    assert!(error(&line("", "raaqm = \"cisco\"\n", &flows)).contains("ndn.raaqm"));
}
