#!/usr/bin/env bash
# A small npm project whose one dependency is a local tarball, locked to the registry npm is
# configured with (read with `npm config get registry`, never named here), so that `npm ci
# --offline` installs it from npm's cache once the tarball was added there. Shared by the
# toolchain e2e test and bench/tool_caches.sh.
#
# Usage: npm_locked_project.sh DIR NAME INDEX_JS [TEST_SCRIPT]
#   DIR/NAME-1.0.0.tgz   the packed dependency (add it with `npm cache add`)
#   DIR/app              package.json (with TEST_SCRIPT as "test" when given) and
#                        package-lock.json
# npm runs with the caller's HOME: point it at a scratch home to keep a real one unwritten.
set -euo pipefail
dir=$1 name=$2 index_js=$3 test_script=${4:-}
mkdir -p "$dir/dep" "$dir/app"
printf '{ "name": "%s", "version": "1.0.0", "main": "index.js" }\n' "$name" >"$dir/dep/package.json"
printf '%s\n' "$index_js" >"$dir/dep/index.js"
(cd "$dir/dep" && npm pack --silent >/dev/null && mv "$name-1.0.0.tgz" ..)
registry=$(npm config get registry)
integrity=$(node -e 'const c = require("crypto"), fs = require("fs");
  process.stdout.write("sha512-" + c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"))' \
  "$dir/$name-1.0.0.tgz")
scripts=""
if [ -n "$test_script" ]; then
  scripts=$(node -e 'process.stdout.write(`, "scripts": { "test": ${JSON.stringify(process.argv[1])} }`)' \
    "$test_script")
fi
cat >"$dir/app/package.json" <<JSON
{ "name": "app", "version": "1.0.0", "private": true, "dependencies": { "$name": "1.0.0" }$scripts }
JSON
cat >"$dir/app/package-lock.json" <<JSON
{ "name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
  "packages": { "": { "name": "app", "version": "1.0.0", "dependencies": { "$name": "1.0.0" } },
    "node_modules/$name": { "version": "1.0.0", "resolved": "${registry%/}/$name/-/$name-1.0.0.tgz",
      "integrity": "$integrity" } } }
JSON
