#!/usr/bin/env bash
# Clients people use, against the core and a real Redis, in RESP2 and RESP3: the same
# scripted session (tests/clients/) runs on both servers and the transcripts are diffed.
#
#   scripts/client-compat.sh                 all clients; summary on stdout and in
#                                            out/client-compat.{txt,json}
#   scripts/client-compat.sh --strict        exit 1 when any step differs
#   scripts/client-compat.sh --out DIR       where the summary goes (transcripts: target/client-compat/)
#   scripts/client-compat.sh --only redis-py a subset: redis-py, node-redis, ioredis
#
# Clients (pinned, installed once into the cache dir, /var/cache/redis-labs as root):
#   redis-py 6.4.0 (PyPI, venv in <cache>/venv)       protocol=2 and protocol=3
#   node-redis 5.9.0 (npm `redis`, <cache>/node-clients)  default (RESP2) and RESP: 3
#   ioredis 5.9.3 (npm)                                RESP2 (it has no RESP3)
# The Rust `redis` crate's session is crates/harness/tests/client_compat.rs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cd "$root"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=servers.sh
. "$here/servers.sh"

REDIS_PY_VERSION=6.4.0
NODE_REDIS_VERSION=5.9.0
IOREDIS_VERSION=5.9.3

out=out
strict=0
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --strict) strict=1; shift ;;
    --only) only="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "client-compat: unknown option $1" >&2; exit 2 ;;
  esac
done
want() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }

cache="$(redislab_cache_dir)"
die() { echo "client-compat: ERROR: $*" >&2; exit 2; }

# --- clients ---------------------------------------------------------------------------
venv="$cache/venv"
if want redis-py; then
  command -v python3 >/dev/null || die "python3 is missing: apt-get install -y python3 python3-venv"
  if ! "$venv/bin/python" -c "import redis, sys; sys.exit(redis.__version__ != '$REDIS_PY_VERSION')" 2>/dev/null; then
    echo "client-compat: installing redis-py $REDIS_PY_VERSION into $venv (PyPI)" >&2
    python3 -m venv "$venv" || die "python3 -m venv failed: apt-get install -y python3-venv"
    "$venv/bin/pip" install -q "redis==$REDIS_PY_VERSION" || die "pip install redis==$REDIS_PY_VERSION failed"
  fi
fi
nodedir="$cache/node-clients"
if want node-redis || want ioredis; then
  command -v node >/dev/null || die "node is missing: apt-get install -y nodejs npm"
  have() { node -e "process.exit(require('$nodedir/node_modules/$1/package.json').version === '$2' ? 0 : 1)" 2>/dev/null; }
  if ! have redis "$NODE_REDIS_VERSION" || ! have ioredis "$IOREDIS_VERSION"; then
    command -v npm >/dev/null || die "npm is missing: apt-get install -y npm"
    echo "client-compat: installing redis@$NODE_REDIS_VERSION ioredis@$IOREDIS_VERSION into $nodedir (npm)" >&2
    mkdir -p "$nodedir"
    [ -f "$nodedir/package.json" ] || echo '{"name":"redislab-node-clients","private":true}' >"$nodedir/package.json"
    (cd "$nodedir" && npm install --no-audit --no-fund --silent "redis@$NODE_REDIS_VERSION" "ioredis@$IOREDIS_VERSION") \
      || die "npm install failed"
  fi
fi

# --- run -------------------------------------------------------------------------------
mkdir -p "$out"
servers_start
tdir="${CLIENT_COMPAT_TRANSCRIPTS:-target/client-compat}"
mkdir -p "$tdir"
summary="$out/client-compat.txt"
stems=()
{
  echo "Client sessions on Redis $REDIS_VERSION and the core (tests/clients/, scripts/client-compat.sh)"
  echo "steps equal / different per client and protocol; Redis is the reference"
  echo
} >"$summary.tmp"

run_one() { # label file-stem command...
  local label="$1" stem="$2"; shift 2
  local side port
  for side in redis core; do
    port="$REDIS_PORT"; [ "$side" = core ] && port="$CORE_PORT"
    if ! timeout 120 "$@" --port "$port" >"$tdir/$stem-$side.json" 2>"$tdir/$stem-$side.stderr"; then
      echo "client-compat: $label on $side exited with an error (see $tdir/$stem-$side.stderr)" >&2
    fi
  done
  python3 "$root/tests/clients/compare.py" --label "$label" "$tdir/$stem-redis.json" "$tdir/$stem-core.json" \
    --json-out "$tdir/$stem.summary.json" | tee -a "$summary.tmp"
  stems+=("$tdir/$stem.summary.json")
}

if want redis-py; then
  run_one "redis-py $REDIS_PY_VERSION RESP2" redis-py-resp2 "$venv/bin/python" tests/clients/session_py.py --protocol 2
  run_one "redis-py $REDIS_PY_VERSION RESP3" redis-py-resp3 "$venv/bin/python" tests/clients/session_py.py --protocol 3
fi
export NODE_PATH="$nodedir/node_modules"
if want node-redis; then
  run_one "node-redis $NODE_REDIS_VERSION RESP2" node-redis-resp2 node tests/clients/session_node.js --client node-redis --protocol 2
  run_one "node-redis $NODE_REDIS_VERSION RESP3" node-redis-resp3 node tests/clients/session_node.js --client node-redis --protocol 3
fi
if want ioredis; then
  run_one "ioredis $IOREDIS_VERSION RESP2" ioredis-resp2 node tests/clients/session_node.js --client ioredis --protocol 2
fi

python3 - "$out/client-compat.json" "$REDIS_VERSION" "${stems[@]}" <<'PY'
import json, sys
rows = [json.load(open(p)) for p in sys.argv[3:]]
with open(sys.argv[1], "w") as f:
    json.dump({"redis_version": sys.argv[2], "clients": rows}, f, indent=1)
    f.write("\n")
PY
{
  echo
  echo "totals:"
  python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
for r in d["clients"]:
    print("  %-28s %3d equal %3d different" % (r["label"], r["equal"], r["different"]))
' "$out/client-compat.json"
} | tee -a "$summary.tmp"
mv "$summary.tmp" "$summary"
echo "client-compat: wrote $summary, $out/client-compat.json and the transcripts in $tdir/" >&2

if [ "$strict" = 1 ] && python3 -c 'import json,sys; sys.exit(0 if all(r["different"]==0 and "error" not in r for r in json.load(open(sys.argv[1]))["clients"]) else 1)' "$out/client-compat.json"; then
  exit 0
elif [ "$strict" = 1 ]; then
  exit 1
fi
