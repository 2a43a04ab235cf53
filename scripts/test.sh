#!/usr/bin/env bash
# Builds cordon and runs the whole test suite: format check, unit, kernel (as root and as an
# unprivileged user when run as root), end-to-end, and bounded fuzzing. Exits non-zero when
# anything fails. This is the README's test command and what CI (.ci/run) calls.
#
#   scripts/test.sh              everything
#   CORDON_FUZZ_SECONDS=0 ...    skip fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/setup.sh

step() { printf '\n== %s\n' "$*"; }

step "format (clang-format --dry-run)"
mapfile -t sources < <(git ls-files '*.cc' '*.h' 2>/dev/null || find src include tests bench fuzz -name '*.cc' -o -name '*.h')
clang-format --dry-run -Werror "${sources[@]}"

step "MCP end-to-end test dependencies (npm ci)"
bash tests/e2e/mcp/setup.sh >/dev/null

step "build (preset dev)"
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$(nproc)"

# The machine has every kernel feature cordon uses: a missing one is a failure, not a skip.
export CORDON_TEST_MUST_WORK=${CORDON_TEST_MUST_WORK:-1}

step "unit and kernel tests (as $(id -un))"
ctest --preset dev --output-on-failure -j "$(nproc)"

if [ "$(id -u)" -eq 0 ]; then
  step "kernel tests as an unprivileged user"
  bash scripts/run_unprivileged.sh build/dev
fi

fuzz_seconds=${CORDON_FUZZ_SECONDS:-20}
if [ "$fuzz_seconds" -gt 0 ]; then
  step "fuzzing (${fuzz_seconds}s per target)"
  bash scripts/fuzz.sh "$fuzz_seconds"
fi

step "all tests passed"
