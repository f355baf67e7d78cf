#!/bin/sh
# What calls waiting for a connection cost while they wait: the process's CPU per second with WAITERS calls
# (default 5,000) queued for one https connect that never completes (lab/client/PoolWaitCpu.java; one process;
# run it with 0 for the JVM's own idle CPU). Run from anywhere: lab/client/pool-wait-cpu.sh [WAITERS]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
. bin/jdk.sh
weft_lab_program lab/client/PoolWaitCpu.java "${1:-5000}"
