#!/usr/bin/env bash
# Installs the official MCP conformance suite and the Node 22 it needs into .tmp/conformance (once).
# Prints the folder holding the `node` and `conformance` binaries.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.tmp/conformance
if [ ! -x "$dir/node_modules/.bin/conformance" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
  mkdir -p "$dir"
  npm install --no-audit --no-fund --no-save --prefix "$dir" node@22 @modelcontextprotocol/conformance@0.1.16 >&2
fi
echo "$(pwd)/$dir/node_modules/.bin"
