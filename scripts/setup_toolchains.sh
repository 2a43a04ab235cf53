#!/usr/bin/env bash
# Installs the toolchains the end-to-end toolchain test builds with (tests/e2e/toolchains), from
# Debian's packages: Go, Rust's cargo, pytest and venv for Python (C, CMake and Node come with
# scripts/setup.sh). Idempotent. Not needed to build or use cordon: scripts/test.sh calls it.
set -euo pipefail

packages=(golang-go cargo python3-pytest python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup_toolchains: all ${#packages[@]} packages already installed"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup_toolchains: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
