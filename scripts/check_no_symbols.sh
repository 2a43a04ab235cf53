#!/usr/bin/env bash
# Checks that no executable given defines a symbol starting with PREFIX: a library that one of
# cordon's own programs alone should hold (ldns: only cordon-resolver parses DNS, decision 0051)
# has not crept back into the others. A file without a symbol table cannot be judged: it fails.
set -euo pipefail
[ "$#" -ge 2 ] || { echo "usage: check_no_symbols.sh PREFIX FILE..." >&2; exit 2; }
prefix=$1
shift
status=0
for file in "$@"; do
  symbols=$(nm --defined-only "$file" 2>/dev/null | awk '{ print $NF }') || true
  if [ -z "$symbols" ]; then
    echo "check_no_symbols: $file has no symbol table to check" >&2
    status=1
  elif found=$(grep -m 3 "^$prefix" <<<"$symbols"); then
    echo "check_no_symbols: $file defines symbols starting with $prefix:" >&2
    echo "$found" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "check_no_symbols: nothing starting with $prefix in $*"
