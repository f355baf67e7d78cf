#!/bin/bash
# The gateway's CPU per request it sheds (503 from the admission) against per request it serves (System A's
# route: three calls in parallel to weft upstream at 250 ms). The gateway runs on CPU 1, the load (weft bench,
# closed loop, 1,000 in flight, 15 s after a 10 s warm-up) and the backends on CPU 0 (taskset, util-linux).
#   shed:   admission on, the route's limit 1 and no queue (admission.routes, admission.queue: 0), so all but
#           one request in flight at a time are answered 503 at once
#   served: admission off, the same route
# CPU per request = the gateway's utime + stime over the measured window / the requests of that window.
# ACCESS_LOG=FILE: both gateways write their access log (access_log: FILE; a 503 of the admission is a line too).
# Run from anywhere: lab/admission/shed-cost.sh   (about a minute; ports 127.0.0.5:18080-18081, 127.0.0.2-4:19001)
set -eu
NAME=shed-cost
. "$(dirname "$0")/setup.sh"
log_line=
[ -n "${ACCESS_LOG:-}" ] && log_line="access_log: \"$ACCESS_LOG\""
printf 'listen: 127.0.0.5:18080\n%s\nadmission: { enabled: true, queue: 0, routes: { "GET /a/{id}": 1 } }\nroutes:\n  - get: /a/{id}\n    timeout: 10s\n%s\n' "$log_line" "$calls" > "$work/shed.yaml"
printf 'listen: 127.0.0.5:18081\n%s\nadmission: { enabled: false }\nroutes:\n  - get: /a/{id}\n    timeout: 10s\n%s\n' "$log_line" "$calls" > "$work/served.yaml"

echo "command: ${ACCESS_LOG:+ACCESS_LOG=$ACCESS_LOG }lab/admission/shed-cost.sh"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr), $("$java" -version 2>&1 | head -1)"
start_upstream
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
for model in shed served; do
  port=$([ $model = shed ] && echo 18080 || echo 18081)
  url="http://127.0.0.5:$port/a/1?latency=250ms"
  taskset -c 1 "$java" -Xmx6g -XX:+UseG1GC -XX:+UseTransparentHugePages -cp "$jar" dev.weft.cli.Main \
    gateway --config "$work/$model.yaml" > "$work/gateway-$model.log" 2>&1 &
  gw=$!
  pids+=($gw)
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.5:$port/-/health" && break
    kill -0 $gw 2> /dev/null || { echo "shed-cost: the gateway stopped:" >&2; cat "$work/gateway-$model.log" >&2; exit 1; }
    sleep 0.2
  done
  taskset -c 0 "$java" -cp "$lab" dev.weft.cli.Main bench -c 200 -d 10s --warmup 1s "$url" > /dev/null 2>&1
  c0=$(cpu_ticks $gw)
  taskset -c 0 "$java" -cp "$lab" dev.weft.cli.Main bench -c 1000 -d 15s --warmup 0s "$url" > "$work/bench-$model.txt" 2>&1
  c1=$(cpu_ticks $gw)
  n=$(sed -n 's/^closed loop, [0-9]* concurrent: \([0-9]*\) requests.*/\1/p' "$work/bench-$model.txt")
  grep -E "^closed loop|^errors" "$work/bench-$model.txt" | sed "s/^/$model: /"
  awk -v m=$model -v t=$((c1 - c0)) -v hz="$hz" -v n="$n" \
    'BEGIN { printf "%s: gateway CPU %.2f s for %d requests: %.1f us a request\n", m, t / hz, n, t / hz / n * 1e6 }'
  kill $gw
  wait $gw 2> /dev/null || true
done
