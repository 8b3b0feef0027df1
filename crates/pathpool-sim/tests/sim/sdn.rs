//! Topological assistance from an SDN controller (thesis §5.1.2, design 3; issue 23 part C):
//! the groups a connection's subflows get from their paths at set-up, and the stale groups
//! a subflow keeps when the network moves it to another path without a new join.
//!
//! Two disjoint 10 Mb/s paths; one NewReno flow on path 1 throughout; a LIA connection with
//! one subflow on each path, grouped by the controller (disjoint: two groups, so each subflow
//! runs alone in its group, as Reno). At 30 s its path-2 subflow ends up on path 1:
//! * moved silently (an SDN rule change): its group stays the stale one, and the connection
//!   takes about two thirds of path 1 from the NewReno flow;
//! * by a new join within the controller's hold: the controller sees both subflows on path 1,
//!   one group, and LIA takes about half;
//! * by a new join after the hold: no status, no overlap information, the host's friendly
//!   default (one group): about half too.

use crate::common::{error, run};
use pathpool_sim::Results;

const PATH1: &str = r#"["s", "a1", "b1", "d"]"#;
const PATH2: &str = r#"["s", "a2", "b2", "d"]"#;

fn scenario(mp: &str) -> String {
    let path = |a: &str, b: &str| {
        format!(
            r#"
            [[links]]
            between = ["s", "{a}"]
            rate = "1Gbps"
            delay = "1ms"
            [[links]]
            between = ["{a}", "{b}"]
            rate = "10Mbps"
            delay = "20ms"
            queue = {{ type = "droptail", size = "100pkts" }}
            [[links]]
            between = ["{b}", "d"]
            rate = "1Gbps"
            delay = "1ms"
            "#
        )
    };
    format!(
        r#"
        duration = "150s"
        [measure]
        start = "50s"
        [nodes]
        hosts = ["s", "d"]
        routers = ["a1", "b1", "a2", "b2"]
        {}{}
        [[flows]]
        id = "tcp"
        from = "s"
        to = "d"
        route = {PATH1}
        [[flows]]
        id = "mp"
        from = "s"
        to = "d"
        cc = "lia"
        {mp}
        "#,
        path("a1", "b1"),
        path("a2", "b2"),
    )
}

/// The connection's part of what path 1 delivered in the measured window (path 2 is empty
/// then).
fn share(r: &Results) -> f64 {
    let bytes = |id: &str| r.flows.iter().find(|f| f.id == id).unwrap().window_bytes as f64;
    bytes("mp") / (bytes("mp") + bytes("tcp"))
}

fn groups(r: &Results) -> Vec<u32> {
    r.subflows
        .iter()
        .filter(|s| s.flow == "mp")
        .map(|s| s.group)
        .collect()
}

#[test]
fn a_silent_move_keeps_a_stale_group_and_a_join_regroups() {
    let moved = run(&scenario(&format!(
        r#"sdn = {{}}
        [[flows.subflows]]
        route = {PATH1}
        [[flows.subflows]]
        route = {PATH2}
        moves = [{{ at = "30s", route = {PATH1} }}]"#
    )));
    // Disjoint at set-up: two groups.
    assert_eq!(groups(&moved), [0, 1]);
    let joined = |hold: &str| {
        run(&scenario(&format!(
            r#"sdn = {{ hold = "{hold}" }}
            [[flows.subflows]]
            route = {PATH1}
            [[flows.subflows]]
            route = {PATH2}
            stop = "30s"
            [[flows.subflows]]
            route = {PATH1}
            start = "30s""#
        )))
    };
    let within = joined("60s");
    let after = joined("2s");
    let (stale, fresh, friendly) = (share(&moved), share(&within), share(&after));
    eprintln!("stale {stale:.3}, join within the hold {fresh:.3}, after it {friendly:.3}");
    // Two uncoupled Reno subflows against one Reno: about 2/3.
    assert!(stale > 0.58, "stale groups: {stale}");
    // LIA with both subflows in one group against one Reno: about 1/2.
    for s in [fresh, friendly] {
        assert!((0.38..=0.58).contains(&s), "one group: {s}");
    }
    assert!(stale - fresh > 0.08, "stale {stale} vs regrouped {fresh}");
}

#[test]
fn sdn_groups_shared_paths_together_and_refuses_what_contradicts_it() {
    let r = run(&scenario(&format!(
        r#"sdn = {{}}
        paths = [{PATH1}, {PATH1}, {PATH2}]"#
    )));
    assert_eq!(groups(&r), [0, 0, 1]);
    let e = error(&scenario(&format!(
        r#"sdn = {{}}
        [[flows.subflows]]
        route = {PATH1}
        group = 1"#
    )));
    assert!(
        e.contains(
            "flows[1].subflows[0].group: the SDN controller (sdn) assigns the coupling groups"
        ),
        "{e}"
    );
    let e = error(&scenario(
        r#"sdn = {}
        route = ["s", "a1", "b1", "d"]"#,
    ));
    assert!(
        e.contains("flows[1].sdn: an SDN controller groups the subflows of a multipath flow"),
        "{e}"
    );
    let e = error(&scenario(
        r#"sdn = {}
        tm = { k = 2 }"#,
    ));
    assert!(
        e.contains("flows[1].sdn: the topology manager (tm) already assigns"),
        "{e}"
    );
    let e = error(&scenario(&format!(
        r#"[[flows.subflows]]
        route = {PATH1}
        moves = [{{ at = "200s", route = {PATH2} }}]"#
    )));
    assert!(
        e.contains("flows[1].subflows[0].moves[0].at: must be after the subflow's start"),
        "{e}"
    );
    let e = error(&scenario(&format!(
        r#"[[flows.subflows]]
        route = {PATH1}
        moves = [{{ at = "10s", route = ["s", "a1", "d"] }}]"#
    )));
    assert!(e.contains("flows[1].subflows[0].moves[0].route"), "{e}");
    let e = error(&scenario(
        r#"sdn = { hold = "2s", keep = true }
        paths = [["s", "a1", "b1", "d"]]"#,
    ));
    assert!(e.contains("keep"), "{e}");
}
