#!/usr/bin/env bash
# The tools' caches kept across commands (decision 0041), timed as a user times them: hyperfine
# of the second `go test` and the second `npm ci` of a small project, bare (the host's own warm
# cache) against `cordon run` (cordon's warm cache), served and one-shot, in one run, with
# --tool-caches off beside them (every command cold, the cost the caches remove).
# Network denied inside (the default): npm installs offline from a tarball cached earlier.
# Usage: bench/tool_caches.sh [DIR]   (DIR: where the projects go; not below /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(realpath -m "${1:-build/release/bench-tool-caches}")
runs=${RUNS:-20}
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target cordon cordon-bwrap-exec cordon-init >/dev/null
cordon=$PWD/build/release/src/cli/cordon

rm -rf "$root"
mkdir -p "$root/home" "$root/go"
export HOME=$root/home
unset XDG_CACHE_HOME GOCACHE GOMODCACHE npm_config_cache

# Go: a package with a few tests that import a little of the standard library.
printf 'module example.com/bench\n\ngo 1.19\n' >"$root/go/go.mod"
cat >"$root/go/bench_test.go" <<'GO'
package bench

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	var v map[string]int
	if err := json.Unmarshal([]byte(`{"a":1}`), &v); err != nil || v["a"] != 1 {
		t.Fatal(err)
	}
}

func TestHTTP(t *testing.T) {
	r := httptest.NewRecorder()
	r.WriteString(strings.Repeat("x", 10))
	if r.Body.Len() != 10 {
		t.Fatal(r.Body.Len())
	}
}
GO

# npm: one dependency from a tarball, locked to the registry npm is configured with.
tests/e2e/toolchains/npm_locked_project.sh "$root/npm" benchdep 'module.exports = 1;'

. bench/run_server.sh
start_run_server "$root" "$cordon"

go_test="env GOTOOLCHAIN=local GOFLAGS=-mod=mod go test ./..."
npm_ci="npm ci --offline --no-audit --no-fund --silent"
served="env CORDON_RUN_SERVER=use $cordon run --"
oneshot="$cordon run --no-server --"
cold="$cordon run --no-server --tool-caches off --"

# Warm every cache first: the host's own (bare) and cordon's.
cd "$root/npm" && npm cache add ./benchdep-1.0.0.tgz >/dev/null && $served npm cache add ./benchdep-1.0.0.tgz >/dev/null
cd "$root/go" && $go_test >/dev/null && $served $go_test >/dev/null

cd "$root/go"
hyperfine -N --warmup 3 --runs "$runs" --export-markdown "$root/go.md" \
  -n "bare go test (warm)" "$go_test" \
  -n "cordon served go test (warm)" "$served $go_test" \
  -n "cordon one-shot go test (warm)" "$oneshot $go_test" \
  -n "cordon, tool caches off (cold)" "$cold $go_test"

cd "$root/npm/app"
hyperfine -N --warmup 3 --runs "$runs" --export-markdown "$root/npm.md" \
  -n "bare npm ci (warm)" "$npm_ci" \
  -n "cordon served npm ci (warm)" "$served $npm_ci" \
  -n "cordon one-shot npm ci (warm)" "$oneshot $npm_ci"
echo "tables: $root/go.md $root/npm.md"
