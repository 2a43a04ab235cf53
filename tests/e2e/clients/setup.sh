#!/usr/bin/env bash
# Installs the real MCP clients that clients_test.py drives (MCP Inspector CLI, Claude Code,
# Gemini CLI, Codex), exactly as package-lock.json pins them, into tests/e2e/clients/node_modules.
# Claude Code puts its native executable in place from its install script; the others need
# none (Codex's native executable comes as a platform package).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
  echo "setup.sh: npm not found; install Node.js (>= 20) to run the clients' end-to-end tests" >&2
  exit 1
fi
npm ci --no-audit --no-fund
