#!/usr/bin/env bash
# Installs every build and test dependency of cordon from Debian packages, and any further
# packages named as arguments (scripts/setup_toolchains.sh). Idempotent: packages already
# present are left alone. Needs root (or sudo) for apt-get.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libre2-dev libseccomp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libldns-dev libssl-dev        # DNS messages and TLS hellos of the network-by-domain resolver
  libhttp-parser-dev            # HTTP requests to the network-by-domain proxy
  dnsmasq-base                  # the tests' own DNS server in their test network
  openssl                       # the test network's HTTPS server: its certificate
  clang-format clang-tidy
  clang-16 libclang-rt-16-dev   # libFuzzer (clang 14 cannot compile <expected>)
  bubblewrap hyperfine          # benchmarks compare against bubblewrap
  iproute2 procps util-linux passwd
  strace                        # fault tests: stop a sandbox step with delay injection
  zsh man-db groff-base         # the generated zsh completion and man page are checked
  python3                       # the C API example in Python (ctypes)
)

packages+=("$@")

# The MCP end-to-end tests drive `cordon mcp` with the official TypeScript SDK (Node.js).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
