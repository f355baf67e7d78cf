#!/usr/bin/env bash
# Installs h2load (nghttp2's HTTP/2 load generator) from Debian/Ubuntu's nghttp2-client package; prints its path.
set -euo pipefail
if ! command -v h2load >/dev/null 2>&1; then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get install -y nghttp2-client >&2
fi
command -v h2load
