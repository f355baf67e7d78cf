#!/usr/bin/env bash
# Installs h2spec (the HTTP/2 conformance suite, github.com/summerwind/h2spec) with the Go toolchain into
# ${WEFT_TOOLS:-$HOME/.cache/weft/tools} and prints the binary's path. Needs `go` (1.21 or later) and the Go
# module proxy. Already installed: prints the path and does nothing else.
set -euo pipefail
VERSION="${H2SPEC_VERSION:-v2.2.1+incompatible}"  # h2spec has no /v2 module path: the proxy serves it as +incompatible
DIR="${WEFT_TOOLS:-$HOME/.cache/weft/tools}/h2spec-$VERSION"
if [[ -x "$DIR/h2spec" ]]; then
  echo "$DIR/h2spec"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-h2spec: go is not on PATH (install Go from https://go.dev/dl/)" >&2
  exit 2
fi
mkdir -p "$DIR"
GOBIN="$DIR" GOFLAGS=-mod=mod go install "github.com/summerwind/h2spec/cmd/h2spec@$VERSION" >&2
echo "$DIR/h2spec"
