#!/usr/bin/env bash
# What the search for nested projects (decision 0035) adds to a start-up, timed as a user times
# it: hyperfine on `cordon run -- true` in a workspace of about 100,000 files and 6,000
# directories (build-tree-like: 20 x 15 x 20 directories of 17 files), served and one-shot, with
# the search off (nested_project_depth 0) and at its default depth, then with three nested
# repositories (whose placeholders are the cost that remains).
# Usage: bench/nested_projects.sh [DIR]   (DIR: where the workspace goes; not below /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(realpath -m "${1:-build/release/bench-nested}")
runs=${RUNS:-60}
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target cordon cordon-bwrap-exec cordon-init >/dev/null
cordon=$PWD/build/release/src/cli/cordon

ws=$root/ws
if [ ! -e "$ws/.complete" ]; then
  rm -rf "$ws"
  python3 - "$ws" <<'EOF'
import os, sys
ws = sys.argv[1]
for a in range(20):
    for b in range(15):
        for c in range(20):
            d = f"{ws}/p{a}/m{b}/d{c}"
            os.makedirs(d)
            for f in range(17):
                open(f"{d}/f{f}.js", "w").close()
open(f"{ws}/.complete", "w").close()
EOF
fi
rm -rf "$ws/p1/.git" "$ws/p2/m1/.git" "$ws/p3/.git"
echo "workspace: $ws ($(find "$ws" -type f | wc -l) files, $(find "$ws" -type d | wc -l) directories)"

conf=$root/conf
mkdir -p "$conf"
echo '{"sandbox": {"nested_project_depth": 0}}' >"$conf/depth0.json"
echo '{"sandbox": {"nested_project_depth": 2}}' >"$conf/depth2.json"

. bench/run_server.sh
start_run_server "$root" "$cordon" "rm -rf '$ws/p1/.git' '$ws/p2/m1/.git' '$ws/p3/.git'"

cd "$ws"
served() { echo "env CORDON_RUN_SERVER=use $cordon --config $conf/$1.json run -- true"; }
oneshot() { echo "$cordon --config $conf/$1.json run --no-server -- true"; }
for c in depth0 depth2; do $(served $c) && $(oneshot $c); done  # warm: sessions and caches

hyperfine -N --warmup 10 --runs "$runs" --export-markdown "$root/unchanged.md" \
  -n "served, search off" "$(served depth0)" \
  -n "served, depth 2" "$(served depth2)" \
  -n "one-shot, search off" "$(oneshot depth0)" \
  -n "one-shot, depth 2" "$(oneshot depth2)"

mkdir -p "$ws/p1/.git" "$ws/p2/m1/.git" "$ws/p3/.git"
hyperfine -N --warmup 10 --runs "$runs" --export-markdown "$root/nested.md" \
  -n "served, search off, 3 repositories" "$(served depth0)" \
  -n "served, depth 2, 3 repositories" "$(served depth2)"
cat "$root/unchanged.md" "$root/nested.md"
