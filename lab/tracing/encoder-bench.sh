#!/bin/sh
# What writing spans as an OTLP protobuf request costs a span: the SDK's marshalers against Weft's
# OtlpTraceEncoder (lab/tracing/EncoderBench.java; one process, one batch of 4,096 gateway-shaped spans).
# The SDK's marshalers are not in weft.jar (the gateway no longer uses them): they come from the local Maven
# repository, where the build's tests put them. Run from anywhere: lab/tracing/encoder-bench.sh
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
. bin/jdk.sh
weft_find_jdk || exit 2
./weft --version > /dev/null # builds the jars once, if needed
v=$(sed -n 's:.*<opentelemetry.version>\(.*\)</opentelemetry.version>.*:\1:p' pom.xml)
m2=${MAVEN_REPO:-$HOME/.m2/repository}/io/opentelemetry
cp=weft-cli/target/weft.jar
for a in opentelemetry-exporter-otlp-common opentelemetry-exporter-common; do
  jar="$m2/$a/$v/$a-$v.jar"
  if [ ! -f "$jar" ]; then
    echo "encoder-bench: $jar is missing; run ./mvnw -B test-compile -pl weft-gateway -am once to fetch it" >&2
    exit 2
  fi
  cp="$cp:$jar"
done
exec "$WEFT_JDK/bin/java" -cp "$cp" lab/tracing/EncoderBench.java
