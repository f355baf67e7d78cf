#!/usr/bin/env bash
# Installs h2load (nghttp2's HTTP/2 load generator) from Debian/Ubuntu's nghttp2-client package; prints its path.
set -euo pipefail
if ! command -v h2load >/dev/null 2>&1; then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  # A fresh machine may have no package lists yet: update once when the first try cannot find the package.
  $SUDO apt-get install -y nghttp2-client >&2 || { $SUDO apt-get update -qq >&2 && $SUDO apt-get install -y nghttp2-client >&2; }
fi
command -v h2load
