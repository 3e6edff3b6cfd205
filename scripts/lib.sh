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
