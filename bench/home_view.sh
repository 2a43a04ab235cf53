#!/usr/bin/env bash
# What the hidden home (the default, decision 0040) costs a start-up, timed as a user times it:
# hyperfine on `cordon run -- true` in a workspace inside a home laid out as people's are (other
# projects, dot-files, XDG directories, tool paths), served and one-shot, with `sandbox.home`
# `hidden` beside `read_only` (the old default), and bubblewrap alone with the host read-only,
# a private /tmp and its namespaces beside them.
# Usage: bench/home_view.sh [DIR]   (DIR: where the home goes; not below /tmp or /var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(realpath -m "${1:-build/release/bench-home}")
case "$root" in /tmp/* | /var/tmp/*) echo "home_view.sh: $root is below a private tmp" >&2; exit 2 ;; esac
runs=${RUNS:-60}
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target cordon cordon-front cordon-bwrap-exec cordon-init \
  >/dev/null
# The front (decision 0028), as installed: it hands a served run over without a C library.
cordon=$PWD/build/release/src/front/cordon

home=$root/home
rm -rf "$home"
mkdir -p "$home/proj/src" "$home/other" "$home/.config/tool" "$home/.local/share/app" \
  "$home/.local/bin" "$home/.cache/pip" "$home/.ssh" "$home/go/bin"
for f in .bash_history .gitconfig .profile .pgpass .vault-token other/.env .config/tool/token.json \
  .local/share/app/db .ssh/id_ed25519 proj/src/main.c proj/README.md; do
  echo "$f" >"$home/$f"
done
conf=$root/conf
mkdir -p "$conf"
echo '{"sandbox": {"home": "hidden"}}' >"$conf/hidden.json"
echo '{"sandbox": {"home": "read_only"}}' >"$conf/read_only.json"

export HOME=$home
. bench/run_server.sh
start_run_server "$root" "$cordon"

cd "$home/proj"
served() { echo "env CORDON_RUN_SERVER=use $cordon --config $conf/$1.json run -- true"; }
oneshot() { echo "$cordon --config $conf/$1.json run --no-server -- true"; }
for c in hidden read_only; do $(served "$c") && $(oneshot "$c"); done  # warm: sessions and caches
# Both views must hold before their cost counts: the secret is hidden in one, readable in the other.
if $cordon --config "$conf/hidden.json" run --no-server -- cat "$home/.pgpass" >/dev/null 2>&1; then
  echo "home_view.sh: the hidden home showed ~/.pgpass" >&2
  exit 1
fi
$cordon --config "$conf/read_only.json" run --no-server -- cat "$home/.pgpass" >/dev/null

bwrap_cmd="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $home/proj $home/proj"
bwrap_cmd+=" --unshare-all --die-with-parent --new-session true"
hyperfine -N --warmup 10 --runs "$runs" --export-markdown "$root/home_view.md" \
  -n "served, home hidden (default)" "$(served hidden)" \
  -n "served, home read_only" "$(served read_only)" \
  -n "one-shot, home hidden (default)" "$(oneshot hidden)" \
  -n "one-shot, home read_only" "$(oneshot read_only)" \
  -n "bubblewrap alone" "$bwrap_cmd"
cat "$root/home_view.md"
