# Weft: find a JDK 25 or newer. POSIX sh; sourced by ./weft and ./mvnw.
# Order: $JAVA_HOME, then the newest under /usr/lib/jvm (Linux) and
# /Library/Java/JavaVirtualMachines (macOS). Sets WEFT_JDK on success.

WEFT_MIN_JDK=25

# Prints the major version of the JDK at $1 (needs bin/java and bin/javac), or nothing.
weft_jdk_major() {
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  _weft_v=
  if [ -f "$1/release" ]; then
    _weft_v=$(sed -n 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$1/release")
  fi
  if [ -z "$_weft_v" ]; then
    _weft_v=$("$1/bin/java" -version 2>&1 | sed -n '1s/.*version "\([0-9][0-9]*\).*/\1/p')
  fi
  printf '%s' "$_weft_v"
}

weft_find_jdk() {
  WEFT_JDK=
  if [ -n "${JAVA_HOME:-}" ]; then
    _weft_m=$(weft_jdk_major "$JAVA_HOME")
    if [ -n "$_weft_m" ] && [ "$_weft_m" -ge "$WEFT_MIN_JDK" ]; then
      WEFT_JDK=$JAVA_HOME
      return 0
    fi
  fi
  _weft_best=0
  _weft_noglob=0
  case $- in *f*) _weft_noglob=1; set +f ;; esac
  for _weft_h in /usr/lib/jvm/* /Library/Java/JavaVirtualMachines/*/Contents/Home; do
    [ -d "$_weft_h" ] || continue
    _weft_m=$(weft_jdk_major "$_weft_h")
    if [ -n "$_weft_m" ] && [ "$_weft_m" -ge "$WEFT_MIN_JDK" ] && [ "$_weft_m" -gt "$_weft_best" ]; then
      _weft_best=$_weft_m
      WEFT_JDK=$_weft_h
    fi
  done
  [ "$_weft_noglob" = 1 ] && set -f
  if [ -z "$WEFT_JDK" ]; then
    echo "weft: no JDK $WEFT_MIN_JDK or newer found (looked at JAVA_HOME=${JAVA_HOME:-<unset>}, /usr/lib/jvm and /Library/Java/JavaVirtualMachines)." >&2
    echo "weft: install one, e.g. Eclipse Temurin 25 (https://adoptium.net, Debian/Ubuntu package temurin-25-jdk), then set JAVA_HOME to it." >&2
    return 1
  fi
  return 0
}

# Runs one of lab/'s one-file Java programs on the product jar: finds the JDK, builds the jars once if needed
# (./weft), then execs java. From the source tree's root: weft_lab_program lab/DIR/Program.java [ARGS...]
weft_lab_program() {
  weft_find_jdk || exit 2
  ./weft --version > /dev/null # builds the jars once, if needed
  exec "$WEFT_JDK/bin/java" -cp weft-cli/target/weft.jar "$@"
}
