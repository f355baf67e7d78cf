#!/usr/bin/env bash
# Installs h2spec (the HTTP/2 conformance suite, github.com/summerwind/h2spec) with the Go toolchain into
# ${WEFT_TOOLS:-$HOME/.cache/weft/tools} and prints the binary's path. Needs `go` (1.21 or later) and the Go
# module proxy. Already installed: prints the path and does nothing else. Exits 3 when Go is absent.
set -euo pipefail
VERSION="${H2SPEC_VERSION:-v2.2.1+incompatible}"  # h2spec has no /v2 module path: the proxy serves it as +incompatible
DIR="${WEFT_TOOLS:-$HOME/.cache/weft/tools}/h2spec-$VERSION"
exec "$(dirname "$0")/../tools/go-install.sh" "github.com/summerwind/h2spec/cmd/h2spec@$VERSION" h2spec "$DIR"
