#!/bin/bash
# What tracing costs the gateway in CPU per request, at a fixed rate below its capacity (issue 14).
#
# The lab system-a run saturates 2 cores shared by the gateway, the backends, the load generator and the
# OTLP receiver, and its throughput moves by 20-30% between runs of one model; this measures instead the
# gateway process's own CPU (utime + stime from /proc) over a fixed number of requests sent on a fixed
# schedule (weft bench, open loop), the receiver in a process of its own. Models, in the order given:
#   plain    the System A route (three calls in parallel, backends at 10 ms), no tracing.otlp
#   traced   the same with tracing: {otlp, sample: 1.0}: every span exported
#   sampled  the same with tracing: {otlp, sample: 0.1}
# Each model: a fresh gateway, WARMUP at the rate, then DUR measured. The last column splits the measured
# CPU by thread (name without its number, 1/100 s each, those above 0.05 s): the virtual threads' carriers
# (ForkJoinPool) do the requests, and with tracing write each span as it ends; weft-otlp-export sends the
# batches; C1/C2 CompilerThread is the JIT still compiling (more code in the traced models, so a short
# warm-up charges it to them).
# Environment: RATE (default 2000 req/s), DUR (default 15s), WARMUP (default 30s), MODELS (default: three
# of each, alternated); GATEWAY_CPUS and OTHER_CPUS (taskset lists, e.g. 1 and 0; default unset: no pinning)
# run the gateway on CPUs of its own and everything else (backends, receiver, load) on the others, so that
# the gateway's CPU per request is not charged with its neighbours' (its JVM then sees only its CPUs).
# Uses 127.0.0.1:18080 (gateway), 127.0.0.2-4:19001 (backends), 127.0.0.5:14318 (the receiver: weft
# upstream, which answers the exports 200 and counts them). Run from anywhere: lab/tracing/cpu-per-request.sh
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
RATE=${RATE:-2000}
DUR=${DUR:-15s}
WARMUP=${WARMUP:-30s}
MODELS=${MODELS:-plain traced sampled sampled traced plain plain sampled traced}
GATEWAY_CPUS=${GATEWAY_CPUS:-}
OTHER_CPUS=${OTHER_CPUS:-}
gw_pin=(); other_pin=()
[ -n "$GATEWAY_CPUS" ] && gw_pin=(taskset -c "$GATEWAY_CPUS")
[ -n "$OTHER_CPUS" ] && other_pin=(taskset -c "$OTHER_CPUS")
work=$(mktemp -d /tmp/weft-tracing-cpu.XXXXXX)
./weft --version > /dev/null # builds the jars once, if needed
echo "command: lab/tracing/cpu-per-request.sh (RATE=$RATE DUR=$DUR WARMUP=$WARMUP MODELS=\"$MODELS\" GATEWAY_CPUS=$GATEWAY_CPUS OTHER_CPUS=$OTHER_CPUS)"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(git rev-parse --short HEAD)"
echo "started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
WEFT_NO_BUILD=1 "${other_pin[@]}" ./weft upstream --quiet --listen 127.0.0.2:19001,127.0.0.3:19001,127.0.0.4:19001 > "$work/sim.log" 2>&1 &
pids+=($!)
WEFT_NO_BUILD=1 "${other_pin[@]}" ./weft upstream --quiet --listen 127.0.0.5:14318 > "$work/otlp.log" 2>&1 &
pids+=($!)
for i in $(seq 1 60); do curl -s -o /dev/null http://127.0.0.5:14318/-/health && break; sleep 0.5; done
base='listen: 127.0.0.1:18080
limits: { max_concurrent: 5000, max_connections: 5000, max_wait: 1s }
destination_defaults: { max_in_flight: 5000, max_connections: 4000, retry: { attempts: 1 }, breaker: { enabled: false } }
routes:
  - get: /a/{id}
    timeout: 50s
    calls:
      b: { url: "http://127.0.0.2:19001/b/{path.id}?latency={query.latency}", timeout: 50s }
      c: { url: "http://127.0.0.3:19001/c/{path.id}?latency={query.latency}", timeout: 50s }
      d: { url: "http://127.0.0.4:19001/d/{path.id}?latency={query.latency}", timeout: 50s }'
echo "$base" > "$work/plain.yaml"
printf '%s\ntracing: { otlp: "http://127.0.0.5:14318", sample: 1.0 }\n' "$base" > "$work/traced.yaml"
printf '%s\ntracing: { otlp: "http://127.0.0.5:14318", sample: 0.1 }\n' "$base" > "$work/sampled.yaml"
tck=$(getconf CLK_TCK)
# each thread of a process: id, CPU ticks (utime + stime), name (spaces as _)
threads() {
  for t in /proc/"$1"/task/*; do
    echo "${t##*/} $(awk '{print $14 + $15}' "$t/stat" 2>/dev/null || echo 0) $(tr ' ' '_' < "$t/comm" 2>/dev/null)"
  done
}
url='http://127.0.0.1:18080/a/1?latency=10ms'
echo "| model | gateway CPU s | requests | CPU us per request | bench | CPU by thread (1/100 s) |"
echo "|---|---:|---:|---:|---|---|"
for m in $MODELS; do
  [ -f "$work/$m.yaml" ] || { echo "unknown model '$m' (plain, traced, sampled)" >&2; exit 2; }
  WEFT_NO_BUILD=1 WEFT_JAVA_OPTS="-Xmx2g -XX:+UseG1GC" "${gw_pin[@]}" ./weft gateway --config "$work/$m.yaml" > "$work/gw-$m.log" 2>&1 &
  gw=$!
  pids+=($gw)
  for i in $(seq 1 120); do curl -s -o /dev/null "$url" && break; sleep 0.5; done
  WEFT_NO_BUILD=1 "${other_pin[@]}" ./weft bench -r "$RATE" -c 3000 -d "$WARMUP" "$url" > /dev/null 2>&1
  t0=$(awk '{print $14 + $15}' "/proc/$gw/stat")
  threads "$gw" > "$work/threads0"
  WEFT_NO_BUILD=1 "${other_pin[@]}" ./weft bench -r "$RATE" -c 3000 -d "$DUR" --warmup 0s "$url" > "$work/bench-$m.txt" 2>&1
  t1=$(awk '{print $14 + $15}' "/proc/$gw/stat")
  threads "$gw" > "$work/threads1"
  split=$(awk 'NR == FNR {a[$1] = $2; next} {n = $3; sub(/[-#]?[0-9]+$/, "", n); s[n] += $2 - a[$1]}
               END {for (k in s) if (s[k] > 5) printf "%s %d, ", k, s[k]}' "$work/threads0" "$work/threads1")
  reqs=$(grep -oE '[0-9]+ requests in' "$work/bench-$m.txt" | head -1 | awk '{print $1}')
  summary=$(grep -E '^open loop' "$work/bench-$m.txt" | head -1)
  awk -v m="$m" -v a="$t0" -v b="$t1" -v t="$tck" -v n="$reqs" -v s="$summary" -v x="${split%, }" \
      'BEGIN {c = (b - a) / t; printf "| %s | %.2f | %d | %.1f | %s | %s |\n", m, c, n, 1e6 * c / n, s, x}'
  kill "$gw"; wait "$gw" 2>/dev/null || true
done
echo "receiver: $(curl -s http://127.0.0.5:14318/-/stats | grep -oE '"/v1/traces":\{"requests":[0-9]+' | grep -oE '[0-9]+$') exports, $(curl -s http://127.0.0.5:14318/-/stats | grep -oE '"bytes_received":[0-9]+' | grep -oE '[0-9]+$') bytes"
rm -rf "$work"
