#!/usr/bin/env bash
# Build (once) and print the bin directory of one of the servers of the version matrix.
#
#   scripts/get-server.sh redis 7.0.15    Debian bookworm's source package (5:7.0.15-1~deb12u*)
#   scripts/get-server.sh redis 8.0.6     Debian unstable's source package (5:8.0.6-3)
#   scripts/get-server.sh redis 8.6.3     scripts/get-redis.sh (experimental), unchanged
#   scripts/get-server.sh valkey 9.1.2    Debian unstable's source package (9.1.2-1)
#
# Debian's newer *binary* packages need a newer libc than bookworm's, so every server is
# built from the upstream orig tarball of its Debian source package, with the default
# allocator (jemalloc: MEMORY USAGE figures depend on it) and without TLS, exactly as
# get-redis.sh builds 8.6.3. The binaries are cached outside the repository under
# $cache/NAME-VERSION/bin and reused; a build happens once (a few minutes on 2 cores).
#
# The bin directory always holds redis-server, redis-cli and redis-benchmark: for Valkey
# those are links to valkey-server/valkey-cli/valkey-benchmark (Valkey accepts being
# started under the redis-* names), so the harness and the labs that start clusters or
# Sentinels of their own run unchanged against it.
#
# Env: REDIS_LABS_CACHE (see lib.sh), SERVER_BUILD_JOBS (default: the CPUs), SERVER_NICE (default 10).
set -euo pipefail

name="${1:-}"
version="${2:-}"
say() { echo "get-server: $*" >&2; }
fail() { say "ERROR: $*"; exit 1; }
[ -n "$name" ] && [ -n "$version" ] || { echo "usage: scripts/get-server.sh redis|valkey VERSION" >&2; exit 2; }

here="$(cd "$(dirname "$0")" && pwd)"
# 8.6.3 is the project's reference server: its script (used by CI and every lab) stays the
# one source of truth for how it is built and cached.
if [ "$name" = redis ] && [ "$version" = 8.6.3 ]; then
  exec env REDIS_VERSION=8.6.3 "$here/get-redis.sh"
fi

# Where each known server comes from: the apt suite(s) for the deb-src entry, the source
# package and a pattern for the Debian version (the newest match is taken).
case "$name $version" in
  "redis 7.0.15") suites="bookworm bookworm-updates"; secsuite=bookworm-security; pkg=redis
    debver_re='^5:7\.0\.15-' ;;
  "redis 8.0.6") suites=unstable; secsuite=""; pkg=redis; debver_re='^5:8\.0\.6-' ;;
  "valkey 9.1.2") suites=unstable; secsuite=""; pkg=valkey; debver_re='^9\.1\.2-' ;;
  *) fail "unknown server '$name $version' (known: redis 7.0.15, redis 8.0.6, redis 8.6.3, valkey 9.1.2)" ;;
esac

# shellcheck source=lib.sh
. "$here/lib.sh"
cache="$(redislab_cache_dir)"
dest="$cache/$name-$version"
prog=redis
[ "$name" = valkey ] && prog=valkey

if [ -x "$dest/bin/redis-server" ] && [ -x "$dest/bin/redis-cli" ] && [ -x "$dest/bin/redis-benchmark" ]; then
  echo "$dest/bin"
  exit 0
fi

say "$name $version is not cached in $dest; building it from Debian's source package $pkg."
say "This happens once and takes a few minutes on 2 cores."
redislab_need_build_tools

# The Debian version of $pkg matching $debver_re that apt knows of (newest), or nothing.
known_version() {
  apt-cache showsrc "$pkg" 2>/dev/null | awk '/^Version: /{print $2}' | { grep -E "$debver_re" || true; } | sort -V | tail -1
}

debver="$(known_version)"
if [ -z "$debver" ]; then
  [ "$(id -u)" = 0 ] || fail "no source package $pkg $version known to apt, and not root to add a deb-src entry.
  As root, add a deb-src entry for Debian '$suites' and run 'apt-get update', or run this script as root."
  list="/etc/apt/sources.list.d/redis-labs-${suites%% *}-src.sources"
  say "adding a deb-src entry for Debian $suites ($list) and running apt-get update"
  {
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\n' "$suites"
    printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    if [ -n "$secsuite" ]; then
      printf '\nTypes: deb-src\nURIs: http://deb.debian.org/debian-security\nSuites: %s\n' "$secsuite"
      printf 'Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    fi
  } >"$list"
  apt-get update -q >&2 || fail "apt-get update failed (is the Debian mirror reachable?)"
  debver="$(known_version)"
  [ -n "$debver" ] || fail "Debian $suites has no source package $pkg matching $debver_re"
fi

redislab_build_dir "$name"
say "downloading $pkg=$debver"
(cd "$work" && apt-get source --download-only "$pkg=$debver" >&2) || fail "apt-get source $pkg=$debver failed"

orig="$(ls "$work/${pkg}_$version".orig.tar.* 2>/dev/null | head -1)"
[ -n "$orig" ] || fail "no orig tarball for $version in $(ls "$work")"
redislab_build_orig "$orig"

mkdir -p "$dest/bin.tmp"
for tool in server cli benchmark; do
  cp "$work/src/src/$prog-$tool" "$dest/bin.tmp/"
  # Valkey answers to the redis-* names too (its main() looks at argv[0] for -sentinel,
  # -check-rdb, ...; redis-* names are links its own Makefile installs).
  [ "$prog" = redis ] || ln -s "$prog-$tool" "$dest/bin.tmp/redis-$tool"
done
rm -rf "$dest/bin" && mv "$dest/bin.tmp" "$dest/bin"
printf "%s %s: the upstream orig tarball of Debian source package %s=%s (Debian patches not applied)\n" "$name" "$version" "$pkg" "$debver" >"$dest/SOURCE"
"$dest/bin/redis-server" --version >&2
say "cached in $dest/bin"
echo "$dest/bin"
