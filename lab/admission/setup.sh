# Sourced by lab/admission/shed-cost.sh and closed-loop.sh, after `set -eu` and with NAME set to the script's name:
# goes to the project root, finds a JDK 25+, checks for taskset and two CPUs (the gateway on CPU 1, the rest on
# CPU 0), builds the jars once if needed, and sets root, java, jar (weft.jar) and lab (weft-lab.jar); a scratch
# directory work and the list pids, both cleaned up at exit; calls, the route's three calls (System A's B, C and D
# on 127.0.0.2-4:19001, YAML); and start_upstream, which starts weft upstream there on CPU 0.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
. bin/jdk.sh
weft_find_jdk || exit 2
command -v taskset > /dev/null || { echo "$NAME: needs taskset (util-linux: apt install util-linux)" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "$NAME: needs 2 CPUs (the gateway on CPU 1, the rest on CPU 0)" >&2; exit 2; }
./weft --version > /dev/null # builds the jars once, if needed
java=$WEFT_JDK/bin/java
jar=$root/weft-cli/target/weft.jar
lab=$root/weft-lab/target/weft-lab.jar
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
calls='    calls:
      b: { url: "http://127.0.0.2:19001/b/{path.id}?latency={query.latency}", timeout: 5s }
      c: { url: "http://127.0.0.3:19001/c/{path.id}?latency={query.latency}", timeout: 5s }
      d: { url: "http://127.0.0.4:19001/d/{path.id}?latency={query.latency}", timeout: 5s }'
start_upstream() {
  taskset -c 0 "$java" -Xss256k -cp "$jar" dev.weft.cli.Main upstream --quiet \
    --listen 127.0.0.2:19001,127.0.0.3:19001,127.0.0.4:19001 > "$work/upstream.log" 2>&1 &
  pids+=($!)
}
