#!/usr/bin/env bash
# ./run.sh matrix: every exact row of the labs on several real servers side by side.
#
#   scripts/matrix.sh [ids] [--redis-url NAME=URL]... [--redis-bin NAME=DIR]... [--bless|--out DIR]
#   scripts/matrix.sh --check out/matrix.json      (./run.sh check matrix)
#   --passes DIR keeps each server's lab reports in DIR/NAME (default: a temporary dir)
#
# Each server gets one pass over the labs: the lab runs with REDISLAB_REDIS_BIN set to
# that server's bin directory (so a lab that starts its own Cluster or Sentinels starts
# them from the same version) and --no-pg; the core runs only in the reference pass
# (Redis 8.6.3), its column being the same whichever server runs beside it. Every lab
# stops the servers it started, also on Ctrl-C (the harness's shutdown handler); this
# script starts none itself. A server given by URL is the user's: the labs use their
# own key prefix there and delete their keys; labs that start servers of their own
# (a Cluster, Sentinels) cannot run on it and say so in the matrix.
#
# Writes runs/matrix.{txt,json} (out/ with --bless: the committed baseline).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
export REDISLAB_ROOT="$root"
bin="${CARGO_TARGET_DIR:-$root/target}/release"

# The built servers, in column order: NAME-VERSION as scripts/get-server.sh takes them.
servers=(redis-7.0.15 redis-8.0.6 redis-8.6.3 valkey-9.1.2)
reference=redis-8.6.3

# The lab a command-line word names: its exact id or a unique prefix.
resolve_lab() {
  local matches=() d
  [ -d "labs/$1" ] && { echo "$1"; return 0; }
  for d in labs/"$1"*/; do [ -d "$d" ] && matches+=("$(basename "$d")"); done
  if [ "${#matches[@]}" -eq 1 ]; then echo "${matches[0]}"; return 0; fi
  echo "matrix: '$1' names ${#matches[@]} labs (./run.sh list)" >&2
  return 2
}

ids=() urls=() bins=() out=runs check="" passes=""
while [ $# -gt 0 ]; do
  case "$1" in
    --redis-url) [ $# -ge 2 ] || { echo "matrix: --redis-url needs NAME=URL" >&2; exit 2; }
      urls+=("$2"); shift 2 ;;
    --redis-bin) [ $# -ge 2 ] || { echo "matrix: --redis-bin needs NAME=DIR" >&2; exit 2; }
      bins+=("$2"); shift 2 ;;
    --bless) out=out; shift ;;
    --passes) [ $# -ge 2 ] || { echo "matrix: --passes needs a directory" >&2; exit 2; }
      passes="$2"; shift 2 ;;
    --out) [ $# -ge 2 ] || { echo "matrix: --out needs a directory" >&2; exit 2; }
      out="$2"; shift 2 ;;
    --check) [ $# -ge 2 ] || { echo "matrix: --check needs a matrix.json" >&2; exit 2; }
      check="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "matrix: unknown option $1" >&2; exit 2 ;;
    *) id="$(resolve_lab "$1")" || exit 2; ids+=("$id"); shift ;;
  esac
done
for spec in "${urls[@]}" "${bins[@]}"; do
  case "$spec" in
    *=*) ;;
    *) echo "matrix: '$spec' is not NAME=VALUE (e.g. --redis-url redis-8.8=redis://10.0.0.5:6379/)" >&2; exit 2 ;;
  esac
done

echo "matrix: building the labs and labmatrix (cargo build --release) ..." >&2
cargo build --release -q -p redislab-harness
if [ -n "$check" ]; then
  # The labs of the baseline, so a fresh matrix covers the same rows.
  mapfile -t ids < <("$bin/labmatrix" --labs-of "$check")
elif [ "${#ids[@]}" -eq 0 ]; then
  # Every lab whose baseline has an exact row (05l-bigzset has none).
  for f in out/*.json; do
    id="$(basename "$f" .json)"
    [ -d "labs/$id" ] && grep -q '"kind": "exact"' "$f" && ids+=("$id")
  done
fi
pkgs=()
for id in "${ids[@]}"; do pkgs+=(-p "lab-$id"); done
cargo build --release -q "${pkgs[@]}"

# Every server is built (once, cached) before any lab runs, so a failure says so first.
declare -A bindir
for s in "${servers[@]}"; do
  bindir[$s]="$(scripts/get-server.sh "${s%%-*}" "${s#*-}")"
done
for spec in "${bins[@]}"; do bindir[${spec%%=*}]="${spec#*=}"; done

# Each pass's reports go to a temporary directory (or --passes DIR, kept: labmatrix
# can rebuild the matrix from it without running the labs again).
if [ -n "$passes" ]; then
  mkdir -p "$passes"
  work="$(cd "$passes" && pwd)"
  cleanup() { :; }
else
  work="$(mktemp -d "${TMPDIR:-/tmp}/redislab-matrix.XXXXXX")"
  cleanup() { rm -rf "$work"; }
fi
trap cleanup EXIT
# A lab interrupted by Ctrl-C stops its servers and exits 130; then so does this.
trap 'echo "matrix: interrupted" >&2; cleanup; exit 130' INT TERM HUP

started=$SECONDS
# run_pass NAME ENV-BIN [lab options...]: one pass over the labs into $work/NAME.
run_pass() {
  local name="$1" redis_bin="$2" n=0 rc t0
  shift 2
  mkdir -p "$work/$name"
  for id in "${ids[@]}"; do
    n=$((n + 1))
    if [ "${MATRIX_URL_PASS:-0}" = 1 ] && [ -f "$work/$reference/$id.json" ] \
      && grep -q '"redis cluster"\|"redis sentinel"' "$work/$reference/$id.json"; then
      echo "not run: this lab starts a Redis Cluster or Sentinels of its own from a redis-server binary; a server given by URL cannot be one (give its binaries with --redis-bin NAME=DIR)" >"$work/$name/$id.skip"
      continue
    fi
    t0=$SECONDS
    printf 'matrix: %-14s %-20s (%d/%d) ' "$name" "$id" "$n" "${#ids[@]}" >&2
    rc=0
    REDISLAB_REDIS_BIN="$redis_bin" "$bin/lab-$id" --no-pg --out "$work/$name" "$@" \
      >"$work/$name/$id.log" 2>&1 </dev/null || rc=$?
    if [ "$rc" -eq 0 ]; then echo "$((SECONDS - t0)) s" >&2; else echo "$((SECONDS - t0)) s, failed (exit $rc)" >&2; fi
    if [ "$rc" -eq 130 ]; then
      echo "matrix: interrupted" >&2
      exit 130
    fi
    [ "$rc" -eq 0 ] || rm -f "$work/$name/$id.json"
  done
}

# The reference first: its reports say which labs start servers of their own.
run_pass "$reference" "${bindir[$reference]}"
for s in "${servers[@]}"; do
  [ "$s" = "$reference" ] || run_pass "$s" "${bindir[$s]}" --no-core
done
for spec in "${bins[@]}"; do
  run_pass "${spec%%=*}" "${spec#*=}" --no-core
done
for spec in "${urls[@]}"; do
  MATRIX_URL_PASS=1 run_pass "${spec%%=*}" "${bindir[$reference]}" --no-core --redis-url "${spec#*=}"
done
# Column order: the built servers as listed, then the user's.
ordered=()
for s in "${servers[@]}"; do ordered+=(--server "$s=$work/$s"); done
for spec in "${bins[@]}" "${urls[@]}"; do ordered+=(--server "${spec%%=*}=$work/${spec%%=*}"); done
echo "matrix: the labs ran in $((SECONDS - started)) s" >&2

if [ -n "$check" ]; then
  "$bin/labmatrix" "${ordered[@]}" --reference "$reference" --check "$check" "${ids[@]}"
else
  "$bin/labmatrix" "${ordered[@]}" --reference "$reference" --out "$out" "${ids[@]}"
fi
