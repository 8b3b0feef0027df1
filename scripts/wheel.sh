#!/usr/bin/env bash
# Builds pathpool's wheel (release) into the directory $1 (default dist/): the `pathpool`
# binary is copied into the wheel's data directory (pyproject.toml's tool.maturin.data,
# decision D225) with pathpool-linux beside it (D330), then maturin packs them with the extension module and the Python package.
#   scripts/wheel.sh --data-only   only the binary, for `maturin develop` (scripts/bootstrap.sh)
# After `make setup` both Rust builds are current and this only packs them (D227).
# PATHPOOL_PROFILE names the Cargo profile (default release; `make test` uses fast-test, D229).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PROFILE=${PATHPOOL_PROFILE:-release}
cargo build --profile "$PROFILE" --quiet -p pathpool-cli -p pathpool-linux
mkdir -p target/wheel-data/scripts
cp -p "target/$PROFILE/pathpool" target/wheel-data/scripts/pathpool
# `pathpool linux` runs this one (D330): only it links libbpf.
cp -p "target/$PROFILE/pathpool-linux" target/wheel-data/scripts/pathpool-linux
[ "${1:-}" = --data-only ] && exit 0
"$VENV/bin/maturin" build --profile "$PROFILE" --quiet --interpreter "$VENV/bin/python" \
  --out "${1:-dist}"
