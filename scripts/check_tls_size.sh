#!/usr/bin/env bash
# Checks that each executable given has at most LIMIT bytes of static TLS (its PT_TLS segment's
# memory size): the C library clears that block in every new thread, so each byte of it is
# resident in each thread of every cordon process — a run server with a few workers and
# helpers, the supervisor of a run. Buffers a thread needs belong on its stack or the heap.
set -euo pipefail
[ "$#" -ge 2 ] || { echo "usage: check_tls_size.sh LIMIT FILE..." >&2; exit 2; }
limit=$1
shift
status=0
for file in "$@"; do
  size=$(readelf -lW "$file" | awk '$1 == "TLS" { print $6 }')
  size=$((${size:-0}))
  if [ "$size" -gt "$limit" ]; then
    echo "check_tls_size: $file has $size bytes of static TLS, more than $limit" >&2
    readelf -sW "$file" | awk '$4 == "TLS"' | sort -k3 -n | tail -5 >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "check_tls_size: at most $limit bytes in $*"
exit "$status"
