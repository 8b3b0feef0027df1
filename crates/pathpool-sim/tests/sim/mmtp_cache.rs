//! On-path chunk caches (`[[caches]]`) with mmTP downloads: a later download of the same
//! content is served by the cache at the branching router, a cache repairs losses
//! downstream of it, routes through wires, and the errors.

use crate::common::{error, run};
use pathpool_sim::Results;

/// Publisher `p` behind a 10 Mb/s, 20 ms link to `r1`; `r1`-`r2` 100 Mb/s; subscribers `s1`
/// and `s2` on 100 Mb/s links to `r2`. `s1` downloads `/talk` (8 MB) from 0 s, `s2` the same
/// content from 10 s. `{extra}` is appended.
fn two_viewers(extra: &str) -> String {
    format!(
        r#"
        duration = "30s"
        [nodes]
        hosts = ["p", "s1", "s2"]
        routers = ["r1", "r2"]
        [[links]]
        id = "up"
        between = ["p", "r1"]
        rate = "10Mbps"
        delay = "20ms"
        queue = {{ type = "droptail", size = "60KB" }}
        [[links]]
        id = "core"
        between = ["r1", "r2"]
        rate = "100Mbps"
        delay = "5ms"
        [[links]]
        between = ["r2", "s1"]
        rate = "100Mbps"
        delay = "1ms"
        [[links]]
        between = ["r2", "s2"]
        rate = "100Mbps"
        delay = "1ms"
        [[flows]]
        id = "first"
        kind = "mmtp"
        from = "p"
        to = "s1"
        size = "8MB"
        content = "/talk"
        [[flows]]
        id = "second"
        kind = "mmtp"
        from = "p"
        to = "s2"
        size = "8MB"
        content = "/talk"
        start = "10s"
        {extra}
        "#
    )
}

fn fct(r: &Results, id: &str) -> f64 {
    let f = r.flow(id).unwrap();
    assert_eq!(f.completed, Some(true), "{f:?}");
    assert_eq!(f.bytes_delivered, 8_000_000);
    f.fct_s.unwrap()
}

#[test]
fn a_later_download_of_the_same_content_is_served_by_the_cache() {
    let plain = run(&two_viewers(""));
    let cached = run(&two_viewers(
        r#"[[caches]]
        node = "r2"
        capacity = "20MB""#,
    ));
    // Without a cache both fetch from the 10 Mb/s publisher link: about 7 s each.
    let (a, b) = (fct(&plain, "first"), fct(&plain, "second"));
    assert!(a > 6.0 && b > 6.0, "{a} {b}");
    assert!(plain.caches.is_empty());
    // The first download is not changed by a cache behind it (only its own requests cross
    // r2, and none asks twice for a chunk it already has... except after a loss, which the
    // cache may then repair: it can only be faster).
    let a_cached = fct(&cached, "first");
    assert!(a_cached <= a + 1e-9, "{a_cached} vs {a}");
    // The second is served from r2 at 100 Mb/s.
    let b_cached = fct(&cached, "second");
    assert!(b_cached < b / 4.0, "{b_cached} vs {b}");
    let c = &cached.caches[0];
    assert_eq!(c.node, "r2");
    // Every chunk and the metadata went through r2 once for the first download.
    let chunks = 8_000_000u64.div_ceil(1460);
    assert!(c.stored > chunks, "{c:?}");
    assert!(c.used_bytes <= c.capacity_bytes, "{c:?}");
    assert_eq!(c.evicted, 0, "{c:?}");
    // The second download's every request, and its metadata request, is a hit.
    assert!(c.hits > chunks, "{c:?}");
    assert!(c.payload_bytes_served >= 8_000_000, "{c:?}");
    // The publisher's link carried the content about once, not twice.
    let up = cached
        .links
        .iter()
        .find(|l| l.from == "p" && l.to == "r1")
        .unwrap();
    let up_plain = plain
        .links
        .iter()
        .find(|l| l.from == "p" && l.to == "r1")
        .unwrap();
    assert!(up.tx_bytes < 9_000_000, "{}", up.tx_bytes);
    assert!(up_plain.tx_bytes > 16_000_000, "{}", up_plain.tx_bytes);
}

#[test]
fn a_cache_smaller_than_the_content_keeps_the_most_recent_chunks() {
    let r = run(&two_viewers(
        r#"[[caches]]
        node = "r2"
        capacity = "2MB""#,
    ));
    fct(&r, "first");
    fct(&r, "second");
    let c = &r.caches[0];
    assert!(c.evicted > 0, "{c:?}");
    assert!(c.used_bytes <= 2_000_000, "{c:?}");
    // The second download asks in ascending order, and the oldest chunks are gone by then:
    // every request misses (a cache of a sliding window does not help a later sequential
    // reader, which is why the thesis discusses gap-avoiding policies such as OPC, §10.2).
    let hit_ratio = c.hit_ratio.unwrap();
    assert!(hit_ratio < 0.05, "{c:?}");
}

/// A lossy last hop behind a cache: the retransmitted requests are answered by the cache.
#[test]
fn a_cache_repairs_losses_downstream_of_it() {
    let text = |cache: &str| {
        format!(
            r#"
            duration = "20s"
            [nodes]
            hosts = ["p", "s"]
            routers = ["r"]
            [[links]]
            between = ["p", "r"]
            rate = "20Mbps"
            delay = "30ms"
            [[links]]
            id = "last"
            between = ["r", "s"]
            rate = "20Mbps"
            delay = "2ms"
            loss = 0.01
            [[flows]]
            id = "dl"
            kind = "mmtp"
            from = "p"
            to = "s"
            size = "4MB"
            {cache}
            "#
        )
    };
    let plain = run(&text(""));
    let cached = run(&text(
        r#"[[caches]]
        node = "r"
        capacity = "10MB""#,
    ));
    let f = cached.flow("dl").unwrap();
    assert_eq!(f.completed, Some(true));
    assert_eq!(f.bytes_delivered, 4_000_000);
    let c = &cached.caches[0];
    // About 1% of the chunks and 1% of the requests are lost on the last hop; a request's
    // loss leaves nothing in the cache, a reply's does.
    assert!(c.hits > 10, "{c:?}");
    assert!(c.hits < f.retransmissions + 10, "{c:?} {f:?}");
    assert_eq!(plain.flow("dl").unwrap().completed, Some(true));
}

/// Zero-delay, infinite-rate links (wires) into and out of a cache's router.
#[test]
fn caches_behind_and_before_wires() {
    let r = run(r#"
        duration = "10s"
        [nodes]
        hosts = ["p", "s1", "s2"]
        routers = ["a", "b"]
        [[links]]
        between = ["p", "a"]
        rate = "10Mbps"
        delay = "5ms"
        [[links]]
        between = ["a", "b"]
        rate = "inf"
        delay = "0s"
        [[links]]
        between = ["b", "s1"]
        rate = "inf"
        delay = "0s"
        [[links]]
        between = ["b", "s2"]
        rate = "inf"
        delay = "0s"
        [[caches]]
        node = "b"
        capacity = "5MB"
        [[caches]]
        node = "a"
        capacity = "5MB"
        [[flows]]
        id = "one"
        kind = "mmtp"
        from = "p"
        to = "s1"
        size = "1MB"
        content = "c"
        [[flows]]
        id = "two"
        kind = "mmtp"
        from = "p"
        to = "s2"
        size = "1MB"
        content = "c"
        start = "3s"
        "#);
    for id in ["one", "two"] {
        let f = r.flow(id).unwrap();
        assert_eq!(f.completed, Some(true), "{f:?}");
    }
    // The later download is answered by b, the first cache its requests meet.
    let b = r.caches.iter().find(|c| c.node == "b").unwrap();
    let a = r.caches.iter().find(|c| c.node == "a").unwrap();
    assert!(b.hits > 600, "{b:?}");
    assert_eq!(a.hits, 0, "{a:?}");
    assert!(r.flow("two").unwrap().fct_s.unwrap() < 0.1);
}

#[test]
fn cache_and_content_errors_name_the_field() {
    let base = |extra: &str| two_viewers(extra);
    let e = error(&base(
        r#"[[caches]]
        node = "s1"
        capacity = "1MB""#,
    ));
    assert!(
        e.contains("caches[0].node") && e.contains("is a host"),
        "{e}"
    );
    let e = error(&base(
        r#"[[caches]]
        node = "r9"
        capacity = "1MB""#,
    ));
    assert!(
        e.contains("caches[0].node") && e.contains("unknown node"),
        "{e}"
    );
    let e = error(&base(
        r#"[[caches]]
        node = "r2"
        capacity = "0B""#,
    ));
    assert!(
        e.contains("caches[0].capacity") && e.contains("positive"),
        "{e}"
    );
    let e = error(&base(
        r#"[[caches]]
        node = "r2"
        capacity = "1MB"
        [[caches]]
        node = "r2"
        capacity = "2MB""#,
    ));
    assert!(
        e.contains("caches[1].node") && e.contains("has a cache already"),
        "{e}"
    );
    let e = error(&base(
        r#"[[flows]]
        id = "third"
        kind = "mmtp"
        from = "p"
        to = "s2"
        size = "9MB"
        content = "/talk""#,
    ));
    assert!(
        e.contains("flows[2].content") && e.contains("flows[0]") && e.contains("must agree"),
        "{e}"
    );
    let e = error(&base(
        r#"[[flows]]
        from = "p"
        to = "s2"
        content = "/talk""#,
    ));
    assert!(
        e.contains("flows[2].content") && e.contains("only for kind"),
        "{e}"
    );
}
