#!/usr/bin/env bash
# Checks that each executable given needs no relocation at load time (readelf -r lists none):
# the `cordon` front has no C library or loader to apply one (decision 0028).
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: check_no_relocations.sh FILE..." >&2; exit 2; }
status=0
for file in "$@"; do
  relocations=$(readelf -r "$file")
  if ! grep -q 'There are no relocations in this file' <<<"$relocations"; then
    echo "check_no_relocations: $file has relocations nothing would apply:" >&2
    echo "$relocations" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "check_no_relocations: none in $*"
exit "$status"
