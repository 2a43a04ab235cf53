#!/usr/bin/env bash
# Real toolchains from Debian's packages (scripts/setup_toolchains.sh) build and test a small
# project each through `cordon run`, unmodified, with the real home hidden (the default) and
# read-only: C with CMake and ctest, Python in a venv with pytest, Node with npm installing a
# local tarball offline, Go, and Rust with cargo. Network denied (the default), one-shot. Then
# the tools' caches kept across commands: a warm second `go test`, an offline `npm ci`, and an
# offline `npm ci` from cordon's cache seeded from the host's own.
# The twin of each: the project's own test reads a secret planted in the caller's home, which
# the hidden home keeps out (and the read-only home shows, so the probe is known to work).
#
#   toolchains_test.sh CORDON     exit 0: all passed; 1: a failure; 77: a toolchain is missing
#                                 (a failure instead when CORDON_TEST_MUST_WORK=1)
set -uo pipefail
cordon=$(realpath "$1")
must_work=${CORDON_TEST_MUST_WORK:-0}

missing=()
for tool in cmake ninja cc python3 node npm go cargo; do
  PATH=/usr/local/bin:/usr/bin:/bin command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ! PATH=/usr/bin:/bin python3 -c 'import pytest' 2>/dev/null; then missing+=(pytest); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "toolchains: missing ${missing[*]} (install with scripts/setup_toolchains.sh)"
  [ "$must_work" = 1 ] && exit 1
  exit 77
fi

# The home and the projects lie outside /tmp and /var/tmp: the sandbox replaces both, so a
# secret planted there would be invisible, not hidden.
base=${CORDON_ESCAPE_BASE:-/var/lib}
work=$(mktemp -d "$base/cordon-toolchains-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
home=$work/home
mkdir -p "$home/other"
echo "SECRET-in-the-home" > "$home/other/.env"

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# run MODE PROJECT COMMAND: the command through cordon in the project, as a user runs it.
run() {
  local mode=$1 project=$2
  shift 2
  (cd "$project" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" LANG=C.UTF-8 \
    XDG_RUNTIME_DIR="$work/no-run-server" CORDON_RUN_SERVER=use \
    "$cordon" run --home "$mode" -- sh -c "$*")
}

# check NAME MODE PROJECT EXPECTED COMMAND: the command exits 0 and prints EXPECTED somewhere;
# with the home hidden the secret never shows, with it read-only it does (the probe works).
check() {
  local name=$1 mode=$2 project=$3 expected=$4 command=$5 out status
  out=$(run "$mode" "$project" "$command" 2>&1)
  status=$?
  if [ $status -ne 0 ]; then
    fail "$name ($mode): exit $status"
    echo "$out" | tail -20
    return
  fi
  case $out in *"$expected"*) ;; *)
    fail "$name ($mode): no \"$expected\" in the output"
    echo "$out" | tail -20
    ;;
  esac
  case $mode in
    hidden) case $out in *SECRET-in-the-home*) fail "$name (hidden): the home's secret was read" ;; esac ;;
    read_only) case $out in *SECRET-in-the-home*) ;; *) fail "$name (read_only): the probe read nothing" ;; esac ;;
  esac
  echo "ok: $name ($mode)"
}

secret=$home/other/.env

# C with CMake and ctest.
c=$work/c && mkdir -p "$c"
cat > "$c/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(hello C)
add_executable(hello hello.c)
enable_testing()
add_test(NAME hello COMMAND hello)
CMAKE
cat > "$c/hello.c" <<CSRC
#include <stdio.h>
int main(void) {
  FILE* f = fopen("$secret", "r");
  char line[64] = "no secret";
  if (f != NULL) { if (fgets(line, sizeof line, f) == NULL) line[0] = 0; fclose(f); }
  printf("hello from C: %s\n", line);
  return 0;
}
CSRC
c_cmd="cmake -S . -B build -G Ninja >/dev/null && cmake --build build >/dev/null && ctest --test-dir build --output-on-failure -V | grep -E 'hello from C|tests passed'"

# Python in a venv (Debian's pytest from the system site packages).
py=$work/py && mkdir -p "$py"
cat > "$py/test_app.py" <<PY
def test_reads():
    try:
        print(open("$secret").read())
    except OSError as e:
        print("no secret:", e.strerror)
PY
py_cmd="/usr/bin/python3 -m venv --system-site-packages .venv && .venv/bin/python -m pytest -q -s -p no:cacheprovider"

# Node: npm installs a local tarball offline and runs the project's test.
node=$work/node && mkdir -p "$node/dep" "$node/app"
cat > "$node/dep/package.json" <<'JSON'
{ "name": "dep", "version": "1.0.0", "main": "index.js" }
JSON
echo 'module.exports = () => "dep loaded";' > "$node/dep/index.js"
cat > "$node/app/package.json" <<'JSON'
{ "name": "app", "version": "1.0.0", "private": true,
  "dependencies": { "dep": "file:../dep-1.0.0.tgz" },
  "scripts": { "test": "node test.js" } }
JSON
cat > "$node/app/test.js" <<JS
const fs = require("fs");
console.log(require("dep")());
try { console.log(fs.readFileSync("$secret", "utf8")); } catch (e) { console.log("no secret:", e.code); }
JS
node_cmd="(cd dep && npm pack --silent >/dev/null && mv dep-1.0.0.tgz ..) && cd app && npm install --offline --no-audit --no-fund >/dev/null && npm test"

# Go: a module with a test, the standard library only.
go=$work/go && mkdir -p "$go"
printf 'module example.com/hello\n\ngo 1.19\n' > "$go/go.mod"
cat > "$go/hello_test.go" <<GO
package hello

import (
	"os"
	"testing"
)

func TestHello(t *testing.T) {
	data, err := os.ReadFile("$secret")
	if err != nil {
		t.Log("no secret:", err)
		return
	}
	t.Log(string(data))
}
GO
# -count=1: run the test in each mode, not a result cached by the other (the tools' caches
# persist, below).
go_cmd="GOTOOLCHAIN=local GOFLAGS=-mod=mod go test -count=1 -v ./..."

# Rust: a cargo project with a test, offline.
rust=$work/rust && mkdir -p "$rust/src"
printf '[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2021"\n' > "$rust/Cargo.toml"
cat > "$rust/src/lib.rs" <<RS
#[test]
fn reads() {
    match std::fs::read_to_string("$secret") {
        Ok(text) => println!("{}", text),
        Err(e) => println!("no secret: {}", e),
    }
}
RS
rust_cmd="cargo test --offline -q -- --nocapture"

for mode in hidden read_only; do
  rm -rf "$c/build" "$py/.venv" "$node/app/node_modules" "$node/app/package-lock.json" \
    "$node/dep-1.0.0.tgz" "$rust/target" "$rust/Cargo.lock"
  check "C with CMake" "$mode" "$c" "100% tests passed" "$c_cmd"
  check "Python venv + pytest" "$mode" "$py" "1 passed" "$py_cmd"
  check "Node + npm" "$mode" "$node" "dep loaded" "$node_cmd"
  check "Go" "$mode" "$go" "ok  	example.com/hello" "$go_cmd"
  check "Rust + cargo" "$mode" "$rust" "test result: ok" "$rust_cmd"
done

# Warm caches across commands (decision 0041): what one command caches, the next one finds in
# the cache cordon keeps for the user (~/.cache/cordon/tool-caches), never in the host's own
# caches. The twin of each: with --tool-caches off the second command starts cold.
caches=$home/.cache/cordon/tool-caches/shared
# run_with FLAGS PROJECT COMMAND: `run` with more cordon flags (the home hidden, the default).
run_with() {
  local flags=$1 project=$2
  shift 2
  # shellcheck disable=SC2086 # FLAGS is a list of words
  (cd "$project" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" LANG=C.UTF-8 \
    XDG_RUNTIME_DIR="$work/no-run-server" CORDON_RUN_SERVER=use \
    "$cordon" run $flags -- sh -c "$*")
}

# Go: the second `go test` of the same code is served from GOCACHE.
warm=$work/warm-go && mkdir -p "$warm"
printf 'module example.com/warm\n\ngo 1.19\n' > "$warm/go.mod"
printf 'package warm\n\nimport "testing"\n\nfunc TestWarm(t *testing.T) {}\n' > "$warm/warm_test.go"
warm_cmd="GOTOOLCHAIN=local GOFLAGS=-mod=mod go test ./..."
for caches_setting in shared off; do
  first=$(run_with "--tool-caches $caches_setting" "$warm" "$warm_cmd" 2>&1)
  second=$(run_with "--tool-caches $caches_setting" "$warm" "$warm_cmd" 2>&1)
  case "$caches_setting:$first:$second" in
    shared:*"(cached)"*:*) fail "Go warm cache: the first run was already cached: $first" ;;
    shared:*:*"ok  	example.com/warm	(cached)"*) echo "ok: Go, second go test served from the tool cache" ;;
    shared:*) fail "Go warm cache: second run not cached: $second" ;;
    off:*:*"(cached)"*) fail "Go with --tool-caches off: the second run was cached: $second" ;;
    off:*:*"ok  	example.com/warm"*) echo "ok: Go with --tool-caches off starts cold" ;;
    *) fail "Go with --tool-caches off: $second" ;;
  esac
done
[ -d "$caches/go-build" ] || fail "Go warm cache: nothing in $caches/go-build"

# npm: a tarball cached by one command installs offline (network denied) in the next, from a
# lockfile naming the registry npm is configured with.
npmw=$work/warm-npm
# npm on the host side gets a home of its own: the test home's caches must stay unwritten.
packer=$work/packer-home && mkdir -p "$packer"
HOME="$packer" "$(dirname "$0")/npm_locked_project.sh" "$npmw" warmdep \
  'module.exports = () => "warmdep loaded";' "node -e \"console.log(require('warmdep')())\""
npm_install="npm ci --offline --no-audit --no-fund >/dev/null 2>&1 && npm test"
run_with "--tool-caches off" "$npmw" "npm cache add ./warmdep-1.0.0.tgz >/dev/null 2>&1" >/dev/null 2>&1
out=$(run_with "--tool-caches off" "$npmw/app" "$npm_install" 2>&1)
case $out in *"warmdep loaded"*) fail "npm with --tool-caches off installed offline: $out" ;;
  *) echo "ok: npm with --tool-caches off: nothing cached for the next command" ;; esac
run_with "" "$npmw" "npm cache add ./warmdep-1.0.0.tgz >/dev/null 2>&1" >/dev/null 2>&1
out=$(run_with "" "$npmw/app" "$npm_install" 2>&1)
case $out in *"warmdep loaded"*) echo "ok: npm installs offline from the tarball an earlier command cached" ;;
  *) fail "npm offline install from the tool cache: $out" ;; esac
[ -d "$caches/npm/_cacache" ] || fail "npm warm cache: nothing in $caches/npm"
# The host's own caches in the home were never written.
for own in .npm .cache/go-build go/pkg; do
  [ -e "$home/$own" ] && fail "the host's own cache $home/$own was written"
done

# Seeding from the host's warm cache (decision 0049): the host's own npm cache has the tarball,
# cordon's does not. Offline under network deny, `npm ci` fails until `cordon cache seed npm`
# copies the host's cache into cordon's; the host's cache is only read.
seeded=$work/seed-home && mkdir -p "$seeded"
(cd "$npmw" && HOME="$seeded" npm cache add ./warmdep-1.0.0.tgz >/dev/null 2>&1) ||
  fail "npm cache add on the host"
host_cache_before=$(find "$seeded/.npm/_cacache" -type f | sort | xargs sha256sum | sha256sum)
seed_run() {
  (cd "$npmw/app" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$seeded" LANG=C.UTF-8 \
    XDG_RUNTIME_DIR="$work/no-run-server" CORDON_RUN_SERVER=use "$cordon" "$@")
}
out=$(seed_run run -- sh -c "$npm_install" 2>&1)
case $out in *"warmdep loaded"*) fail "npm installed offline before the seed: $out" ;;
  *) echo "ok: npm offline install fails while only the host's cache has the tarball" ;; esac
out=$(seed_run cache seed npm 2>&1) || fail "cordon cache seed npm: $out"
case $out in *"npm"*"_cacache: "*" copied"*) ;; *) fail "cordon cache seed npm said: $out" ;; esac
out=$(seed_run run -- sh -c "$npm_install" 2>&1)
case $out in *"warmdep loaded"*) echo "ok: npm installs offline from the cache seeded from the host's" ;;
  *) fail "npm offline install after the seed: $out" ;; esac
[ "$(find "$seeded/.npm/_cacache" -type f | sort | xargs sha256sum | sha256sum)" = "$host_cache_before" ] ||
  fail "the host's npm cache changed"
out=$(seed_run cache seed nosuchtool 2>&1) && fail "cache seed of an unknown tool exited 0"
case $out in *'unknown tool "nosuchtool"'*) echo "ok: cache seed names an unknown tool" ;;
  *) fail "cache seed of an unknown tool said: $out" ;; esac

if [ $failures -gt 0 ]; then
  echo "toolchains: $failures failed"
  exit 1
fi
echo "toolchains: all passed"
