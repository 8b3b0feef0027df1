//! Does nothing: it exists so that cargo resolves this crate's build-dependencies, whose
//! features unify the host crates of the workspace's builds (Cargo.toml, D350).

fn main() {}
