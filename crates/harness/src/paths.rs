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

pub fn default_out_dir() -> PathBuf {
    repo_root().join("out")
}
