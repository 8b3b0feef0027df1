//! Traffic generators run end to end (issue 21): flows among host groups, and multipath
//! connections from a multihomed host.

use crate::common::run;

/// Two routers e1–e2 (10 Mb/s, 10 ms), 20 senders on e1 in two groups and 10 receivers on e2
/// in two groups, and 100 kB flows at 5 a second (4 Mb/s offered) for 5 s.
#[test]
fn flows_among_host_groups_run_and_cross_their_hosts_access_links() {
    let mut text = String::from(
        "duration = \"20s\"\n[nodes]\nrouters = [\"e1\", \"e2\"]\n[[links]]\nid = \"core\"\n\
         between = [\"e1\", \"e2\"]\nrate = \"10Mbps\"\ndelay = \"10ms\"\n",
    );
    for (name, count, attach) in [
        ("a", 10, "e1"),
        ("b", 10, "e1"),
        ("x", 5, "e2"),
        ("y", 5, "e2"),
    ] {
        text += &format!(
            "[[host_groups]]\nname = \"{name}\"\ncount = {count}\nattach = \"{attach}\"\n\
             rate = \"100Mbps\"\ndelay = \"1ms\"\n"
        );
    }
    text += "[[traffic]]\nid = \"g\"\nkind = \"poisson\"\nfrom = [\"a\", \"b\"]\n\
             to = [\"x\", \"y\"]\nload = 0.4\nload_link = \"core\"\nstop = \"5s\"\n\
             size = { dist = \"constant\", value = \"100KB\" }\n";
    let r = run(&text);
    assert!(r.flows.len() > 10, "{}", r.flows.len());
    for f in &r.flows {
        assert!(f.fct_s.is_some(), "not complete: {f:?}");
        assert_eq!(f.bytes_delivered, 100_000);
        assert_eq!(f.path, format!("{}>e1>e2>{}", f.from, f.to), "{f:?}");
    }
    // Every byte crossed the core link, in the direction of the data.
    let core = r.links.iter().find(|l| l.id == "core:e1->e2").unwrap();
    assert!(core.tx_bytes >= 100_000 * r.flows.len() as u64, "{core:?}");
    // Each access link carried the data of its host's flows, and only those.
    for host in ["a.0", "b.9", "x.4"] {
        let sent: u64 = r
            .flows
            .iter()
            .filter(|f| f.from == host || f.to == host)
            .map(|f| f.bytes_delivered)
            .sum();
        let access = r
            .links
            .iter()
            .filter(|l| l.name.starts_with(&format!("{host}-")))
            .map(|l| l.tx_bytes)
            .sum::<u64>();
        assert!(access >= sent, "{host}: {access} bytes for {sent}");
        assert_eq!(access == 0, sent == 0, "{host}");
    }
}

/// Issue 21's multihomed experiment in small: an MPTCP sender on n0 and n2 with subflows
/// through each (10 Mb/s links) to a receiver behind n1 (100 Mb/s): every connection has both
/// subflows, and each path carries a fair part of the bytes.
#[test]
fn a_multihomed_generator_makes_connections_that_use_both_paths() {
    let mut text = String::from(
        "duration = \"20s\"\n[nodes]\nhosts = [\"m\", \"r\"]\nrouters = [\"n0\", \"n1\", \"n2\"]\n",
    );
    for (a, b, rate) in [
        ("m", "n0", "10Mbps"),
        ("m", "n2", "10Mbps"),
        ("n0", "n1", "10Mbps"),
        ("n2", "n1", "10Mbps"),
        ("n1", "r", "100Mbps"),
    ] {
        text += &format!(
            "[[links]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{rate}\"\ndelay = \"5ms\"\n"
        );
    }
    text += "[[traffic]]\nkind = \"poisson\"\nfrom = \"m\"\nto = \"r\"\ncc = \"lia\"\n\
             paths = [[\"m\", \"n0\", \"n1\", \"r\"], [\"m\", \"n2\", \"n1\", \"r\"]]\n\
             arrival_rate = 2.0\nstop = \"5s\"\nsize = { dist = \"constant\", value = \"1MB\" }\n";
    let r = run(&text);
    assert!(r.flows.len() > 3, "{}", r.flows.len());
    let mut per_path = [0u64; 2];
    for f in &r.flows {
        assert!(f.fct_s.is_some(), "not complete: {f:?}");
        let subflows: Vec<_> = r.subflows.iter().filter(|s| s.flow == f.id).collect();
        let paths: Vec<&str> = subflows.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(paths, ["m>n0>n1>r", "m>n2>n1>r"], "{f:?}");
        for s in subflows {
            per_path[s.subflow as usize] += s.bytes_acked;
        }
    }
    let total = (per_path[0] + per_path[1]) as f64;
    assert!(
        per_path.iter().all(|&b| b as f64 > 0.25 * total),
        "{per_path:?}"
    );
}
