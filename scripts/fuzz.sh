#!/usr/bin/env bash
# Builds the libFuzzer targets (preset "fuzz", clang 16) and runs each on its seed corpus
# (fuzz/corpus/<target>/) with its dictionary (fuzz/<target>.dict). docs/fuzzing.md.
#
#   scripts/fuzz.sh [SECONDS]           each target for SECONDS (default 20; CI)
#   scripts/fuzz.sh merge               minimise each seed corpus in place (after long runs)
#   scripts/fuzz.sh repro TARGET FILE   run one input, e.g. a crash artifact, and show the report
#
# New inputs found during a run stay in build/fuzz/work/<target>/ (not in the repository);
# crash, leak and timeout inputs are written to build/fuzz/artifacts/. Exits non-zero on any
# finding.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
bin=build/fuzz/fuzz
artifacts=build/fuzz/artifacts
mkdir -p "$artifacts"
common=(-rss_limit_mb=2048 -timeout=10 -max_len=8192)

dict_for() { [ -f "fuzz/$1.dict" ] && echo "-dict=fuzz/$1.dict"; }

case "${1:-}" in
  merge)
    for target in "$bin"/*_fuzz; do
      name=$(basename "$target" _fuzz)
      seeds="fuzz/corpus/$name"
      work="build/fuzz/work/$name"
      mkdir -p "$work"
      minimal=$(mktemp -d)
      # Keeps the smallest set of inputs (seeds first, then what runs found) covering the same
      # features, then replaces the seed directory with it.
      "$target" -merge=1 "${common[@]}" $(dict_for "$name") "$minimal" "$seeds" "$work" \
        2>&1 | tail -n 2
      rm -rf "$seeds" && mv "$minimal" "$seeds"
      echo "merge: $name: $(ls "$seeds" | wc -l) inputs"
    done
    ;;
  repro)
    target="$bin/${2:?usage: fuzz.sh repro TARGET FILE}_fuzz"
    "$target" "${common[@]}" "${3:?usage: fuzz.sh repro TARGET FILE}"
    ;;
  *)
    seconds=${1:-20}
    for target in "$bin"/*_fuzz; do
      [ -x "$target" ] || continue
      name=$(basename "$target" _fuzz)
      seeds="fuzz/corpus/$name"
      work="build/fuzz/work/$name"
      mkdir -p "$work"
      echo "fuzz: $name for ${seconds}s ($(ls "$seeds" 2>/dev/null | wc -l) seeds)"
      # New inputs go to $work (first directory); the seeds are only read.
      if ! "$target" -max_total_time="$seconds" "${common[@]}" $(dict_for "$name") \
        -artifact_prefix="$artifacts/$name-" -print_final_stats=1 "$work" "$seeds" \
        >"$work.log" 2>&1; then
        tail -n 60 "$work.log"
        echo "fuzz: $name FAILED; reproduce: scripts/fuzz.sh repro $name $artifacts/$name-*" >&2
        exit 1
      fi
      grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work.log" || tail -n 3 "$work.log"
    done
    ;;
esac
