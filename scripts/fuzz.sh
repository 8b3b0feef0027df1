#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (one per parser of pathpool-wire) for a bounded time each
# and prints a summary line per target (issue 5: "a fuzz target per parser runs in CI for a
# bounded time").
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 20 s, every target)
#
# Builds the targets with cargo itself, with the flags `cargo fuzz build -s none` passes
# (D351): libFuzzer's coverage instrumentation without a sanitizer, which needs no -Z flag
# and so runs on the stable toolchain, and no cargo-fuzz to install first (compiling it
# was 31 s of every clean CI run on a 2-vCPU machine). The crate has no unsafe code, so
# AddressSanitizer adds little; for an ASan run install cargo-fuzz and use
# `RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET` (see docs/decisions.md, D84). The corpus starts
# from the test vectors of docs/wire.md and grows in fuzz/corpus/ (not committed). Exits
# non-zero when a target crashes, whose input libFuzzer leaves in fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
shift || true

# Seeds: each vector of docs/wire.md whole (header, packet) and its body (body_NAME).
python3 - <<'PY'
import pathlib, re
doc = pathlib.Path("docs/wire.md").read_text()
for name, block in re.findall(r"# vector (\w+)\n(.*?)```", doc, re.S):
    data = bytes(int(b, 16) for line in block.splitlines() for b in line.split("|")[0].split())
    for target, seed in (("header", data), ("packet", data), ("body_" + name, data[40:])):
        d = pathlib.Path("fuzz/corpus") / target
        d.mkdir(parents=True, exist_ok=True)
        (d / ("vector-" + name)).write_bytes(seed)
PY

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(python3 -c 'import tomllib
for b in tomllib.load(open("fuzz/Cargo.toml", "rb"))["bin"]: print(b["name"])')
fi
# cargo-fuzz's flags for `-s none` in release mode (its src/project.rs): SanitizerCoverage
# with inline 8-bit counters, the PC table, compare tracing and stack depth, which libFuzzer
# reads; `--cfg fuzzing`; branch folding off, so each branch keeps its own counter; debug
# assertions and overflow checks on, as cargo-fuzz's default (no -O); one codegen unit, as
# ThinLTO cannot import across instrumented units. `--target` keeps these flags off build
# scripts and procedural macros.
triple=$(rustc -vV | sed -n 's/^host: //p')
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-sanitizer-coverage-stack-depth \
-Cllvm-args=-simplifycfg-branch-fold-threshold=0 --cfg fuzzing -Cdebug-assertions \
-Ccodegen-units=1" \
  cargo build --manifest-path fuzz/Cargo.toml --release --target "$triple" --bins
export FUZZ_BIN_DIR="fuzz/target/$triple/release"
mkdir -p fuzz/logs
# One target per core at a time: a fuzzer is one CPU-bound process, so on a 2-core machine
# `make test`'s smoke run takes half the wall time for the same time per target.
run_target() {
    local t="$1" secs="$2" log="fuzz/logs/$1.log"
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    if ! "$FUZZ_BIN_DIR/$t" -artifact_prefix="fuzz/artifacts/$t/" -max_total_time="$secs" \
      "fuzz/corpus/$t" >"$log" 2>&1; then
        tail -n 30 "$log"
        echo "fuzz: $t FAILED; the input is in fuzz/artifacts/$t/" >&2
        return 1
    fi
    local runs cov
    runs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
    # A build without the coverage flags would fuzz blind: refuse it rather than pass.
    if [ -z "$cov" ] || [ "$(echo "$cov" | cut -d' ' -f2)" -eq 0 ]; then
        echo "fuzz: $t saw no coverage: is the target built with the coverage flags?" >&2
        return 1
    fi
    echo "fuzz: $t ok: $runs(s), $cov"
}
export -f run_target
if ! printf '%s\n' "${targets[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_target "$1" "$2"' _ {} "$secs"; then
    echo "fuzz: a target failed (above)" >&2
    exit 1
fi
