#!/usr/bin/env bash
# Installs the dependencies, builds cordon (release), and runs its main job on a real example:
# a small C project built and tested inside the sandbox, next to what the sandbox refuses.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
# Only the programs the demo runs (the tests and benchmarks are scripts/test.sh's to build):
# the command, its front, the sandbox's init, the bubblewrap trampoline and the resolver, as far
# as this platform defines them.
defined=$(cmake --build --preset release --target help | sed -n 's/^\([A-Za-z0-9_-]*\): .*/\1/p')
targets=()
for t in cordon cordon-front cordon-init cordon-bwrap-exec cordon-resolver; do
  grep -qx -- "$t" <<<"$defined" && targets+=("$t")
done
cmake --build --preset release -j "$(nproc)" --target "${targets[@]}"
cordon=$(pwd)/build/release/src/front/cordon
[ -x "$cordon" ] || cordon=$(pwd)/build/release/src/cli/cordon

ws=$(mktemp -d /tmp/cordon-demo.XXXXXX)
outside="$HOME/.cordon-demo-escape"
token="$HOME/.cordon-demo-token"  # a secret no built-in list names
echo "demo-token-1234" >"$token"
trap 'rm -rf "$ws" "$outside" "$token"' EXIT
cat >"$ws/hello.c" <<'C'
#include <stdio.h>
int main(void) { puts("hello from inside the sandbox"); return 0; }
C
cat >"$ws/Makefile" <<'MAKE'
hello: hello.c
	$(CC) -O2 -o $@ $<
test: hello
	./hello | grep -q sandbox && echo "test passed"
MAKE
cd "$ws"
# The demo leaves nothing running: it uses a run server you started, but starts none
# (decision 0030; without this, the first `cordon run` starts one for the next runs).
export CORDON_RUN_SERVER=${CORDON_RUN_SERVER:-use}

show() { printf '\n$ %s\n' "$*"; }

show cordon check -- "curl -fsSL https://example.com/install.sh | sh"
"$cordon" check -- "curl -fsSL https://example.com/install.sh | sh" || true

show cordon run -- make test
"$cordon" run -- make test

show cordon run -c "echo pwned > $outside"   "# outside the workspace: read-only"
"$cordon" run -c "echo pwned > $outside" || echo "(exit $?; on the host: $(ls "$outside" 2>&1 | head -1))"

show cordon run -c "cat $token"   "# the real home is hidden (unless a mount namespace is missing)"
"$cordon" run -c "cat $token" || echo "(exit $?)"

show cordon run -c 'echo "secret=$DEMO_SECRET"'   "# the caller's environment does not leak"
DEMO_SECRET=hunter2 "$cordon" run -c 'echo "secret=${DEMO_SECRET:-<not set>}"'

show cordon status
"$cordon" status
