//! Scenario input never panics: any text gives either a simulation or an error.

use pathpool_sim::LoadedScenario;
use proptest::prelude::*;

const VALID: &str = include_str!("../../../../scenarios/dumbbell.toml");

fn load_and_compile(text: &str) {
    if let Ok(l) = LoadedScenario::from_toml(text, "fuzz.toml", &[]) {
        let _ = l.compile(Some(1));
    }
    if let Ok(l) = LoadedScenario::from_json(text, "fuzz.json", &[]) {
        let _ = l.compile(Some(1));
    }
}

/// Values that are each wrong somewhere, or right in unusual ways.
fn odd_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"0s\"".to_string()),
        Just("\"-1ms\"".to_string()),
        Just("\"inf\"".to_string()),
        Just("\"0pkts\"".to_string()),
        Just("\"1e30Gbps\"".to_string()),
        Just("\"99999999999999999999999999ms\"".to_string()),
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("1e308".to_string()),
        Just("nan".to_string()),
        Just("true".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("[\"s1\", \"s1\"]".to_string()),
        "\"[a-z0-9 .]{0,8}\"",
        "[0-9]{1,25}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        load_and_compile(&text);
    }

    /// Replace the value on one line of a valid scenario with something odd.
    #[test]
    fn mutated_scenarios_never_panic(line in 0usize..200, value in odd_value()) {
        let lines: Vec<&str> = VALID.lines().collect();
        let i = line % lines.len();
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        if let Some((key, _)) = lines[i].split_once('=') {
            out[i] = format!("{key}= {value}");
        }
        let text = out.join("\n");
        // Keep the run short if the mutation left the scenario valid.
        let text = text.replace("duration = \"60s\"", "duration = \"1s\"");
        load_and_compile(&text);
    }

    #[test]
    fn overrides_never_panic(key in "[a-z_.0-9]{1,30}", value in "\\PC{0,12}") {
        let _ = LoadedScenario::from_toml(VALID, "fuzz.toml", &[(key, value)]);
    }
}
