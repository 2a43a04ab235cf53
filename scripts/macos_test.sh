#!/usr/bin/env bash
# The Seatbelt backend's real-sandbox tests on a Mac: one command, from the repository root.
#   scripts/macos_test.sh
# Installs the build dependencies with Homebrew (https://brew.sh must be installed), builds
# the Seatbelt tests and runs them: the unit and launcher tests against the generated profile,
# and tests/unit/seatbelt/sandbox_macos_test.cc against the real sandbox-exec (git through the
# xcrun shim, a Go TLS client, Python's multiprocessing, node's os.cpus(), script(1), a unix
# socket in the workspace, `mkdir .GIT`, the workspace renamed away and back, a credential
# created after the profile, a hard link of a hidden file). Tests that need a tool that is not
# installed (the Command Line Tools, go, node) say so and are skipped.
# Not yet run on a Mac by the project: docs/backends.md says so until it is.
set -euo pipefail
if [[ "$(uname -s)" != Darwin ]]; then
  echo "macos_test.sh: this is for macOS (sandbox-exec); on Linux run scripts/test.sh" >&2
  exit 2
fi
brew install cmake ninja pkg-config re2 fmt nlohmann-json cli11 googletest google-benchmark ldns \
  c-ares openssl@3
cmake --preset dev
cmake --build --preset dev --target seatbelt_unit_tests seatbelt_sandbox_tests
ctest --test-dir build/dev --output-on-failure -R '^seatbelt_'
