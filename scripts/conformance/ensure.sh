#!/usr/bin/env bash
# Installs the official MCP conformance suite and the Node 22 it needs into .tmp/conformance (once).
# Prints the folder holding the `node` and `conformance` binaries. Used by test/security/dns-rebinding.test.ts
# (the conformance suite) and test/package/quick-start.test.ts (the quick start on Node 22).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.tmp/conformance
mkdir -p .tmp
# Two test files may ask at once (the conformance scenarios, the quick start on Node 22): one installs.
exec 9>".tmp/conformance.lock"
flock 9
if [ ! -x "$dir/node_modules/.bin/conformance" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
  mkdir -p "$dir"
  npm install --no-audit --no-fund --no-save --prefix "$dir" node@22 @modelcontextprotocol/conformance@0.1.16 >&2
fi
echo "$(pwd)/$dir/node_modules/.bin"
