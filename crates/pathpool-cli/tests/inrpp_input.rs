//! Bad INRPP and RCP input (issue 21, acceptance 4): `pathpool run` exits with status 2
//! before running, writes nothing, and prints one message naming the file, the line and the
//! field.

mod common;

/// Host s to host d through routers a and b (10 Mb/s, 5 ms, drop-tail queues of 50 ms),
/// with `tables` first and `flows` last.
fn scenario(tables: &str, flows: &str) -> String {
    let link = |x: &str, y: &str| {
        format!(
            "[[links]]\nbetween = [\"{x}\", \"{y}\"]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n\
             queue = {{ type = \"droptail\", size = \"50ms\" }}\n"
        )
    };
    format!(
        "duration = \"10s\"\n{tables}\n[nodes]\nhosts = [\"s\", \"d\"]\nrouters = [\"a\", \"b\"]\n\
         {}{}{}{flows}",
        link("s", "a"),
        link("a", "b"),
        link("b", "d")
    )
}

const INRPP_FLOW: &str = "[[flows]]\nfrom = \"s\"\nto = \"d\"\ncc = \"inrpp\"\n";

#[test]
fn bad_inrpp_and_rcp_fields_stop_the_run_with_one_message_naming_the_field() {
    let cases = [
        (
            scenario("[inrpp]\ncache = \"1MB\"\ncache_high = \"2MB\"", INRPP_FLOW),
            "inrpp.cache_high: 2000000B is more than inrpp.cache",
        ),
        (
            scenario("[inrpp]\ncache_low = \"1MB\"", INRPP_FLOW),
            "inrpp.cache_low: 1000000B is not below inrpp.cache_high",
        ),
        (
            scenario("[inrpp]\nqueue_low = \"40ms\"", INRPP_FLOW),
            "is not below inrpp.queue_high",
        ),
        (
            scenario(
                "[inrpp]\nqueue_high = \"60ms\"\nqueue_low = \"10ms\"",
                INRPP_FLOW,
            ),
            "queue holds",
        ),
        (
            scenario(
                "[inrpp]",
                "[[flows]]\nfrom = \"s\"\nto = \"d\"\ncc = \"inrpp\"\n\
                 paths = [[\"s\", \"a\", \"b\", \"d\"], [\"s\", \"a\", \"b\", \"d\"]]\n",
            ),
            "flows[0].cc: \"inrpp\" is a single-path transport",
        ),
        (
            scenario(
                "[inrpp]",
                "[[flows]]\nkind = \"udp-cbr\"\nfrom = \"s\"\nto = \"d\"\nrate = \"1Mbps\"\n\
                 cc = \"inrpp\"\n",
            ),
            "flows[0].cc: not allowed in a kind = \"udp-cbr\" flow",
        ),
        (
            scenario(
                "[rcp]\nalpha = 0.0",
                "[[flows]]\nfrom = \"s\"\nto = \"d\"\ncc = \"rcp\"\n",
            ),
            "rcp.alpha: 0 is not a positive number",
        ),
    ];
    common::each_is_refused("inrpp-input", &cases);
}
