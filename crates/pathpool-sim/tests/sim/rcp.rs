//! RCP in the simulator (issue 21): flows paced at the rate the links on their path offer,
//! on the 10 Mb/s, 25 ms bottleneck of the scenario tests, measured from 30 s to 120 s.

use crate::common::{error, flow_s_to_d, run_bottleneck};

const QUEUE: &str = r#"{ type = "droptail", size = "100pkts" }"#;

/// A lone RCP flow takes the bottleneck: R climbs by α of the spare capacity per RTT and
/// settles where α·(C − y) balances β·q/d, a few percent below C (the queue holds at most a
/// packet or two); nothing is dropped or resent.
#[test]
fn a_lone_flow_fills_the_bottleneck_without_loss() {
    let r = run_bottleneck(QUEUE, &flow_s_to_d("r", "rcp", ""), 1);
    let f = &r.flows[0];
    let mbps = f.throughput_bps.unwrap() / 1e6;
    // Payload of 1460-byte segments in 1500 bytes: 9.73 Mb/s at full rate.
    assert!((9.0..=9.74).contains(&mbps), "{mbps} Mb/s");
    assert_eq!((f.retransmissions, f.timeouts), (0, 0), "{f:?}");
    assert!(r.links.iter().all(|l| l.drops == 0), "{:?}", r.links);
}

/// Three RCP flows started together get the same rate: processor sharing.
#[test]
fn flows_on_one_bottleneck_share_it_equally() {
    let flows: String = (1..=3)
        .map(|k| flow_s_to_d(&format!("r{k}"), "rcp", ""))
        .collect();
    let r = run_bottleneck(QUEUE, &flows, 1);
    let rates: Vec<f64> = r
        .flows
        .iter()
        .map(|f| f.throughput_bps.unwrap() / 1e6)
        .collect();
    let total: f64 = rates.iter().sum();
    let jain = total * total / (3.0 * rates.iter().map(|x| x * x).sum::<f64>());
    assert!(jain > 0.999, "{rates:?}");
    // Paced packets of three flows meet in the queue now and then, and each waiting packet
    // is worth q/(α·d) of spare rate: they settle about 10% below C (a lone flow, 3%).
    assert!((8.0..=9.74).contains(&total), "{rates:?}");
}

/// Acceptance 4: bad `[rcp]` values are refused with the field named; `cc = "rcp"` is for
/// single-path TCP flows.
#[test]
fn bad_rcp_input_names_the_field() {
    let scenario = |rcp: &str, flow_extra: &str| {
        format!(
            "duration = \"10s\"\n[rcp]\n{rcp}\n[nodes]\nhosts = [\"s\", \"d\"]\n\
             routers = [\"a\"]\n[[links]]\nbetween = [\"s\", \"a\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n\
             [[links]]\nbetween = [\"a\", \"d\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n{}",
            flow_s_to_d("r", "rcp", flow_extra)
        )
    };
    for (rcp, want) in [
        ("alpha = 0.0", "rcp.alpha: 0 is not a positive number"),
        ("alpha = -1.0", "rcp.alpha: -1 is not a positive number"),
        ("beta = -0.5", "rcp.beta: -0.5 is not a number at least 0"),
        (
            "initial_rate = 1.5",
            "rcp.initial_rate: 1.5 is not a fraction of the link's rate in (0, 1]",
        ),
        ("min_rate = \"0bps\"", "rcp.min_rate: must be a positive"),
        ("interval = \"0s\"", "rcp.interval: must be positive"),
        ("initial_rtt = \"0s\"", "rcp.initial_rtt: must be positive"),
    ] {
        let e = error(&scenario(rcp, ""));
        assert!(e.contains(want), "{rcp}: {e}");
    }
    let e = error(&scenario("", "k_paths = 2"));
    assert!(
        e.contains("flows[0].cc: \"rcp\" is a single-path transport"),
        "{e}"
    );
    let udp = "duration = \"10s\"\n[nodes]\nhosts = [\"s\", \"d\"]\n[[links]]\n\
               between = [\"s\", \"d\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n[[flows]]\nkind = \"udp-cbr\"\n\
               from = \"s\"\nto = \"d\"\nrate = \"1Mbps\"\ncc = \"rcp\"\n";
    let e = error(udp);
    assert!(
        e.contains("flows[0].cc: not allowed in a kind = \"udp-cbr\" flow"),
        "{e}"
    );
}
