#!/usr/bin/env bash
# Every lab with --redis-url pointed at a second core listener (redislab-core-server),
# as a user would point a lab at "a Redis": the lab must run to the end with the core
# answering in the Redis column. PostgreSQL is left out (--no-pg); the lab's own core
# column still runs in process.
#
#   scripts/labs-on-core.sh [ids...]     all labs without ids; output in runs/on-core/
#
# Exit status 1 when a lab fails; the summary lists each lab's status and time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cd "$root"
# shellcheck source=servers.sh
. "$here/servers.sh"

out=runs/on-core
mkdir -p "$out"
mapfile -t ids < <(if [ $# -gt 0 ]; then printf '%s\n' "$@"; else ./run.sh list | awk 'NR > 1 {print $1}'; fi)
servers_start
bin="${CARGO_TARGET_DIR:-target}/release"
cargo build --release -q --workspace
status=0
summary="$out/summary.txt"
echo "labs with --redis-url redis://127.0.0.1:$CORE_PORT (the core's listener) --no-pg" >"$summary"
for id in "${ids[@]}"; do
  start=$(date +%s)
  rc=0
  "$bin/lab-$id" --redis-url "redis://127.0.0.1:$CORE_PORT" --no-pg --out "$out" \
    >"$out/$id.log" 2>&1 || rc=$?
  took=$(( $(date +%s) - start ))
  if [ "$rc" = 0 ]; then
    printf '%-22s ok    %4ss\n' "$id" "$took" >>"$summary"
  else
    printf '%-22s FAIL  %4ss  exit %s: %s\n' "$id" "$took" "$rc" "$(tail -1 "$out/$id.log")" >>"$summary"
    status=1
  fi
done
cat "$summary"
exit "$status"
