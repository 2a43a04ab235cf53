#!/usr/bin/env bash
# Builds cordon and runs the whole test suite: format check, unit, kernel (as root and as an
# unprivileged user when run as root), end-to-end, and bounded fuzzing. Exits non-zero when
# anything fails. This is the README's test command and what CI (.ci/run) calls.
#
#   scripts/test.sh              everything
#   CORDON_FUZZ_SECONDS=0 ...    skip fuzzing
#   CORDON_ASAN=0 ...            skip the ASan + UBSan build and its unit and kernel tests
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/setup.sh
# The toolchains the end-to-end toolchain test builds with (Go, cargo, pytest).
bash scripts/setup_toolchains.sh

step() { printf '\n== %s\n' "$*"; }

step "format (clang-format --dry-run)"
mapfile -t sources < <(git ls-files '*.cc' '*.h' 2>/dev/null || find src include tests bench fuzz -name '*.cc' -o -name '*.h')
clang-format --dry-run -Werror "${sources[@]}"

step "MCP end-to-end test dependencies (npm ci): the SDK and the agents' real clients"
bash tests/e2e/mcp/setup.sh >/dev/null
bash tests/e2e/clients/setup.sh >/dev/null
if [ "$(id -u)" -eq 0 ]; then
  step "container runtime for the podman end-to-end test (apt)"
  bash tests/e2e/container/setup.sh
fi

step "build (preset dev)"
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$(nproc)"

# The machine has every kernel feature cordon uses: a missing one is a failure, not a skip.
export CORDON_TEST_MUST_WORK=${CORDON_TEST_MUST_WORK:-1}

step "unit, kernel, escape, fault and end-to-end tests (as $(id -un))"
status=0
ctest --preset dev --output-on-failure -j "$(nproc)" || status=$?
# The escape suite's verdict, also when everything passed (ctest shows output only on failure).
grep -h -A1 '^escapes:' build/dev/Testing/Temporary/LastTest.log || true
[ "$status" -eq 0 ] || exit "$status"

if [ "$(id -u)" -eq 0 ]; then
  step "kernel, escape and fault tests as an unprivileged user"
  bash scripts/run_unprivileged.sh build/dev
  step "Debian packages: contents, lintian, install, run, remove"
  bash tests/consumer/deb_test.sh build/dev
fi

# ASan + UBSan: the unit and kernel tests again, in the sanitizer build (e2e and fuzzing are
# left out to keep CI time reasonable; the fuzz targets have their own sanitizers). Any leak,
# out-of-bounds access or undefined behaviour fails the run. CORDON_ASAN=0 skips it.
if [ "${CORDON_ASAN:-1}" != 0 ]; then
  step "build (preset asan: ASan + UBSan; unit and kernel test binaries only)"
  cmake --preset asan >/dev/null
  # The GoogleTest binaries of tests/unit and tests/kernel, the probe they run in the sandbox,
  # the CLI (the cordon-in-cordon kernel test) and its front (a unit test checks the file), as
  # far as this platform defines them (target names may hold a '-').
  defined=$(cmake --build --preset asan --target help | sed -n 's/^\([A-Za-z0-9_-]*\): .*/\1/p' | sort -u)
  wanted=$( (grep -rhoE 'cordon_test\([a-z_]+' tests/unit tests/kernel --include=CMakeLists.txt |
    sed 's/cordon_test(//'; printf 'cordon_probe\ncordon\ncordon-front\n') | sort -u)
  mapfile -t asan_targets < <(comm -12 <(echo "$defined") <(echo "$wanted"))
  cmake --build --preset asan -j "$(nproc)" --target "${asan_targets[@]}"
  # One path and backend of the kernel suite (the library's, native); the server, MCP and
  # bubblewrap passes run above.
  step "unit and kernel tests under ASan + UBSan"
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build/asan -L 'unit|kernel' -E '^(server|mcp|bwrap)\.' --output-on-failure \
    -j "$(nproc)"
fi

fuzz_seconds=${CORDON_FUZZ_SECONDS:-20}
if [ "$fuzz_seconds" -gt 0 ]; then
  step "fuzzing (${fuzz_seconds}s per target)"
  bash scripts/fuzz.sh "$fuzz_seconds"
fi

step "all tests passed"
