#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (one per parser of pathpool-wire) for a bounded time each
# and prints a summary line per target (issue 5: "a fuzz target per parser runs in CI for a
# bounded time").
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 20 s, every target)
#
# Needs cargo-fuzz (installed if missing). Runs on the stable toolchain: `-s none` builds
# libFuzzer's coverage instrumentation without a sanitizer, which needs no -Z flag. The crate
# has no unsafe code, so AddressSanitizer adds little; for an ASan run use
# `RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET` (see docs/decisions.md, D84). The corpus starts
# from the test vectors of docs/wire.md and grows in fuzz/corpus/ (not committed). Exits
# non-zero when a target crashes, whose input libFuzzer leaves in fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
shift || true
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

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

if [ "$#" -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo fuzz list); fi
cargo fuzz build -s none
mkdir -p fuzz/logs
# One target per core at a time: a fuzzer is one CPU-bound process, so on a 2-core machine
# `make test`'s smoke run takes half the wall time for the same time per target.
run_target() {
    local t="$1" secs="$2" log="fuzz/logs/$1.log"
    if ! cargo fuzz run -s none "$t" -- -max_total_time="$secs" >"$log" 2>&1; then
        tail -n 30 "$log"
        echo "fuzz: $t FAILED; the input is in fuzz/artifacts/$t/" >&2
        return 1
    fi
    local runs cov
    runs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
    echo "fuzz: $t ok: $runs(s), $cov"
}
export -f run_target
if ! printf '%s\n' "${targets[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_target "$1" "$2"' _ {} "$secs"; then
    echo "fuzz: a target failed (above)" >&2
    exit 1
fi
