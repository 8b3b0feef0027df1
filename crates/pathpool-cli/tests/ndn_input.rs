//! Bad NDN input (issue 22, acceptance 5): `pathpool run` exits with status 2 before running,
//! writes nothing, and prints one message naming the file, the line and the field.

mod common;

/// Consumer c, router r, producer p of `/c`, with `ndn` in `[ndn]` and a PTP consumer of
/// `/c/A` whose table gets `flow`.
fn scenario(ndn: &str, flow: &str) -> String {
    format!(
        "duration = \"10s\"\n[nodes]\nrouters = [\"c\", \"r\", \"p\"]\n\
         [[links]]\nbetween = [\"c\", \"r\"]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n\
         [[links]]\nbetween = [\"r\", \"p\"]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n\
         [ndn]\n{ndn}\n[[ndn.producers]]\nnode = \"p\"\nprefix = \"/c\"\n\
         [[flows]]\nkind = \"ndn\"\nto = \"c\"\nsize = \"100pkts\"\n{flow}\n"
    )
}

const CONTENT: &str = "content = \"/c/A\"";

#[test]
fn bad_ndn_fields_stop_the_run_with_one_message_naming_the_field() {
    let cases = [
        (
            scenario("strategy = \"fastest\"", CONTENT),
            "ndn.strategy: unknown value `fastest`; expected one of `best-route`",
        ),
        (
            scenario("[ndn.ptp]\nbeta = 1.5", CONTENT),
            "ndn.ptp.beta: 1.5 is not in (0, 1)",
        ),
        (
            scenario("", &format!("{CONTENT}\nptp = {{ max_paths = 0 }}")),
            "flows[0].ptp.max_paths: must be at least 1",
        ),
        (
            scenario("", "content = \"/d/A\""),
            "flows[0].content: no producer serves /d/A; ndn.producers serve /c",
        ),
        (
            scenario("[[ndn.cs]]\nnode = \"x\"\ncapacity = 10", CONTENT),
            "ndn.cs[0].node: unknown node \"x\"",
        ),
        (
            scenario("", &format!("{CONTENT}\ntcp = {{ mss = \"1000B\" }}")),
            "flows[0].tcp: not allowed in a kind = \"ndn\" flow",
        ),
        (
            scenario("", &format!("{CONTENT}\ncc = \"lia\"")),
            "flows[0].cc: for transport = \"mmtp\" consumers, not \"ptp\" ones",
        ),
    ];
    common::each_is_refused("ndn-input", &cases);
}
