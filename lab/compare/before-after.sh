#!/bin/bash
# Runs labs from two builds alternately (before, after, after, before, ...), each lab from its own build's
# weft-lab.jar, so that the services it starts are that build's. Prints each run's raw rows; compare the sums of
# each build's runs, and the spread of each build's own runs, as docs/journal/round-30.md does.
#
#   lab/compare/before-after.sh BEFORE_ROOT AFTER_ROOT [ORDER] -- LAB ARGS...
#   lab/compare/before-after.sh /work/wt/before . "before after after before" -- system-a --models weft --latency 100ms,1s --duration 15s
#
# BEFORE_ROOT and AFTER_ROOT are checkouts with their jars built (./weft builds them); each lab runs with its root
# as the working directory. ORDER defaults to "before after after before".
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
before=$(cd "$1" && pwd); after=$(cd "$2" && pwd); shift 2
order="before after after before"
if [ "$1" != "--" ]; then order=$1; shift; fi
[ "$1" = "--" ] || { echo "before-after.sh: expected -- before the lab's arguments" >&2; exit 2; }
shift
. "$(dirname "$0")/../../bin/jdk.sh"
weft_find_jdk || exit 2
jdk=$WEFT_JDK
jar_of() { # the lab jar of a checkout: weft-lab/target (since the house moves) or weft-cli/target (before them)
  for j in "$1/weft-lab/target/weft-lab.jar" "$1/weft-cli/target/weft-lab.jar"; do
    [ -f "$j" ] && { echo "$j"; return; }
  done
  echo "before-after.sh: no weft-lab.jar under $1 (run ./weft --help there first)" >&2; exit 1
}
bj=$(jar_of "$before"); aj=$(jar_of "$after")
for name in $order; do
  case $name in
    before) root=$before; jar=$bj ;;
    after) root=$after; jar=$aj ;;
    *) echo "before-after.sh: ORDER names 'before' and 'after' only, not '$name'" >&2; exit 2 ;;
  esac
  echo "=== $name $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') lab $1 $(date -u +%T)"
  (cd "$root" && "$jdk/bin/java" -jar "$jar" lab "$@" 2>&1 | grep -Ev '^bench: ') || echo "=== that run failed (above)"
done
echo "=== end $(date -u +%T)"
