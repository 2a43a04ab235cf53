#!/usr/bin/env bash
# Builds the release preset and runs every benchmark, then prints the ratios that
# docs/performance.md records. Usage: bench/run_benchmarks.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
min_time=1
[ "${1:-}" = "--quick" ] && min_time=0.2
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target policy_bench startup_bench session_bench \
  mcp_bench cordon cordon-bwrap-exec cordon-init
out=build/release/bench
"$out/policy_bench" --benchmark_min_time="$min_time" --benchmark_format=json \
  --benchmark_out="$out/policy.json" --benchmark_out_format=json >/dev/null
"$out/startup_bench" --benchmark_min_time="$min_time" --benchmark_out="$out/startup.json" \
  --benchmark_out_format=json >/dev/null
"$out/session_bench" --benchmark_min_time="$min_time" --benchmark_filter='BareForkExec|OneShot|Zygote|Prepared' \
  --benchmark_out="$out/session.json" --benchmark_out_format=json >/dev/null
"$out/mcp_bench" --benchmark_min_time="$min_time" --benchmark_out="$out/mcp.json" \
  --benchmark_out_format=json >/dev/null
python3 bench/ratios.py "$out/policy.json" "$out/startup.json" "$out/session.json" "$out/mcp.json"
