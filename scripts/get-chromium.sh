#!/usr/bin/env bash
# Install (once) and print the path of a headless-capable Chromium for the report
# test (crates/site/tests/chromium.rs), and gdb for lab 05k-skiplist.
#
# Both come from Debian's own packages (`chromium`, `gdb`); nothing is downloaded
# from elsewhere. Installing needs root (CI runs as root); without root the script
# says which command to run and exits 1.
#
# Usage: scripts/get-chromium.sh   -> prints /usr/bin/chromium on stdout
set -euo pipefail

need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v gdb >/dev/null || need+=(gdb)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "get-chromium.sh: missing ${need[*]}; install with: sudo apt-get install -y ${need[*]}" >&2
    exit 1
  fi
  echo "get-chromium.sh: installing ${need[*]} from Debian ..." >&2
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2
fi
echo /usr/bin/chromium
