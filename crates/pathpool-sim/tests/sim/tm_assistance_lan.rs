//! The `tm-assistance-lan` reproduction's scenario (thesis E5a/E5b) runs mmTP downloads: S1
//! pulls from publishers P1 and P2 over the topology manager's paths, in the groups it
//! assigns, and NMCC couples exactly the subflows of one group.

use pathpool_sim::{LoadedScenario, Results};

const SCENARIO: &str = include_str!("../../../../scenarios/reproductions/tm-assistance-lan.toml");

/// The first 60 s of the scenario (measured from 30 s), against one single-flow download
/// S1 <- P1 on path 1, with NMCC's `m` sampled.
fn run(assistance: &str) -> Results {
    let set = |k: &str, v: &str| (k.to_string(), v.to_string());
    let overrides = [
        set("duration", "\"60s\""),
        set("measure.start", "\"30s\""),
        set("measure.trace_cwnd", "true"),
        set("flows.nmcc.tm.assistance", &format!("\"{assistance}\"")),
        set("flows.sp1.count", "1"),
        set("flows.sp2.count", "0"),
    ];
    let loaded = LoadedScenario::from_toml(SCENARIO, "tm-assistance-lan.toml", &overrides)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut sim = loaded.compile(Some(1)).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    sim.results()
}

/// NMCC's friendliness factor m of each of the flow's subflows, over the samples after 10 s.
fn m_values(r: &Results, flow: &str) -> Vec<(u64, f64)> {
    let t = &r.subflow_timeseries;
    let (Some(time), Some(flows), Some(sub), Some(var), Some(value)) = (
        t.f64s("time_s"),
        t.strs("flow"),
        t.u64s("subflow"),
        t.strs("alg_var"),
        t.f64s("alg_value"),
    ) else {
        panic!("subflow_timeseries columns")
    };
    (0..time.len())
        .filter(|&i| time[i] > 10.0 && flows[i] == flow && var[i] == "m")
        .map(|i| (sub[i], value[i]))
        .collect()
}

#[test]
fn the_multisource_transfer_is_an_mmtp_download_in_the_topology_managers_groups() {
    for (assistance, groups) in [("shared-link", [0, 1]), ("none", [0, 0])] {
        let r = run(assistance);
        let f = r.flow("nmcc").expect("the multisource download");
        assert_eq!(f.kind, "mmtp", "{assistance}");
        assert_eq!(f.from, "p1,p2", "{assistance}: both publishers");
        assert_eq!(f.cc.as_deref(), Some("nmcc"), "{assistance}");
        let subflows: Vec<(&str, u32)> = r
            .subflows
            .iter()
            .filter(|s| s.flow == "nmcc")
            .map(|s| (s.path.as_str(), s.group))
            .collect();
        assert_eq!(
            subflows,
            vec![("p1>qa>s1", groups[0]), ("p2>qb>s1", groups[1])],
            "{assistance}: one disjoint path per publisher, in the TM's groups"
        );
        // The competitor is a single-flow mmTP download on path 1.
        let sp = r.flow("sp1").expect("the single-flow download");
        assert_eq!(sp.kind, "mmtp");
        let sp_paths: Vec<&str> = r
            .subflows
            .iter()
            .filter(|s| s.flow == "sp1")
            .map(|s| s.path.as_str())
            .collect();
        assert_eq!(sp_paths, vec!["p1>qa>s1"]);
        // Both publishers deliver.
        for s in r.subflows.iter().filter(|s| s.flow == "nmcc") {
            assert!(
                s.throughput_bps.unwrap_or(0.0) > 5e6,
                "{assistance}: {} carries {:?} b/s",
                s.path,
                s.throughput_bps
            );
        }
        // The groups reach the controller: a group of one subflow is Reno (m = 1); one group
        // of two equal paths normalises by m > 1 (√2 when both windows are equal).
        let m = m_values(&r, "nmcc");
        assert!(!m.is_empty(), "{assistance}: m is sampled");
        let largest = m.iter().map(|&(_, v)| v).fold(0.0, f64::max);
        if assistance == "none" {
            assert!(
                largest > 1.2,
                "one group of two: m reaches {largest}, not above 1.2"
            );
        } else {
            assert!(
                m.iter().all(|&(_, v)| (v - 1.0).abs() < 1e-9),
                "groups of one: m stays 1, reaches {largest}"
            );
        }
    }
}
