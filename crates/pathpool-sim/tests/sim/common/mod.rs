//! What the scenario tests share: compile a TOML scenario with seed 1 and run it, or expect
//! it to be refused.

#![allow(dead_code, unreachable_pub)]

use pathpool_sim::{LoadedScenario, Results};

/// Runs `toml` with seed 1 to its end; panics with the error if it does not compile.
pub fn run(toml: &str) -> Results {
    run_seeded(toml, 1)
}

/// Runs `toml` with `seed` (which overrides any `seed` in the file, as `pathpool run --seed`
/// does) to its end; panics with the error if it does not compile.
pub fn run_seeded(toml: &str, seed: u64) -> Results {
    let loaded =
        LoadedScenario::from_toml(toml, "test.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = loaded.compile(Some(seed)).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    sim.results()
}

/// The RED queue of the 10 Mb/s bottleneck of [`run_bottleneck`] (spec 003 §5.0 chooses RED
/// for Tse's chapter 4): 100 packets, thresholds 10 and 30, max_p 0.1, w_q 0.002.
pub const RED_100: &str = r#"{ type = "red", size = "100pkts", min_th = "10pkts", max_th = "30pkts", max_p = 0.1, weight = 0.002 }"#;

/// The one route of [`run_bottleneck`]'s topology.
pub const BOTTLENECK_ROUTE: &str = r#"["s", "a", "b", "d"]"#;

/// A 10 Mb/s, 25 ms bottleneck a–b (`queue`, an inline TOML table) between 1 Gb/s, 1 ms access
/// links from host s and to host d, carrying `flows` (TOML `[[flows]]` tables); 120 s measured
/// from 30 s in 1 s intervals, run with `seed`.
pub fn run_bottleneck(queue: &str, flows: &str, seed: u64) -> Results {
    run_seeded(
        &format!(
            r#"
            duration = "120s"
            [measure]
            start = "30s"
            interval = "1s"
            [nodes]
            hosts = ["s", "d"]
            routers = ["a", "b"]
            [[links]]
            between = ["s", "a"]
            rate = "1Gbps"
            delay = "1ms"
            [[links]]
            between = ["a", "b"]
            rate = "10Mbps"
            delay = "25ms"
            queue = {queue}
            [[links]]
            between = ["b", "d"]
            rate = "1Gbps"
            delay = "1ms"
            {flows}
            "#
        ),
        seed,
    )
}

/// A flow table: `id` from s to d under `cc`, with `extra` TOML lines.
pub fn flow_s_to_d(id: &str, cc: &str, extra: &str) -> String {
    format!("[[flows]]\nid = \"{id}\"\nfrom = \"s\"\nto = \"d\"\ncc = \"{cc}\"\n{extra}")
}

/// The error `toml` is refused with; panics if it compiles.
pub fn error(toml: &str) -> String {
    match LoadedScenario::from_toml(toml, "test.toml", &[]).and_then(|l| l.compile(Some(1))) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}
