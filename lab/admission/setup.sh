# Sourced by lab/admission/shed-cost.sh and closed-loop.sh, after `set -eu` and with NAME set to the script's name:
# goes to the project root, finds a JDK 25+, checks for taskset and two CPUs (the gateway on CPU 1, the rest on
# CPU 0), builds the jars once if needed, and sets root, java, jar (weft.jar) and lab (weft-lab.jar).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
. bin/jdk.sh
weft_find_jdk || exit 2
command -v taskset > /dev/null || { echo "$NAME: needs taskset (util-linux: apt install util-linux)" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "$NAME: needs 2 CPUs (the gateway on CPU 1, the rest on CPU 0)" >&2; exit 2; }
./weft --version > /dev/null # builds the jars once, if needed
java=$WEFT_JDK/bin/java
jar=$root/weft-cli/target/weft.jar
lab=$root/weft-cli/target/weft-lab.jar
