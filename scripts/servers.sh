# Sourced by client-compat.sh and cli-tools-check.sh: start a private Redis and the
# core's listener on free 127.0.0.1 ports, and always stop them (EXIT, INT, TERM, HUP).
#
#   . scripts/servers.sh
#   servers_start            # sets REDIS_PORT CORE_PORT REDIS_BIN_DIR SERVERS_TMP
#
# Needs: scripts/get-redis.sh, cargo (builds redislab-listener once), python3 (free ports).

SERVERS_PIDS=()
SERVERS_TMP=""

servers_stop() {
  local p
  for p in "${SERVERS_PIDS[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${SERVERS_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  SERVERS_PIDS=()
  [ -n "$SERVERS_TMP" ] && rm -rf "$SERVERS_TMP"
  SERVERS_TMP=""
}

servers_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

servers_wait() { # port what
  local i
  for i in $(seq 100); do
    if [ "$("$REDIS_BIN_DIR/redis-cli" -h 127.0.0.1 -p "$1" PING 2>/dev/null)" = PONG ]; then return 0; fi
    sleep 0.1
  done
  echo "ERROR: $2 did not answer PING on 127.0.0.1:$1" >&2
  return 1
}

servers_start() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  command -v python3 >/dev/null || { echo "ERROR: python3 is missing: apt-get install -y python3" >&2; return 2; }
  REDIS_BIN_DIR="$("$root/scripts/get-redis.sh")"
  # SERVERS_CORE_PROFILE=debug: the core built without optimisation, where an
  # arithmetic overflow panics (scripts/random-stream.sh --debug-core).
  local core_bin="$root/target/release/redislab-core-server" profile=(--release)
  if [ "${SERVERS_CORE_PROFILE:-release}" = debug ]; then
    core_bin="$root/target/debug/redislab-core-server" profile=()
  fi
  echo "building the core's listener (cargo build ${profile[*]} -p redislab-listener)" >&2
  (cd "$root" && cargo build "${profile[@]}" -q -p redislab-listener) || { echo "ERROR: cargo build failed" >&2; return 2; }
  SERVERS_TMP="$(mktemp -d "${TMPDIR:-/tmp}/redislab-servers.XXXXXX")"
  trap servers_stop EXIT
  trap 'servers_stop; exit 130' INT TERM HUP
  REDIS_PORT="$(servers_free_port)"
  "$REDIS_BIN_DIR/redis-server" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$SERVERS_TMP" --logfile "$SERVERS_TMP/redis.log" --daemonize no </dev/null >/dev/null 2>&1 &
  SERVERS_PIDS+=($!)
  CORE_PORT="$(servers_free_port)"
  (cd "$SERVERS_TMP" && exec "$core_bin" --port "$CORE_PORT") \
    </dev/null >"$SERVERS_TMP/core.log" 2>&1 &
  SERVERS_PIDS+=($!)
  servers_wait "$REDIS_PORT" redis-server
  servers_wait "$CORE_PORT" "the core's listener"
  REDIS_VERSION="$("$REDIS_BIN_DIR/redis-server" --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p')"
  export REDIS_PORT CORE_PORT REDIS_BIN_DIR REDIS_VERSION SERVERS_TMP
  echo "redis $REDIS_VERSION on 127.0.0.1:$REDIS_PORT, core on 127.0.0.1:$CORE_PORT" >&2
}
