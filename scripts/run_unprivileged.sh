#!/usr/bin/env bash
# Runs the kernel tests as an unprivileged user (created if missing), the way most users run
# cordon. Must be started as root. The binaries are copied to a world-readable directory so the
# build tree's location and permissions do not matter.
set -euo pipefail
build=${1:?usage: run_unprivileged.sh BUILD_DIR}
user=cordon-test

if ! id -u "$user" >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
fi

stage=$(mktemp -d /tmp/cordon-unpriv.XXXXXX)
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
cp "$build/tests/kernel/kernel_tests" "$build/tests/unit/linux/linux_sandbox_tests" \
  "$build/tests/probe/cordon_probe" "$stage/"
home="$stage/home"
mkdir -p "$home" && chown "$user" "$home"

cd "$stage"
for suite in kernel_tests linux_sandbox_tests; do
  echo "-- $suite as $user"
  runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" \
    CORDON_PROBE="$stage/cordon_probe" CORDON_TEST_MUST_WORK="${CORDON_TEST_MUST_WORK:-1}" \
    "$stage/$suite" --gtest_brief=1
done
