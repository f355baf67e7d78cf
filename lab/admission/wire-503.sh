#!/bin/bash
# Where a 503's time goes at twice the load: `weft lab overload` with a capture of the loopback traffic between
# the load generator and the gateway (tcpdump: kernel timestamps, so the generator's own CPU, on CPU 0 with the
# backends, is not in them) and the gateway's G1 log with wall-clock times. lab/admission/wire503.py then gives,
# per step, the 503s' time on the wire and how many of the slow ones (over 50 ms) had their request arrive near a
# collector's pause or in the 600 ms after one, against the share of the step's time in those windows
# (docs/journal/round-22.md).
#
#   lab/admission/wire-503.sh [weft lab overload options]
#
# Default options: --models weft --latency 250ms --factors 1.0,2.0,2.0,2.0 --max-in-flight 4500 --duration 6s
#   --warmup 3s --service-cpus 1 (add --capacity N to skip the capacity search). The gateway's JVM flags are
# WEFT_LAB_SERVICE_OPTS (default: the lab's, -Xmx6g -XX:+UseG1GC -XX:+UseTransparentHugePages) plus the G1 log.
# Needs tcpdump (apt install tcpdump), the right to capture on lo (root or CAP_NET_RAW) and python3. The capture
# takes about 100 MB a minute at 2x; it is deleted at exit unless KEEP=DIR, where it and the logs are kept.
# Ports: the lab's (the gateway on 127.0.0.1, the backends on 127.0.0.2-4, left out of the capture).
set -eu
NAME=wire-503
. "$(dirname "$0")/setup.sh"
command -v tcpdump > /dev/null || { echo "$NAME: needs tcpdump (apt install tcpdump)" >&2; exit 2; }
command -v python3 > /dev/null || { echo "$NAME: needs python3" >&2; exit 2; }
out=${KEEP:-$work}
mkdir -p "$out"
if [ $# -eq 0 ]; then
  set -- --models weft --latency 250ms --factors 1.0,2.0,2.0,2.0 --max-in-flight 4500 --duration 6s --warmup 3s \
    --service-cpus 1
fi
taskset -c 0 tcpdump -i lo -s 96 -B 262144 -w "$out/capture.pcap" \
  'tcp and not (net 127.0.0.2/31 or host 127.0.0.4)' 2> "$out/tcpdump.log" &
dump=$!
pids+=($dump)
for _ in $(seq 50); do grep -q 'listening on' "$out/tcpdump.log" && break; sleep 0.1; done
grep -q 'listening on' "$out/tcpdump.log" || { echo "$NAME: tcpdump did not start (root or CAP_NET_RAW?):" >&2;
  cat "$out/tcpdump.log" >&2; exit 2; }
opts="${WEFT_LAB_SERVICE_OPTS:--Xmx6g -XX:+UseG1GC -XX:+UseTransparentHugePages} -Xlog:gc:file=$out/gc.log:time"
echo "command: $0 $*"
echo "gateway JVM flags: $opts"
# each line of the lab's output with its epoch time: the steps' measured windows come from them
WEFT_NO_BUILD=1 WEFT_LAB_SERVICE_OPTS="$opts" ./weft lab overload --out "$out" "$@" 2>&1 \
  | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$out/lab.txt" || true
kill -INT $dump 2> /dev/null || true
wait $dump 2> /dev/null || true
cut -d' ' -f2- "$out/lab.txt" | grep -E '^(machine|cpus|\| model|\|---|\| )' || true
if ! grep -q '^[0-9.]* | ' "$out/lab.txt"; then
  echo "$NAME: the lab measured no step:" >&2
  cut -d' ' -f2- "$out/lab.txt" | tail -n 20 >&2
  exit 1
fi
tail -n 2 "$out/tcpdump.log"
python3 "$root/lab/admission/wire503.py" "$out/capture.pcap" "$out/lab.txt" "$out/gc.log"
