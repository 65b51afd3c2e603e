#!/usr/bin/env bash
# Stops what start-rgw.sh started under $CEPH_DIR (by the pid files it wrote) and removes the folder.
D=${CEPH_DIR:?CEPH_DIR must be set}
pids=()
for n in client.rgw.a osd.0 mon.a; do
  f="$D/run/$n.pid"; [ -f "$f" ] && pids+=("$(cat "$f")")
done
[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
for p in "${pids[@]}"; do for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; done
for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
[ "${KEEP_CEPH_DIR:-}" = "1" ] || rm -rf "$D"
exit 0
