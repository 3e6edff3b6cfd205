# Shared by the setup scripts: where server binaries are cached.
# Root uses a system-wide cache because PostgreSQL runs as 'nobody', which cannot
# read anything under /root.
redislab_cache_dir() {
  if [ -n "${REDIS_LABS_CACHE:-}" ]; then
    echo "$REDIS_LABS_CACHE"
  elif [ "$(id -u)" = 0 ]; then
    echo /var/cache/redis-labs
  else
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/redis-labs"
  fi
}

# The steps get-redis.sh and get-server.sh share to build a server from the upstream
# orig tarball of a Debian source package. Each prints its progress through the
# caller's say/fail functions.

# make, gcc and tar must be there; dpkg-source (for apt-get source) is installed as root.
redislab_need_build_tools() {
  local tool
  for tool in make gcc tar; do
    command -v "$tool" >/dev/null || fail "'$tool' is missing. Install it: apt-get install -y build-essential"
  done
  command -v dpkg-source >/dev/null && return 0
  [ "$(id -u)" = 0 ] || fail "'dpkg-source' is missing. As root: apt-get install -y dpkg-dev"
  say "installing dpkg-dev (needed by apt-get source)"
  apt-get install -y -q dpkg-dev >&2 || { apt-get update -q >&2 && apt-get install -y -q dpkg-dev >&2; } \
    || fail "could not install dpkg-dev"
}

# A fresh build directory (removed on exit) that apt's unprivileged _apt user may write.
redislab_build_dir() {
  work="$(mktemp -d "${TMPDIR:-/tmp}/$1-build.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$work"; fi
}

# Unpack the orig tarball $1 into $work/src and compile it there with jemalloc (the
# default allocator: MEMORY USAGE figures depend on it) and without TLS; nice'd, with
# SERVER_BUILD_JOBS jobs (default: the number of CPUs), the log in $work/build.log.
redislab_build_orig() {
  local orig="$1" jobs="${SERVER_BUILD_JOBS:-$(nproc)}"
  say "unpacking $(basename "$orig")"
  mkdir -p "$work/src"
  tar -xf "$orig" -C "$work/src" --strip-components=1
  [ -d "$work/src/deps/jemalloc" ] || fail "the orig tarball has no deps/jemalloc (the build must use jemalloc)"
  say "compiling (nice make -j$jobs BUILD_TLS=no, jemalloc); output in $work/build.log"
  if ! nice -n "${SERVER_NICE:-10}" make -C "$work/src" -j"$jobs" BUILD_TLS=no >"$work/build.log" 2>&1; then
    tail -30 "$work/build.log" >&2
    fail "the build failed (log above). Check that gcc, make and pkg-config are installed."
  fi
}
