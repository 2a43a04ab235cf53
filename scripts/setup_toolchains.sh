#!/usr/bin/env bash
# Installs the toolchains the end-to-end toolchain test builds with (tests/e2e/toolchains), from
# Debian's packages: Go, Rust's cargo, pytest and venv for Python (C, CMake and Node come with
# scripts/setup.sh); and the tools the denial corpus runs (tests/e2e/denials): curl, ssh and
# pip. Idempotent. Not needed to build or use cordon: scripts/test.sh calls it.
set -euo pipefail
exec bash "$(dirname "$0")/setup.sh" golang-go cargo python3-pytest python3-venv curl openssh-client python3-pip
