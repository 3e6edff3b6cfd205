//! A real redis-server for one run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{free_port, make_tempdir, provision, remove_tempdir, wait_until_ready, ManagedProcess};

/// The directory with `redis-server` and `redis-cli`: `$REDISLAB_REDIS_BIN`, or the
/// cache filled by `scripts/get-redis.sh` (which builds Redis the first time).
pub fn binaries() -> Result<PathBuf, String> {
    provision("get-redis.sh", "REDISLAB_REDIS_BIN").map_err(|e| {
        format!("{e}\nRedis is built from Debian's source package by scripts/get-redis.sh (needs root the first time, for apt-get); or point the lab at a server with --redis-url redis://127.0.0.1:6379/")
    })
}

pub struct RedisServer {
    pub port: u16,
    process: ManagedProcess,
}

impl RedisServer {
    /// Starts redis-server on 127.0.0.1 with persistence off; `extra` adds config
    /// arguments (e.g. `["--cluster-enabled", "yes"]`).
    pub fn start(bin_dir: &Path, extra: &[&str]) -> Result<RedisServer, String> {
        let mut last_error = String::new();
        // A free port can be taken between probing and binding; try a few.
        for _ in 0..5 {
            match Self::try_start(bin_dir, extra) {
                Ok(server) => return Ok(server),
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    fn try_start(bin_dir: &Path, extra: &[&str]) -> Result<RedisServer, String> {
        let port = free_port().map_err(|e| format!("no free port: {e}"))?;
        Self::start_on(bin_dir, port, extra)
    }

    /// Starts redis-server on a port the caller chose (a cluster node needs its
    /// bus port, `port + 10000`, free as well). One attempt: no retry on another
    /// port.
    pub fn start_on(bin_dir: &Path, port: u16, extra: &[&str]) -> Result<RedisServer, String> {
        let dir = make_tempdir("redis")?;
        let mut cmd = Command::new(bin_dir.join("redis-server"));
        cmd.args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--protected-mode",
            "yes",
        ])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .arg("--dir")
        .arg(&dir)
        .arg("--logfile")
        .arg(dir.join("redis.log"))
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        let mut process = ManagedProcess::spawn("redis-server", cmd, libc::SIGTERM, dir.clone())
            .inspect_err(|_| remove_tempdir(&dir))?;
        let url = format!("redis://127.0.0.1:{port}/");
        // Ready when *our* process answers: if another server took the port
        // between probing and binding, it would answer PING while ours exits
        // on its bind error, and a test would share that server.
        let pid = process.pid();
        let ready = wait_until_ready(&mut process, Duration::from_secs(20), || {
            redis::Client::open(url.as_str())
                .and_then(|c| c.get_connection())
                .and_then(|mut c| redis::cmd("INFO").arg("server").query::<String>(&mut c))
                .is_ok_and(|info| answered_by(&info, pid))
        });
        if let Err(e) = ready {
            let log = std::fs::read_to_string(dir.join("redis.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(5).collect();
            return Err(format!(
                "{e}; last log lines: {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ));
        }
        Ok(RedisServer { port, process })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// SIGKILLs the server (a crash: it answers nothing more, writes nothing
    /// more) and removes its directory.
    pub fn kill(&mut self) {
        self.process.kill();
    }

    /// True until the server has exited.
    pub fn is_running(&mut self) -> bool {
        self.process.is_running()
    }

    /// The temporary directory holding the server's data and log.
    pub fn tempdir(&self) -> &std::path::Path {
        self.process.tempdir()
    }
}

/// Whether an INFO server reply comes from process `pid`.
fn answered_by(info: &str, pid: u32) -> bool {
    info.lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .is_some_and(|v| v.trim() == pid.to_string())
}

#[cfg(test)]
mod ready_tests {
    #[test]
    fn another_process_on_the_port_is_not_ready() {
        let info = "# Server\r\nredis_version:8.6.3\r\nprocess_id:4242\r\n";
        assert!(super::answered_by(info, 4242));
        assert!(!super::answered_by(info, 4243));
        assert!(!super::answered_by("# Server\r\n", 4242));
    }
}
