#!/usr/bin/env bash
# What the write observer (decision 0048, sandbox.explain_file_denials) costs, timed as a user
# times it: hyperfine on a clean `make -j` of a C project of 2,000 files, a loop of 200
# `git status` in one command, and `cordon run -- true`, each with the observer on (the default)
# and off, beside the same work without cordon and under bubblewrap alone. Budget: 3 %.
# With PAIRS=N, only the build, on and off in N alternating pairs (on-off, off-on, ...; one
# hyperfine run each): the ratio of each pair cancels the drift of a shared machine, and its
# mean with a 95 % interval is printed. Budget: 3 %.
# Usage: bench/file_denials.sh [DIR]   (DIR: where the project goes; not below /tmp or /var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(realpath -m "${1:-build/release/bench-file-denials}")
case "$root" in /tmp/* | /var/tmp/*) echo "file_denials.sh: $root is below a private tmp" >&2; exit 2 ;; esac
runs=${RUNS:-5}
files=${FILES:-2000}
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target cordon cordon-front cordon-bwrap-exec cordon-init \
  >/dev/null
cordon=$PWD/build/release/src/front/cordon

proj=$root/proj
rm -rf "$root"
mkdir -p "$proj/src" "$root/conf"
for ((i = 0; i < files; i++)); do
  printf '#include <stdio.h>\nint f%d(int x) { return x * %d + printf("%%d", x); }\n' "$i" "$i" \
    >"$proj/src/f$i.c"
done
cat >"$proj/Makefile" <<'MAKE'
SRC := $(wildcard src/*.c)
OBJ := $(SRC:src/%.c=obj/%.o)
all: lib.a
obj/%.o: src/%.c | obj
	$(CC) -O0 -c $< -o $@
obj:
	mkdir -p obj
lib.a: $(OBJ)
	ar rcs $@ $^
clean:
	rm -rf obj lib.a
.PHONY: all clean
MAKE
git -C "$proj" -c init.defaultBranch=main init -q
git -C "$proj" add -A
git -C "$proj" -c user.name=b -c user.email=b@example.invalid commit -qm init
echo '{}' >"$root/conf/on.json"
echo '{"sandbox": {"explain_file_denials": false}}' >"$root/conf/off.json"

. bench/run_server.sh
start_run_server "$root" "$cordon"
cd "$proj"
jobs=$(nproc)
run() { echo "$cordon --config $root/conf/$1.json run -- $2"; }
bw="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $proj $proj --unshare-all"
bw+=" --die-with-parent --new-session"
# Both settings must report what they claim before their cost counts.
planted=$($cordon --config "$root/conf/on.json" run --json -- sh -c 'echo x > .git/planted' || true)
if ! grep -q '"layer": *"mount view"' <<<"$planted"; then
  echo "file_denials.sh: the observer reported no denial for a write into .git" >&2
  exit 1
fi

if [ "${PAIRS:-0}" -gt 0 ]; then
  make -s clean && $(run on "make -s -j$jobs") >/dev/null # warm the page cache and the server
  for ((i = 0; i < PAIRS; i++)); do
    order=(on off)
    [ $((i % 2)) -eq 1 ] && order=(off on)
    for setting in "${order[@]}"; do
      hyperfine -N --runs 1 --prepare "make -s clean" --export-json "$root/pair-$i-$setting.json" \
        -n "make -j$jobs, observer $setting" "$(run "$setting" "make -s -j$jobs")" >/dev/null
    done
  done
  python3 - "$root" "$PAIRS" <<'PY'
import json, math, statistics, sys
root, pairs = sys.argv[1], int(sys.argv[2])
def seconds(i, setting):
    with open(f"{root}/pair-{i}-{setting}.json") as f:
        return json.load(f)["results"][0]["mean"]
on = [seconds(i, "on") for i in range(pairs)]
off = [seconds(i, "off") for i in range(pairs)]
ratios = [a / b for a, b in zip(on, off)]
mean = statistics.mean(ratios)
half = 1.96 * statistics.stdev(ratios) / math.sqrt(pairs) if pairs > 1 else float("nan")
print(f"| pairs | on, mean | off, mean | on/off per pair, mean | 95 % interval |")
print(f"|---|---|---|---|---|")
print(f"| {pairs} | {statistics.mean(on):.2f} s | {statistics.mean(off):.2f} s | "
      f"{mean:.3f} | {mean - half:.3f} – {mean + half:.3f} |")
PY
  exit 0
fi

hyperfine -N --warmup 1 --runs "$runs" --prepare "make -s clean" \
  --export-markdown "$root/build.md" \
  -n "make -j$jobs, observer on (default)" "$(run on "make -s -j$jobs")" \
  -n "make -j$jobs, observer off" "$(run off "make -s -j$jobs")" \
  -n "make -j$jobs, bubblewrap alone" "$bw make -s -j$jobs" \
  -n "make -j$jobs, no sandbox" "make -s -j$jobs"
status_loop='for i in $(seq 200); do git status --porcelain >/dev/null; done'
hyperfine -N --warmup 1 --runs "$runs" --export-markdown "$root/git_status.md" \
  -n "200 git status, observer on (default)" "$(run on "sh -c '$status_loop'")" \
  -n "200 git status, observer off" "$(run off "sh -c '$status_loop'")" \
  -n "200 git status, bubblewrap alone" "$bw sh -c '$status_loop'" \
  -n "200 git status, no sandbox" "sh -c '$status_loop'"
hyperfine -N --warmup 10 --runs $((runs * 12)) --export-markdown "$root/startup.md" \
  -n "served true, observer on (default)" "$(run on true)" \
  -n "served true, observer off" "$(run off true)"
cat "$root/build.md" "$root/git_status.md" "$root/startup.md"
