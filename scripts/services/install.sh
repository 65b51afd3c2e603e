#!/usr/bin/env bash
# Installs the Debian packages the S3/Redis suites and the replicas example need, when missing:
# Ceph (mon, memstore OSD, radosgw) for a real S3 endpoint, redis-server, and haproxy.
# Needs root (apt-get); prints what it does. Exit code non-zero when something could not be installed.
set -euo pipefail
need=()
command -v ceph-mon >/dev/null 2>&1 || need+=(ceph-mon)
command -v ceph-osd >/dev/null 2>&1 || need+=(ceph-osd)
command -v radosgw >/dev/null 2>&1 || need+=(radosgw)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v haproxy >/dev/null 2>&1 && [ -x "$(command -v haproxy)" ] || need+=(haproxy)
if [ ${#need[@]} -eq 0 ]; then
  echo "services: ceph-mon ceph-osd radosgw redis-server haproxy already installed"
  exit 0
fi
echo "services: installing ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "services: not root and no sudo; install ${need[*]} by hand" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# apt may be busy for a moment (another install on the same machine): wait for its lock.
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "services: installed ${need[*]}"
