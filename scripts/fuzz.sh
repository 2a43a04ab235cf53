#!/usr/bin/env bash
# Builds the libFuzzer targets (preset "fuzz", clang 16) and runs each for a bounded time on
# its seed corpus. Longer runs: scripts/fuzz.sh 3600 (seconds per target).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
for target in build/fuzz/fuzz/*_fuzz; do
  [ -x "$target" ] || continue
  name=$(basename "$target" _fuzz)
  seeds="fuzz/corpus/$name"
  work=$(mktemp -d)
  [ -d "$seeds" ] && cp -r "$seeds/." "$work/"
  echo "fuzz: $name for ${seconds}s"
  "$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    "$work" 2>&1 | tail -n 4
  rm -rf "$work"
done
