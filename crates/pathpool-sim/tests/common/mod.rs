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

/// The error `toml` is refused with; panics if it compiles.
pub fn error(toml: &str) -> String {
    match LoadedScenario::from_toml(toml, "test.toml", &[]).and_then(|l| l.compile(Some(1))) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}
