//! Link failures and the topology manager's re-sent FID sets (thesis §3.1, §4.2): a download
//! whose path fails moves to another path once the manager has heard of it, and back when
//! the link is repaired; without another path it waits for the repair.

use crate::common::{error, run};

/// Publisher `p` and subscriber `s`; two routes between routers `a` and `b`: the direct link
/// `short` (one hop) and `x` (two hops, through router `c`). Every link 10 Mb/s, 5 ms.
/// `{failures}` goes into the `short` link's table; `{rest}` is appended.
fn diamond(failures: &str, rest: &str) -> String {
    format!(
        r#"
        duration = "30s"
        [nodes]
        hosts = ["p", "s"]
        routers = ["a", "b", "c"]
        [[links]]
        between = ["p", "a"]
        rate = "100Mbps"
        delay = "1ms"
        [[links]]
        id = "short"
        between = ["a", "b"]
        rate = "10Mbps"
        delay = "5ms"
        queue = {{ type = "droptail", size = "50KB" }}
        {failures}
        [[links]]
        between = ["a", "c"]
        rate = "10Mbps"
        delay = "5ms"
        queue = {{ type = "droptail", size = "50KB" }}
        [[links]]
        between = ["c", "b"]
        rate = "10Mbps"
        delay = "5ms"
        queue = {{ type = "droptail", size = "50KB" }}
        [[links]]
        between = ["b", "s"]
        rate = "100Mbps"
        delay = "1ms"
        [[flows]]
        id = "dl"
        kind = "mmtp"
        from = "p"
        to = "s"
        size = "15MB"
        tm = {{ k = 1 }}
        {rest}
        "#
    )
}

#[test]
fn a_failed_path_is_replaced_and_restored_by_the_topology_manager() {
    let r = run(&diamond(r#"failures = [{ at = "3s", until = "8s" }]"#, ""));
    let f = r.flow("dl").unwrap();
    assert_eq!(f.completed, Some(true), "{f:?}");
    assert_eq!(f.bytes_delivered, 15_000_000);
    let subs: Vec<_> = r.subflows.iter().filter(|s| s.flow == "dl").collect();
    // The short path, then the detour from 3.1 s, then the short path again from 8.1 s.
    let paths: Vec<&str> = subs.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(paths, ["p>a>b>s", "p>a>c>b>s", "p>a>b>s"], "{subs:?}");
    let starts: Vec<f64> = subs.iter().map(|s| s.start_s).collect();
    let stops: Vec<Option<f64>> = subs.iter().map(|s| s.stop_s).collect();
    assert!((starts[1] - 3.1).abs() < 1e-9, "{starts:?}");
    assert!((starts[2] - 8.1).abs() < 1e-9, "{starts:?}");
    assert_eq!(stops[0], Some(3.1));
    assert_eq!(stops[1], Some(8.1));
    // Each path carried a good part of the content.
    assert!(subs.iter().all(|s| s.bytes_acked > 1_000_000), "{subs:?}");
    // The short link lost packets to the failure, in both directions.
    for dir in ["short:a->b", "short:b->a"] {
        let l = r.links.iter().find(|l| l.id == dir).unwrap();
        assert!(l.failure_losses > 0, "{l:?}");
    }
    // Each move costs the reaction time (0.1 s), the new subflow's slow start, and the
    // requests in flight on the old path: well under the 5 s the link was down.
    let fct = f.fct_s.unwrap();
    let base = run(&diamond("", "")).flow("dl").unwrap().fct_s.unwrap();
    eprintln!("download time {fct:.2} s with the failure, {base:.2} s without");
    assert!(fct > base + 0.2 && fct < base + 2.5, "{fct} vs {base}");
}

#[test]
fn without_another_path_the_download_waits_for_the_repair() {
    // The detour fails too, for good: nothing to re-send, the subflow times out until the
    // short link is back at 8 s.
    let toml = diamond(r#"failures = [{ at = "3s", until = "8s" }]"#, "").replace(
        r#"        [[links]]
        between = ["c", "b"]
        rate = "10Mbps"
        delay = "5ms"
        queue = { type = "droptail", size = "50KB" }"#,
        r#"        [[links]]
        between = ["c", "b"]
        rate = "10Mbps"
        delay = "5ms"
        queue = { type = "droptail", size = "50KB" }
        failures = [{ at = "1s" }]"#,
    );
    assert!(toml.contains(r#"failures = [{ at = "1s" }]"#));
    let r = run(&toml);
    let f = r.flow("dl").unwrap();
    assert_eq!(f.completed, Some(true), "{f:?}");
    let subs: Vec<_> = r.subflows.iter().filter(|s| s.flow == "dl").collect();
    assert_eq!(subs.len(), 1, "{subs:?}");
    assert!(subs[0].timeouts > 0);
    // 12 s of transfer plus the 5 s outage.
    let fct = f.fct_s.unwrap();
    assert!(fct > 17.0, "{fct}");
}

#[test]
fn the_reaction_time_is_a_parameter() {
    let r = run(&diamond(
        r#"failures = [{ at = "3s" }]"#,
        "[routing]\ntm_reaction = \"1s\"",
    ));
    let subs: Vec<_> = r.subflows.iter().filter(|s| s.flow == "dl").collect();
    assert_eq!(subs.len(), 2);
    assert!((subs[1].start_s - 4.0).abs() < 1e-9, "{subs:?}");
}

#[test]
fn a_scenario_without_failures_has_no_failure_losses() {
    let r = run(&diamond("", ""));
    assert!(r.links.iter().all(|l| l.failure_losses == 0));
    let subs: Vec<_> = r.subflows.iter().filter(|s| s.flow == "dl").collect();
    assert_eq!(subs.len(), 1);
}

#[test]
fn failure_errors_name_the_field() {
    let e = error(&diamond(r#"failures = [{ at = "3s", until = "2s" }]"#, ""));
    assert!(
        e.contains("links[1].failures[0].until") && e.contains("after at"),
        "{e}"
    );
    let e = error(&diamond(
        r#"failures = [{ at = "3s", until = "9s" }, { at = "5s" }]"#,
        "",
    ));
    assert!(
        e.contains("links[1].failures[1].at") && e.contains("previous failure"),
        "{e}"
    );
    let e = error(&diamond(r#"failures = [{ at = "3s" }, { at = "5s" }]"#, ""));
    assert!(e.contains("never repaired"), "{e}");
    let e = error(&diamond(r#"failures = [{ at = "40s" }]"#, ""));
    assert!(
        e.contains("links[1].failures[0].at") && e.contains("end of the run"),
        "{e}"
    );
    let e = error(&diamond("", "[routing]\ntm_reaction = \"1s\""));
    assert!(e.contains("routing.tm_reaction"), "{e}");
    let e = error(&diamond(r#"failures = [{ at = "3s", when = "x" }]"#, ""));
    assert!(e.contains("when"), "{e}");
}
