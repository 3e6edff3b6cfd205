#!/usr/bin/env bash
# Regenerate the labs of the Redis articles.
#
#   ./run.sh list              the lab ids
#   ./run.sh 05a               run one lab (any unique prefix of its id); extra
#                              arguments go to the lab (see ./run.sh 05a --help)
#   ./run.sh all               run every lab, writing out/
#   ./run.sh check [ids]       regenerate into a temporary directory and compare
#                              with the committed out/ baselines
#   ./run.sh test              unit and differential tests, then ./run.sh check
set -euo pipefail
cd "$(dirname "$0")"
root="$PWD"
export REDISLAB_ROOT="$root"

lab_ids() { (cd labs && ls -d */ | tr -d / | sort); }

usage_ids() {
  echo "valid lab ids:" >&2
  lab_ids | sed 's/^/  /' >&2
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
  else
    echo "run.sh: '$want' is ambiguous: ${matches[*]}" >&2
  fi
  usage_ids
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

run_labs() {
  local failed=0
  for id in "$@"; do
    echo "=== $id" >&2
    "target/release/lab-$id" "${lab_args[@]}" || { echo "run.sh: lab $id failed" >&2; failed=1; }
  done
  return "$failed"
}

check() {
  local ids=("$@") fresh status=0
  [ "${#ids[@]}" -gt 0 ] || mapfile -t ids < <(lab_ids)
  provision
  build "${ids[@]}"
  fresh="$(mktemp -d)"
  for id in "${ids[@]}"; do
    echo "=== check $id" >&2
    if ! "target/release/lab-$id" --out "$fresh" >"$fresh/$id.log" 2>&1; then
      cat "$fresh/$id.log" >&2
      echo "run.sh: lab $id failed" >&2
    fi
  done
  target/release/labcheck --baseline out --fresh "$fresh" "${ids[@]}" || status=$?
  rm -rf "$fresh"
  return "$status"
}

run_tests() {
  provision
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
  check
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
lab_args=("$@")
case "$cmd" in
  ""|-h|--help|help)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    usage_ids
    ;;
  list) lab_ids ;;
  all)
    mapfile -t ids < <(lab_ids)
    provision
    build "${ids[@]}"
    run_labs "${ids[@]}"
    ;;
  check)
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
