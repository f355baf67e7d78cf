#!/bin/bash
# The admission in a closed loop: System A's route (three calls in parallel to weft upstream) under weft bench with
# 4,000 callers, each sending its next request as soon as it has an answer (a 503 too: weft bench ignores
# Retry-After). The gateway runs on CPU 1, the load and the backends on CPU 0 (taskset, util-linux).
# For each backend latency (LATS, default "1s 0ms") and each model (MODELS), a fresh gateway:
#   1. unless WARM=0: 8 s at 200 callers and 0 ms backends first (a limit learned while the backends were fast;
#      on one CPU that phase is past the CPU, and the admission cuts the limit to a few hundred);
#   2. 15 s measured after 5 s of warm-up, at C callers (default 4000) and the latency;
#   3. the bench's progress lines and result, then the admission's gauges from /-/metrics.
# MODELS: "DIR:CONFIG ..." where DIR holds weft.jar (an older build's weft-cli/target, say) and CONFIG is
#   default (no admission: block), off (admission: { enabled: false }) or on (admission: { enabled: true }).
#   Default: "weft-cli/target:off weft-cli/target:default" (this build without and with its default admission).
# GW_OPTS: the gateway's JVM flags (default -Xmx6g -XX:+UseG1GC -XX:+UseTransparentHugePages).
# Run from anywhere: lab/admission/closed-loop.sh   (about 35 s per model and latency; ports 127.0.0.5:18080,
# 127.0.0.2-4:19001)
set -eu
NAME=closed-loop
. "$(dirname "$0")/setup.sh"
ulimit -n 20000
route=$(printf 'routes:\n  - get: /a/{id}\n    timeout: 10s\n%s\n' "$calls")
printf 'listen: 127.0.0.5:18080\n%s\n' "$route" > "$work/default.yaml"
printf 'listen: 127.0.0.5:18080\nadmission: { enabled: false }\n%s\n' "$route" > "$work/off.yaml"
printf 'listen: 127.0.0.5:18080\nadmission: { enabled: true }\n%s\n' "$route" > "$work/on.yaml"
echo "command: $0 (LATS=${LATS:-1s 0ms} MODELS=${MODELS:-weft-cli/target:off weft-cli/target:default} WARM=${WARM:-1} C=${C:-4000} GW_OPTS=${GW_OPTS:-default})"
echo "machine: $(nproc) CPUs, $(uname -sr), $("$java" -version 2>&1 | head -n 1)"
start_upstream
for lat in ${LATS:-1s 0ms}; do
  for model in ${MODELS:-weft-cli/target:off weft-cli/target:default}; do
    dir=${model%%:*}
    config=${model##*:}
    [ -f "$work/$config.yaml" ] || { echo "closed-loop: unknown config '$config' (default, off, on)" >&2; exit 2; }
    [ -f "$dir/weft.jar" ] || { echo "closed-loop: no $dir/weft.jar" >&2; exit 2; }
    # shellcheck disable=SC2086
    taskset -c 1 "$java" ${GW_OPTS:--Xmx6g -XX:+UseG1GC -XX:+UseTransparentHugePages} -cp "$dir/weft.jar" dev.weft.cli.Main \
        gateway --config "$work/$config.yaml" > "$work/gateway.log" 2>&1 &
    gw=$!
    pids+=($gw)
    for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.5:18080/-/health && break; sleep 0.2; done
    if [ "${WARM:-1}" != 0 ]; then
      taskset -c 0 "$java" -cp "$lab" dev.weft.cli.Main bench -c 200 -d 8s --warmup 1s \
          "http://127.0.0.5:18080/a/1?latency=0ms" > /dev/null 2>&1
    fi
    taskset -c 0 "$java" -cp "$lab" dev.weft.cli.Main bench -c "${C:-4000}" -d 15s --warmup 5s \
        "http://127.0.0.5:18080/a/1?latency=$lat" > "$work/bench.txt" 2>&1
    echo "== $(date -u +%H:%M:%S) latency $lat $model"
    grep -E '^bench: |^closed loop' "$work/bench.txt" | tail -n 5
    curl -s -m 2 http://127.0.0.5:18080/-/metrics | grep -E '^weft_admission_(limit|shed_all|cpu_share|refusing_cpu_share)' || true
    kill $gw
    wait $gw 2> /dev/null || true
  done
done
