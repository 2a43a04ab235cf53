#!/usr/bin/env bash
# Runs the kernel, escape and fault tests as an unprivileged user (created if missing), the way
# most users run cordon. Must be started as root. The binaries are copied to a world-readable
# directory so the build tree's location and permissions do not matter.
set -euo pipefail
build=${1:?usage: run_unprivileged.sh BUILD_DIR}
user=cordon-test

if ! id -u "$user" >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
fi

# Outside /tmp and /var/tmp: the sandbox replaces both with private ones, and the escape and
# fault suites run helper binaries from here inside it.
stage=$(mktemp -d /var/lib/cordon-unpriv.XXXXXX)
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
cp "$build/tests/kernel/kernel_tests" "$build/tests/unit/linux/linux_sandbox_tests" \
  "$build/tests/probe/cordon_probe" "$build/tests/unit/bwrap/bwrap_sandbox_tests" \
  "$build/src/bwrap/cordon-bwrap-exec" "$build/src/linux/cordon-init" \
  "$build/tests/unit/limits/limits_kernel_tests" \
  "$build/tests/escape/escape_tests" "$build/tests/escape/escape_attack" \
  "$build/tests/fault/fault_tests" "$build/tests/fault/fault_mcp_run" \
  "$build/tests/e2e/cli/cli_e2e_tests" "$(dirname "$0")/../tests/e2e/toolchains/toolchains_test.sh" \
  "$(dirname "$0")/../tests/e2e/toolchains/npm_locked_project.sh" \
  "$(dirname "$0")/../tests/e2e/denials/corpus_test.py" "$(dirname "$0")/../tests/e2e/mcp_run.py" \
  "$stage/"
# `cordon` as installed: the front (decision 0028) in bin/, the full executable with its
# bubblewrap trampoline, init and resolver in libexec/cordon/ (where each finds the next); without
# a front, the full executable as bin/cordon.
mkdir -p "$stage/bin" "$stage/libexec/cordon"
cp "$build/src/cli/cordon" "$build/src/bwrap/cordon-bwrap-exec" "$build/src/linux/cordon-init" \
  "$build/src/resolver/cordon-resolver" "$stage/libexec/cordon/"
if [ -x "$build/src/front/cordon" ]; then
  cp "$build/src/front/cordon" "$stage/bin/cordon"
else
  cp "$build/src/cli/cordon" "$stage/bin/cordon"
fi
chmod 755 "$stage/bin" "$stage/libexec" "$stage/libexec/cordon"
home="$stage/home"
base="$stage/base"  # the escape and fault suites' scratch trees
mkdir -p "$home" "$base" && chown "$user" "$home" "$base"

cd "$stage"

# as_user LABEL [NAME=VALUE...] SUITE [ARGS...]: runs a staged suite as the user with the
# shared environment (and the extra variables), and stops the script when it fails. The escape
# suite's "contained" lines are dropped; its summary and any escape stay.
as_user() {
  local label=$1
  shift
  echo "-- $label as $user"
  set +e
  runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" \
    CORDON_PROBE="$stage/cordon_probe" CORDON_TEST_MUST_WORK="${CORDON_TEST_MUST_WORK:-1}" \
    CORDON_BWRAP_EXEC="$stage/cordon-bwrap-exec" CORDON_INIT="$stage/cordon-init" \
    CORDON_BIN="$stage/bin/cordon" CORDON_ESCAPE_ATTACK="$stage/escape_attack" \
    CORDON_ESCAPE_BASE="$base" CORDON_FAULT_BASE="$base" "$@" --gtest_brief=1 |
    grep -v '^escape case .*: contained$'
  local status=${PIPESTATUS[0]}
  set -e
  [ "$status" -eq 0 ] || { echo "run_unprivileged: $label failed as $user" >&2; exit 1; }
}

for suite in kernel_tests linux_sandbox_tests bwrap_sandbox_tests limits_kernel_tests \
  escape_tests fault_tests; do
  as_user "$suite" "$stage/$suite"
done
# The run server (cordon serve) for this user: its trust checks, a hostile client and a fake
# server inside the sandbox, the tree dying with a killed client, and the served attacks run
# both ways (tests/e2e/cli).
as_user "run server e2e tests" "$stage/cli_e2e_tests" \
  --gtest_filter='ServerTest.*:AutoStartTest.*:ServedEquivalence.*'
# Real toolchains (Debian's C/CMake, Python, Node, Go, Rust) through `cordon run` for this user.
as_user "toolchain e2e test" "$stage/toolchains_test.sh" "$stage/bin/cordon"
# Real tools failing for cordon's reasons, each reported (one-shot, served, cordon mcp).
as_user "denial corpus" "$stage/corpus_test.py" "$stage/bin/cordon"
# Every path a command can take (docs/testing.md): the escape suite with every sandboxed run
# served by a run server of this user, and as a run_command call to a `cordon mcp` of this
# user; the kernel and fault suites through both (CORDON_KERNEL_PATH, CORDON_FAULT_SERVED,
# CORDON_FAULT_PATH).
as_user "escape_tests through the run server" CORDON_ESCAPE_SERVED=1 "$stage/escape_tests"
as_user "escape_tests through cordon mcp" CORDON_ESCAPE_MCP=1 "$stage/escape_tests"
for path in server mcp; do
  as_user "kernel_tests through the $path path" CORDON_KERNEL_PATH="$path" "$stage/kernel_tests"
done
as_user "fault_tests through the run server" CORDON_FAULT_SERVED=1 "$stage/fault_tests"
as_user "fault_tests through cordon mcp" CORDON_FAULT_PATH=mcp "$stage/fault_tests"
# The kernel, escape and fault suites again over the bubblewrap backend (CORDON_TEST_BACKEND).
for suite in kernel_tests escape_tests fault_tests; do
  as_user "$suite over bwrap" CORDON_TEST_BACKEND=bwrap "$stage/$suite"
done
