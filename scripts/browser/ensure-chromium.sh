#!/bin/sh
# Makes sure Debian's Chromium is installed at /usr/bin/chromium for the browser tests
# (test/browser/**, driven by playwright-core, which never downloads a browser itself).
#
#   sh scripts/browser/ensure-chromium.sh          # installs it when missing (needs root or sudo)
#   CHROMIUM_PATH=/opt/chromium/chrome sh ...      # checks another binary instead
set -eu

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ -x "$CHROMIUM" ]; then
  echo "chromium: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
  exit 0
fi

if [ "$CHROMIUM" != "/usr/bin/chromium" ]; then
  echo "ensure-chromium: CHROMIUM_PATH=$CHROMIUM is not an executable file" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: /usr/bin/chromium is missing and apt-get is not available;" >&2
  echo "install Chromium yourself and set CHROMIUM_PATH to its binary" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "ensure-chromium: need root (or sudo) to install chromium with apt-get" >&2
    exit 1
  fi
fi

echo "ensure-chromium: installing Debian's chromium package"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium

if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing" >&2
  exit 1
fi
echo "chromium: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
