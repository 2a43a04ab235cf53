#!/usr/bin/env bash
# Installs cordon from a build tree into a temporary prefix, then builds and runs the consumer
# programs in project/ against it twice: with find_package(cordon) and with pkg-config.
#
#   tests/consumer/consumer_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
mkdir -p "$tmp/workspace"

step() { printf '== %s\n' "$*"; }

step "install into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/cordon include/cordon/cordon.h include/cordon/session.h; do
  test -e "$prefix/$f" || { echo "missing $f in the install" >&2; exit 1; }
done
libdir=$(dirname "$(find "$prefix" -name 'libcordon.so.0' | head -n1)")
test -n "$libdir" || { echo "libcordon.so.0 not installed" >&2; exit 1; }
test -e "$libdir/libcordon.so" && test -e "$libdir/pkgconfig/cordon.pc" \
  && test -e "$libdir/cmake/cordon/cordonConfig.cmake" \
  && test -e "$libdir/cmake/cordon/cordonConfigVersion.cmake"
# Only public headers are installed.
if [ -n "$(find "$prefix/include" -type f ! -path '*/include/cordon/*')" ]; then
  echo "unexpected headers outside include/cordon" >&2; exit 1
fi

step "find_package(cordon)"
cmake -S "$here/project" -B "$tmp/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/cmake-build" >/dev/null
"$tmp/cmake-build/consumer_c" "$tmp/workspace"
"$tmp/cmake-build/consumer_cpp" "$tmp/workspace"

step "pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
test "$(pkg-config --modversion cordon)" = "$("$prefix/bin/cordon" --version | grep -o '[0-9][0-9.]*' | head -n1)"
mkdir -p "$tmp/pc-build"
# shellcheck disable=SC2046  # word splitting of pkg-config output is intended
cc -std=c99 -Wall -Werror -o "$tmp/pc-build/consumer_c" "$here/project/consumer_c.c" \
  $(pkg-config --cflags --libs cordon) -Wl,-rpath,"$libdir"
# shellcheck disable=SC2046
c++ -std=c++23 -Wall -Werror -o "$tmp/pc-build/consumer_cpp" "$here/project/consumer_cpp.cc" \
  $(pkg-config --cflags --libs cordon) -Wl,-rpath,"$libdir"
"$tmp/pc-build/consumer_c" "$tmp/workspace"
"$tmp/pc-build/consumer_cpp" "$tmp/workspace"

step "consumer test passed"
