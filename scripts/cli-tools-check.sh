#!/usr/bin/env bash
# redis-cli's tools and redis-benchmark against a private Redis and the core's listener.
#
#   scripts/cli-tools-check.sh            summary on stdout and in out/cli-tools.txt;
#                                         raw outputs in target/cli-tools/<tool>-<server>.txt
#   scripts/cli-tools-check.sh --out DIR
#   scripts/cli-tools-check.sh -n 20000   redis-benchmark requests per test (default 20000)
#   scripts/cli-tools-check.sh --strict   exit 1 unless every tool is ok on the core
#
# Per server: seed a few keys of every type (redis-cli), then
#   redis-cli --stat -i 1 (4 s), --bigkeys, --memkeys, --scan --pattern 'x*',
#   COMMAND COUNT / COMMAND DOCS ZADD, the interactive hints of redis-cli under a pty
#   (tests/clients/cli_hints.py), and redis-benchmark -t set,get,incr,zadd -n N -q.
# Each output is searched for errors and warnings; the summary shows one verdict per
# tool and server: ok, WARN (the tool ran but printed warnings) or FAIL.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cd "$root"
# shellcheck source=servers.sh
. "$here/servers.sh"

out=out
requests=20000
strict=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --strict) strict=1; shift ;;
    -n) requests="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "cli-tools-check: unknown option $1" >&2; exit 2 ;;
  esac
done

mkdir -p "$out"
servers_start
cli="$REDIS_BIN_DIR/redis-cli"
bench="$REDIS_BIN_DIR/redis-benchmark"
raw="${CLI_TOOLS_RAW:-target/cli-tools}"
mkdir -p "$raw"
summary="$out/cli-tools.txt.tmp"
{
  echo "redis-cli tools and redis-benchmark on Redis $REDIS_VERSION and the core (scripts/cli-tools-check.sh)"
  echo "verdict per tool: ok / WARN (ran, printed warnings or errors) / FAIL (no usable output)"
  echo
  printf '%-22s %-8s %-8s  %s\n' tool redis core "core notes"
  printf '%-22s %-8s %-8s  %s\n' ---- ----- ---- ----------
} >"$summary"

# Errors and warnings a tool printed (one line each, at most 3).
problems() {
  grep -aiE '(^|[^a-z])(err|error|warning|unknown|could not|cannot|invalid|failed|refused)([^a-z]|$)' "$1" \
    | grep -avE '^\s*$' | sed 's/\x1b\[[0-9;]*m//g' | sort | uniq -c | sort -rn | head -3 \
    | sed -E 's/^ *([0-9]+) /\1x /' | cut -c1-160 | paste -sd ';' - || true
}

# verdict FILE OK_REGEX: FAIL when OK_REGEX does not match, WARN when problems, else ok
verdict() {
  if ! grep -aqE "$2" "$1"; then echo FAIL
  elif [ -n "$(problems "$1")" ]; then echo WARN
  else echo ok; fi
}

seed() { # port
  local p="$1"
  {
    "$cli" -p "$p" FLUSHALL
    for i in $(seq 1 50); do echo "SET x:str:$i value-$i"; done | "$cli" -p "$p" >/dev/null
    "$cli" -p "$p" SET xbig "$(head -c 5000 /dev/zero | tr '\0' a)"
    "$cli" -p "$p" HSET xhash f1 v1 f2 v2 f3 v3
    "$cli" -p "$p" RPUSH xlist a b c d
    "$cli" -p "$p" SADD xset a b c
    "$cli" -p "$p" ZADD xzset 1 a 2 b 3 c 4 d 5 e
    "$cli" -p "$p" PFADD xhll a b c
    "$cli" -p "$p" SET other 1
  } 2>&1
}

run_tool() { # name server port OK_REGEX command...
  local name="$1" side="$2" port="$3" okre="$4"; shift 4
  local f="$raw/$name-$side.txt"
  { echo "\$ $*"; timeout 60 "$@" 2>&1 || echo "(exit status $?)"; } >"$f"
  verdict "$f" "$okre"
}

declare -A V N
tools=(seed stat bigkeys memkeys scan command-docs hints benchmark)
for side in redis core; do
  port="$REDIS_PORT"; [ "$side" = core ] && port="$CORE_PORT"
  f="$raw/seed-$side.txt"
  seed "$port" >"$f"
  V[seed-$side]="$( [ -n "$(problems "$f")" ] && echo WARN || echo ok)"
  # --stat: ~4 samples
  f="$raw/stat-$side.txt"
  # (line-buffered: redis-cli's stdout is a pipe here and timeout ends it)
  { echo "\$ redis-cli --stat -i 1 (4 s)"; timeout 4.5 stdbuf -oL "$cli" -p "$port" --stat -i 1 2>&1 || true; } >"$f"
  V[stat-$side]="$(verdict "$f" 'keys +mem')"
  if [ "$(grep -acE '^[0-9]+ +[0-9.]+[BKMG]' "$f" || true)" -lt 2 ] && [ "${V[stat-$side]}" = ok ]; then V[stat-$side]=WARN; fi
  V[bigkeys-$side]="$(run_tool bigkeys "$side" "$port" 'Biggest string found' "$cli" -p "$port" --bigkeys)"
  V[memkeys-$side]="$(run_tool memkeys "$side" "$port" 'Biggest string found' "$cli" -p "$port" --memkeys)"
  f="$raw/scan-$side.txt"
  { echo "\$ redis-cli --scan --pattern 'x*'"; timeout 30 "$cli" -p "$port" --scan --pattern 'x*' 2>&1 | sort || true; } >"$f"
  n="$(grep -acE '^x' "$f" || true)"
  if [ "$n" -ge 50 ]; then V[scan-$side]=ok; elif [ "$n" -gt 0 ]; then V[scan-$side]=WARN; else V[scan-$side]=FAIL; fi
  N[scan-$side]="$n keys"
  f="$raw/command-docs-$side.txt"
  { echo "\$ COMMAND COUNT; COMMAND DOCS ZADD"; "$cli" -p "$port" COMMAND COUNT 2>&1; "$cli" -p "$port" COMMAND DOCS ZADD 2>&1 | head -40; } >"$f"
  V[command-docs-$side]="$(verdict "$f" 'summary')"
  f="$raw/hints-$side.txt"
  timeout 60 python3 "$root/tests/clients/cli_hints.py" "$cli" "$port" "ZADD " "GEOSEARCH k " "SET k v " "HSET " >"$f" 2>&1 || true
  hinted="$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for v in d.values() if v["hint"]), len(d))' "$f" 2>/dev/null || echo "0 4")"
  N[hints-$side]="${hinted% *}/${hinted#* } commands hinted"
  if [ "${hinted% *}" = "${hinted#* }" ]; then V[hints-$side]=ok; elif [ "${hinted% *}" != 0 ]; then V[hints-$side]=WARN; else V[hints-$side]=FAIL; fi
  f="$raw/benchmark-$side.txt"
  { echo "\$ redis-benchmark -t set,get,incr,zadd -n $requests -q"; timeout 300 "$bench" -h 127.0.0.1 -p "$port" -t set,get,incr,zadd -n "$requests" -q 2>&1 | tr '\r' '\n' | grep -av '^ *$' | grep -avE 'rps=[0-9.]+ \(overall' || true; } >"$f"
  ok_lines="$(grep -acE 'requests per second' "$f" || true)"
  if [ "$ok_lines" -ge 4 ]; then V[benchmark-$side]="$( [ -n "$(problems "$f")" ] && echo WARN || echo ok)"
  elif [ "$ok_lines" -gt 0 ]; then V[benchmark-$side]=WARN; else V[benchmark-$side]=FAIL; fi
  N[benchmark-$side]="$(grep -aE 'requests per second' "$f" | sed -E 's/^([A-Z]+): ([0-9.]+) requests per second.*/\1 \2/' | paste -sd ',' -)"
done

for t in "${tools[@]}"; do
  note="${N[$t-core]:-}"
  p="$(problems "$raw/$t-core.txt" 2>/dev/null || true)"
  [ -n "$p" ] && note="${note:+$note; }$p"
  [ "$t" = benchmark ] && note="core ${N[benchmark-core]:-}; redis ${N[benchmark-redis]:-}${p:+; $p}"
  printf '%-22s %-8s %-8s  %s\n' "$t" "${V[$t-redis]}" "${V[$t-core]}" "$note" >>"$summary"
done
{
  echo
  echo "raw outputs: $raw/<tool>-<server>.txt"
} >>"$summary"
mv "$summary" "$out/cli-tools.txt"
cat "$out/cli-tools.txt"
if [ "$strict" = 1 ]; then
  bad=()
  for t in "${tools[@]}"; do [ "${V[$t-core]}" = ok ] || bad+=("$t=${V[$t-core]}"); done
  if [ "${#bad[@]}" -gt 0 ]; then
    echo "cli-tools-check: not ok on the core: ${bad[*]}" >&2
    exit 1
  fi
fi
