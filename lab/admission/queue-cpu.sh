#!/bin/sh
# What a full admission queue costs while it waits: the process's CPU per second with WAITERS requests (default
# 100, admission.queue's default) queued behind a route limit of 1, nothing else running
# (lab/admission/QueueCpu.java; one process; run it with 0 for the JVM's own idle CPU).
# Run from anywhere: lab/admission/queue-cpu.sh [WAITERS]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
. bin/jdk.sh
weft_lab_program lab/admission/QueueCpu.java "${1:-100}"
