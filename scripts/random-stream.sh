#!/usr/bin/env bash
# Random command streams against the core and a real Redis, side by side: the
# same seeded commands (strings, bits, BITFIELD, HyperLogLog, sorted sets, geo,
# hashes with field TTLs, sets, lists, keyspace commands; edge arguments) go to
# both servers, and every reply and every key afterwards is compared
# (scripts/random_stream.py says what is not counted: orders and draws Redis
# itself does not repeat, TTLs a moment apart).
#
#   scripts/random-stream.sh                      seeds 1-8, 4,000 commands each
#   scripts/random-stream.sh --seeds 100-140 --commands 10000
#   scripts/random-stream.sh --debug-core         the core built without optimisation,
#                                                 so an arithmetic overflow panics
#                                                 (and is logged) instead of wrapping
#   scripts/random-stream.sh --families zsets_geo,keyspace
#   scripts/random-stream.sh --out DIR            out/random-stream.{txt,json} by default
#
# Starts a private Redis and the core's listener on free 127.0.0.1 ports and always
# stops them. Exit 1 when a difference was found, or the core logged a panic.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cd "$root"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=servers.sh
. "$here/servers.sh"

out=out
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --debug-core) export SERVERS_CORE_PROFILE=debug; shift ;;
    --seeds|--commands|--resp|--families) pass+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "random-stream: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

mkdir -p "$out"
servers_start
status=0
python3 "$here/random_stream.py" --core-port "$CORE_PORT" --redis-port "$REDIS_PORT" \
  --json-out "$out/random-stream.json" "${pass[@]}" | tee "$out/random-stream.txt" || status=1
panics="$("$REDIS_BIN_DIR/redis-cli" -h 127.0.0.1 -p "$CORE_PORT" INFO | tr -d '\r' \
  | sed -n 's/^redislab_core_panics://p')"
echo "core panics logged: ${panics:-unknown} (the core's log: $SERVERS_TMP/core.log)" | tee -a "$out/random-stream.txt"
if [ "${panics:-0}" != 0 ]; then
  grep -m 5 "BUG" "$SERVERS_TMP/core.log" >&2 || true
  status=1
fi
echo "random-stream: wrote $out/random-stream.txt and $out/random-stream.json" >&2
exit "$status"
