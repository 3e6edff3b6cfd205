#!/usr/bin/env bash
# Build (once) and print the directory holding redis-server and redis-cli.
#
# Redis 8.6.3 comes from Debian's `experimental` source package (its orig tarball is
# upstream Redis 8.6.3). We build it with the default allocator, jemalloc, because the
# MEMORY USAGE figures of the articles only match with it. The binaries are cached
# outside the repository, keyed by version, so later runs start in seconds.
#
# Usage: scripts/get-redis.sh            -> prints the bin directory on stdout
# Env:   REDIS_VERSION (default 8.6.3), REDIS_DEB_REVISION (default 1),
#        REDIS_LABS_CACHE (default /var/cache/redis-labs as root, else ~/.cache/redis-labs)
set -euo pipefail

version="${REDIS_VERSION:-8.6.3}"
revision="${REDIS_DEB_REVISION:-1}"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cache="$(redislab_cache_dir)"
dest="$cache/redis-$version"

say() { echo "get-redis: $*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

# The cache holds the binaries (redis-server, redis-cli, redis-benchmark) and the
# built source tree, whose tests/ the Tcl-suite script runs and whose redis-server
# keeps its symbols for gdb.
if [ -x "$dest/bin/redis-server" ] && [ -x "$dest/bin/redis-cli" ] \
  && [ -x "$dest/bin/redis-benchmark" ] && [ -f "$dest/src/tests/test_helper.tcl" ]; then
  echo "$dest/bin"
  exit 0
fi

say "Redis $version is not cached in $dest; building it from Debian's source package."
say "This happens once and takes about 1.5-3 minutes on 2 cores."

redislab_need_build_tools
redislab_build_dir redis

fetch_source() {
  (cd "$work" && apt-get source --download-only "redis=5:$version-$revision" >&2)
}

if ! fetch_source; then
  [ "$(id -u)" = 0 ] || fail "cannot fetch the source package and not root to add the apt source.
  As root, add a deb-src entry for Debian 'experimental' and run 'apt-get update', or run this script as root."
  list=/etc/apt/sources.list.d/redis-labs-experimental-src.sources
  say "adding a deb-src entry for Debian experimental ($list) and running apt-get update"
  cat >"$list" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: experimental
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt-get update -q >&2 || fail "apt-get update failed (is the Debian mirror reachable?)"
  if ! fetch_source; then
    # The pinned version may have left the archive: take the newest 8.x there.
    newest="$(apt-cache showsrc redis 2>/dev/null | awk '/^Version: 5:8\./{print $2}' | sort -V | tail -1)"
    [ -n "$newest" ] || fail "no Redis 8.x source package found in Debian experimental"
    say "WARNING: redis=5:$version-$revision is gone; building $newest instead"
    version="${newest#5:}"; version="${version%-*}"
    dest="$cache/redis-$version"
    (cd "$work" && apt-get source --download-only "redis=$newest" >&2) || fail "apt-get source redis=$newest failed"
  fi
fi

orig="$(ls "$work"/redis_"$version".orig.tar.* 2>/dev/null | head -1)"
[ -n "$orig" ] || fail "no orig tarball for $version in $(ls "$work")"
redislab_build_orig "$orig"

mkdir -p "$dest/bin.tmp"
cp "$work/src/src/redis-server" "$work/src/src/redis-cli" "$work/src/src/redis-benchmark" "$dest/bin.tmp/"
rm -rf "$dest/src" && mv "$work/src" "$dest/src"
rm -rf "$dest/bin" && mv "$dest/bin.tmp" "$dest/bin"
"$dest/bin/redis-server" --version >&2
say "cached in $dest/bin"
echo "$dest/bin"
