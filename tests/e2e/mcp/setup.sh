#!/usr/bin/env bash
# Installs the MCP TypeScript SDK that the end-to-end tests drive `cordon mcp` with, exactly
# as package-lock.json pins it, into tests/e2e/mcp/node_modules.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
  echo "setup.sh: npm not found; install Node.js (>= 18) to run the MCP end-to-end tests" >&2
  exit 1
fi
npm ci --no-audit --no-fund
