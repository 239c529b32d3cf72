#!/bin/sh
# fleet.sh - what one ingest server writes to the fleet store, and what a
# fleet query over many devices costs: a measurement, not a test.
#
#   BUILD=build sh bench/fleet.sh
#
# Starts Debian's clickhouse-server on loopback in a scratch folder, makes
# an artifact root of FLEET_DEVICES device sessions of FLEET_CHUNKS chunks
# each (the shared peer device chunk, 2,994 samples, copied), then times
#   1. `perflens fleet-publish` of every chunk (chunks/s, sample rows/s,
#      samples/s), as the ingest server's pump runs it;
#   2. `perflens fleet-hotspots` over all of them (the best of 5), and with
#      a label selecting half the devices.
# Environment: FLEET_DEVICES (default 100), FLEET_CHUNKS (default 34: about
# 10 million samples in all), BENCH_KEEP=1 keeps the scratch folder.
# There is no peer to time beside it: the figures are PerfLens's own.
set -u
BUILD=${BUILD:-build}
REPO=$(pwd)
. "$REPO/bench/lib.sh"
bench_setup
CH=/usr/sbin/clickhouse-server
[ -x "$CH" ] || { echo "fleet bench: $CH is missing (apt-get install clickhouse-server)"; exit 0; }
DEVICES=${FLEET_DEVICES:-100}
CHUNKS=${FLEET_CHUNKS:-34}
T=$(mktemp -d /tmp/perflens-fleet-bench.XXXXXX)
HTTP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
TCP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$T/ch/data" "$T/ch/tmp"
cat > "$T/ch/config.xml" <<XML
<?xml version="1.0"?><yandex><logger><level>warning</level><log>$T/ch/server.log</log><errorlog>$T/ch/err.log</errorlog><console>0</console></logger>
<http_port>$HTTP</http_port><tcp_port>$TCP</tcp_port><listen_host>127.0.0.1</listen_host><path>$T/ch/data/</path><tmp_path>$T/ch/tmp/</tmp_path>
<users_config>$T/ch/users.xml</users_config><default_profile>default</default_profile><default_database>default</default_database>
<mark_cache_size>5368709</mark_cache_size><timezone>UTC</timezone></yandex>
XML
cat > "$T/ch/users.xml" <<XML
<?xml version="1.0"?><yandex><profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
<users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
<quotas><default></default></quotas></yandex>
XML
(cd "$T/ch" && exec "$CH" --config-file="$T/ch/config.xml" > "$T/ch/out.log" 2>&1) &
CHPID=$!
cleanup() { kill "$CHPID" 2>/dev/null; wait "$CHPID" 2>/dev/null; [ "${BENCH_KEEP:-}" = 1 ] || rm -rf "$T"; }
trap cleanup EXIT
i=0
while ! curl -sf "http://127.0.0.1:$HTTP/?query=SELECT%201" > /dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "fleet bench: clickhouse-server did not start"; exit 0; }
	sleep 0.2
done
zcat "$SHARED/peers/device-sessions/session-x86-baseline/chunk_000.txt.gz" | zstd -q -o "$T/chunk.zst"
python3 - "$T/art" "$T/chunk.zst" "$DEVICES" "$CHUNKS" <<'PY'
import json, os, shutil, sys
art, chunk, devices, chunks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for d in range(devices):
    s = os.path.join(art, "sessions", "20261207_000000_board%03d_1" % d)
    os.makedirs(s)
    json.dump({"agent": "board%03d" % d, "platform": {"arch": "x86_64"},
               "labels": {"firmware": "1.%d" % (d % 2)}, "capture": {"duration": 1}},
              open(os.path.join(s, "metadata.json"), "w"))
    for c in range(chunks):
        os.link(chunk, os.path.join(s, "chunk_%05d.zst" % c))
PY
F="--fleet-store http://127.0.0.1:$HTTP/bench"
"$PL" fleet-init $F > /dev/null
secs() { python3 -c 'import sys,time; print("%.3f" % time.time())'; }
t0=$(secs)
"$PL" fleet-publish $F --artifact-root "$T/art" --max-chunks 10000 --format json > "$T/pub.json"
t1=$(secs)
python3 - "$T/pub.json" "$t0" "$t1" "$(curl -s "http://127.0.0.1:$HTTP/" --data-binary 'SELECT count() FROM bench.samples_local')" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s = float(sys.argv[3]) - float(sys.argv[2]); rows = int(sys.argv[4])
print("fleet 1. publish: %d chunks, %d samples, %d sample rows in %.1f s: %.0f chunks/s, %.0f rows/s, %.0f samples/s"
      % (r["published_chunks"], r["published_samples"], rows, s, r["published_chunks"] / s, rows / s,
         r["published_samples"] / s))
PY
best() {
	b=999999
	for k in 1 2 3 4 5; do
		a=$(secs); "$PL" fleet-hotspots $F "$@" --format json > /dev/null; z=$(secs)
		b=$(python3 -c "print('%.3f' % min($b, $z - $a))")
	done
	echo "$b"
}
echo "fleet 2. fleet-hotspots over $DEVICES devices: best of 5 $(best --event cycles) s; one firmware: $(best --event cycles --labels firmware=1.1) s"
