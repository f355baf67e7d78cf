#!/usr/bin/env bash
# Loads weft's HTTP/2 door with h2load (nghttp2-client; lab/h2/install-h2load.sh): weft's server
# (dev.weft.lab.ServerProcess weft: GET answers a 27-byte JSON body, h2c with prior knowledge) in a JVM of its own,
# then h2load over ONE connection with many streams at once.
#   usage: lab/h2/h2load.sh [STREAMS] [SECONDS] [CONNECTIONS]   (defaults 100 10 1)
#   N=<requests>: a fixed count of requests instead of SECONDS (then the server's CPU per request compares runs)
#   WARM=<requests>: that many requests first, unmeasured (the JIT's warm-up)
# Prints h2load's report, then the server's CPU seconds during the measured run (user + system).
#   H1=1: h2load speaks HTTP/1.1 instead (CONNECTIONS connections, one request at a time each), for comparison
#   JAR: the weft-lab.jar to take the server from (default weft-lab/target/weft-lab.jar; ./mvnw -DskipTests package)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
streams=${1:-100}
seconds=${2:-10}
conns=${3:-1}
jar=${JAR:-$root/weft-lab/target/weft-lab.jar}
. "$root/bin/jdk.sh"
weft_find_jdk || exit 2
java=$WEFT_JDK/bin/java
h2load=$("$root/lab/h2/install-h2load.sh")
fifo=$(mktemp -u)
mkfifo "$fifo"
out=$(mktemp)
"$java" -Xmx1g -cp "$jar" dev.weft.lab.ServerProcess weft < "$fifo" > "$out" 2>&1 &
server=$!
exec 3> "$fifo" # the server runs until this is closed
trap 'exec 3>&-; wait $server 2>/dev/null; rm -f "$fifo" "$out"' EXIT
for _ in $(seq 1 100); do
  grep -q '^READY' "$out" && break
  sleep 0.1
done
url=$(sed -n 's/^READY //p' "$out")/lab
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$server/stat"; }
h1=()
[[ "${H1:-}" == 1 ]] && h1=(--h1)
if [[ -n "${WARM:-}" ]]; then
  "$h2load" "${h1[@]}" -c "$conns" -m "$([[ -n ${h1[*]} ]] && echo 1 || echo "$streams")" -n "$WARM" "$url" > /dev/null
fi
before=$(cpu)
if [[ -n "${N:-}" ]]; then
  span=(-n "$N")
else
  span=(-D "$seconds" --warm-up-time=2)
fi
if [[ "${H1:-}" == 1 ]]; then
  "$h2load" --h1 -c "$conns" -m 1 "${span[@]}" "$url"
else
  "$h2load" -c "$conns" -m "$streams" "${span[@]}" "$url"
fi
echo "server CPU s: $(awk -v a="$before" -v b="$(cpu)" 'BEGIN {printf "%.2f", b - a}')"
