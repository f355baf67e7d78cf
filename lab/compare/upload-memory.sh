#!/bin/bash
# Uploads through a proxy route, for each build given: a weft upstream as the backend, that build's `weft gateway`
# with one route {prefix: /up/, proxy: the upstream, max_body: 512MiB} and limits.max_body_bytes 512MiB, then
# CLIENTS curl uploads of SIZE_MIB each at once (chunked; without Expect: 100-continue, which builds before the gateway
# answered it left unanswered, so curl waited 1 s each). Prints the command, the machine, and per
# build: the seconds until every upload was answered, the answers' statuses, and the gateway's peak RSS (VmHWM).
#
#   lab/compare/upload-memory.sh [--size-mib N] [--clients N] ROOT...
#   lab/compare/upload-memory.sh --size-mib 128 --clients 8 /work/wt/before .
#
# Each ROOT is a checkout whose jars are built (./weft builds them). Loopback only, ports 19081/19082; stops what it
# started on every way out.
set -euo pipefail
size=128; clients=8
while [ $# -gt 0 ]; do
  case $1 in
    --size-mib) size=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
command -v curl >/dev/null || { echo "upload-memory.sh: needs curl" >&2; exit 2; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
head -c $((size << 20)) /dev/urandom > "$work/body"
cat > "$work/gw.yaml" <<EOF
listen: 127.0.0.1:19082
limits: { max_body_bytes: 512MiB }
routes:
  - prefix: /up/
    proxy: http://127.0.0.1:19081/
    max_body: 512MiB
    timeout: 120s
EOF
echo "# $0 --size-mib $size --clients $clients $*"
echo "# machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
for root in "$@"; do
  root=$(cd "$root" && pwd)
  rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')
  (cd "$root" && exec ./weft upstream --listen 127.0.0.1:19081 >"$work/up.log" 2>&1) & pids+=($!)
  (cd "$root" && exec ./weft gateway --no-watch --config "$work/gw.yaml" >"$work/gw.log" 2>&1) & pids+=($!)
  for _ in $(seq 1 100); do curl -s -o /dev/null 127.0.0.1:19082/up/warm && break; sleep 0.2; done
  gw=$(pgrep -f -n "gateway --no-watch --config $work/gw.yaml" || true)
  [ -n "$gw" ] || { echo "upload-memory.sh: the gateway of $root did not start:"; cat "$work/gw.log"; exit 1; }
  t0=$(date +%s.%N)
  uploads=()
  for i in $(seq 1 "$clients"); do
    curl -s -o /dev/null -w '%{http_code}\n' -H 'Expect:' -H 'Transfer-Encoding: chunked' \
      -X POST --data-binary @"$work/body" "127.0.0.1:19082/up/u$i" > "$work/status.$i" & uploads+=($!)
  done
  wait "${uploads[@]}" || true
  t1=$(date +%s.%N)
  hwm=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$gw/status")
  echo "$rev $root: $clients uploads of $size MiB in $(echo "$t1 - $t0" | bc) s; statuses: $(sort "$work"/status.* | uniq -c | xargs); gateway peak RSS $hwm MB"
  kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; pids=()
  rm -f "$work"/status.*
done
