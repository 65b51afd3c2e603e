#!/usr/bin/env bash
# A single-node Ceph cluster (one mon, one memstore OSD, no cephx) and radosgw on 127.0.0.1, without
# systemd, all state under $CEPH_DIR. Ports come from the environment (the caller picks free ones):
#   CEPH_DIR      folder for config, data, logs, pid files (wiped first)      required
#   RGW_PORT      S3 endpoint port                                             default 7480
#   MON_PORT      monitor msgr2 port; MON_PORT_V1 the legacy one               default 3300 / 6789
#   S3_KEY/S3_SECRET  the S3 user's keys                                       default testkey/testsecret
#   MEMSTORE_BYTES    the OSD's RAM-backed capacity                            default 2 GiB
# Traps (learned on these machines): the rgw client needs `ms mon client mode = crc secure`; rgw
# answers after about 13 s; the first bucket operation takes about 5 s; use path-style addressing.
set -euo pipefail
D=${CEPH_DIR:?CEPH_DIR must be set}
RGW_PORT=${RGW_PORT:-7480}
MON_PORT=${MON_PORT:-3300}
MON_PORT_V1=${MON_PORT_V1:-6789}
MEMSTORE_BYTES=${MEMSTORE_BYTES:-2147483648}
rm -rf "$D"; mkdir -p "$D"/{mon,osd,rgw,log,run}
FSID=$(cat /proc/sys/kernel/random/uuid)
cat > "$D/ceph.conf" <<CONF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT,v1:127.0.0.1:$MON_PORT_V1
public addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon allow pool delete = true
osd crush chooseleaf type = 0
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
log file = $D/log/\$name.log
run dir = $D/run
admin socket = $D/run/\$name.asok
pid file = $D/run/\$name.pid
keyring = /dev/null
[mon.a]
mon data = $D/mon
[osd.0]
osd data = $D/osd
osd objectstore = memstore
memstore device bytes = $MEMSTORE_BYTES
[client.rgw.a]
ms mon client mode = crc secure
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $D/rgw
rgw dns name = 127.0.0.1
CONF
C=(-c "$D/ceph.conf")
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT,v1:127.0.0.1:$MON_PORT_V1]" "$D/monmap" >/dev/null
ceph-mon "${C[@]}" -i a --mkfs --monmap "$D/monmap"
ceph-mon "${C[@]}" -i a
OSD_ID=$(ceph "${C[@]}" osd create)
ceph-osd "${C[@]}" -i "$OSD_ID" --mkfs --osd-uuid "$(cat /proc/sys/kernel/random/uuid)" 2>/dev/null
ceph "${C[@]}" osd crush add "osd.$OSD_ID" 1.0 root=default >/dev/null 2>&1 || true
ceph-osd "${C[@]}" -i "$OSD_ID"
radosgw "${C[@]}" -n client.rgw.a
for _ in $(seq 1 300); do curl -s -o /dev/null "http://127.0.0.1:$RGW_PORT/" && break; sleep 0.2; done
code=$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$RGW_PORT/" || true)
if [ "$code" = "000" ]; then echo "radosgw did not answer on port $RGW_PORT; see $D/log" >&2; exit 1; fi
radosgw-admin "${C[@]}" user create --uid=test --display-name=test \
  --access-key="${S3_KEY:-testkey}" --secret-key="${S3_SECRET:-testsecret}" >/dev/null
echo "radosgw ready on http://127.0.0.1:$RGW_PORT"
