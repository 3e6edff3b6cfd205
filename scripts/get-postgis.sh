#!/usr/bin/env bash
# Install (once) and print the bin directory of Debian bookworm's PostgreSQL 15 with
# PostGIS 3 (packages postgresql-15 and postgresql-15-postgis-3), for lab 05n-spatial.
#
# PostGIS is not built for the npm PostgreSQL 18.4 the other labs use, so the PostGIS
# rows run on this second server; the harness starts it like the 18.4 one (initdb in
# a temporary directory, as 'nobody' when root, loopback only) and stops it at the end.
# Nothing is started here, and nothing comes from outside Debian's archive.
# Installing needs root (CI runs as root); without root the script says which command
# to run and exits 1. Idempotent: with both packages present it only prints the path.
#
# Usage: scripts/get-postgis.sh   -> prints /usr/lib/postgresql/15/bin on stdout
set -euo pipefail

bindir=/usr/lib/postgresql/15/bin
control=/usr/share/postgresql/15/extension/postgis.control

if [ ! -x "$bindir/postgres" ] || [ ! -x "$bindir/initdb" ] || [ ! -f "$control" ]; then
  pkgs=(postgresql-15 postgresql-15-postgis-3)
  if [ "$(id -u)" != 0 ]; then
    echo "get-postgis.sh: PostgreSQL 15 + PostGIS 3 missing; install with: sudo apt-get install -y ${pkgs[*]}" >&2
    exit 1
  fi
  echo "get-postgis.sh: installing ${pkgs[*]} from Debian ..." >&2
  apt-get update -q >&2
  # The packages may create their own cluster (main, port 5432); the harness never uses it.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >&2
fi
[ -f "$control" ] || { echo "get-postgis.sh: $control missing after install" >&2; exit 1; }
echo "$bindir"
