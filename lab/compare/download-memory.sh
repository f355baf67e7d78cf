#!/bin/bash
# Downloads through a proxy route, held against streamed, with one build: a weft upstream as the backend, and that
# build's `weft gateway` with one route {prefix: /dl/, proxy: the upstream, max_body: 512MiB}, its destination's
# max_body 512MiB, either as it is (held) or with stream_answers: true (streamed), alternated held, streamed,
# streamed, held. CLIENTS curl downloads of SIZE_MIB each at once (at most 64, weft upstream's largest body).
# Prints the command, the machine, and per run: the seconds until every download ended, the bytes each got, and
# the gateway's peak RSS (VmHWM).
#
#   lab/compare/download-memory.sh [--size-mib N] [--clients N] [ROOT]
#   lab/compare/download-memory.sh --size-mib 64 --clients 8 .
#
# ROOT (default .) is a checkout whose jars are built (./weft builds them). Loopback only, ports 19081/19082; stops
# what it started on every way out.
set -euo pipefail
size=64; clients=8
while [ $# -gt 0 ]; do
  case $1 in
    --size-mib) size=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
root=$(cd "${1:-.}" && pwd)
[ "$size" -le 64 ] || { echo "download-memory.sh: --size-mib is at most 64 (weft upstream's largest body)" >&2; exit 2; }
command -v curl >/dev/null || { echo "download-memory.sh: needs curl" >&2; exit 2; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')
echo "# $0 --size-mib $size --clients $clients $root ($rev)"
echo "# machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
for mode in held streamed streamed held; do
  cat > "$work/gw.yaml" <<EOF
listen: 127.0.0.1:19082
destinations:
  "http://127.0.0.1:19081": { max_body: 512MiB }
routes:
  - prefix: /dl/
    proxy: http://127.0.0.1:19081/
    max_body: 512MiB
    timeout: 120s
EOF
  [ "$mode" = streamed ] && echo "    stream_answers: true" >> "$work/gw.yaml"
  (cd "$root" && exec ./weft upstream --listen 127.0.0.1:19081 >"$work/up.log" 2>&1) & pids+=($!)
  (cd "$root" && exec ./weft gateway --no-watch --config "$work/gw.yaml" >"$work/gw.log" 2>&1) & pids+=($!)
  for _ in $(seq 1 100); do curl -s -o /dev/null 127.0.0.1:19082/dl/warm && break; sleep 0.2; done
  gw=$(pgrep -f -n "gateway --no-watch --config $work/gw.yaml" || true)
  [ -n "$gw" ] || { echo "download-memory.sh: the gateway did not start:"; cat "$work/gw.log"; exit 1; }
  t0=$(date +%s.%N)
  downloads=()
  for i in $(seq 1 "$clients"); do
    curl -s -o /dev/null -w '%{http_code}:%{size_download}\n' "127.0.0.1:19082/dl/d$i?bytes=$((size << 20))" \
      > "$work/got.$i" & downloads+=($!)
  done
  wait "${downloads[@]}" || true
  t1=$(date +%s.%N)
  hwm=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$gw/status")
  echo "$mode: $clients downloads of $size MiB in $(echo "$t1 - $t0" | bc) s; status:bytes $(sort "$work"/got.* | uniq -c | xargs); gateway peak RSS $hwm MB"
  kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; pids=()
  rm -f "$work"/got.*
done
