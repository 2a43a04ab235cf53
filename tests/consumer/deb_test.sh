#!/usr/bin/env bash
# Builds the Debian package in a release build directory, installs it on this machine with
# dpkg -i, runs the installed /usr/bin/cordon and removes the package again. Needs root.
#
#   tests/consumer/deb_test.sh [BUILD_DIR]     (default: build/deb in the source tree)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build/deb}

step() { printf '== %s\n' "$*"; }

if [ "$(id -u)" -ne 0 ]; then echo "deb_test.sh: needs root (dpkg -i)" >&2; exit 1; fi
if dpkg-query -W -f='${Status}' cordon 2>/dev/null | grep -q 'ok installed'; then
  echo "deb_test.sh: a cordon package is already installed; not touching it" >&2; exit 1
fi

# Warnings stay warnings here: a distribution build must not fail on a new compiler's false
# positive (g++ 12 -O2 reports a bogus -Wrestrict in std::string); the dev preset keeps -Werror.
step "release build in $build"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCORDON_BUILD_TESTS=OFF -DCORDON_BUILD_BENCH=OFF -DCORDON_WERROR=OFF >/dev/null
cmake --build "$build" -j2 --target cordon cordon_shared cordon_manual cordon-bwrap-exec cordon-init \
  cordon-resolver

step "cpack -G DEB"
(cd "$build" && cpack -G DEB >/dev/null)
version=$(sed -n 's/^project(cordon VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
deb=$build/cordon_${version}_$(dpkg --print-architecture).deb
test -f "$deb" || { echo "deb_test.sh: $deb not built" >&2; ls "$build"/*.deb >&2 || true; exit 1; }
dpkg-deb --info "$deb"
depends=$(dpkg-deb --field "$deb" Depends)
for needed in libre2-9 libseccomp2 libfmt9; do
  case "$depends" in *"$needed"*) ;; *) echo "Depends lacks $needed: $depends" >&2; exit 1 ;; esac
done
dpkg-deb --contents "$deb"

step "dpkg -i"
# Purge (dpkg -r plus its status record), so that the machine is left as it was found.
trap 'dpkg -P cordon >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb"
test "$(command -v cordon)" = /usr/bin/cordon
/usr/bin/cordon --version
/usr/bin/cordon --version | grep -q "$version"
workspace=$(mktemp -d)
# No run server started on demand (decision 0030): it would outlive the package.
export CORDON_RUN_SERVER=off
(cd "$workspace" && /usr/bin/cordon run -- true)
(cd "$workspace" && /usr/bin/cordon run -- sh -c 'echo hi') | grep -qx hi
# The installed binary finds the sandbox's init in /usr/libexec/cordon (decision 0021).
(cd "$workspace" && /usr/bin/cordon run -- cat /proc/1/comm) | grep -qx cordon-init
rmdir "$workspace"
pkg-config --exists cordon
# The manual and the completions generated from the CLI definitions, the bwrap trampoline and
# the sandbox's init.
test -s /usr/share/man/man1/cordon.1.gz
test -s /usr/share/bash-completion/completions/cordon
test -s /usr/share/zsh/vendor-completions/_cordon
test -x /usr/libexec/cordon/cordon-bwrap-exec
test -x /usr/libexec/cordon/cordon-init

step "dpkg -r / -P"
dpkg -r cordon
test ! -e /usr/lib/libcordon.so.0
dpkg -P cordon
trap - EXIT
test ! -e /usr/bin/cordon
step "deb test passed"
