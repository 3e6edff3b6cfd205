#!/usr/bin/env bash
# The README's Reliability figures for the core beside a real Redis, in one run:
# a 40 MB inline line, EXISTS with 1,000,000 arguments, 3,000 simultaneous
# connects (each with another client's worst PING meanwhile).
#
# Usage: scripts/measure-reliability.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=servers.sh
. scripts/servers.sh
ulimit -n 16384 2>/dev/null || true
servers_start
python3 scripts/measure_reliability.py "$CORE_PORT" "$REDIS_PORT"
