#!/usr/bin/env bash
# Installs Toxiproxy (github.com/Shopify/toxiproxy/v2, from the Go module proxy) for the chaos suite
# (weft-lab's ChaosLab, `weft lab chaos`, ChaosIT) and prints the path of toxiproxy-server.
# Usage: lab/chaos/install-toxiproxy.sh [DIR]   (default DIR: ~/.cache/weft/toxiproxy/VERSION)
# Exits 3 with one line on stderr when Go is absent (the callers print that line as their skip reason).
set -euo pipefail
VERSION="${TOXIPROXY_VERSION:-v2.12.0}"
DIR="${1:-${HOME}/.cache/weft/toxiproxy/${VERSION}}"
exec "$(dirname "$0")/../tools/go-install.sh" "github.com/Shopify/toxiproxy/v2/cmd/server@${VERSION}" server "${DIR}"
