#!/usr/bin/env bash
# Issue 46's closed-loop shapes for the default admission, each model a fresh `weft gateway` on 127.0.0.1:18080
# (System A's route: three calls in parallel to `weft upstream` on 127.0.0.2-4:19001-3), nothing pinned:
#   c4800    4,800 callers at 1 s backends (20 s after 8 s of warm-up), then at once the backends at 2 s (20 s, same
#            process): a closed loop must get what it gets without admission, and a backend that slows down is not
#            the gateway's overload
#   lognorm  2,000 callers, backends lognormal p50 100 ms, p99 1 s (a wide spread is not queueing)
#   cold     2,000 callers at 100 ms straight into a fresh process, 10 s
# Models: default (no admission: block), off (admission: { enabled: false }), q0 (admission: { queueing: 0 }).
# SHAPES (default "c4800 lognorm cold"), C4800_MODELS (default "default off off default"), LOG (default
# /tmp/weft-shapes.log: each bench's result and the admission's gauges after it are appended there too).
# Run from the repository: lab/admission/shapes.sh   (about 4 min for c4800, 1 min each for the others)
set -u
cd "$(dirname "$0")/../.."
LOG=${LOG:-/tmp/weft-shapes.log}
work=$(mktemp -d)
./weft upstream --quiet --listen 127.0.0.2:19001,127.0.0.3:19002,127.0.0.4:19003 >$work/up.log 2>&1 &
UP=$!
sleep 4
cfg() { # $1: admission line
cat > $work/gw-$2.yaml <<YAML
listen: 127.0.0.1:18080
$1
routes:
  - get: /a/{id}
    timeout: 10s
    calls:
      b: { url: "http://127.0.0.2:19001/b/{path.id}?latency={query.latency}", timeout: 5s }
      c: { url: "http://127.0.0.3:19002/c/{path.id}?latency={query.latency}", timeout: 5s }
      d: { url: "http://127.0.0.4:19003/d/{path.id}?latency={query.latency}", timeout: 5s }
YAML
}
cfg "" default
cfg "admission: { enabled: false }" off
cfg "admission: { queueing: 0 }" q0
gw() { ./weft gateway --config $work/gw-$1.yaml >$work/gw-$1.out 2>&1 & GW=$!; for i in $(seq 1 60); do curl -sf http://127.0.0.1:18080/-/health >/dev/null && return; sleep 0.5; done; echo "gateway $1 did not start"; }
stop() { kill $GW; wait $GW 2>/dev/null; sleep 2; }
shape() { # $1 name, then models
  local name=$1; shift
  for m in "$@"; do
    echo "=== $name $m $(date +%H:%M:%S)" | tee -a $LOG
    gw $m
    case $name in
      c4800)  ./weft bench -c 4800 -d 20s --warmup 8s --timeout 30s "http://127.0.0.1:18080/a/1?latency=1s" 2>&1 | grep -E "command|closed loop|throughput|latency ms|errors by" | tee -a $LOG
              echo "--- then backends at 2s, same process" | tee -a $LOG
              ./weft bench -c 4800 -d 20s --warmup 0s --timeout 30s "http://127.0.0.1:18080/a/1?latency=2s" 2>&1 | grep -E "command|closed loop|throughput|latency ms|errors by" | tee -a $LOG ;;
      lognorm) ./weft bench -c 2000 -d 15s --warmup 5s --timeout 30s "http://127.0.0.1:18080/a/1?latency=lognormal:p50=100ms,p99=1s" 2>&1 | grep -E "command|closed loop|throughput|latency ms|errors by" | tee -a $LOG ;;
      cold)   ./weft bench -c 2000 -d 10s --warmup 0s --timeout 30s "http://127.0.0.1:18080/a/1?latency=100ms" 2>&1 | grep -E "command|closed loop|throughput|latency ms|errors by" | tee -a $LOG ;;
    esac
    curl -s http://127.0.0.1:18080/-/metrics | grep -E "^weft_admission_(shed_all|latency_ratio)" | tee -a $LOG
    stop
  done
}
for s in ${SHAPES:-c4800 lognorm cold}; do
  case $s in
    c4800) shape c4800 ${C4800_MODELS:-default off off default} ;;
    lognorm) shape lognorm default off ;;
    cold) shape cold default off ;;
  esac
done
kill $UP; wait $UP 2>/dev/null
echo "=== end $(date +%H:%M:%S)" | tee -a $LOG
