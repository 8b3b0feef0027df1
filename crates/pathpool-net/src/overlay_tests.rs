use super::*;

const DIAMOND: &str = r#"
rendezvous = "s"
lipsin_seed = 3
tm = { policy = "k-disjoint", k = 2 }

[[nodes]]
id = "p"
addr = "127.0.0.1:7000"
transit = false
[[nodes]]
id = "a"
[[nodes]]
id = "b"
[[nodes]]
id = "s"
transit = false

[[links]]
between = ["p", "a"]
rate = "20Mbps"
delay = "5ms"
[[links]]
between = ["p", "b"]
rate = "20Mbps"
loss = 0.01
[[links]]
between = ["a", "s"]
[[links]]
between = ["b", "s"]
queue = "64KB"
"#;

fn load(text: &str) -> Result<Overlay, OverlayError> {
    Overlay::from_toml(text, "o.toml")
}

fn error(text: &str) -> String {
    load(text).unwrap_err().to_string()
}

#[test]
fn a_diamond_gives_two_disjoint_paths_in_two_groups() {
    let o = load(DIAMOND).unwrap();
    assert_eq!(o.nodes().len(), 4);
    assert_eq!(o.rendezvous(), NodeIx(3));
    let p = o.node("p").unwrap();
    let s = o.node("s").unwrap();
    let set = o.topology_manager().paths(&[p], s).unwrap();
    assert_eq!(set.paths.len(), 2);
    assert_ne!(set.paths[0].group_id, set.paths[1].group_id);
    // A forwarding node's table matches the FIDs the topology manager hands out: the
    // forward FID of each path takes exactly that path's link out of p.
    for path in &set.paths {
        let first = path.forward[0];
        let taken: Vec<EdgeId> = o
            .node_links(p)
            .iter()
            .filter(|l| path.forward_fid.contains(&l.tag))
            .map(|l| l.edge)
            .collect();
        assert_eq!(taken, vec![first]);
    }
    let links = o.node_links(p);
    assert_eq!(links.len(), 2);
    assert_eq!(links[0].emulation.rate, Rate::from_mbps(20));
    assert_eq!(links[0].emulation.delay, Dur::from_ms(5));
    assert_eq!(links[1].emulation.loss, 0.01);
    assert_eq!(o.links()[3].emulation.queue_bytes, 64_000);
    assert_eq!(o.links()[2].emulation.queue_bytes, DEFAULT_QUEUE_BYTES);
}

#[test]
fn a_path_fid_traces_its_route() {
    let o = load(DIAMOND).unwrap();
    let (p, s) = (o.node("p").unwrap(), o.node("s").unwrap());
    let set = o.topology_manager().paths(&[p], s).unwrap();
    let names = |r: Vec<NodeIx>| -> Vec<String> {
        r.iter()
            .map(|n| o.nodes()[n.0 as usize].id.clone())
            .collect()
    };
    let mut routes: Vec<Vec<String>> = set
        .paths
        .iter()
        .map(|path| names(o.route_of(p, s, &path.forward_fid).expect("a route")))
        .collect();
    routes.sort();
    assert_eq!(routes, [["p", "a", "s"], ["p", "b", "s"]]);
    assert_eq!(
        o.route_of(p, s, &Fid::default()),
        None,
        "an empty FID goes nowhere"
    );
}

#[test]
fn testbed_addresses_skip_the_given_ones() {
    let mut o = load(DIAMOND).unwrap();
    o.assign_addresses("127.0.0.1".parse().unwrap(), 7000);
    let ports: Vec<u16> = o.nodes().iter().map(|n| n.addr.unwrap().port()).collect();
    assert_eq!(ports, vec![7000, 7001, 7002, 7003]);
}

#[test]
fn errors_name_the_place_and_what_is_allowed() {
    assert_eq!(
        error(&DIAMOND.replace("between = [\"a\", \"s\"]", "between = [\"a\", \"x\"]")),
        "o.toml:27:17: links[2].between[1]: unknown node \"x\"; nodes are p, a, b, s"
    );
    assert_eq!(
        error(&DIAMOND.replace("loss = 0.01", "loss = 2.0")),
        "o.toml:25:8: links[1].loss: 2 is not a probability in [0, 1]"
    );
    assert_eq!(
        error(&DIAMOND.replace("id = \"b\"", "id = \"a\"")),
        "o.toml:13:6: nodes[2].id: \"a\" is used by an earlier node"
    );
    assert_eq!(
        error(&DIAMOND.replace("between = [\"b\", \"s\"]", "between = [\"s\", \"a\"]")),
        "o.toml:29:11: links[3].between: links[2] already joins these nodes"
    );
    assert_eq!(
        error(&DIAMOND.replace("between = [\"b\", \"s\"]", "between = [\"b\", \"b\"]")),
        "o.toml:29:11: links[3].between: a link joins two different nodes"
    );
    assert_eq!(
        error(&DIAMOND.replace("k = 2", "k = 9")),
        "o.toml:4:35: tm.k: must be between 1 and 8"
    );
    assert_eq!(
        error(&DIAMOND.replace("rendezvous = \"s\"", "rendezvous = \"z\"")),
        "o.toml:2:14: rendezvous: unknown node \"z\"; nodes are p, a, b, s"
    );
    assert_eq!(
        error(&DIAMOND.replace("between = [\"b\", \"s\"]", "between = [\"b\", \"ss\"]")),
        "o.toml:29:17: links[3].between[1]: unknown node \"ss\" (did you mean \"s\"?); \
         nodes are p, a, b, s"
    );
    let typo = error(&DIAMOND.replace("delay = \"5ms\"", "dleay = \"5ms\""));
    assert!(
        typo.starts_with("o.toml:21:9: links[0].dleay: unknown field (did you mean `delay`?)"),
        "{typo}"
    );
    let bad_rate = error(&DIAMOND.replace("rate = \"20Mbps\"\ndelay", "rate = \"fast\"\ndelay"));
    assert!(
        bad_rate.starts_with("o.toml:20:8: links[0].rate: \"fast\": no number found"),
        "{bad_rate}"
    );
    let dup_addr = error(&DIAMOND.replace("id = \"a\"", "id = \"a\"\naddr = \"127.0.0.1:7000\""));
    assert_eq!(
        dup_addr,
        "o.toml:12:8: nodes[1].addr: 127.0.0.1:7000 is already the address of \"p\""
    );
    assert_eq!(
        error(&DIAMOND.replace(
            "id = \"s\"\ntransit",
            "id = \"s\"\ncache = \"1MB\"\ntransit"
        )),
        "o.toml:16:9: nodes[3].cache: only forwarding nodes cache (this node has transit = false)"
    );
    assert_eq!(
        error(&DIAMOND.replace("id = \"b\"", "id = \"b\"\ncache = \"0B\"")),
        "o.toml:14:9: nodes[2].cache: must be positive, e.g. \"64MB\""
    );
    let cached = load(&DIAMOND.replace("id = \"b\"", "id = \"b\"\ncache = \"2MB\"")).unwrap();
    let caches: Vec<_> = cached.nodes().iter().map(|n| n.cache_bytes).collect();
    assert_eq!(caches, [None, None, Some(2_000_000), None]);
}
