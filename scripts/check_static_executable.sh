#!/usr/bin/env bash
# Checks that each executable given is a static position-independent executable (decision
# 0024): ELF type DYN (PIE, so ASLR applies), no program interpreter and no shared library
# needed (nothing is loaded at execve). Fails naming the file and what it found.
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: check_static_executable.sh FILE..." >&2; exit 2; }
status=0
for file in "$@"; do
  if ! header=$(readelf -h "$file" 2>&1); then
    echo "check_static_executable: $file: not readable as ELF: $header" >&2
    status=1
    continue
  fi
  if ! grep -q 'Type:[[:space:]]*DYN' <<<"$header"; then
    echo "check_static_executable: $file: not position-independent ($(grep 'Type:' <<<"$header" | xargs))" >&2
    status=1
  fi
  if readelf -l "$file" | grep -q 'INTERP'; then
    echo "check_static_executable: $file: has a program interpreter (dynamically linked)" >&2
    status=1
  fi
  if needed=$(readelf -d "$file" | grep 'NEEDED'); then
    echo "check_static_executable: $file: needs shared libraries:" >&2
    echo "$needed" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "check_static_executable: static PIE: $*"
exit "$status"
