#!/usr/bin/env bash
# Regenerate the labs of the Redis articles. Usage: see usage() below.
set -euo pipefail
cd "$(dirname "$0")"
root="$PWD"
export REDISLAB_ROOT="$root"
# Where cargo puts the binaries (CARGO_TARGET_DIR is honoured).
bin="${CARGO_TARGET_DIR:-$root/target}/release"

lab_ids() { (cd labs && ls -d */ | tr -d / | sort); }

usage() {
  cat <<'EOF'
usage: ./run.sh COMMAND

  ./run.sh list              every lab: id, article, section, typical time, title
  ./run.sh 05a [options]     run one lab (any unique prefix of its id), print its
                             table and write runs/<id>.txt|json (git-ignored);
                             options go to the lab: ./run.sh 05a --help
  ./run.sh all [--bless]     every lab, writing runs/ (out/ with --bless)
  ./run.sh bless [ids]       regenerate labs (all without ids), print which rows
                             changed, and make them the committed baselines in out/
  ./run.sh check [ids]       regenerate into a temporary directory and compare
                             with the committed baselines in out/
  ./run.sh report [--from DIR] [--out DIR]
                             the HTML report (runs/report/index.html) from the
                             JSON in out/, with your runs in runs/ preferred
  ./run.sh bench [--out DIR] redis-benchmark on the core's listener and Redis, same run
                             (runs/bench.{txt,json}: req/s, p99, ratios, bytes/member)
  ./run.sh matrix [ids] [--redis-url NAME=URL]... [--redis-bin NAME=DIR]... [--bless]
                             every exact row on Redis 7.0.15, 8.0.6, 8.6.3, Valkey 9.1.2
                             (and your servers) side by side: runs/matrix.{txt,json}
                             (out/ with --bless); ./run.sh check matrix compares
  ./run.sh test              unit, differential and report tests, then check
EOF
}

# `./run.sh list`: the catalogue (labs/catalog.tsv) as a table.
list_labs() {
  awk -F'\t' 'BEGIN { printf "%-19s %-7s %-9s %6s  %s\n", "id", "article", "section", "time", "title" }
    /^#/ { next }
    { t = $4 >= 60 ? sprintf("%dm%02ds", $4 / 60, $4 % 60) : $4 "s";
      printf "%-19s %-7s %-9s %6s  %s\n", $1, $2, $3, t, $5 }' labs/catalog.tsv
}

# The catalogue lines of the given ids (for an ambiguous prefix).
list_some() {
  local id
  for id in "$@"; do
    awk -F'\t' -v id="$id" '$1 == id { printf "  %-19s %s\n", $1, $5 }' labs/catalog.tsv
  done
}

usage_ids() {
  echo "valid lab ids (./run.sh list):" >&2
  # shellcheck disable=SC2046
  list_some $(lab_ids) >&2
}

# Prints the one lab id that `$1` names (exact id or unique prefix).
resolve() {
  local want="$1" id matches=()
  while read -r id; do
    if [ "$id" = "$want" ]; then echo "$id"; return 0; fi
    case "$id" in "$want"*) matches+=("$id") ;; esac
  done < <(lab_ids)
  if [ "${#matches[@]}" -eq 1 ]; then echo "${matches[0]}"; return 0; fi
  if [ "${#matches[@]}" -eq 0 ]; then
    echo "run.sh: no lab matches '$want'" >&2
    usage_ids
  else
    echo "run.sh: '$want' matches ${#matches[@]} labs; give more of the id:" >&2
    list_some "${matches[@]}" >&2
  fi
  return 2
}

build() {
  echo "run.sh: building (cargo build --release) ..." >&2
  local pkgs=()
  for id in "$@"; do pkgs+=(-p "lab-$id"); done
  cargo build --release -q "${pkgs[@]}" -p redislab-harness
}

# Servers are built/installed before the labs run, so a failure says so up front.
provision() {
  REDISLAB_REDIS_BIN="$(scripts/get-redis.sh)"
  REDISLAB_PG_BIN="$(scripts/get-postgres.sh)"
  export REDISLAB_REDIS_BIN REDISLAB_PG_BIN
}

# Runs labs one after the other; the status is the last failing lab's own (clap's
# 2 for a bad option, 1 for a failed run, 130 for an interrupt).
run_labs() {
  local status=0 rc
  for id in "$@"; do
    [ "$#" -gt 1 ] && echo "=== $id" >&2
    rc=0
    "$bin/lab-$id" "${lab_args[@]}" || rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "run.sh: lab $id failed (exit $rc)" >&2
      status=$rc
      [ "$rc" -eq 130 ] && break
    fi
  done
  return "$status"
}

# Regenerates labs into a temporary directory; then, for those that ran, prints
# which rows changed and copies them over the baselines in out/.
bless() {
  local ids=("$@") fresh status=0 ok=()
  [ "${#ids[@]}" -gt 0 ] || mapfile -t ids < <(lab_ids)
  provision
  build "${ids[@]}"
  fresh="$(mktemp -d)"
  for id in "${ids[@]}"; do
    echo "=== bless $id" >&2
    if "$bin/lab-$id" --out "$fresh" "${lab_args[@]}" >"$fresh/$id.log" 2>&1; then
      ok+=("$id")
    else
      cat "$fresh/$id.log" >&2
      echo "run.sh: lab $id failed; its baseline is left as it was" >&2
      status=1
    fi
  done
  if [ "${#ok[@]}" -gt 0 ]; then
    "$bin"/labcheck --baseline out --fresh "$fresh" --bless "${ok[@]}" || status=1
  fi
  rm -rf "$fresh"
  return "$status"
}

report() {
  echo "run.sh: building the report (cargo build --release -p redislab-site) ..." >&2
  cargo build --release -q -p redislab-site
  "$bin"/labreport "$@"
}

check() {
  local ids=("$@") fresh status=0
  [ "${#ids[@]}" -gt 0 ] || mapfile -t ids < <(lab_ids)
  provision
  build "${ids[@]}"
  fresh="$(mktemp -d)"
  for id in "${ids[@]}"; do
    echo "=== check $id" >&2
    if ! "$bin/lab-$id" --out "$fresh" >"$fresh/$id.log" 2>&1; then
      cat "$fresh/$id.log" >&2
      echo "run.sh: lab $id failed" >&2
    fi
  done
  "$bin"/labcheck --baseline out --fresh "$fresh" "${ids[@]}" || status=$?
  rm -rf "$fresh"
  return "$status"
}

run_tests() {
  provision
  # The report's browser test needs Chromium (and lab 05k gdb): Debian packages.
  scripts/get-chromium.sh >/dev/null
  # Tests that compare the core with a real Redis must not skip here.
  export REDISLAB_REQUIRE_SERVERS=1
  # The interrupt tests run the lab binaries themselves: build them first.
  echo "run.sh: building the workspace (cargo build --release --workspace) ..." >&2
  cargo build --release -q --workspace
  if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --release --workspace
  else
    cargo test --release --workspace
  fi
  # From outside: Redis's own Tcl tests (held at the committed per-file floor and
  # at the 90% per file / 95% overall target), the clients people use in RESP2 and RESP3, and
  # redis-cli's tools with redis-benchmark, each on the core beside a real Redis.
  mkdir -p runs
  scripts/redis-tcl-suite.sh --core-only --floor scripts/tcl-suite-core-floor.json \
    --min-file-ratio 0.9 --min-overall 0.95 --enforce-target --out runs
  scripts/client-compat.sh --strict --out runs
  scripts/cli-tools-check.sh --strict --out runs
  # Every lab with --redis-url pointed at a second core listener.
  scripts/labs-on-core.sh
  check
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
lab_args=("$@")
case "$cmd" in
  ""|-h|--help|help) usage ;;
  list) list_labs ;;
  all)
    mapfile -t ids < <(lab_ids)
    if [ "${1:-}" = "--bless" ]; then
      lab_args=("${@:2}")
      bless "${ids[@]}"
    else
      provision
      build "${ids[@]}"
      run_labs "${ids[@]}"
    fi
    ;;
  bless)
    ids=()
    for want in "$@"; do
      id="$(resolve "$want")" || exit 2
      ids+=("$id")
    done
    lab_args=()
    bless "${ids[@]}"
    ;;
  report) report "$@" ;;
  bench) scripts/bench.sh "$@" ;;
  matrix) scripts/matrix.sh "$@" ;;
  check)
    # The version matrix is checked on its own (it runs every lab on four servers).
    if [ "${1:-}" = matrix ]; then
      [ $# -eq 1 ] || { echo "run.sh: check matrix takes no other argument" >&2; exit 2; }
      exec scripts/matrix.sh --check out/matrix.json
    fi
    ids=()
    for want in "$@"; do
      id="$(resolve "$want")" || exit 2
      ids+=("$id")
    done
    check "${ids[@]}"
    ;;
  test) run_tests ;;
  *)
    id="$(resolve "$cmd")" || exit 2
    build "$id"
    run_labs "$id"
    ;;
esac
