//! Where things live: the repository (for scripts and `out/`) and the server cache.

use std::path::PathBuf;

/// The repository root: `$REDISLAB_ROOT` if set, else the workspace this crate was
/// built in.
pub fn repo_root() -> PathBuf {
    if let Some(root) = std::env::var_os("REDISLAB_ROOT") {
        return PathBuf::from(root);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}

pub fn scripts_dir() -> PathBuf {
    repo_root().join("scripts")
}

/// Where a lab writes by default: `runs/` (git-ignored scratch). The committed
/// baselines are [`baseline_dir`]; only `./run.sh bless` writes there.
pub fn default_out_dir() -> PathBuf {
    repo_root().join("runs")
}

/// The committed baselines, `out/`.
pub fn baseline_dir() -> PathBuf {
    repo_root().join("out")
}

/// The server cache shared by every run, as `scripts/lib.sh` computes it:
/// `$REDIS_LABS_CACHE`, else `/var/cache/redis-labs` for root, else
/// `$XDG_CACHE_HOME/redis-labs` or `~/.cache/redis-labs`. `None` when none can be
/// named (no `HOME`).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("REDIS_LABS_CACHE").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        return Some(PathBuf::from("/var/cache/redis-labs"));
    }
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(xdg).join("redis-labs"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|home| PathBuf::from(home).join(".cache/redis-labs"))
}
