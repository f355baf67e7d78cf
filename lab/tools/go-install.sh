#!/usr/bin/env bash
# Installs one Go command from the Go module proxy into DIR, once, and prints the binary's path. The checkers the
# tests and labs use go through it: lab/chaos/install-toxiproxy.sh, lab/h2/install-h2spec.sh.
# Usage: lab/tools/go-install.sh PACKAGE@VERSION BINARY DIR
# Already installed (DIR/BINARY executable): prints its path and does nothing else.
# Exits 3 with one line on stderr when `go` is not on PATH (the callers turn it into a skip, or a failure in CI).
set -euo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: lab/tools/go-install.sh PACKAGE@VERSION BINARY DIR" >&2
  exit 2
fi
pkg=$1
bin=$2
dir=$3
if [[ -x "$dir/$bin" ]]; then
  echo "$dir/$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "$bin: no 'go' on PATH to install $pkg (install Go 1.22+ from https://go.dev/dl/, or put $bin at $dir/$bin)" >&2
  exit 3
fi
mkdir -p "$dir"
GOBIN="$dir" GOFLAGS=-mod=mod go install "$pkg" >&2
echo "$dir/$bin"
