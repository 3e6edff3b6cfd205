#!/usr/bin/env bash
# ./run.sh bench: redis-benchmark (from the same Redis build as the labs) against the
# core's listener and a private Redis, started here on loopback and always stopped.
#
#   scripts/bench.sh [--out DIR] [--requests N] [--rounds N]    default runs/bench.{txt,json}
#
# See scripts/bench.py for what is measured (and crates/harness/src/bin/bench_inprocess.rs
# for the in-process section and the memory per type). Ratios core/Redis inside one run are the
# figures to read: this machine is shared and absolute numbers move.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cd "$root"
# shellcheck source=servers.sh
. "$here/servers.sh"
out=runs
requests=100000
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "bench: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
servers_start
echo "building the in-process bench (cargo build --release -p redislab-harness --bin bench_inprocess)" >&2
cargo build --release -q -p redislab-harness --bin bench_inprocess
[ -x "$REDIS_BIN_DIR/redis-benchmark" ] || { echo "bench: no redis-benchmark in $REDIS_BIN_DIR (rerun scripts/get-redis.sh)" >&2; exit 2; }
# The core beside another Rust implementation (yo-kv, crates.io) in process: a
# workspace of its own (bench/peers), so the test suite never builds yo-kv. A
# build that fails (no registry) leaves the section out, not the bench.
target="${CARGO_TARGET_DIR:-$root/target}"
peers=()
echo "building the peers bench (cargo build --release --manifest-path bench/peers/Cargo.toml)" >&2
if cargo build --release -q --manifest-path "$root/bench/peers/Cargo.toml" --target-dir "$target"; then
  peers=(--peers-bin "$target/release/zset_peers")
else
  echo "bench: the peers section (yo-kv) could not be built; it is left out of this run" >&2
fi
python3 "$here/bench.py" --bench-bin "$REDIS_BIN_DIR/redis-benchmark" --redis-port "$REDIS_PORT" \
  --core-port "$CORE_PORT" --redis-version "$REDIS_VERSION" --requests "$requests" --rounds "$rounds" --out "$out" \
  --redis-pid "${SERVERS_PIDS[0]}" --core-pid "${SERVERS_PIDS[1]}" \
  --inprocess-bin "$target/release/bench_inprocess" "${peers[@]}"
