#!/usr/bin/env bash
# Makes sure the `pandoc` binary is on PATH (used by examples/pandoc-converter).
# Installs the Debian package only when it is missing, apt-get exists and we run as root.
# Exit status: 0 = pandoc is available, 1 = it is missing and could not be installed.
set -u

if command -v pandoc >/dev/null 2>&1; then
  pandoc --version | head -n 1
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-pandoc: pandoc is missing and apt-get is not available; install pandoc by hand" >&2
  exit 1
fi

if [ "$(id -u)" != "0" ]; then
  echo "ensure-pandoc: pandoc is missing; run as root (or: sudo apt-get install pandoc)" >&2
  exit 1
fi

echo "ensure-pandoc: installing pandoc with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends pandoc; } >&2; then
  echo "ensure-pandoc: apt-get could not install pandoc" >&2
  exit 1
fi

if command -v pandoc >/dev/null 2>&1; then
  pandoc --version | head -n 1
  exit 0
fi
echo "ensure-pandoc: pandoc is still not on PATH after installing" >&2
exit 1
