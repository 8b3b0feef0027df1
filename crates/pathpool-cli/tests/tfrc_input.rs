//! Bad TFRC input (issue 20, acceptance 6): `pathpool run` exits with status 2 before
//! running, writes nothing, and prints one message naming the field.

mod common;

/// Two hosts through two routers; `flows` and `extra` appended.
fn scenario(flows: &str, extra: &str) -> String {
    format!(
        r#"duration = "10s"
[nodes]
hosts = ["a", "b"]
routers = ["r1", "r2"]
[[links]]
between = ["a", "r1"]
rate = "10Mbps"
delay = "5ms"
[[links]]
between = ["r1", "b"]
rate = "10Mbps"
delay = "5ms"
[[links]]
between = ["a", "r2"]
rate = "10Mbps"
delay = "5ms"
[[links]]
between = ["r2", "b"]
rate = "10Mbps"
delay = "5ms"
[[flows]]
from = "a"
to = "b"
{flows}
{extra}"#
    )
}

#[test]
fn bad_tfrc_fields_stop_the_run_with_one_message_naming_the_field() {
    let tfrc = "kind = \"tfrc\"\npaths = [[\"a\", \"r1\", \"b\"], [\"a\", \"r2\", \"b\"]]";
    let cases = [
        (
            scenario(tfrc, "[tfrc]\nloss_intervals = 7"),
            "tfrc.loss_intervals: 7: must be an even number of at least 2",
        ),
        (
            scenario(&format!("{tfrc}\ntfrc = {{ nack_expiry_rtts = -1.5 }}"), ""),
            "flows[0].tfrc.nack_expiry_rtts: -1.5: must be a number of RTTs, 0 or more",
        ),
        (
            scenario("tfrc = { multipath = \"bilevel\" }", ""),
            "flows[0].tfrc: not allowed in a kind = \"tcp\" flow (TFRC parameters are for TFRC flows)",
        ),
        (
            scenario("packet_size = \"1000B\"", ""),
            "flows[0].packet_size: not allowed in a kind = \"tcp\" flow",
        ),
    ];
    common::each_is_refused("tfrc-input", &cases);
}
