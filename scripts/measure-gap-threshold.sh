#!/usr/bin/env bash
# Measures what `pathpool get --gap-threshold N` does to a download on the shipped overlay
# testbeds (docs/overlay.md, "Loss detection: timer or gap"): for each overlay file, RUNS
# downloads of SIZE_MB from three publishers with the timer only and with the gap threshold,
# alternating so that both see the same machine, then the goodput of each (subscription to
# verified file). Needs an otherwise idle machine: the links are emulated on the wall clock.
#
#   scripts/measure-gap-threshold.sh [RUNS] [SIZE_MB] [GAP]     (defaults 4, 40, 3)
#   OVERLAYS="a.toml b.toml" scripts/measure-gap-threshold.sh     (other overlays: nodes p1-p3 and s)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-4}
SIZE_MB=${2:-40}
GAP=${3:-3}
PATHPOOL=${PATHPOOL:-target/release/pathpool}
[ -x "$PATHPOOL" ] || cargo build --release -p pathpool-cli
work=$(mktemp -d)
trap 'for d in "$work"/tb-*; do [ -f "$d/pids" ] && "$PATHPOOL" testbed down --dir "$d" 2>/dev/null; done; rm -rf "$work"' EXIT
head -c $((SIZE_MB * 1000000)) /dev/urandom >"$work/content"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for overlay in ${OVERLAYS:-scenarios/overlay/diamond.toml scenarios/overlay/diamond-lossy.toml}; do
  bed="$work/tb-$(basename "$overlay" .toml)"
  "$PATHPOOL" testbed up "$overlay" --dir "$bed" \
    --publish "p1=$work/content=/m/x" --publish "p2=$work/content=/m/x" \
    --publish "p3=$work/content=/m/x" 2>/dev/null
  for run in $(seq 1 "$RUNS"); do
    for mode in timer gap; do
      args=()
      [ "$mode" = gap ] && args=(--gap-threshold "$GAP")
      rm -f "$work/copy"
      line=$("$PATHPOOL" testbed get /m/x -o "$work/copy" --node s --dir "$bed" -q \
        "${args[@]}" 2>&1 | head -1)
      mbps=$(sed -E 's/.*, ([0-9.]+) Mb\/s, (verified|BLAKE3) .*/\1/' <<<"$line")
      secs=$(sed -E 's/.* in ([0-9.]+) s,.*/\1/' <<<"$line")
      printf '%-20s run %d  %-5s %6s Mb/s  %6s s\n' "$(basename "$overlay")" "$run" "$mode" \
        "$mbps" "$secs"
    done
  done
  "$PATHPOOL" testbed down --dir "$bed" 2>/dev/null
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
