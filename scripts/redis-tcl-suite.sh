#!/usr/bin/env bash
# Redis 8.6.3's own Tcl test files, in external mode, against a private Redis and the
# core's listener (both started here on free 127.0.0.1 ports and always stopped).
#
#   scripts/redis-tcl-suite.sh                 both servers, table + out/tcl-suite.{json,txt}
#   scripts/redis-tcl-suite.sh --redis-only    (re)measure Redis, write the baseline
#                                              scripts/tcl-suite-baseline-<version>.json
#   scripts/redis-tcl-suite.sh --core-only --min-file-ratio 0.9 --min-overall 0.95
#                                              the core against the committed baseline;
#                                              exits 1 below the target (CI)
#   --files unit/geo,unit/scan    a subset      --time-limit S   per file and server (420)
#   --out DIR                     results dir    --shim-preamble  analysis only (scripts/tcl_gaps.py)
#   --exclusions FILE             default scripts/tcl-suite-exclusions.txt
#
# Per file the runner is  tclsh tests/test_helper.tcl --host 127.0.0.1 --port P --singledb
#   --single FILE --durable  (what ./runtest runs), in the Redis source tree
# that scripts/get-redis.sh keeps beside the binaries. See scripts/tcl_suite.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cd "$root"

die() { echo "redis-tcl-suite: ERROR: $*" >&2; exit 2; }

tclsh_bin="$(command -v tclsh || command -v tclsh8.6 || true)"
[ -n "$tclsh_bin" ] || die "tclsh is missing. Install it: apt-get install -y tcl"
command -v python3 >/dev/null || die "python3 is missing. Install it: apt-get install -y python3"
command -v cargo >/dev/null || die "cargo is missing (Rust stable is needed to build the core)"

bindir="$(scripts/get-redis.sh)" || die "scripts/get-redis.sh failed"
src="$(dirname "$bindir")/src"
[ -f "$src/tests/test_helper.tcl" ] || die "no Redis source tree with tests/ at $src (rerun scripts/get-redis.sh after removing $(dirname "$bindir"))"
version="$("$bindir/redis-server" --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p')"

args=("$@")
want_core=1
for a in "${args[@]}"; do [ "$a" = --redis-only ] && want_core=0; done
core_bin="$root/target/release/redislab-core-server"
if [ "$want_core" = 1 ]; then
  echo "redis-tcl-suite: building the core's listener (cargo build --release -p redislab-listener)" >&2
  cargo build --release -q -p redislab-listener || die "cargo build failed"
fi

has_excl=0
for a in "${args[@]}"; do [ "$a" = --exclusions ] && has_excl=1; done
extra=()
[ "$has_excl" = 1 ] || extra+=(--exclusions "$here/tcl-suite-exclusions.txt")

# The Python driver owns the servers and the runner (process groups, killed on exit,
# error and Ctrl-C); this trap only forwards an interrupt to it.
pid=""
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; exit 130' INT TERM HUP
python3 "$here/tcl_suite.py" --src "$src" --redis-bin "$bindir" --core-bin "$core_bin" \
  --tclsh "$tclsh_bin" --baseline "$here/tcl-suite-baseline-$version.json" \
  "${extra[@]}" "${args[@]}" &
pid=$!
status=0
wait "$pid" || status=$?
exit "$status"
