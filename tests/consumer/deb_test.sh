#!/usr/bin/env bash
# Builds the Debian packages (cordon, libcordon0, libcordon-dev and their -dbgsym), checks them
# with lintian, installs them on this machine with dpkg -i, runs the installed /usr/bin/cordon,
# builds a program against the installed library with pkg-config, and removes them again.
# Needs root; installs lintian when it is missing.
#
#   tests/consumer/deb_test.sh [BUILD_DIR]
#
# BUILD_DIR with a CMakeCache.txt is used as it is configured (CI passes the dev build, whose
# programs are already built); otherwise it is configured as a distribution builds it
# (RelWithDebInfo, prefix /usr). Default: build/deb in the source tree.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build/deb}

step() { printf '== %s\n' "$*"; }
fail() { echo "deb_test.sh: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (dpkg -i)"
packages=(cordon libcordon0 libcordon-dev)
for p in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
    fail "a $p package is already installed; not touching it"
  fi
done
if ! command -v lintian >/dev/null; then
  step "apt-get install lintian"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lintian >/dev/null
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  # Warnings stay warnings here: a distribution build must not fail on a new compiler's false
  # positive (g++ 12 -O2 reports a bogus -Wrestrict in std::string); the dev preset keeps -Werror.
  step "release build in $build"
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
    -DCORDON_BUILD_TESTS=OFF -DCORDON_BUILD_BENCH=OFF -DCORDON_WERROR=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target cordon cordon_shared cordon_manual cordon-bwrap-exec \
  cordon-init cordon-resolver $(grep -q '^CORDON_COMMAND_TARGET:.*=cordon-front' \
  "$build/CMakeCache.txt" && echo cordon-front)

step "cpack -G DEB"
out=$(mktemp -d /var/lib/cordon-deb.XXXXXX)
trap 'rm -rf "$out"' EXIT
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
version=$(sed -n 's/^project(cordon VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
arch=$(dpkg --print-architecture)
debs=()
for p in "${packages[@]}"; do
  deb=$out/${p}_${version}_${arch}.deb
  [ -f "$deb" ] || { ls "$out" >&2; fail "$deb not built"; }
  # The packages with programs or libraries have their debug information beside them.
  if [ "$p" != libcordon-dev ] && [ ! -f "$out/${p}-dbgsym_${version}_${arch}.ddeb" ]; then
    fail "no debug symbols package for $p"
  fi
  debs+=("$deb")
  dpkg-deb --info "$deb"
done
field() { dpkg-deb --field "$out/${1}_${version}_${arch}.deb" "$2"; }
for needed in libre2-9 libseccomp2 libfmt9; do
  case "$(field libcordon0 Depends)" in *"$needed"*) ;; *) fail "libcordon0's Depends lacks $needed" ;; esac
done
case "$(field libcordon-dev Depends)" in *"libcordon0 (= $version)"*) ;; *) fail "libcordon-dev does not depend on libcordon0 (= $version)" ;; esac
case "$(field cordon Recommends)" in *bash-completion*) ;; *) fail "cordon does not recommend bash-completion" ;; esac
case "$(field cordon Maintainer)" in *localhost*|"") fail "no real Maintainer field" ;; esac
# Each package holds what it is for.
contents() { dpkg-deb --contents "$out/${1}_${version}_${arch}.deb" | awk '{print $6}'; }
contents cordon | grep -q '/usr/bin/cordon$' || fail "cordon lacks /usr/bin/cordon"
contents cordon | grep -q 'libcordon\|include/' && fail "cordon holds the library or headers"
contents libcordon0 | grep -q 'libcordon\.so\.0' || fail "libcordon0 lacks libcordon.so.0"
contents libcordon0 | grep -q 'include/\|\.so$\|pkgconfig' && fail "libcordon0 holds development files"
contents libcordon-dev | grep -q 'include/cordon/' || fail "libcordon-dev lacks the headers"
for p in "${packages[@]}"; do
  contents "$p" | grep -q "/usr/share/doc/$p/copyright$" || fail "$p has no copyright file"
done

step "lintian"
# Errors and warnings fail; the static executables are declared in the package's overrides.
# A build for Debian (prefix /usr) puts the library and its pkg-config file in /usr/lib/<triplet>;
# one with another prefix (CI packages the dev build) in /usr/lib, which lintian flags for
# cross-compilation: that tag alone is left out then.
suppress=()
if [ "$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")" = lib ]; then
  suppress=(--suppress-tags pkg-config-unavailable-for-cross-compilation)
fi
lintian --fail-on error,warning --tag-display-limit 0 "${suppress[@]}" "${debs[@]}"

step "dpkg -i"
# Purge (dpkg -r plus its status record), so that the machine is left as it was found.
trap 'dpkg -P "${packages[@]}" >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
dpkg -i "${debs[@]}"
test "$(command -v cordon)" = /usr/bin/cordon
/usr/bin/cordon --version | grep -q "$version"
# Stripped: the debug information is in the -dbgsym packages.
for f in /usr/bin/cordon /usr/libexec/cordon/cordon /usr/libexec/cordon/cordon-init; do
  if readelf -S "$f" | grep -q '\.debug_info'; then fail "$f is not stripped"; fi
done
workspace=$(mktemp -d /var/lib/cordon-deb-ws.XXXXXX)
# No run server started on demand (decision 0030): it would outlive the package.
export CORDON_RUN_SERVER=off
(cd "$workspace" && /usr/bin/cordon run -- true)
(cd "$workspace" && /usr/bin/cordon run -- sh -c 'echo hi') | grep -qx hi
# The installed binary finds the sandbox's init in /usr/libexec/cordon (decision 0021).
(cd "$workspace" && /usr/bin/cordon run -- cat /proc/1/comm) | grep -qx cordon-init
# pkg-config paths as a system library's: nothing for the compiler, -lcordon for the linker.
cflags=$(pkg-config --cflags cordon)
libs=$(pkg-config --libs cordon)
case "$cflags" in *..*) fail "pkg-config --cflags: $cflags" ;; esac
case "$libs" in *..*|"") fail "pkg-config --libs: $libs" ;; esac
cat >"$workspace/version.c" <<'C'
#include <cordon/cordon.h>
#include <stdio.h>
int main(void) { puts(cordon_version()); return 0; }
C
# shellcheck disable=SC2086
cc "$workspace/version.c" -o "$workspace/version" $cflags $libs
"$workspace/version" | grep -q "$version"
rm -rf "$workspace"
# The manual and the completions generated from the CLI definitions, the bwrap trampoline, the
# sandbox's init and the resolver.
test -s /usr/share/man/man1/cordon.1.gz
test -s /usr/share/bash-completion/completions/cordon
test -s /usr/share/zsh/vendor-completions/_cordon
test -x /usr/libexec/cordon/cordon-bwrap-exec
test -x /usr/libexec/cordon/cordon-init
test -x /usr/libexec/cordon/cordon-resolver

step "dpkg -r / -P"
libfile=$(dpkg -L libcordon0 | grep 'libcordon\.so\.0$')
dpkg -r "${packages[@]}"
test ! -e "$libfile"
dpkg -P "${packages[@]}"
test ! -e /usr/bin/cordon
step "deb test passed"
