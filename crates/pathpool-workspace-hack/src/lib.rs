//! No code: this crate's dependencies give every build of `make test` one set of features
//! (see its Cargo.toml and docs/decisions.md D350).
