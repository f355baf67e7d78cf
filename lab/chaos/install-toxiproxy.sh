#!/usr/bin/env bash
# Installs Toxiproxy (github.com/Shopify/toxiproxy/v2, from the Go module proxy) for the chaos suite
# (weft-lab's ChaosLab, `weft lab chaos`, ChaosIT) and prints the path of toxiproxy-server.
# Usage: lab/chaos/install-toxiproxy.sh [DIR]   (default DIR: ~/.cache/weft/toxiproxy/VERSION)
# Exits 3 with one line on stderr when Go is absent (the callers print that line as their skip reason).
set -euo pipefail
VERSION="${TOXIPROXY_VERSION:-v2.12.0}"
DIR="${1:-${HOME}/.cache/weft/toxiproxy/${VERSION}}"
if [[ -x "${DIR}/server" ]]; then
  echo "${DIR}/server"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "toxiproxy: no 'go' on PATH to install github.com/Shopify/toxiproxy/v2@${VERSION} (install Go 1.22+ or put toxiproxy-server at ${DIR}/server)" >&2
  exit 3
fi
mkdir -p "${DIR}"
GOBIN="${DIR}" GOFLAGS=-mod=mod go install "github.com/Shopify/toxiproxy/v2/cmd/server@${VERSION}" >&2
echo "${DIR}/server"
